"""The tables of correspondence play (docs/correspondence.md), declared on the base of
:mod:`server.store.schema`: a player's e-mail notification settings and the mails sent
(``server.store.notify``), conditional premoves (``server.store.premoves``) and the stored seeks
and challenges (``server.store.offers``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    String,
    false,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from server.hub.game_ids import GAME_ID_MAX_LENGTH
from server.store.schema import NOW, OWNER_LENGTH, VARIANT_LENGTH, Base, UtcDateTime, table_of

__all__ = [
    "EMAIL_LENGTH",
    "MailSentRow",
    "MailSettingsRow",
    "OfferRow",
    "PremovesRow",
    "mail_sent",
    "mail_settings",
    "offers",
    "premoves",
]


EMAIL_LENGTH = 254
"""The longest e-mail address (``server.hub.mail_address.MAX_EMAIL``)."""


class MailSettingsRow(Base):
    """A registered player's e-mail notifications (docs/correspondence.md, "E-mail"): the
    address, whether they opted in, and the mails sent on the UTC day ``day`` (days since
    1970-01-01), for the per-account daily cap."""

    __tablename__ = "mail_settings"

    player_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("players.id", ondelete="CASCADE"), primary_key=True
    )
    email: Mapped[str | None] = mapped_column(String(EMAIL_LENGTH))
    opt_in: Mapped[bool] = mapped_column(Boolean, server_default=false())
    day: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    sent_on_day: Mapped[int] = mapped_column(Integer, server_default=text("0"))


class MailSentRow(Base):
    """When a player was last mailed about a game: at most one mail per (player, game) per
    hour, kept across restarts and shared by every hub of a cluster; ``due_at``: a turn held
    back by that hour, to be mailed at its end if still the player's turn."""

    __tablename__ = "mail_sent"
    __table_args__ = (Index(None, "due_at"),)

    player_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("players.id", ondelete="CASCADE"), primary_key=True
    )
    game_id: Mapped[str] = mapped_column(
        String(GAME_ID_MAX_LENGTH), ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    sent_at: Mapped[datetime] = mapped_column(UtcDateTime)
    due_at: Mapped[datetime | None] = mapped_column(UtcDateTime)


mail_settings = table_of(MailSettingsRow)
mail_sent = table_of(MailSentRow)


class PremovesRow(Base):
    """A player's conditional premoves in a running correspondence game
    (docs/correspondence.md): the player is the game's ``side`` (0 moves first), ``lines`` a
    JSON list of lists of moves (the opponent's move, the reply, …) from the position after
    ``from_ply`` moves. Written when the player sets or clears them and when the hub drops
    them; not as they advance (a restored room advances them through the stored moves)."""

    __tablename__ = "premoves"
    __table_args__ = (
        CheckConstraint("side IN (0, 1)", name="side"),
        CheckConstraint("from_ply >= 0", name="from_ply"),
    )

    game_id: Mapped[str] = mapped_column(
        String(GAME_ID_MAX_LENGTH), ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    side: Mapped[int] = mapped_column(SmallInteger, primary_key=True, autoincrement=False)
    from_ply: Mapped[int] = mapped_column(Integer)
    lines: Mapped[Any] = mapped_column(JSON)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime, server_default=NOW)


premoves = table_of(PremovesRow)


class OfferRow(Base):
    """A stored seek or challenge: a registered player's correspondence offer, kept while its
    players are offline and across restarts until it is answered or withdrawn
    (docs/correspondence.md, "Seeks and challenges"). ``key`` is the hub's (its ids are
    numbers of its own, given again after a restart); a seek has no ``target_id``, a
    challenge has one. The time control is correspondence (``days``) or unlimited (0). In a
    cluster ``node`` is the node whose hub holds it (None: one process); a dead node's offers
    are claimed by one live node (docs/correspondence.md, "Seeks and challenges")."""

    __tablename__ = "offers"
    __table_args__ = (
        CheckConstraint("kind IN ('seek', 'challenge')", name="kind"),
        CheckConstraint("(kind = 'seek') = (target_id IS NULL)", name="target"),
        CheckConstraint("clock_kind IN ('correspondence', 'unlimited')", name="clock_kind"),
        CheckConstraint("colour IN ('first', 'second', 'random')", name="colour"),
        CheckConstraint("days >= 0", name="days"),
    )

    key: Mapped[str] = mapped_column(String(16), primary_key=True)
    kind: Mapped[str] = mapped_column(String(9))
    player_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("players.id", ondelete="CASCADE"), index=True
    )
    target_id: Mapped[int | None] = mapped_column(
        Integer, ForeignKey("players.id", ondelete="CASCADE"), index=True
    )
    variant: Mapped[str] = mapped_column(String(VARIANT_LENGTH))
    clock_kind: Mapped[str] = mapped_column(String(16))
    days: Mapped[int] = mapped_column(SmallInteger)
    rated: Mapped[bool] = mapped_column(Boolean)
    colour: Mapped[str] = mapped_column(String(6))
    range_low: Mapped[int | None] = mapped_column(Integer)
    range_high: Mapped[int | None] = mapped_column(Integer)
    manual: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, server_default=NOW)
    node: Mapped[str | None] = mapped_column(String(OWNER_LENGTH), index=True)


offers = table_of(OfferRow)

"""The tournaments' tables (``server.store.tournaments`` reads and writes them; docs/tournaments.md,
"The store"): one row per tournament and one per event of it, declared on the base of
:mod:`server.store.schema`; and the lines of the tournaments' chats (``tournament_chat``,
``server.store.tournament_chat``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, CheckConstraint, ForeignKey, Index, Integer, String, text
from sqlalchemy.orm import Mapped, mapped_column

from server.hub.game_ids import GAME_ID_MAX_LENGTH
from server.hub.tournament_requests import MAX_TOURNAMENT_CHAT
from server.store.schema import NAME_LENGTH, NOW, OWNER_LENGTH, Base, UtcDateTime, table_of

__all__ = [
    "TournamentChatRow",
    "TournamentEventRow",
    "TournamentRow",
    "tournament_chat",
    "tournament_events",
    "tournaments",
]


TOURNAMENT_STATUS_CHECK = "status IN ('created', 'started', 'finished')"


class TournamentRow(Base):
    """One tournament (``server.store.tournaments``): what it is (``settings``, the core's
    ``TournamentSettings`` as JSON in the layout of ``server.store.tournament_codec``), who made
    it, how far it is (``status``: the last ``Started`` / ``Ended`` event stored), its next
    deadline (a start, an arena's end, a round's start: the timer rebuilt at start) and the hub
    node running it (``owner``; None: no hub yet)."""

    __tablename__ = "tournaments"
    __table_args__ = (
        CheckConstraint(TOURNAMENT_STATUS_CHECK, name="status"),
        Index(None, "status", "created_at"),
        Index(None, "next_deadline_at"),
    )

    id: Mapped[str] = mapped_column(String(GAME_ID_MAX_LENGTH), primary_key=True)
    settings: Mapped[Any] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, server_default=NOW)
    created_by: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    """The creator's name; None for a tournament the server schedules itself."""
    status: Mapped[str] = mapped_column(String(10), server_default=text("'created'"))
    next_deadline_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    owner: Mapped[str | None] = mapped_column(String(OWNER_LENGTH))


class TournamentEventRow(Base):
    """One event of a tournament (the core's ``Event`` as JSON with a ``type``), ``seq`` 0, 1,
    2… in the order they happened. The primary key (tournament_id, seq) makes a duplicate or
    racing append impossible at the database (as ``game_moves``' (game_id, ply)). ``at``: the
    event's own time (its ``at_ms``)."""

    __tablename__ = "tournament_events"
    __table_args__ = (CheckConstraint("seq >= 0", name="seq"),)

    tournament_id: Mapped[str] = mapped_column(
        String(GAME_ID_MAX_LENGTH),
        ForeignKey("tournaments.id", ondelete="CASCADE"),
        primary_key=True,
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    event: Mapped[Any] = mapped_column(JSON)
    at: Mapped[datetime] = mapped_column(UtcDateTime)


class TournamentChatRow(Base):
    """One line of a tournament's chat: who wrote it (``player_id``, and ``name`` as shown
    then), what and when; ``id`` orders the lines. Indexed by (tournament_id, id): a watch
    reads a tournament's last lines."""

    __tablename__ = "tournament_chat"
    __table_args__ = (Index(None, "tournament_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tournament_id: Mapped[str] = mapped_column(
        String(GAME_ID_MAX_LENGTH), ForeignKey("tournaments.id", ondelete="CASCADE")
    )
    at: Mapped[datetime] = mapped_column(UtcDateTime)
    player_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("players.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    text: Mapped[str] = mapped_column(String(MAX_TOURNAMENT_CHAT))


tournaments = table_of(TournamentRow)
tournament_events = table_of(TournamentEventRow)
tournament_chat = table_of(TournamentChatRow)

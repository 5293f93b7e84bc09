"""The store's part of notifications: a player's running games with the side to move (the
"your turn" list), their e-mail settings, and the durable claim on a mail.

The list is read from the ``games`` and ``game_moves`` rows, never from a hub's memory: a
correspondence game nobody looks at need not be in any hub (docs/correspondence.md). Whose turn
it is follows from the number of stored moves (``players[0]`` moves first, the turns alternate):
``max(ply)`` of a game's moves, one look-up in the primary key's index per game.

A mail is *claimed* before it is sent (:meth:`NotifyStore.claim_mail`), in one transaction that
checks the opt-in, counts the mail towards the player's daily cap and stamps the (player, game)
row of ``mail_sent``, unless one was stamped within the window: at most one mail per player and
game per window, across restarts and across the hubs of a cluster (the row is the lock). A mail
whose sending then fails for good is not sent again (at most once, never twice). A turn held
back by the window is marked due at its end (``due_at``); :meth:`NotifyStore.take_due_mails`
hands it out then, if it is still the player's turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, case, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.elements import ColumnElement

from server.rules.time_control import TimeControl
from server.store.correspondence_tables import mail_sent, mail_settings
from server.store.errors import UnknownPlayerError
from server.store.records import control_of_columns, utc_now
from server.store.schema import game_moves, games
from server.store.transactions import Transactions, dialect_insert, integrity_kind

__all__ = ["DueMail", "MailSettings", "NotifyStore", "RunningGame"]

RUNNING = ("created", "started")
"""The statuses of a game not over."""


@dataclass(frozen=True, slots=True)
class RunningGame:
    """A running game of one player, as the "your turn" list needs it."""

    id: str
    variant: str
    speed: str
    control: TimeControl
    rated: bool
    index: int
    """The player's side: 0 first, 1 second."""
    opponent: str
    plies: int
    turn_since: datetime
    """When the side to move got the move (the last move's time, else the game's start)."""

    @property
    def your_turn(self) -> bool:
        return self.plies % 2 == self.index


@dataclass(frozen=True, slots=True)
class MailSettings:
    email: str | None
    opt_in: bool


@dataclass(frozen=True, slots=True)
class DueMail:
    """A turn mail held back by the window, now due (:meth:`NotifyStore.take_due_mails`)."""

    player_id: int
    game_id: str
    variant: str
    index: int
    name: str
    opponent: str
    your_turn: bool
    """Still the player's turn (else there is nothing to send)."""


class _ClaimRefused(Exception):
    """Rolls back a claim that cannot be made (a private signal, never raised out)."""


def _day(moment: datetime) -> int:
    return (moment - datetime(1970, 1, 1, tzinfo=moment.tzinfo)).days


class NotifyStore(Transactions):
    """See the module docstring."""

    async def running_games(self, player_id: int) -> list[RunningGame]:
        """Every game of the player not over (any speed), with whose turn it is."""
        plies = (
            select(func.max(game_moves.c.ply))
            .where(game_moves.c.game_id == games.c.id)
            .scalar_subquery()
        )
        last = (
            select(func.max(game_moves.c.created_at))
            .where(game_moves.c.game_id == games.c.id)
            .scalar_subquery()
        )
        mine: ColumnElement[bool] = or_(
            games.c.first_player_id == player_id, games.c.second_player_id == player_id
        )
        statement = select(
            games.c.id,
            games.c.variant,
            games.c.speed,
            games.c.clock_kind,
            games.c.base_ms,
            games.c.increment_ms,
            games.c.byoyomi_ms,
            games.c.periods,
            games.c.rated,
            games.c.first_player_id,
            games.c.first_name,
            games.c.second_name,
            games.c.created_at,
            games.c.started_at,
            plies.label("plies"),
            last.label("last"),
        ).where(and_(mine, games.c.status.in_(RUNNING)))
        async with self._transaction(write=False) as connection:
            rows = (await connection.execute(statement)).all()
        out: list[RunningGame] = []
        for row in rows:
            # Against oneself (never made by the hub) the player is listed as first.
            index = 0 if row.first_player_id == player_id else 1
            out.append(
                RunningGame(
                    id=row.id,
                    variant=row.variant,
                    speed=row.speed,
                    control=control_of_columns(
                        row.clock_kind, row.base_ms, row.increment_ms, row.byoyomi_ms, row.periods
                    ),
                    rated=row.rated,
                    index=index,
                    opponent=row.second_name if index == 0 else row.first_name,
                    plies=row.plies or 0,
                    turn_since=row.last or row.started_at or row.created_at,
                )
            )
        return out

    async def mail_settings(self, player_id: int) -> MailSettings:
        """The player's settings (no address, not opted in, until they set them)."""
        statement = select(mail_settings.c.email, mail_settings.c.opt_in).where(
            mail_settings.c.player_id == player_id
        )
        async with self._transaction(write=False) as connection:
            row = (await connection.execute(statement)).one_or_none()
        return MailSettings(None, False) if row is None else MailSettings(row.email, row.opt_in)

    async def set_mail_settings(
        self, player_id: int, *, email: str | None, opt_in: bool | None, forget: bool = False
    ) -> MailSettings:
        """Change what is given (``None``: unchanged); ``forget`` deletes the address and opts
        out. Returns the settings now. The address is checked by the caller (one rule:
        ``server.hub.mail_address``).

        :raises UnknownPlayerError: no such player.
        """
        values: dict[str, object] = {}
        if forget:
            values = {"email": None, "opt_in": False}
        else:
            if email is not None:
                values["email"] = email
            if opt_in is not None:
                values["opt_in"] = opt_in
        insert = dialect_insert(self._dialect)(mail_settings).values(player_id=player_id, **values)
        statement = (
            insert.on_conflict_do_update(index_elements=[mail_settings.c.player_id], set_=values)
            if values
            else insert.on_conflict_do_nothing(index_elements=[mail_settings.c.player_id])
        )
        try:
            async with self._transaction(write=True) as connection:
                await connection.execute(statement)
        except IntegrityError as error:
            if integrity_kind(error) != "foreign_key":
                raise
            raise UnknownPlayerError(player_id) from error
        return await self.mail_settings(player_id)

    async def claim_mail(
        self,
        player_id: int,
        game_id: str,
        *,
        window: timedelta,
        daily_cap: int,
        now: datetime | None = None,
        defer: bool = False,
    ) -> str | None:
        """Claim the right to mail the player about the game now: the address to send to, or
        ``None`` (not opted in, no address, the daily cap reached, or a mail about this game
        within ``window``: pass ``timedelta(0)`` for one that must not wait, a game's end).

        With ``defer`` (a turn), a mail refused only because of the window is marked due at the
        window's end (``mail_sent.due_at``), for :meth:`take_due_mails`."""
        moment = utc_now() if now is None else now
        # Read first: most players have not opted in, and their turns must cost no write.
        eligible = select(mail_settings.c.player_id).where(
            mail_settings.c.player_id == player_id,
            mail_settings.c.opt_in.is_(True),
            mail_settings.c.email.is_not(None),
        )
        async with self._transaction(write=False) as connection:
            if (await connection.execute(eligible)).one_or_none() is None:
                return None
        today = _day(moment)
        count = (
            update(mail_settings)
            .where(
                mail_settings.c.player_id == player_id,
                mail_settings.c.opt_in.is_(True),
                mail_settings.c.email.is_not(None),
                or_(mail_settings.c.day != today, mail_settings.c.sent_on_day < daily_cap),
            )
            .values(
                sent_on_day=case(
                    (mail_settings.c.day == today, mail_settings.c.sent_on_day + 1), else_=1
                ),
                day=today,
            )
            .returning(mail_settings.c.email)
        )
        insert = dialect_insert(self._dialect)(mail_sent).values(
            player_id=player_id, game_id=game_id, sent_at=moment, due_at=None
        )
        stamp = insert.on_conflict_do_update(
            index_elements=[mail_sent.c.player_id, mail_sent.c.game_id],
            set_={"sent_at": moment, "due_at": None},
            where=mail_sent.c.sent_at <= moment - window,
        ).returning(mail_sent.c.player_id)
        this = and_(mail_sent.c.player_id == player_id, mail_sent.c.game_id == game_id)
        try:
            async with self._transaction(write=True) as connection:
                if (await connection.execute(stamp)).one_or_none() is None:
                    if defer:  # within the window: due at its end
                        last = select(mail_sent.c.sent_at).where(this)
                        sent_at = (await connection.execute(last)).scalar_one()
                        due = update(mail_sent).where(this).values(due_at=sent_at + window)
                        await connection.execute(due)
                    return None
                email = (await connection.execute(count)).scalar_one_or_none()
                if email is None:
                    raise _ClaimRefused  # the daily cap: the stamp is rolled back
        except _ClaimRefused:
            return None
        return str(email)

    async def take_due_mails(self, now: datetime | None = None, limit: int = 100) -> list[DueMail]:
        """The mails held back by the window whose time has come (``due_at`` passed), each
        taken by one caller only (its ``due_at`` cleared), with whether it is still the
        player's turn (a game over or a turn already taken: nothing to send)."""
        moment = utc_now() if now is None else now
        plies = (
            select(func.max(game_moves.c.ply))
            .where(game_moves.c.game_id == games.c.id)
            .scalar_subquery()
        )
        due = (
            select(
                mail_sent.c.player_id,
                mail_sent.c.game_id,
                games.c.variant,
                games.c.status,
                games.c.first_player_id,
                games.c.first_name,
                games.c.second_name,
                plies.label("plies"),
            )
            .join(games, games.c.id == mail_sent.c.game_id)
            .where(mail_sent.c.due_at.is_not(None), mail_sent.c.due_at <= moment)
            .limit(limit)
        )
        taken: list[DueMail] = []
        async with self._transaction(write=True) as connection:
            for row in (await connection.execute(due)).all():
                take = (
                    update(mail_sent)
                    .where(
                        mail_sent.c.player_id == row.player_id,
                        mail_sent.c.game_id == row.game_id,
                        mail_sent.c.due_at.is_not(None),
                    )
                    .values(due_at=None)
                    .returning(mail_sent.c.player_id)
                )
                if (await connection.execute(take)).one_or_none() is None:
                    continue  # another hub took it
                index = 0 if row.first_player_id == row.player_id else 1
                names = (row.first_name, row.second_name)
                taken.append(
                    DueMail(
                        player_id=row.player_id,
                        game_id=row.game_id,
                        variant=row.variant,
                        index=index,
                        name=names[index],
                        opponent=names[1 - index],
                        your_turn=row.status in RUNNING and (row.plies or 0) % 2 == index,
                    )
                )
        return taken

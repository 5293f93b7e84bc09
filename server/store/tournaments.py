"""Tournaments in the store: a tournament's settings and the ordered events it is made of.

A tournament *is* its :class:`~server.hub.tournament.values.TournamentSettings` plus the
ordered tuple of its events (docs/tournaments.md); this part of the :class:`~server.store.Store`
keeps exactly that, so a restarted hub (or another hub taking the tournament over) rebuilds the
same state with ``server.hub.tournament.state.replay(stored.events)``:

* ``tournaments``: one row per tournament, the settings as JSON (``server.store.tournament_codec``),
  who created it, ``status`` (``created`` → ``started`` → ``finished``, kept in step with the
  ``Started`` / ``Ended`` events appended), the next deadline (the timer to rebuild after a
  restart) and the hub node running it (``owner``);
* ``tournament_events``: event number ``seq`` (0, 1, 2…) of a tournament, as JSON.

Appends are optimistic: the writer says how many events it has seen (``expected_seq``, the
number the first new event takes). If another writer appended since, nothing is stored and
:class:`~server.store.errors.TournamentConflictError` is raised; the caller reloads and decides
again. The primary key (tournament_id, seq) makes a duplicate or racing append impossible at
the database: on PostgreSQL two racing transactions that both saw ``n`` events both insert
``seq = n`` and the second fails on the key; on SQLite the writing transactions are serialised
(``BEGIN IMMEDIATE``) and the second sees the first's rows.

Time is injected: ``create_tournament`` and ``due_tournaments`` take ``now`` (an aware datetime);
an event's row time is its own ``at_ms``.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal, Protocol, cast, get_args

from sqlalchemy import Row, func, select, update
from sqlalchemy.exc import IntegrityError

from server.hub import game_ids
from server.hub.tournament.values import Ended, Event, Started, TournamentSettings
from server.store.errors import TournamentConflictError, UnknownTournamentError
from server.store.records import check_text
from server.store.schema import NAME_LENGTH, OWNER_LENGTH
from server.store.tournament_codec import (
    event_json,
    event_of_json,
    settings_json,
    settings_of_json,
)
from server.store.tournament_tables import tournament_events, tournaments
from server.store.transactions import Transactions, integrity_kind

__all__ = [
    "TOURNAMENT_STATUSES",
    "StoredTournament",
    "TournamentInfo",
    "TournamentStatus",
    "TournamentStore",
    "each_unfinished_id",
    "ms_datetime",
]

TournamentStatus = Literal["created", "started", "finished"]
TOURNAMENT_STATUSES: Final[tuple[TournamentStatus, ...]] = get_args(TournamentStatus)

MAX_LIST: Final = 500
"""The most rows one listing returns."""

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_SECURE: Final = secrets.SystemRandom()


def ms_datetime(ms: int) -> datetime:
    """The aware UTC datetime of ``ms`` milliseconds since the epoch (the core's times).

    :raises ValueError: a time outside the years 1–9999.
    """
    try:
        return _EPOCH + timedelta(milliseconds=ms)
    except OverflowError as error:
        raise ValueError(f"not a time: {ms} ms") from error


@dataclass(frozen=True, slots=True)
class TournamentInfo:
    """A ``tournaments`` row: the tournament's id (a game id's form, :mod:`server.hub.game_ids`),
    settings, creation, status, next deadline and owner node (None: none)."""

    id: str
    settings: TournamentSettings
    created_at: datetime
    created_by: str | None
    status: TournamentStatus
    next_deadline_at: datetime | None
    owner: str | None


@dataclass(frozen=True, slots=True)
class StoredTournament:
    """A whole stored tournament: its row and every event in order (``events[seq]``)."""

    info: TournamentInfo
    events: tuple[Event, ...]

    @property
    def settings(self) -> TournamentSettings:
        return self.info.settings

    @property
    def next_seq(self) -> int:
        """The ``expected_seq`` of the next append."""
        return len(self.events)


class TournamentStore(Transactions):
    """Tournaments and their events (see the module docstring)."""

    async def create_tournament(
        self,
        settings: TournamentSettings,
        *,
        created_by: str | None,
        now: datetime,
        owner: str | None = None,
    ) -> str:
        """Store a new tournament (``created``, no events) and return its id.

        Its first deadline is its start time (``settings.start_at_ms``; none when it starts on
        a number of players).

        :param created_by: the creator's name; None for one the server schedules itself.
        :param owner: the hub node that runs it, if one does already.
        :raises ValueError: a malformed name or owner.
        """
        if created_by is not None:
            check_text("created_by", created_by, NAME_LENGTH)
        if owner is not None:
            check_text("owner", owner, OWNER_LENGTH)
        deadline = None if settings.start_at_ms is None else ms_datetime(settings.start_at_ms)
        values = {
            "settings": settings_json(settings),
            "created_at": now,
            "created_by": created_by,
            "status": "created",
            "next_deadline_at": deadline,
            "owner": owner,
        }
        for attempt in range(3):  # an id drawn twice (62**8 ids) is drawn again
            tournament_id = game_ids.new_game_id(_SECURE)
            try:
                async with self._transaction(write=True) as connection:
                    await connection.execute(
                        tournaments.insert().values(id=tournament_id, **values)
                    )
                return tournament_id
            except IntegrityError as error:
                if integrity_kind(error) != "unique" or attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def create_tournament_once(
        self,
        tournament_id: str,
        settings: TournamentSettings,
        *,
        now: datetime,
        owner: str | None = None,
    ) -> bool:
        """Store the server's own tournament ``tournament_id`` (a scheduled occurrence, whose
        id every hub derives alike) unless it exists: True if stored now, False if it was
        already (another hub, or this one before a restart, created it; the primary key
        refuses the second insert, so two hubs racing store one).

        :raises ValueError: a malformed owner."""
        if owner is not None:
            check_text("owner", owner, OWNER_LENGTH)
        deadline = None if settings.start_at_ms is None else ms_datetime(settings.start_at_ms)
        try:
            async with self._transaction(write=True) as connection:
                await connection.execute(
                    tournaments.insert().values(
                        id=tournament_id,
                        settings=settings_json(settings),
                        created_at=now,
                        created_by=None,
                        status="created",
                        next_deadline_at=deadline,
                        owner=owner,
                    )
                )
        except IntegrityError as error:
            if integrity_kind(error) != "unique":
                raise
            return False
        return True

    async def append_tournament_event(
        self, tournament_id: str, expected_seq: int, event: Event
    ) -> int:
        """Append ``event`` as event number ``expected_seq``; returns the next number.

        :raises TournamentConflictError: the tournament does not hold exactly ``expected_seq``
            events (another writer appended first): nothing was stored.
        :raises UnknownTournamentError: no such tournament.
        """
        return await self.append_tournament_events(tournament_id, expected_seq, (event,))

    async def append_tournament_events(
        self, tournament_id: str, expected_seq: int, events: Sequence[Event]
    ) -> int:
        """Append ``events`` in one transaction, numbered from ``expected_seq`` (a pairing wave's
        games, a round's pairings and byes); all or none are stored. Returns the next number.
        A ``Started`` moves the status to ``started``, an ``Ended`` to ``finished``.

        :raises ValueError: no events, a negative ``expected_seq``, an event time out of range.
        :raises TournamentConflictError: another writer appended first: nothing was stored.
        :raises UnknownTournamentError: no such tournament.
        """
        _check_id(tournament_id)
        if not events:
            raise ValueError("nothing to append")
        if isinstance(expected_seq, bool) or not isinstance(expected_seq, int) or expected_seq < 0:
            raise ValueError(f"expected_seq must be an integer >= 0, got {expected_seq!r}")
        rows = [
            {
                "tournament_id": tournament_id,
                "seq": expected_seq + index,
                "event": event_json(event),
                "at": ms_datetime(event.at_ms),
            }
            for index, event in enumerate(events)
        ]
        ended = any(isinstance(event, Ended) for event in events)
        started = any(isinstance(event, Started) for event in events)
        try:
            async with self._transaction(write=True) as connection:
                status = (
                    await connection.execute(
                        select(tournaments.c.status).where(tournaments.c.id == tournament_id)
                    )
                ).scalar_one_or_none()
                if status is None:
                    raise UnknownTournamentError(tournament_id)
                stored = (
                    await connection.execute(
                        select(func.coalesce(func.max(tournament_events.c.seq) + 1, 0)).where(
                            tournament_events.c.tournament_id == tournament_id
                        )
                    )
                ).scalar_one()
                if stored != expected_seq:
                    raise TournamentConflictError(tournament_id, expected_seq)
                await connection.execute(tournament_events.insert(), rows)
                new_status = (
                    "finished" if ended else "started" if started and status == "created" else None
                )
                if new_status is not None:
                    await connection.execute(
                        update(tournaments)
                        .where(tournaments.c.id == tournament_id)
                        .values(status=new_status)
                    )
        except IntegrityError as error:
            if integrity_kind(error) != "unique":
                raise
            raise TournamentConflictError(tournament_id, expected_seq) from error
        return expected_seq + len(events)

    async def load_tournament(self, tournament_id: str) -> StoredTournament:
        """The tournament's row and all its events, in order, read in one transaction.

        :raises UnknownTournamentError: no such tournament.
        :raises ValueError: a stored value this server cannot read (a later layout).
        """
        _check_id(tournament_id)
        async with self._transaction(write=False) as connection:
            row = (
                await connection.execute(
                    select(tournaments).where(tournaments.c.id == tournament_id)
                )
            ).one_or_none()
            if row is None:
                raise UnknownTournamentError(tournament_id)
            stored = await connection.execute(
                select(tournament_events.c.event)
                .where(tournament_events.c.tournament_id == tournament_id)
                .order_by(tournament_events.c.seq)
            )
            events = tuple(event_of_json(value) for value in stored.scalars())
        return StoredTournament(_info(row), events)

    async def list_tournaments(
        self,
        status: TournamentStatus | Collection[TournamentStatus] | None = None,
        *,
        limit: int = 50,
    ) -> list[TournamentInfo]:
        """Tournaments (all, or those in ``status`` or in one of ``status``), the newest
        first, at most ``limit`` (1 to :data:`MAX_LIST`)."""
        if not 1 <= limit <= MAX_LIST:
            raise ValueError(f"limit must be between 1 and {MAX_LIST}")
        statement = select(tournaments)
        if status is not None:
            wanted = (status,) if isinstance(status, str) else tuple(status)
            if not set(wanted) <= set(TOURNAMENT_STATUSES):
                raise ValueError(f"unknown tournament status in {wanted!r}")
            statement = statement.where(tournaments.c.status.in_(wanted))
        statement = statement.order_by(tournaments.c.created_at.desc(), tournaments.c.id.desc())
        async with self._transaction(write=False) as connection:
            rows = await connection.execute(statement.limit(limit))
            return [_info(row) for row in rows]

    async def unfinished_tournament_ids(
        self, *, after: str | None = None, limit: int = MAX_LIST
    ) -> list[str]:
        """The ids of the unfinished tournaments (created or started) after ``after`` in id
        order, at most ``limit`` (1 to :data:`MAX_LIST`): a page by key. A hub taking up every
        unfinished tournament pages on with the last id it got (:func:`each_unfinished_id`)
        until a page comes back short, however many there are."""
        if not 1 <= limit <= MAX_LIST:
            raise ValueError(f"limit must be between 1 and {MAX_LIST}")
        statement = select(tournaments.c.id).where(tournaments.c.status != "finished")
        if after is not None:
            statement = statement.where(tournaments.c.id > after)
        statement = statement.order_by(tournaments.c.id).limit(limit)
        async with self._transaction(write=False) as connection:
            return [str(row.id) for row in await connection.execute(statement)]

    async def due_tournaments(
        self, now: datetime, *, limit: int = MAX_LIST
    ) -> list[TournamentInfo]:
        """Unfinished tournaments whose next deadline is at or before ``now``, the earliest
        deadline first (the timers a hub fires at start, and on each tick)."""
        if not 1 <= limit <= MAX_LIST:
            raise ValueError(f"limit must be between 1 and {MAX_LIST}")
        statement = (
            select(tournaments)
            .where(tournaments.c.next_deadline_at <= now, tournaments.c.status != "finished")
            .order_by(tournaments.c.next_deadline_at, tournaments.c.id)
            .limit(limit)
        )
        async with self._transaction(write=False) as connection:
            return [_info(row) for row in await connection.execute(statement)]

    async def set_tournament_deadline(self, tournament_id: str, at: datetime | None) -> None:
        """Set the tournament's next deadline (None: none, e.g. while a Swiss round is played).

        :raises UnknownTournamentError: no such tournament.
        """
        _check_id(tournament_id)
        async with self._transaction(write=True) as connection:
            result = await connection.execute(
                update(tournaments)
                .where(tournaments.c.id == tournament_id)
                .values(next_deadline_at=at)
            )
            if cast(int, result.rowcount) != 1:
                raise UnknownTournamentError(tournament_id)


def _check_id(tournament_id: str) -> None:
    if not isinstance(tournament_id, str) or not game_ids.GAME_ID_PATTERN.fullmatch(tournament_id):
        raise ValueError(f"not a tournament id: {tournament_id!r}")


def _info(row: Row[Any]) -> TournamentInfo:
    return TournamentInfo(
        id=row.id,
        settings=settings_of_json(row.settings),
        created_at=row.created_at,
        created_by=row.created_by,
        status=cast(TournamentStatus, row.status),
        next_deadline_at=row.next_deadline_at,
        owner=row.owner,
    )


class _PagesUnfinished(Protocol):
    async def unfinished_tournament_ids(
        self, *, after: str | None = ..., limit: int = ...
    ) -> list[str]: ...


async def each_unfinished_id(
    store: _PagesUnfinished, *, page: int = MAX_LIST
) -> AsyncIterator[str]:
    """Every unfinished tournament's id, in id order, read ``page`` ids at a time (a
    tournament created meanwhile with a smaller id is seen at the next sweep)."""
    after: str | None = None
    while True:
        ids = await store.unfinished_tournament_ids(after=after, limit=page)
        for tournament_id in ids:
            yield tournament_id
        if len(ids) < page:
            return
        after = ids[-1]

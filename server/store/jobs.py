"""The engine workers' job queue (``engine_jobs``): move and analysis jobs, leased to workers.

A job's life: :meth:`JobStore.enqueue_move` / :meth:`JobStore.enqueue_analysis` write it
``queued``; :meth:`JobStore.acquire` leases the next one a worker can do to that worker
(``acquired``, ``lease_until`` = now + the kind's lease), **move jobs before analysis jobs**,
so a player waiting for the computer never waits behind a queued analysis, and within a kind
**round-robin between owners** (the player a job serves: the computer's opponent, an
analysis' requester; the owner whose last job was acquired longest ago first, then the oldest
job), so one player's many jobs never make another player's wait behind all of them;
:meth:`JobStore.waiting_moves` tells a worker analysing whether a move job waits (it then
gives the analysis back between two positions, docs/engines.md); :meth:`JobStore.renew`
extends the lease (an analysis' partial result rides along); :meth:`JobStore.complete` stores
the result (``done``); :meth:`JobStore.abort` gives it back (``queued``). A lease that runs out
is as good as an abort: the next ``acquire`` takes the job, whoever held it. A worker whose lease
ran out can no longer renew, complete or abort the job (it gets ``False``/``None``: the HTTP
door answers 404 and the worker drops it).

Concurrency: on PostgreSQL ``acquire`` picks its row with ``SELECT … FOR UPDATE SKIP LOCKED``,
so any number of hubs hand out jobs side by side without handing one job to two workers; on
SQLite the writing transaction's ``BEGIN IMMEDIATE`` serialises the acquires.

Time is injected: every call that compares with a lease takes ``now`` (an aware datetime), so
the tests move a clock instead of sleeping through leases.
"""

from __future__ import annotations

import secrets
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final, Literal, TypedDict, cast

from sqlalchemy import case, delete, func, insert, or_, select, update
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from server.rules.analysis import AnalysisLimitsView, PlyEvalView
from server.store.records import check_game_id, check_text, utc_now
from server.store.schema import (
    JOB_ID_LENGTH,
    OWNER_LENGTH,
    VARIANT_LENGTH,
    WORKER_LENGTH,
    ColumnValues,
    engine_jobs,
)
from server.store.transactions import Transactions

__all__ = [
    "DEFAULT_LEASES",
    "JOB_KINDS",
    "AnalysisJobPayload",
    "Job",
    "JobClock",
    "JobKind",
    "JobPayload",
    "JobResult",
    "JobState",
    "JobStore",
    "JobWork",
    "MoveJobPayload",
    "MoveJobResult",
    "QueueStatus",
    "new_job_id",
]

JobKind = Literal["move", "analysis"]
JobState = Literal["queued", "acquired", "done"]
JOB_KINDS: Final[tuple[JobKind, ...]] = ("move", "analysis")

DEFAULT_LEASES: Final[Mapping[JobKind, float]] = {"move": 20.0, "analysis": 60.0}
"""Seconds a job is leased to a worker (FISHNET.md), per kind; every submit renews it."""

_ID_ALPHABET = string.digits + string.ascii_letters
_ID_LENGTH = 12
assert _ID_LENGTH <= JOB_ID_LENGTH

QueueStatus = dict[JobKind, dict[Literal["queued", "acquired"], int]]
"""``{"move": {"queued": n, "acquired": n}, "analysis": {...}}`` (FISHNET.md's status)."""


class JobWork(TypedDict):
    """A job body's ``work`` (FISHNET.md): what to do, the job's id, and its lease in seconds,
    which the worker renews with ``/fishnet/keepalive`` while it works on the job."""

    type: JobKind
    id: str
    lease_s: float


class JobClock(TypedDict):
    """Both clocks of a move job (FISHNET.md): main times, and the mover's byoyomi."""

    kind: Literal["fischer", "byoyomi"]
    first_ms: int
    second_ms: int
    increment_ms: int
    byoyomi_ms: int
    periods: int


class MoveJobPayload(TypedDict):
    """A move job's fields (FISHNET.md): the position and the computer's strength and clock."""

    position: str | None
    moves: str
    level: int | None
    clock: JobClock | None


class AnalysisJobPayload(TypedDict):
    """An analysis job's fields (FISHNET.md)."""

    position: str
    moves: str
    limits: AnalysisLimitsView
    skip_plies: list[int]


JobPayload = MoveJobPayload | AnalysisJobPayload
"""A job's fields besides its id, game and variant, by its kind (stored as JSON)."""


class MoveJobResult(TypedDict):
    """A move job's result: the engine's move (``None``: it had none)."""

    bestmove: str | None


JobResult = MoveJobResult | list[PlyEvalView]
"""A job's result, by its kind (stored as JSON): an analysis's is its plies' evaluations."""


def new_job_id() -> str:
    """A random job id: 12 characters from ``[0-9A-Za-z]``."""
    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(_ID_LENGTH))


@dataclass(frozen=True, slots=True)
class Job:
    """One row of the queue, as read."""

    id: str
    kind: JobKind
    game_id: str
    variant: str
    payload: JobPayload
    state: JobState
    worker: str | None
    lease_until: datetime | None
    attempts: int
    result: JobResult | None
    """None until a worker sent one (an analysis: with a lease renewal, before it is done)."""
    created_at: datetime
    updated_at: datetime
    owner: str | None = None
    """The player the job serves (round-robin key), None for nobody in particular."""
    served_at: datetime | None = None
    """When a worker last acquired it."""

    def leased(self, now: datetime) -> bool:
        """Whether a worker holds the job at ``now``."""
        return self.state == "acquired" and self.lease_until is not None and self.lease_until > now


def _job(row: Row[Any]) -> Job:
    return Job(
        id=row.id,
        kind=cast(JobKind, row.kind),
        game_id=row.game_id,
        variant=row.variant,
        payload=cast(JobPayload, dict(row.payload)),
        state=cast(JobState, row.state),
        worker=row.worker,
        lease_until=row.lease_until,
        attempts=row.attempts,
        result=row.result,
        created_at=row.created_at,
        updated_at=row.updated_at,
        owner=row.owner,
        served_at=row.served_at,
    )


def _check_now(now: datetime) -> None:
    if not isinstance(now, datetime) or now.tzinfo is None:
        raise ValueError(f"now must be an aware datetime, got {now!r}")


def _free(now: datetime) -> ColumnElement[bool]:
    """A job a worker may take at ``now``: queued, or acquired with its lease run out."""
    table = engine_jobs.c
    return or_(table.state == "queued", (table.state == "acquired") & (table.lease_until <= now))


def _check_lease(lease_s: float) -> timedelta:
    if isinstance(lease_s, bool) or not isinstance(lease_s, int | float) or not 0 < lease_s < 86400:
        raise ValueError(f"a lease is 0 to 86400 seconds, got {lease_s!r}")
    return timedelta(seconds=lease_s)


class JobStore(Transactions):
    """The queue's reads and writes, each one transaction (see the module docstring)."""

    async def enqueue_move(
        self,
        game_id: str,
        variant: str,
        payload: MoveJobPayload,
        *,
        now: datetime | None = None,
        owner: str | None = None,
    ) -> str:
        """Queue a computer's move in ``game_id`` for ``owner`` (the player it plays); its id.

        Only the newest position of a game is worth a search: unfinished move jobs of the same
        game are ended (``done``, result ``None``) in the same transaction.
        """
        return await self._enqueue("move", game_id, variant, payload, now, owner, supersede=True)

    async def enqueue_analysis(
        self,
        game_id: str,
        variant: str,
        payload: AnalysisJobPayload,
        *,
        now: datetime | None = None,
        owner: str | None = None,
    ) -> str:
        """Queue the analysis of a stored game, requested by ``owner``; its id. An unfinished
        analysis job of the same game (one that was replaced) is ended in the same
        transaction: its worker's next submission or keepalive is refused (404)."""
        return await self._enqueue(
            "analysis", game_id, variant, payload, now, owner, supersede=True
        )

    async def _enqueue(
        self,
        kind: JobKind,
        game_id: str,
        variant: str,
        payload: JobPayload,
        now: datetime | None,
        owner: str | None,
        *,
        supersede: bool,
    ) -> str:
        check_game_id(game_id)
        check_text("variant", variant, VARIANT_LENGTH)
        if owner is not None:
            check_text("owner", owner, OWNER_LENGTH)
        if not isinstance(payload, Mapping):
            raise ValueError(f"a job's payload is a mapping, got {payload!r}")
        moment = now if now is not None else utc_now()
        _check_now(moment)
        job_id = new_job_id()
        async with self._transaction(write=True) as connection:
            if supersede:
                await connection.execute(
                    update(engine_jobs)
                    .where(
                        engine_jobs.c.game_id == game_id,
                        engine_jobs.c.kind == kind,
                        engine_jobs.c.state != "done",
                    )
                    .values(state="done", worker=None, lease_until=None, updated_at=moment)
                )
            await connection.execute(
                insert(engine_jobs).values(
                    id=job_id,
                    kind=kind,
                    game_id=game_id,
                    variant=variant,
                    payload=dict(payload),
                    owner=owner,
                    state="queued",
                    attempts=0,
                    created_at=moment,
                    updated_at=moment,
                )
            )
        return job_id

    async def acquire(
        self,
        worker: str,
        now: datetime,
        *,
        variants: Iterable[str] | None = None,
        leases: Mapping[JobKind, float] = DEFAULT_LEASES,
    ) -> Job | None:
        """Lease the next job to ``worker``: move jobs first; within a kind the owner served
        longest ago (never: first), then the oldest job; a job whose lease has run out counts
        as queued. ``variants`` limits it to the ones the worker plays. None when there is no
        work."""
        check_text("worker", worker, WORKER_LENGTH)
        _check_now(now)
        durations = {kind: _check_lease(leases[kind]) for kind in JOB_KINDS}
        table = engine_jobs.c
        # The owner's turn: when a job of theirs (of this kind) was last acquired.
        served = engine_jobs.alias("served")
        last_served = (
            select(func.max(served.c.served_at))
            .where(served.c.owner == table.owner, served.c.kind == table.kind)
            .scalar_subquery()
        )
        query = (
            select(engine_jobs)
            .where(_free(now))
            .order_by(
                case((table.kind == "move", 0), else_=1),
                last_served.asc().nulls_first(),
                table.created_at,
                table.id,
            )
            .limit(1)
            .with_for_update(skip_locked=True)
        )
        if variants is not None:
            query = query.where(table.variant.in_(sorted(set(variants))))
        async with self._transaction(write=True) as connection:
            row = (await connection.execute(query)).first()
            if row is None:
                return None
            lease_until = now + durations[cast(JobKind, row.kind)]
            updated = (
                await connection.execute(
                    update(engine_jobs)
                    .where(table.id == row.id)
                    .values(
                        state="acquired",
                        worker=worker,
                        lease_until=lease_until,
                        attempts=table.attempts + 1,
                        served_at=now,
                        updated_at=now,
                    )
                    .returning(*engine_jobs.c)
                )
            ).one()
        return _job(updated)

    async def waiting_moves(self, now: datetime) -> list[str]:
        """The variants of the move jobs no worker holds at ``now`` (queued, or their lease ran
        out), sorted: a worker analysing gives its slot back when it plays one of them."""
        _check_now(now)
        query = (
            select(engine_jobs.c.variant)
            .where(engine_jobs.c.kind == "move", _free(now))
            .distinct()
            .order_by(engine_jobs.c.variant)
        )
        async with self._transaction(write=False) as connection:
            return list((await connection.execute(query)).scalars())

    async def renew(
        self,
        job_id: str,
        now: datetime,
        *,
        lease_s: float | None = None,
        leases: Mapping[JobKind, float] = DEFAULT_LEASES,
        result: list[PlyEvalView] | None = None,
    ) -> bool:
        """Extend the lease of a job a worker holds (by its kind's lease in ``leases``, or
        ``lease_s``); a non-None ``result`` (an analysis so far) is stored with it. False when
        the job is unknown, done, or its lease has run out."""
        _check_now(now)
        async with self._transaction(write=True) as connection:
            held = await self._held(connection, job_id, now)
            if held is None:
                return False
            duration = _check_lease(lease_s if lease_s is not None else leases[held.kind])
            values: ColumnValues = {"lease_until": now + duration, "updated_at": now}
            if result is not None:
                values["result"] = result
            await connection.execute(
                update(engine_jobs).where(engine_jobs.c.id == job_id).values(**values)
            )
        return True

    async def complete(self, job_id: str, result: JobResult, now: datetime) -> Job | None:
        """Store the result of a job a worker holds and end it; the job as it is now, or None
        (nothing changed) when the job is unknown, done, or its lease has run out."""
        _check_now(now)
        async with self._transaction(write=True) as connection:
            if await self._held(connection, job_id, now) is None:
                return None
            row = (
                await connection.execute(
                    update(engine_jobs)
                    .where(engine_jobs.c.id == job_id)
                    .values(state="done", result=result, lease_until=None, updated_at=now)
                    .returning(*engine_jobs.c)
                )
            ).one()
        return _job(row)

    async def abort(self, job_id: str, now: datetime) -> bool:
        """A worker gives a job back: queued again, for the next worker. False when the job is
        unknown, done, or its lease had already run out (then it is queued anyway)."""
        _check_now(now)
        async with self._transaction(write=True) as connection:
            if await self._held(connection, job_id, now) is None:
                return False
            await connection.execute(
                update(engine_jobs)
                .where(engine_jobs.c.id == job_id)
                .values(state="queued", worker=None, lease_until=None, updated_at=now)
            )
        return True

    async def cancel(self, job_id: str, now: datetime | None = None) -> bool:
        """End a job nobody needs any more (its game is over), held or not. False if it was
        unknown or already done."""
        moment = now if now is not None else utc_now()
        _check_now(moment)
        async with self._transaction(write=True) as connection:
            done = await connection.execute(
                update(engine_jobs)
                .where(engine_jobs.c.id == job_id, engine_jobs.c.state != "done")
                .values(state="done", worker=None, lease_until=None, updated_at=moment)
            )
        return done.rowcount > 0

    async def job(self, job_id: str) -> Job | None:
        """The job with this id, in whatever state."""
        if not isinstance(job_id, str) or not 0 < len(job_id) <= JOB_ID_LENGTH:
            return None
        async with self._transaction(write=False) as connection:
            row = (
                await connection.execute(select(engine_jobs).where(engine_jobs.c.id == job_id))
            ).first()
        return None if row is None else _job(row)

    async def latest_job(self, game_id: str, kind: JobKind) -> Job | None:
        """The newest job of ``kind`` for ``game_id``, in whatever state."""
        query = (
            select(engine_jobs)
            .where(engine_jobs.c.game_id == game_id, engine_jobs.c.kind == kind)
            .order_by(engine_jobs.c.created_at.desc(), engine_jobs.c.id.desc())
            .limit(1)
        )
        async with self._transaction(write=False) as connection:
            row = (await connection.execute(query)).first()
        return None if row is None else _job(row)

    async def open_jobs(self, kind: JobKind | None = None) -> list[Job]:
        """Every job not done (of ``kind``), oldest first: what a restarted hub picks up."""
        query = select(engine_jobs).where(engine_jobs.c.state != "done")
        if kind is not None:
            query = query.where(engine_jobs.c.kind == kind)
        async with self._transaction(write=False) as connection:
            rows = (
                await connection.execute(query.order_by(engine_jobs.c.created_at, engine_jobs.c.id))
            ).all()
        return [_job(row) for row in rows]

    async def status(self, now: datetime) -> QueueStatus:
        """How many jobs of each kind wait and how many are held (an expired lease waits)."""
        _check_now(now)
        table = engine_jobs.c
        held = (table.state == "acquired") & (table.lease_until > now)
        query = (
            select(table.kind, held.label("held"), func.count())
            .where(table.state != "done")
            .group_by(table.kind, held)
        )
        async with self._transaction(write=False) as connection:
            rows = (await connection.execute(query)).all()
        counts: QueueStatus = {kind: {"queued": 0, "acquired": 0} for kind in JOB_KINDS}
        for kind, is_held, number in rows:
            counts[cast(JobKind, kind)]["acquired" if is_held else "queued"] += int(number)
        return counts

    async def purge_done(self, before: datetime) -> int:
        """Delete jobs done before ``before``; how many."""
        _check_now(before)
        async with self._transaction(write=True) as connection:
            gone = await connection.execute(
                delete(engine_jobs).where(
                    engine_jobs.c.state == "done", engine_jobs.c.updated_at < before
                )
            )
        return gone.rowcount

    @staticmethod
    async def _held(connection: AsyncConnection, job_id: str, now: datetime) -> Job | None:
        if not isinstance(job_id, str) or not 0 < len(job_id) <= JOB_ID_LENGTH:
            return None
        row = (
            await connection.execute(
                select(engine_jobs).where(engine_jobs.c.id == job_id).with_for_update()
            )
        ).first()
        if row is None:
            return None
        job = _job(row)
        return job if job.leased(now) else None

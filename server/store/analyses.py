"""The store's computer analyses: requested for a finished game, filled ply by ply by the
engine workers' submissions, read back by the review API and the exports.

States: ``queued`` (requested, no evaluation yet) → ``running`` (some plies stored) → ``done``
(the worker's final submission) or ``failed`` (given up: the job could not be done). One
analysis per game; a failed one may be requested again (its plies are cleared), and a player of
the game may replace one somebody else requested, whatever its state (``players``). Everything
is in the database, so an analysis survives a restart of any process; the engine job that
produces it lives in the job queue (``engine_jobs``), which points to the game.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Row, delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from server.rules.analysis import (
    AnalysisLimits,
    AnalysisRecord,
    AnalysisState,
    FirstPlayerScore,
    PlyEval,
)
from server.store.errors import GameStateError, StoreError, UnknownGameError
from server.store.records import check_game_id, check_text, utc_now
from server.store.schema import NAME_LENGTH, ColumnValues, analyses, analysis_plies, games
from server.store.transactions import Transactions, dialect_insert, integrity_kind

__all__ = ["AnalysisExistsError", "AnalysisStore", "AnalysisUsage", "UnknownAnalysisError"]

MAX_ERROR_LENGTH = 500


class AnalysisExistsError(StoreError):
    """The game already has an analysis that is queued, running or done."""

    def __init__(self, game_id: str, state: str) -> None:
        super().__init__(f"game {game_id} already has an analysis ({state})")
        self.game_id = game_id
        self.state = state


class UnknownAnalysisError(StoreError):
    """The game has no analysis (or none that can still take results)."""

    def __init__(self, game_id: str) -> None:
        super().__init__(f"game {game_id!r} has no analysis in progress")
        self.game_id = game_id


@dataclass(frozen=True, slots=True)
class AnalysisUsage:
    """What one player has asked of the analysts: the requests stored since a moment (the
    daily quota) and the games of their analyses not finished yet (queued or running)."""

    requested: int
    unfinished: tuple[str, ...]


class AnalysisStore(Transactions):
    """Analyses of finished games and their per-ply evaluations."""

    async def request_analysis(
        self,
        game_id: str,
        *,
        limits: AnalysisLimits,
        plies_total: int,
        requested_by: str | None = None,
        players: Collection[str] = (),
        connection: AsyncConnection | None = None,
    ) -> AnalysisRecord:
        """Record a request (state ``queued``) for a finished game.

        :param plies_total: the number of positions the worker will evaluate.
        :param players: the game's players' names when one of them requests: an analysis in
            any state that none of them requested is then replaced (its plies cleared).
        :param connection: an open write transaction to join (e.g. the one that enqueues the
            engine job), else one of its own.
        :raises ValueError: for malformed limits or name.
        :raises UnknownGameError: no such game.
        :raises GameStateError: the game is not finished.
        :raises AnalysisExistsError: an analysis is already queued, running or done.
        """
        check_game_id(game_id)
        _check_limits(limits)
        if plies_total < 0:
            raise ValueError("plies_total must not be negative")
        if requested_by is not None:
            check_text("requested_by", requested_by, NAME_LENGTH)
        if connection is not None:
            return await self._request_in(
                connection, game_id, limits, plies_total, requested_by, players
            )
        async with self._transaction(write=True) as own:
            return await self._request_in(own, game_id, limits, plies_total, requested_by, players)

    async def _request_in(
        self,
        connection: AsyncConnection,
        game_id: str,
        limits: AnalysisLimits,
        plies_total: int,
        requested_by: str | None,
        players: Collection[str],
    ) -> AnalysisRecord:
        status = (
            await connection.execute(select(games.c.status).where(games.c.id == game_id))
        ).scalar_one_or_none()
        if status is None:
            raise UnknownGameError(game_id)
        if status != "finished":
            raise GameStateError(game_id, status, "analyse")
        row = (
            await connection.execute(
                select(analyses.c.state, analyses.c.requested_by).where(
                    analyses.c.game_id == game_id
                )
            )
        ).one_or_none()
        existing = None if row is None else cast(str, row.state)
        ours = {name.lower() for name in players}
        strangers = bool(ours) and (row is None or (row.requested_by or "").lower() not in ours)
        if existing is not None and existing != "failed" and not strangers:
            raise AnalysisExistsError(game_id, existing)
        now = utc_now()
        values: ColumnValues = {
            "state": "queued",
            "requested_by": requested_by,
            "movetime_ms": limits.movetime_ms,
            "depth": limits.depth,
            "plies_total": plies_total,
            "error": None,
            "created_at": now,
            "finished_at": None,
        }
        if existing is not None:
            await connection.execute(
                delete(analysis_plies).where(analysis_plies.c.game_id == game_id)
            )
            await connection.execute(
                update(analyses).where(analyses.c.game_id == game_id).values(values)
            )
        else:
            try:
                await connection.execute(analyses.insert().values(game_id=game_id, **values))
            except IntegrityError as error:  # a racing request inserted first
                if integrity_kind(error) != "unique":
                    raise
                raise AnalysisExistsError(game_id, "queued") from error
        return AnalysisRecord(game_id, "queued", requested_by, limits, plies_total, created_at=now)

    async def save_analysis_plies(
        self, game_id: str, evals: Sequence[PlyEval], *, done: bool = False
    ) -> AnalysisRecord:
        """Store evaluations (a worker's partial or final submission; a ply sent again
        replaces the earlier one) and move the state to ``running``, or ``done`` with
        ``done=True``.

        :raises ValueError: an evaluation of a ply past ``plies_total``.
        :raises UnknownAnalysisError: no analysis of this game is queued or running.
        """
        check_game_id(game_id)
        async with self._transaction(write=True) as connection:
            row = (
                await connection.execute(select(analyses).where(analyses.c.game_id == game_id))
            ).one_or_none()
            if row is None or row.state not in ("queued", "running"):
                raise UnknownAnalysisError(game_id)
            for entry in evals:
                # Plies are positions 0..plies (the final one may carry no entry).
                if entry.ply > row.plies_total:
                    raise ValueError(f"ply {entry.ply} is past the game's end")
            if evals:
                insert = dialect_insert(self._dialect)(analysis_plies)
                rows = list({e.ply: _ply_values(game_id, e) for e in evals}.values())  # last wins
                statement = insert.values(rows)
                statement = statement.on_conflict_do_update(
                    index_elements=[analysis_plies.c.game_id, analysis_plies.c.ply],
                    set_={
                        key: statement.excluded[key]
                        for key in ("cp", "mate", "best", "pv", "depth", "nodes", "time_ms")
                    },
                )
                await connection.execute(statement)
            changes: ColumnValues = {"state": "done" if done else "running"}
            if done:
                changes["finished_at"] = utc_now()
            await connection.execute(
                update(analyses).where(analyses.c.game_id == game_id).values(changes)
            )
            return await _read(connection, game_id)  # type: ignore[return-value]

    async def fail_analysis(self, game_id: str, error: str) -> bool:
        """Mark a queued, running or empty done analysis failed (its plies stay, for what they
        show); False if there was none of these."""
        check_game_id(game_id)
        async with self._transaction(write=True) as connection:
            result = await connection.execute(
                update(analyses)
                .where(
                    analyses.c.game_id == game_id,
                    analyses.c.state.in_(("queued", "running"))
                    | ((analyses.c.state == "done") & ~_has_plies(game_id)),
                )
                .values(state="failed", error=error[:MAX_ERROR_LENGTH], finished_at=utc_now())
            )
            return cast(int, result.rowcount) == 1

    async def analysis_usage(self, requested_by: str, since: datetime) -> AnalysisUsage:
        """How many analyses ``requested_by`` requested at or after ``since`` (still stored:
        one replaced by a player of its game no longer counts), and the games of their
        queued or running ones."""
        check_text("requested_by", requested_by, NAME_LENGTH)
        mine = analyses.c.requested_by == requested_by
        async with self._transaction(write=False) as connection:
            requested = (
                await connection.execute(
                    select(func.count()).where(mine, analyses.c.created_at >= since)
                )
            ).scalar_one()
            unfinished = (
                await connection.execute(
                    select(analyses.c.game_id)
                    .where(mine, analyses.c.state.in_(("queued", "running")))
                    .order_by(analyses.c.created_at)
                )
            ).scalars()
            return AnalysisUsage(int(requested), tuple(unfinished))

    async def get_analysis(self, game_id: str) -> AnalysisRecord | None:
        """A game's analysis with its evaluations by ply, or None."""
        check_game_id(game_id)
        async with self._transaction(write=False) as connection:
            return await _read(connection, game_id)


async def _read(connection: AsyncConnection, game_id: str) -> AnalysisRecord | None:
    row = (
        await connection.execute(select(analyses).where(analyses.c.game_id == game_id))
    ).one_or_none()
    if row is None:
        return None
    rows = await connection.execute(
        select(analysis_plies)
        .where(analysis_plies.c.game_id == game_id)
        .order_by(analysis_plies.c.ply)
    )
    return AnalysisRecord(
        game_id=game_id,
        state=cast(AnalysisState, row.state),
        requested_by=row.requested_by,
        limits=AnalysisLimits(row.movetime_ms, row.depth),
        plies_total=row.plies_total,
        evals=tuple(_ply_eval(r) for r in rows),
        error=row.error,
        created_at=row.created_at,
        finished_at=row.finished_at,
    )


def _has_plies(game_id: str) -> Any:
    return select(analysis_plies.c.ply).where(analysis_plies.c.game_id == game_id).exists()


def _check_limits(limits: AnalysisLimits) -> None:
    if limits.movetime_ms is None and limits.depth is None:
        raise ValueError("an analysis needs a move time or a depth per position")
    if limits.movetime_ms is not None and limits.movetime_ms <= 0:
        raise ValueError("movetime_ms must be positive")
    if limits.depth is not None and limits.depth <= 0:
        raise ValueError("depth must be positive")


def _ply_values(game_id: str, entry: PlyEval) -> ColumnValues:
    return {
        "game_id": game_id,
        "ply": entry.ply,
        "cp": entry.score.cp,
        "mate": entry.score.mate,
        "best": entry.best,
        "pv": " ".join(entry.pv),
        "depth": entry.depth,
        "nodes": entry.nodes,
        "time_ms": entry.time_ms,
    }


def _ply_eval(row: Row[Any]) -> PlyEval:
    return PlyEval(
        ply=row.ply,
        score=FirstPlayerScore(row.cp, row.mate),
        best=row.best,
        pv=tuple(row.pv.split()),
        depth=row.depth,
        nodes=row.nodes,
        time_ms=row.time_ms,
    )

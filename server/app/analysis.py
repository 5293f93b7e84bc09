"""Computer analysis wired: requests become engine jobs, workers' results reach the store.

:class:`AnalysisDesk` is what the doors read stored games and analyses through (the review API
over the websocket and HTTP, the HTTP API's ``/api/game/{id}/analysis``): the store's reads as
they are, and ``request_analysis``, which stores the request (``analyses``, state ``queued``)
and then queues its job for the workers (``engine_jobs``, :class:`~server.app.jobs.JobQueue`)
with what a worker needs (FISHNET.md: start position, moves, per-position limits). If the job
cannot be queued the analysis is marked failed (it may be requested again). A request that
replaces another (a player of the game over somebody else's analysis) queues a new job, which
ends the old one (:meth:`JobStore.enqueue_analysis`): its worker's next submission is refused.
The desk carries the settings' :class:`~server.transport.analysis_api.AnalysisPolicy`
(``analysis_policy``), which every door's checks read (:mod:`server.transport.analysis_api`).

:meth:`AnalysisDesk.record` is the job queue's analysis handler: each submission of a worker
(partial or final) is checked entry by entry (:class:`~server.rules.analysis.PlyEval`; a
malformed entry is logged and left out) and stored; the final one marks the analysis done, or
failed when it brought no evaluation at all (no worker's engine could analyse the game).
Both tables are in the database, so a restart of a hub or a worker loses nothing: the job is
leased again and the plies already stored stay.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from server.app.jobs import JobQueue
from server.rules.analysis import (
    AnalysisError,
    AnalysisLimits,
    AnalysisRecord,
    PlyEval,
    PlyEvalView,
)
from server.rules.record import GameRecord
from server.store import Store, UnknownAnalysisError
from server.store.analyses import AnalysisUsage
from server.store.jobs import AnalysisJobPayload, Job
from server.transport.analysis_api import AnalysisPolicy

__all__ = ["AnalysisDesk"]

logger = logging.getLogger(__name__)


class AnalysisDesk:
    """The store's game and analysis reads, analysis requests that queue a job, and the
    workers' results stored (module docstring)."""

    def __init__(
        self, store: Store, jobs: JobQueue, policy: AnalysisPolicy | None = None
    ) -> None:
        self.store = store
        self.jobs = jobs
        self.analysis_policy = policy or AnalysisPolicy()
        jobs.on_analysis(self.record)

    # -- reads (the review API's store interface) -----------------------------------------

    async def list_games(self, **filters: Any) -> Any:
        return await self.store.list_games(**filters)

    async def get_game(self, game_id: str) -> GameRecord | None:
        return await self.store.get_game(game_id)

    async def get_analysis(self, game_id: str) -> AnalysisRecord | None:
        return await self.store.get_analysis(game_id)

    async def analysis_usage(self, requested_by: str, since: datetime) -> AnalysisUsage:
        return await self.store.analysis_usage(requested_by, since)

    # -- requests ----------------------------------------------------------------------------

    async def request_analysis(
        self,
        game_id: str,
        *,
        limits: AnalysisLimits,
        plies_total: int,
        requested_by: str | None = None,
        players: Collection[str] = (),
    ) -> AnalysisRecord:
        """Store the request, then queue the job (see the module docstring)."""
        analysis = await self.store.request_analysis(
            game_id,
            limits=limits,
            plies_total=plies_total,
            requested_by=requested_by,
            players=players,
        )
        record = await self.store.get_game(game_id)
        try:
            if record is None:
                raise LookupError(f"game {game_id} vanished")
            await self.jobs.enqueue_analysis(
                game_id, record.variant, job_payload(record, limits), owner=requested_by
            )
        except Exception:
            logger.exception("the analysis job of game %s could not be queued", game_id)
            await self.store.fail_analysis(game_id, "the job could not be queued")
            raise
        return analysis

    # -- results -----------------------------------------------------------------------------

    async def record(self, job: Job, entries: Sequence[PlyEvalView], done: bool) -> None:
        """Store a worker's submission for the job's game (the job queue's analysis handler)."""
        evals: list[PlyEval] = []
        for entry in entries:
            try:
                evals.append(PlyEval.from_json(entry))
            except AnalysisError as exc:
                logger.warning("job %s: analysis entry left out (%s): %r", job.id, exc, entry)
        try:
            saved = await self.store.save_analysis_plies(job.game_id, evals, done=done)
            if done and saved.plies_done == 0 and saved.plies_total > 0:
                # A job no worker can do is answered empty (docs/engines.md): say so.
                await self.store.fail_analysis(job.game_id, "no engine could analyse this game")
        except UnknownAnalysisError:
            logger.warning("job %s: game %s has no analysis in progress", job.id, job.game_id)
        except ValueError as exc:
            logger.warning("job %s: analysis not stored: %s", job.id, exc)


def job_payload(record: GameRecord, limits: AnalysisLimits) -> AnalysisJobPayload:
    """An analysis job's fields as FISHNET.md gives them to the worker."""
    return {
        "position": record.start_fen,
        "moves": " ".join(move.uci for move in record.moves),
        "limits": limits.as_json(),
        "skip_plies": [],
    }

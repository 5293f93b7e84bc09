"""The engine workers' job queue as the HTTP door sees it (:class:`JobQueue`): worker keys,
the long-poll acquire, results handed to whoever waits for them.

The jobs themselves live in the database (:mod:`server.store.jobs`): nothing is lost when a hub
or a worker dies. :class:`JobQueue` adds what a process needs around them:

* **keys**: ``worker_keys`` from the settings, else one key in ``worker_key_file``, created on
  the first start (the embedded run: ``scripts/serve.sh`` gives it to its worker);
* **the long poll**: ``acquire`` tries the store, then waits — on an event that this process's
  enqueues set, and at most :data:`REPOLL_S` between tries (jobs queued by other hubs, leases
  that ran out) — up to ``fishnet_poll_s``. It only ever awaits: the hub's loop never blocks;
* **results**: a move or an analysis a worker submits is stored first, then given to the
  handlers registered per kind (:meth:`on_move`, :meth:`on_analysis`): the computer's seats
  (:mod:`server.app.computer`), the analysis store;
* **give way to moves**: an analysis' partial submission is answered with the variants of the
  move jobs waiting (no worker holds them): a worker that plays one gives the analysis back
  (``/fishnet/abort``) and takes the move job, so a move waits at most one analysed position.
  The entries submitted so far stay with the job (merged by ply), and a worker that acquires it
  again is told to skip those plies (``skip_plies``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
import secrets
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import TypedDict, cast

from server.config import ConfigError, Settings, worker_key_problem
from server.jsontypes import JsonObject
from server.rules.analysis import PlyEvalView
from server.store import Store
from server.store.jobs import (
    AnalysisJobPayload,
    Job,
    JobKind,
    JobWork,
    MoveJobPayload,
    QueueStatus,
)
from server.store.records import utc_now

__all__ = ["REPOLL_S", "AnalysisHandler", "JobQueue", "MoveHandler", "load_worker_keys"]

logger = logging.getLogger(__name__)

REPOLL_S = 0.5
"""Longest wait between two looks at the database during a long poll."""

MoveHandler = Callable[[Job, "str | None"], Awaitable[None]]
"""Called with a move job and the move a worker submitted (None: it had none)."""
AnalysisHandler = Callable[[Job, list[PlyEvalView], bool], Awaitable[None]]
"""Called with an analysis job, the entries so far and whether it is done."""


class WorkStatus(TypedDict):
    """``GET /fishnet/status`` (FISHNET.md)."""

    queue: QueueStatus


def load_worker_keys(settings: Settings) -> tuple[str, ...]:
    """The keys workers may use: ``worker_keys``, else the key file's (created if missing).

    Never a default: a key file that does not exist is created with a random key, readable by
    its owner only. Hubs that start together on one shared file (docker-compose.yml's
    ``workerkey`` volume) agree on one key: each writes its key to a file of its own and links
    it into place, which fails if another was first; then all read the one in place.

    :raises ConfigError: the file's key is too short, or a published placeholder.
    """
    keys = settings.worker_key_list
    if keys:
        return keys
    path = Path(settings.worker_key_file)
    if not path.exists():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # Written 0600 from its creation (never readable by others, not even for a moment),
        # then linked into place: two hubs starting at once agree on the first one's key.
        mine = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
        with os.fdopen(os.open(mine, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600), "w") as file:
            file.write(secrets.token_urlsafe(32) + "\n")
        try:
            os.link(mine, path)
            logger.info("created the engine workers' key in %s", path)
        except FileExistsError:
            pass  # another hub was first: its key is the one
        finally:
            mine.unlink()
    key = path.read_text().strip()
    problem = worker_key_problem(key)
    if problem is not None:
        raise ConfigError(f"{path}: {problem}")
    return (key,)


class JobQueue:
    """See the module docstring. ``clock`` gives the time leases are measured with."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        keys: tuple[str, ...] | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.store = store
        self.settings = settings
        self._keys = tuple(key.encode() for key in (keys or load_worker_keys(settings)))
        self.clock = clock
        self._leases: dict[JobKind, float] = {
            "move": settings.move_lease_s,
            "analysis": settings.analysis_lease_s,
        }
        self._wake = asyncio.Event()
        self._closed = asyncio.Event()
        self._move_handlers: list[MoveHandler] = []
        self._analysis_handlers: list[AnalysisHandler] = []

    # -- what the hub side calls ---------------------------------------------------------

    def on_move(self, handler: MoveHandler) -> None:
        self._move_handlers.append(handler)

    def on_analysis(self, handler: AnalysisHandler) -> None:
        self._analysis_handlers.append(handler)

    async def enqueue_move(
        self, game_id: str, variant: str, payload: MoveJobPayload, *, owner: str | None = None
    ) -> str:
        job_id = await self.store.enqueue_move(
            game_id, variant, payload, now=self.clock(), owner=owner
        )
        self._wake.set()
        return job_id

    async def enqueue_analysis(
        self, game_id: str, variant: str, payload: AnalysisJobPayload, *, owner: str | None = None
    ) -> str:
        job_id = await self.store.enqueue_analysis(
            game_id, variant, payload, now=self.clock(), owner=owner
        )
        self._wake.set()
        return job_id

    def close(self) -> None:
        """End the long polls in progress (they answer "no work")."""
        self._closed.set()

    # -- what the workers' door calls (server.transport.http_api.fishnet.WorkQueue) ------

    def authorised(self, key: str) -> bool:
        given = key.encode()
        return any(hmac.compare_digest(given, known) for known in self._keys)

    async def acquire(
        self, worker: str, variants: list[str] | None, *, until_closed: asyncio.Event | None = None
    ) -> JsonObject | None:
        """The next job for ``worker`` as its body (FISHNET.md), waiting up to
        ``fishnet_poll_s`` for one; None if none came (or the server is closing)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.fishnet_poll_s
        while True:
            self._wake.clear()
            job = await self.store.acquire(
                worker, self.clock(), variants=variants, leases=self._leases
            )
            if job is not None:
                return job_body(job, self._leases[job.kind])
            left = deadline - loop.time()
            if left <= 0 or self._closed.is_set() or (until_closed and until_closed.is_set()):
                return None
            await _first(self._wake, self._closed, until_closed, timeout=min(left, REPOLL_S))

    async def submit_move(self, job_id: str, bestmove: str | None) -> bool:
        held = await self.store.job(job_id)
        if held is None or held.kind != "move":
            return False
        job = await self.store.complete(job_id, {"bestmove": bestmove}, self.clock())
        if job is None:
            return False
        for handler in self._move_handlers:
            await _guarded(handler(job, bestmove), "move", job_id)
        return True

    async def submit_analysis(
        self, job_id: str, entries: list[PlyEvalView], done: bool
    ) -> list[str] | None:
        """Store a worker's analysis entries (merged by ply with those it sent before) and
        hand them to the handlers. None: no such job held (404). Otherwise, for a partial
        submission, the variants of the move jobs waiting (a worker playing one gives the
        analysis back); for the final one, ``[]``."""
        held = await self.store.job(job_id)
        if held is None or held.kind != "analysis":
            return None
        now = self.clock()
        merged = merge_entries(held.result, entries)
        if done:
            job = await self.store.complete(job_id, merged, now)
            if job is None:
                return None
        else:
            if not await self.store.renew(
                job_id, now, lease_s=self._leases["analysis"], result=merged
            ):
                return None
            job = held
        for handler in self._analysis_handlers:
            await _guarded(handler(job, entries, done), "analysis", job_id)
        return [] if done else await self.store.waiting_moves(now)

    async def renew_lease(self, job_id: str) -> list[str] | None:
        """Renew the lease of a job a worker still works on (a long search); None when the job
        is unknown, done (its game ended, or it was cancelled) or its lease had run out: the
        worker then drops it and frees its core. Otherwise, for an analysis job, the variants
        of the move jobs waiting (the worker may give the analysis back in the middle of a
        position), else ``[]``."""
        now = self.clock()
        held = await self.store.job(job_id)
        if held is None or not await self.store.renew(job_id, now, leases=self._leases):
            return None
        return await self.store.waiting_moves(now) if held.kind == "analysis" else []

    async def abort(self, job_id: str) -> bool:
        given_back = await self.store.abort(job_id, self.clock())
        if given_back:
            self._wake.set()
        return given_back

    async def status(self) -> WorkStatus:
        return {"queue": await self.store.status(self.clock())}


def merge_entries(before: object, entries: list[PlyEvalView]) -> list[PlyEvalView]:
    """A job's analysis entries so far (``before``: its stored result) with ``entries`` (a
    worker's submission: all its entries, or only the new ones), by ply, the newest winning."""
    by_ply: dict[int, PlyEvalView] = {}
    if isinstance(before, list):
        by_ply = {e["ply"]: cast(PlyEvalView, e) for e in before if isinstance(e, dict)}
    by_ply.update((entry["ply"], entry) for entry in entries)
    return [by_ply[ply] for ply in sorted(by_ply)]


def job_body(job: Job, lease_s: float) -> JsonObject:
    """A job as a worker receives it (FISHNET.md): its payload (a :class:`MoveJobPayload` or
    :class:`AnalysisJobPayload`) with its ``work`` (type, id, and the lease a worker keeps alive
    with ``/fishnet/keepalive``), ``game_id`` and ``variant``. An analysis given back (to a
    move job) skips the plies already submitted (``skip_plies``)."""
    work: JobWork = {"type": job.kind, "id": job.id, "lease_s": lease_s}
    body: JsonObject = {
        "work": work,
        "game_id": job.game_id,
        "variant": job.variant,
        **job.payload,
    }
    if job.kind == "analysis" and isinstance(job.result, list) and job.result:
        skip = set(body.get("skip_plies") or ())
        skip.update(e["ply"] for e in job.result if isinstance(e, dict) and "ply" in e)
        body["skip_plies"] = sorted(skip)
    return body


async def _first(*events: asyncio.Event | None, timeout: float) -> None:
    """Wait until one of ``events`` is set, at most ``timeout`` seconds."""
    waits = [asyncio.ensure_future(event.wait()) for event in events if event is not None]
    try:
        await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*waits, return_exceptions=True)


async def _guarded(call: Awaitable[None], kind: str, job_id: str) -> None:
    """A handler's failure is logged, never the worker's problem (its result is stored)."""
    try:
        await call
    except Exception:
        logger.exception("the %s result of job %s could not be handled", kind, job_id)

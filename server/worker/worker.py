"""The worker loop (docs/engines.md, "Worker protocol"): acquire → run → submit, or abort.

``slots`` loops run side by side (default: one per core, at most), each with its own
:class:`~.computer.Computer`, so one search per core at most. SIGTERM (or :meth:`Worker.stop`)
ends the loops; a job held when it arrives is given back with ``/fishnet/abort``.

An analysis gives way to moves (protocol version 2): its entries go to the server after every
position, and when the answer names a variant of a waiting move job that this worker plays
(``moves_waiting``), the worker gives the analysis back (``/fishnet/abort``; the server keeps
the entries and sends the rest later as ``skip_plies``) and acquires again: the move job comes
first. A position that takes longer than :data:`GIVE_WAY_POLL_S` is not waited for either:
meanwhile the worker asks ``/fishnet/keepalive`` every :data:`GIVE_WAY_POLL_S`, whose answer
names the waiting moves too, and gives the analysis back at once, abandoning that position's
search (its engines are restarted, as for a job gone). A move therefore waits for this slot at
most about :data:`GIVE_WAY_POLL_S`, or one short position.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

import aiohttp

from server.jsontypes import JsonObject
from server.rules import RulesError
from server.rules.analysis import PlyEvalView

from .computer import Computer, clock_for, game_of
from .dialects import CHOSEN, EngineProgram, UnsupportedPosition

__all__ = ["VERSION", "Worker", "WorkerConfig"]

log = logging.getLogger(__name__)
VERSION = "2"
BACKOFF_S = (0.5, 1, 2, 5, 10)
EMPTY_POLL_S = 1.0
"""After a 204 that came at once, the next acquire waits this long (no busy polling)."""
DEFAULT_LEASE_S = 20.0
"""A job's lease when the server does not say (``work.lease_s``)."""
GIVE_WAY_POLL_S = 0.5
"""While one analysed position takes longer than this, the worker asks this often whether a
move job waits (``/fishnet/keepalive``'s answer), to give the analysis back mid-position."""
KEEPALIVES_PER_LEASE = 3
"""A job still being worked on is kept alive this many times a lease (``/fishnet/keepalive``):
a search may think longer than a lease, and a late keepalive or two still keep the job."""


T = TypeVar("T")


class JobGone(Exception):
    """The server no longer wants the job (its game ended, it was cancelled, its lease ran out)."""


class GaveWay(Exception):
    """An analysis was given back to the server because a move job waits (protocol 2)."""


@dataclass
class WorkerConfig:
    url: str
    key: str
    slots: int = max(1, os.cpu_count() or 1)  # one search per core at most
    nice: int = 10
    name: str = field(default_factory=lambda: f"worker-{os.getpid()}")
    variants: tuple[str, ...] = tuple(CHOSEN)
    engines: dict[str, str] = field(default_factory=dict)  # variant -> engine override
    programs: dict[str, EngineProgram] = field(default_factory=dict)  # engine -> other binary


class Worker:
    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        self.computers = [
            Computer(nice=config.nice, engines=dict(config.engines), programs=dict(config.programs))
            for _ in range(config.slots)
        ]
        self.jobs_done = 0
        self._stop = asyncio.Event()
        self._session: aiohttp.ClientSession | None = None
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def base(self) -> str:
        return self.config.url.rstrip("/")

    def stop(self) -> None:
        self._stop.set()
        for task in self._tasks:
            task.cancel()

    async def run(self) -> None:
        headers = {"Authorization": f"Bearer {self.config.key}"}
        timeout = aiohttp.ClientTimeout(total=30)
        async with aiohttp.ClientSession(headers=headers, timeout=timeout) as session:
            self._session = session
            self._tasks = [asyncio.create_task(self._slot(c)) for c in self.computers]
            try:
                await asyncio.gather(*self._tasks, return_exceptions=True)
            finally:
                for computer in self.computers:
                    await computer.close()
                self._session = None

    def _acquire_body(self, computer: Computer) -> JsonObject:
        engines = {
            key: "?" for key in sorted({computer.dialect(v).engine for v in self.config.variants})
        }
        engines.update(computer.versions())
        return {
            "worker": {
                "name": self.config.name,
                "version": VERSION,
                "engines": engines,
                "variants": list(self.config.variants),
            }
        }

    async def _post(self, path: str, body: JsonObject | None = None) -> tuple[int, Any]:
        assert self._session is not None
        async with self._session.post(
            self.base + path, json=body if body is not None else {}
        ) as resp:
            data = await resp.json(content_type=None) if resp.status in (200, 202) else None
            return resp.status, data

    async def _wait_or_stop(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), seconds)

    async def _slot(self, computer: Computer) -> None:
        failures = 0
        while not self._stop.is_set():
            asked = time.monotonic()
            try:
                status, job = await self._post("/fishnet/acquire", self._acquire_body(computer))
            except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
                log.warning("acquire failed: %s", exc)
                await self._wait_or_stop(BACKOFF_S[min(failures, len(BACKOFF_S) - 1)])
                failures += 1
                continue
            if status == 204:
                failures = 0
                if time.monotonic() - asked < EMPTY_POLL_S:  # a server that does not hold the poll
                    await self._wait_or_stop(EMPTY_POLL_S)
                continue
            if status != 202 or not isinstance(job, dict):
                hint = ": check the worker key" if status in (401, 403) else ""
                log.warning("acquire answered %s%s", status, hint)
                await self._wait_or_stop(BACKOFF_S[min(failures, len(BACKOFF_S) - 1)])
                failures += 1
                continue
            failures = 0
            await self._handle(computer, job)

    async def _handle(self, computer: Computer, job: JsonObject) -> None:
        """One job as the server sent it: read field by field, a bad one answered empty."""
        work = job.get("work")
        job_id = str(work.get("id", "")) if isinstance(work, dict) else ""
        acquired = time.monotonic()
        try:
            kind = job["work"]["type"]
            if kind == "move":
                work = self._move_job(computer, job, job_id, acquired)
            elif kind == "analysis":
                work = self._analysis_job(computer, job, job_id)
            else:
                raise ValueError(f"unknown job type {kind!r}")
            await self._kept_alive(
                computer, job_id, _lease_s(job) / KEEPALIVES_PER_LEASE, work
            )
            self.jobs_done += 1
        except JobGone:
            log.info("job %s is over on the server: search abandoned, engines restarted", job_id)
        except GaveWay:
            log.info("analysis job %s given back: a move job waits", job_id)
            await self._abort(job_id)
        except asyncio.CancelledError:
            await asyncio.shield(self._abort(job_id))
            raise
        except (RulesError, KeyError, ValueError, TypeError, UnsupportedPosition) as exc:
            # A job no worker can do (bad position, a start the engine cannot take): answered
            # empty, so that the server ends it (its fallback move) instead of handing it out
            # again and again.
            log.warning("job %s cannot be done (%s): answering it empty", job_id, exc)
            await self._answer_empty(job, job_id)
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.warning("job %s: the server could not be reached (%s)", job_id, exc)
        except Exception:
            log.exception("job %s failed: giving it back", job_id)
            await self._abort(job_id)

    async def _kept_alive(
        self,
        computer: Computer,
        job_id: str,
        interval: float,
        work: Coroutine[Any, Any, T],
        *,
        give_way: bool = False,
        variant: str | None = None,
    ) -> T:
        """Run ``work`` while renewing the job's lease every ``interval`` seconds (a level may
        think longer than a lease). A keepalive answered ``404`` means the job is over: the
        search is abandoned, its engines killed (a driver cut off mid-search cannot be asked
        again) and :exc:`JobGone` raised; with ``give_way``, an answer naming a waiting move
        this worker plays does the same with :exc:`GaveWay`, killing only ``variant``'s engine
        (the move's engine stays warm). A keepalive the server could not
        answer is only logged: the lease may still hold, and the result's submission will
        tell."""
        task = asyncio.ensure_future(work)
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=interval)
                if done:
                    return task.result()
                try:
                    status, answer = await self._post(f"/fishnet/keepalive/{job_id}")
                except (aiohttp.ClientError, TimeoutError) as exc:
                    log.warning("keepalive of job %s failed: %s", job_id, exc)
                    continue
                gone: Exception | None = JobGone(job_id) if status == 404 else None
                if gone is None and give_way and self._gives_way(answer):
                    gone = GaveWay(job_id)
                if gone is not None:
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)
                    await computer.reset(variant if isinstance(gone, GaveWay) else None)
                    raise gone
        finally:
            if not task.done():  # the worker is stopping: the search goes with it
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    async def _answer_empty(self, job: JsonObject, job_id: str) -> None:
        if not job_id:
            return
        kind = job.get("work", {}).get("type") if isinstance(job.get("work"), dict) else None
        try:
            if kind == "move":
                await self._post(f"/fishnet/move/{job_id}", {"move": {"bestmove": None}})
            elif kind == "analysis":
                await self._post(f"/fishnet/analysis/{job_id}", {"analysis": [], "done": True})
            else:
                await self._abort(job_id)
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.warning("answer to %s failed: %s", job_id, exc)

    async def _abort(self, job_id: str) -> None:
        if not job_id:
            return
        try:
            await self._post(f"/fishnet/abort/{job_id}")
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.warning("abort of %s failed: %s", job_id, exc)

    async def _move_job(
        self, computer: Computer, job: JsonObject, job_id: str, acquired: float
    ) -> None:
        game = game_of(job["variant"], job.get("position"), job.get("moves") or "")
        engine_is_first = game.position.turn == 0
        spent = int((time.monotonic() - acquired) * 1000)
        clock = clock_for(job.get("clock"), engine_is_first, spent)
        answer = await computer.best_move(game, int(job.get("level") or 8), clock)
        status, _ = await self._post(f"/fishnet/move/{job_id}", {"move": {"bestmove": answer.move}})
        if status not in (200, 204):
            log.warning("move %s for job %s answered %s", answer.move, job_id, status)

    async def _analysis_job(self, computer: Computer, job: JsonObject, job_id: str) -> None:
        game = game_of(job["variant"], job.get("position"), job.get("moves") or "")
        limits = job.get("limits") or {}
        movetime, depth = limits.get("movetime_ms"), limits.get("depth")
        skip = {int(p) for p in job.get("skip_plies") or ()}
        entries: list[PlyEvalView] = []
        for ply in range(game.ply + 1):
            if self._stop.is_set():
                # Stopping: give the job back even if the task's cancellation was lost (on
                # Python 3.11, asyncio.wait_for swallows a cancel that lands as its inner
                # future completes), rather than analysing on to the end.
                raise asyncio.CancelledError
            if ply in skip:
                continue
            # Asked every GIVE_WAY_POLL_S meanwhile: a waiting move ends the search (GaveWay).
            entry = await self._kept_alive(
                computer,
                job_id,
                GIVE_WAY_POLL_S,
                computer.analyse(game, ply, movetime, depth),
                give_way=True,
                variant=job["variant"],
            )
            if entry is not None:
                entries.append(entry.as_json())
            # After every position: the new entries (the server merges them by ply), and the
            # answer says whether a move job waits.
            status, answer = await self._post(
                f"/fishnet/analysis/{job_id}", {"analysis": entries, "done": False}
            )
            if status == 404:
                log.warning("analysis job %s is gone: dropping it", job_id)
                return
            if status in (200, 202, 204):
                entries = []
            if self._gives_way(answer):
                raise GaveWay(job_id)
        status, _ = await self._post(
            f"/fishnet/analysis/{job_id}", {"analysis": entries, "done": True}
        )
        if status not in (200, 204):
            log.warning("analysis of job %s answered %s", job_id, status)


    def _gives_way(self, answer: object) -> bool:
        """Whether a partial submission's answer names a waiting move this worker plays."""
        waiting = answer.get("moves_waiting") if isinstance(answer, dict) else None
        return isinstance(waiting, list) and not set(self.config.variants).isdisjoint(
            v for v in waiting if isinstance(v, str)
        )


def _lease_s(job: JsonObject) -> float:
    """The job's lease as the server gave it (``work.lease_s``), else :data:`DEFAULT_LEASE_S`;
    at least a second, so that keepalives never flood the server."""
    lease = job["work"].get("lease_s")
    if isinstance(lease, bool) or not isinstance(lease, int | float) or not lease > 0:
        return DEFAULT_LEASE_S
    return max(1.0, float(lease))

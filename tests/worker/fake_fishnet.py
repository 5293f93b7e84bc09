"""A tiny fishnet server for the worker tests (FISHNET.md), a real aiohttp server on port 0:
a queue of jobs, leases that expire, and an asyncio.Event per thing a test waits for. As the
real server (protocol 2), it merges an analysis' submissions by ply and answers a partial one
with the variants of the move jobs waiting (``moves_waiting``)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

KEY = "test-worker-key"


@dataclass
class Job:
    id: str
    body: dict[str, Any]
    leased_until: float = 0.0
    holder: int = 0  # which acquire got it (1, 2, ...)
    result: Any = None
    partials: list[list[dict[str, Any]]] = field(default_factory=list)
    entries: dict[int, dict[str, Any]] = field(default_factory=dict)  # merged by ply
    partial_holders: list[int] = field(default_factory=list)  # who sent each partial
    done_by: int = 0
    done: asyncio.Event = field(default_factory=asyncio.Event)
    progressed: asyncio.Event = field(default_factory=asyncio.Event)
    aborted: asyncio.Event = field(default_factory=asyncio.Event)
    kept_alive: asyncio.Event = field(default_factory=asyncio.Event)


class FakeFishnet:
    def __init__(self, lease_s: float = 20.0) -> None:
        self.lease_s = lease_s
        self.jobs: dict[str, Job] = {}
        self.acquires: list[dict[str, Any]] = []
        self.acquired = asyncio.Event()
        self._ids = itertools.count(1)
        self._acquire_count = itertools.count(1)
        self.url = ""
        self._runner: web.AppRunner | None = None
        self._wake = asyncio.Event()

    def add(self, body: dict[str, Any]) -> Job:
        job_id = f"j{next(self._ids)}"
        work = {"type": body.pop("type"), "id": job_id, "lease_s": self.lease_s}
        job = Job(job_id, {"work": work, "game_id": "g" + job_id, **body})
        self.jobs[job_id] = job
        self._wake.set()
        return job

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post("/fishnet/acquire", self.acquire)
        app.router.add_post("/fishnet/move/{id}", self.move)
        app.router.add_post("/fishnet/analysis/{id}", self.analysis)
        app.router.add_post("/fishnet/abort/{id}", self.abort)
        app.router.add_post("/fishnet/keepalive/{id}", self.keepalive)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def _authorised(self, request: web.Request) -> bool:
        return request.headers.get("Authorization") == f"Bearer {KEY}"

    def _free(self) -> Job | None:
        now = time.monotonic()
        free = [j for j in self.jobs.values() if not j.done.is_set() and j.leased_until <= now]
        free.sort(key=lambda j: j.body["work"]["type"] != "move")  # move jobs first
        return free[0] if free else None

    async def acquire(self, request: web.Request) -> web.StreamResponse:
        if not self._authorised(request):
            return web.Response(status=401)
        self.acquires.append(await request.json())
        self.acquired.set()
        # long poll: up to 1 s, woken when a job is added (or a lease may have run out)
        deadline = time.monotonic() + 1.0
        while (job := self._free()) is None and time.monotonic() < deadline:
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), min(0.1, deadline - time.monotonic()))
        if job is None:
            return web.Response(status=204)
        job.leased_until = time.monotonic() + self.lease_s
        job.holder = next(self._acquire_count)
        return web.json_response(job.body, status=202)

    def _held(self, request: web.Request) -> Job:
        """The job a worker's call is about: 401 without the key, 404 unless it is held."""
        if not self._authorised(request):
            raise web.HTTPUnauthorized
        job = self.jobs.get(request.match_info["id"])
        if job is None or job.done.is_set() or job.leased_until <= time.monotonic():
            raise web.HTTPNotFound
        return job

    async def move(self, request: web.Request) -> web.StreamResponse:
        job = self._held(request)
        body = await request.json()
        job.result = body["move"]["bestmove"]
        job.done.set()
        return web.Response(status=204)

    async def analysis(self, request: web.Request) -> web.StreamResponse:
        job = self._held(request)
        body = await request.json()
        job.leased_until = time.monotonic() + self.lease_s
        job.entries.update((entry["ply"], entry) for entry in body["analysis"])
        if body["done"]:
            job.result = [job.entries[ply] for ply in sorted(job.entries)]
            job.done_by = job.holder
            job.done.set()
            return web.Response(status=204)
        job.partials.append(body["analysis"])
        job.partial_holders.append(job.holder)
        job.progressed.set()
        now = time.monotonic()
        waiting = sorted(
            {
                j.body["variant"]
                for j in self.jobs.values()
                if j.body["work"]["type"] == "move" and not j.done.is_set() and j.leased_until <= now
            }
        )
        if waiting:
            return web.json_response({"moves_waiting": waiting}, status=200)
        return web.Response(status=204)

    async def keepalive(self, request: web.Request) -> web.StreamResponse:
        job = self._held(request)
        job.leased_until = time.monotonic() + self.lease_s
        job.kept_alive.set()
        return web.Response(status=204)

    def cancel(self, job: Job) -> None:
        """The job is over on the server (its game ended): every call about it is a 404."""
        job.done.set()

    async def abort(self, request: web.Request) -> web.StreamResponse:
        job = self.jobs.get(request.match_info["id"])
        if job is not None:
            job.leased_until = 0.0
            job.aborted.set()
            self._wake.set()
        return web.Response(status=204)

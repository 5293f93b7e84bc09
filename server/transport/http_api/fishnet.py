"""The engine workers' endpoints, ``/fishnet/*`` (FISHNET.md, docs/engines.md "Worker protocol").

The worker authenticates with ``Authorization: Bearer <key>``. Every body is checked here
before anything is asked of the queue: a malformed one is a 400 with ``{"error": …}`` and
changes nothing; an unknown, finished or expired job is a 404 (the worker drops it). What a
job *means* (a move to play, an analysis to store) is the queue's business
(:class:`WorkQueue`, implemented in :mod:`server.app.jobs`); this module only speaks HTTP.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from typing import Protocol

from aiohttp import web

from server.jsontypes import JsonObject
from server.rules.analysis import PlyEvalView
from server.transport.http_api.context import CONTEXT, api_error
from server.transport.http_api.forms import json_body

__all__ = ["WorkQueue", "parse_analysis", "routes"]

routes = web.RouteTableDef()

_JOB_ID = re.compile(r"[0-9A-Za-z]{1,16}")
_MOVE_TEXT = re.compile(r"[!-~]{1,64}")  # printable ASCII, no spaces
_MAX_NAME = 64
_MAX_VARIANTS = 32
_MAX_ENTRIES = 2000
_MAX_PV = 4096
_MAX_INT = 2**53


class WorkQueue(Protocol):
    """What the endpoints need of the job queue (:class:`server.app.jobs.JobQueue`)."""

    def authorised(self, key: str) -> bool: ...

    async def acquire(
        self, worker: str, variants: list[str] | None, *, until_closed: asyncio.Event | None
    ) -> Mapping[str, object] | None: ...

    async def submit_move(self, job_id: str, bestmove: str | None) -> bool: ...

    async def submit_analysis(
        self, job_id: str, entries: list[PlyEvalView], done: bool
    ) -> list[str] | None: ...

    async def renew_lease(self, job_id: str) -> list[str] | None: ...

    async def abort(self, job_id: str) -> bool: ...

    async def status(self) -> Mapping[str, object]: ...


def _queue(request: web.Request) -> WorkQueue:
    context = request.app[CONTEXT]
    queue: WorkQueue | None = getattr(context, "work", None)
    if queue is None:
        api_error(404, "No engine workers here.")
    header = request.headers.get("Authorization", "")
    scheme, _, key = header.partition(" ")
    if scheme.lower() != "bearer" or not key or not queue.authorised(key.strip()):
        api_error(401, "Missing or wrong worker key.")
    return queue


def _job_id(request: web.Request) -> str:
    job_id = request.match_info["id"]
    if not _JOB_ID.fullmatch(job_id):
        api_error(404, "No such job.")
    return job_id


def _int(value: object, what: str, *, minimum: int = -_MAX_INT) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= _MAX_INT:
        api_error(400, f"{what} must be an integer of at least {minimum}.")
    return value


def _optional_move(value: object, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _MOVE_TEXT.fullmatch(value):
        api_error(400, f"{what} must be a move text (1-64 printable characters) or null.")
    return value


def parse_analysis(body: JsonObject) -> tuple[list[PlyEvalView], bool]:
    """The entries and the ``done`` flag of an analysis submission (FISHNET.md), checked.

    :raises ApiError: 400 naming what is wrong.
    """
    done = body.get("done")
    if not isinstance(done, bool):
        api_error(400, "done must be true or false.")
    raw = body.get("analysis")
    if not isinstance(raw, list) or len(raw) > _MAX_ENTRIES:
        api_error(400, f"analysis must be a list of at most {_MAX_ENTRIES} entries.")
    entries: list[PlyEvalView] = []
    seen: set[int] = set()
    for index, item in enumerate(raw):
        what = f"analysis[{index}]"
        if not isinstance(item, dict):
            api_error(400, f"{what} must be an object.")
        ply = _int(item.get("ply"), f"{what}.ply", minimum=0)
        if ply in seen:
            api_error(400, f"{what}.ply {ply} appears twice.")
        seen.add(ply)
        score = item.get("score")
        if (
            not isinstance(score, dict)
            or len(score) != 1
            or next(iter(score)) not in ("cp", "mate")
        ):
            api_error(400, f'{what}.score must be {{"cp": n}} or {{"mate": n}}.')
        kind, value = next(iter(score.items()))
        checked = _int(value, f"{what}.score.{kind}")
        pv = item.get("pv", "")
        if not isinstance(pv, str) or len(pv) > _MAX_PV:
            api_error(400, f"{what}.pv must be text of at most {_MAX_PV} characters.")
        nodes = item.get("nodes")
        entry: PlyEvalView = {
            "ply": ply,
            "score": {"cp": checked} if kind == "cp" else {"mate": checked},
            "best": _optional_move(item.get("best"), f"{what}.best"),
            "pv": " ".join(pv.split()),
            "depth": _int(item.get("depth", 0), f"{what}.depth", minimum=0),
            "nodes": None if nodes is None else _int(nodes, f"{what}.nodes", minimum=0),
            "time_ms": _int(item.get("time_ms", 0), f"{what}.time_ms", minimum=0),
        }
        entries.append(entry)
    return entries, done


@routes.post("/fishnet/acquire")
async def acquire(request: web.Request) -> web.StreamResponse:
    queue = _queue(request)
    body = await json_body(request)
    worker = body.get("worker")
    if not isinstance(worker, dict):
        api_error(400, "worker must be an object with a name.")
    name = worker.get("name")
    if not isinstance(name, str) or not 0 < len(name) <= _MAX_NAME or name != name.strip():
        api_error(400, f"worker.name must be 1-{_MAX_NAME} characters.")
    variants = worker.get("variants")
    if variants is not None and (
        not isinstance(variants, list)
        or len(variants) > _MAX_VARIANTS
        or not all(isinstance(v, str) and 0 < len(v) <= 32 for v in variants)
    ):
        api_error(400, "worker.variants must be a list of variant names.")
    job = await queue.acquire(name, variants, until_closed=request.app[CONTEXT].closing)
    if job is None:
        return web.Response(status=204)
    return web.json_response(job, status=202)


@routes.post("/fishnet/move/{id}")
async def move(request: web.Request) -> web.StreamResponse:
    queue = _queue(request)
    job_id = _job_id(request)
    body = await json_body(request)
    answer = body.get("move")
    if not isinstance(answer, dict) or "bestmove" not in answer:
        api_error(400, 'move must be {"bestmove": "<move>" | null}.')
    bestmove = _optional_move(answer["bestmove"], "move.bestmove")
    if not await queue.submit_move(job_id, bestmove):
        api_error(404, "No such move job (finished, expired or unknown).")
    return web.Response(status=204)


@routes.post("/fishnet/analysis/{id}")
async def analysis(request: web.Request) -> web.StreamResponse:
    queue = _queue(request)
    job_id = _job_id(request)
    entries, done = parse_analysis(await json_body(request))
    waiting = await queue.submit_analysis(job_id, entries, done)
    if waiting is None:
        api_error(404, "No such analysis job (finished, expired or unknown).")
    # Protocol 2: move jobs wait in these variants; a worker that plays one gives this
    # analysis back (abort) and takes the move.
    return _waiting(waiting)


@routes.post("/fishnet/keepalive/{id}")
async def job_keepalive(request: web.Request) -> web.StreamResponse:
    """Our addition to fishnet: a worker still searching renews its lease (a level that thinks
    longer than a lease). ``404``: the job is over (its game ended) — stop working on it. For an
    analysis job, ``200 {"moves_waiting": [...]}`` when move jobs wait (protocol 2: the worker
    may give the analysis back in the middle of a long position)."""
    queue = _queue(request)
    job_id = _job_id(request)
    if request.body_exists:
        await json_body(request)  # an empty body, or any JSON object
    waiting = await queue.renew_lease(job_id)
    if waiting is None:
        api_error(404, "No such job (finished, cancelled, expired or unknown).")
    return _waiting(waiting)


def _waiting(waiting: list[str]) -> web.Response:
    """The answer to an analysis' partial submission or keepalive: ``204``, or ``200`` with
    the variants of the move jobs waiting (a version-1 worker reads no body here)."""
    if waiting:
        return web.json_response({"moves_waiting": waiting}, status=200)
    return web.Response(status=204)


@routes.post("/fishnet/abort/{id}")
async def abort(request: web.Request) -> web.StreamResponse:
    queue = _queue(request)
    job_id = _job_id(request)
    await queue.abort(job_id)  # giving back what one no longer holds is not an error
    return web.Response(status=204)


@routes.get("/fishnet/status")
async def status(request: web.Request) -> web.StreamResponse:
    return web.json_response(await _queue(request).status())

"""The engine workers' endpoints /fishnet/* (FISHNET.md) on a live server: keys, the long poll,
move and analysis submissions, abort, status, leases (an injected clock), and bad input of any
shape (hypothesis) answered 400/404 with a JSON error and nothing changed."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import pytest
from fuzz_values import draw_examples
from hypothesis import strategies as st
from ws_support import TEST_WORKER_KEY, StartApp

from server.app import App
from server.store.jobs import Job
from server.transport.http_api.context import ApiError

AUTH = {"Authorization": f"Bearer {TEST_WORKER_KEY}"}
WORKER = {"worker": {"name": "w1", "version": "1", "engines": {}, "variants": ["minishogi"]}}
MOVE_PAYLOAD = {
    "position": "rbsgk/4p/5/P4/KGSBR[-] w 0 1",
    "moves": "",
    "level": 1,
    "clock": None,
}
ANALYSIS_PAYLOAD = {
    "position": "rbsgk/4p/5/P4/KGSBR[-] w 0 1",
    "moves": "a2a3",
    "limits": {"movetime_ms": 100, "depth": None},
}
ENTRY = {
    "ply": 0,
    "score": {"cp": 12},
    "best": "a2a3",
    "pv": "a2a3 e4e3",
    "depth": 5,
    "nodes": 1000,
    "time_ms": 90,
}


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def post(
    http: aiohttp.ClientSession,
    app: App,
    path: str,
    body: Any = None,
    *,
    headers: dict[str, str] | None = None,
    data: bytes | None = None,
) -> tuple[int, Any]:
    kwargs: dict[str, Any] = {"headers": AUTH if headers is None else headers}
    if data is not None:
        kwargs["data"] = data
    elif body is not None:
        kwargs["json"] = body
    async with http.post(f"http://127.0.0.1:{app.port}{path}", **kwargs) as answer:
        text = await answer.text()
        return answer.status, json.loads(text) if text else None


async def get_status(http: aiohttp.ClientSession, app: App) -> Any:
    async with http.get(f"http://127.0.0.1:{app.port}/fishnet/status", headers=AUTH) as answer:
        assert answer.status == 200
        return await answer.json()


class Results:
    """What the queue handed to its handlers, with an event per arrival."""

    def __init__(self, app: App) -> None:
        self.moves: list[tuple[str, str | None]] = []
        self.analyses: list[tuple[str, list[dict[str, Any]], bool]] = []
        self.arrived = asyncio.Event()
        app.jobs.on_move(self._move)
        app.jobs.on_analysis(self._analysis)

    async def _move(self, job: Job, bestmove: str | None) -> None:
        self.moves.append((job.id, bestmove))
        self.arrived.set()

    async def _analysis(self, job: Job, entries: list[dict[str, Any]], done: bool) -> None:
        self.analyses.append((job.id, entries, done))
        self.arrived.set()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_a_move_job_goes_to_a_worker_and_its_move_comes_back(
    start_app: StartApp, http: aiohttp.ClientSession, backend: str
) -> None:
    app = await start_app(backend, fishnet_poll_s=0)
    results = Results(app)
    assert (await post(http, app, "/fishnet/acquire", WORKER))[0] == 204
    job_id = await app.jobs.enqueue_move("g1", "minishogi", MOVE_PAYLOAD)
    status, body = await post(http, app, "/fishnet/acquire", WORKER)
    assert status == 202
    assert body == {
        "work": {"type": "move", "id": job_id, "lease_s": 20.0},
        "game_id": "g1",
        "variant": "minishogi",
        **MOVE_PAYLOAD,
    }
    assert await get_status(http, app) == {
        "queue": {"move": {"queued": 0, "acquired": 1}, "analysis": {"queued": 0, "acquired": 0}}
    }
    assert (await post(http, app, f"/fishnet/move/{job_id}", {"move": {"bestmove": "a2a3"}}))[
        0
    ] == 204
    assert results.moves == [(job_id, "a2a3")]
    status, error = await post(http, app, f"/fishnet/move/{job_id}", {"move": {"bestmove": "a2a3"}})
    assert status == 404 and "error" in error
    assert results.moves == [(job_id, "a2a3")]


async def test_move_jobs_before_analysis_and_only_the_workers_variants(
    start_app: StartApp, http: aiohttp.ClientSession
) -> None:
    app = await start_app(fishnet_poll_s=0)
    analysis = await app.jobs.enqueue_analysis("g1", "minishogi", ANALYSIS_PAYLOAD)
    dai = await app.jobs.enqueue_move("g2", "daishogi", MOVE_PAYLOAD)
    move = await app.jobs.enqueue_move("g3", "minishogi", MOVE_PAYLOAD)
    got = [(await post(http, app, "/fishnet/acquire", WORKER))[1]["work"]["id"] for _ in range(2)]
    assert got == [move, analysis]
    assert (await post(http, app, "/fishnet/acquire", WORKER))[0] == 204
    anyone = {"worker": {"name": "w2"}}
    assert (await post(http, app, "/fishnet/acquire", anyone))[1]["work"]["id"] == dai


async def test_the_long_poll_answers_when_a_job_comes(
    start_app: StartApp, http: aiohttp.ClientSession
) -> None:
    app = await start_app(fishnet_poll_s=60)
    waiting = asyncio.ensure_future(post(http, app, "/fishnet/acquire", WORKER))
    # the hub goes on meanwhile: the status answers while the acquire waits
    assert (await get_status(http, app))["queue"]["move"]["queued"] == 0
    assert not waiting.done()
    job_id = await app.jobs.enqueue_move("g1", "minishogi", MOVE_PAYLOAD)
    status, body = await asyncio.wait_for(waiting, 10)
    assert status == 202 and body["work"]["id"] == job_id


async def test_analysis_partial_then_done(start_app: StartApp, http: aiohttp.ClientSession) -> None:
    app = await start_app(fishnet_poll_s=0)
    results = Results(app)
    job_id = await app.jobs.enqueue_analysis("g1", "minishogi", ANALYSIS_PAYLOAD)
    assert (await post(http, app, "/fishnet/acquire", WORKER))[0] == 202
    partial = {"analysis": [ENTRY], "done": False}
    assert (await post(http, app, f"/fishnet/analysis/{job_id}", partial))[0] == 204
    held = await app.store.job(job_id)
    assert held is not None and held.state == "acquired" and held.result == [ENTRY]
    second = {**ENTRY, "ply": 1, "score": {"mate": -2}, "best": None, "pv": ""}
    final = {"analysis": [ENTRY, second], "done": True}
    assert (await post(http, app, f"/fishnet/analysis/{job_id}", final))[0] == 204
    done = await app.store.job(job_id)
    assert done is not None and done.state == "done" and done.result == [ENTRY, second]
    assert [(n, d) for _, n, d in results.analyses] == [([ENTRY], False), ([ENTRY, second], True)]
    # a move submission to an analysis job (and the other way round) is refused
    assert (await post(http, app, f"/fishnet/move/{job_id}", {"move": {"bestmove": None}}))[
        0
    ] == 404


async def test_abort_gives_the_job_to_the_next_worker(
    start_app: StartApp, http: aiohttp.ClientSession
) -> None:
    app = await start_app(fishnet_poll_s=0)
    job_id = await app.jobs.enqueue_move("g1", "minishogi", MOVE_PAYLOAD)
    assert (await post(http, app, "/fishnet/acquire", WORKER))[0] == 202
    assert (await post(http, app, f"/fishnet/abort/{job_id}"))[0] == 204
    assert (await post(http, app, "/fishnet/abort/unknown"))[0] == 204
    status, body = await post(http, app, "/fishnet/acquire", {"worker": {"name": "w2"}})
    assert status == 202 and body["work"]["id"] == job_id
    job = await app.store.job(job_id)
    assert job is not None and (job.worker, job.attempts) == ("w2", 2)


async def test_an_expired_lease_goes_to_another_worker(
    start_app: StartApp, http: aiohttp.ClientSession
) -> None:
    app = await start_app(fishnet_poll_s=0, move_lease_s=5)
    now = [datetime(2026, 11, 27, 8, 0, tzinfo=UTC)]
    app.jobs.clock = lambda: now[0]
    job_id = await app.jobs.enqueue_move("g1", "minishogi", MOVE_PAYLOAD)
    assert (await post(http, app, "/fishnet/acquire", WORKER))[0] == 202
    now[0] += timedelta(seconds=4.9)
    assert (await post(http, app, "/fishnet/acquire", {"worker": {"name": "w2"}}))[0] == 204
    now[0] += timedelta(seconds=0.1)
    status, body = await post(http, app, "/fishnet/acquire", {"worker": {"name": "w2"}})
    assert status == 202 and body["work"]["id"] == job_id
    now[0] += timedelta(seconds=5)
    # the second worker's lease ran out too: its move is refused, the job waits for a third
    assert (await post(http, app, f"/fishnet/move/{job_id}", {"move": {"bestmove": "a2a3"}}))[
        0
    ] == 404
    assert (await get_status(http, app))["queue"]["move"] == {"queued": 1, "acquired": 0}


async def test_a_keepalive_keeps_a_job_past_its_lease_until_the_job_is_over(
    start_app: StartApp, http: aiohttp.ClientSession
) -> None:
    """A search longer than the lease: each keepalive renews it from now (the lease the job
    came with, ``work.lease_s``); once the job is over (done, cancelled, given back, expired,
    unknown) a keepalive is 404 — the worker's sign to drop it."""
    app = await start_app(fishnet_poll_s=0, move_lease_s=5)
    now = [datetime(2026, 11, 28, 8, 0, tzinfo=UTC)]
    app.jobs.clock = lambda: now[0]
    job_id = await app.jobs.enqueue_move("g1", "minishogi", MOVE_PAYLOAD)
    status, body = await post(http, app, "/fishnet/acquire", WORKER)
    assert status == 202 and body["work"] == {"type": "move", "id": job_id, "lease_s": 5.0}
    for _ in range(3):  # 12 s in all, more than twice the lease
        now[0] += timedelta(seconds=4)
        assert (await post(http, app, f"/fishnet/keepalive/{job_id}"))[0] == 204
        assert (await post(http, app, "/fishnet/acquire", {"worker": {"name": "w2"}}))[0] == 204
    assert (await post(http, app, f"/fishnet/keepalive/{job_id}", {}))[0] == 204  # a {} body
    job = await app.store.job(job_id)
    assert job is not None and job.attempts == 1 and job.lease_until == now[0] + timedelta(seconds=5)
    assert (await post(http, app, f"/fishnet/move/{job_id}", {"move": {"bestmove": "a2a3"}}))[
        0
    ] == 204
    status, error = await post(http, app, f"/fishnet/keepalive/{job_id}")
    assert status == 404 and "error" in error
    # cancelled (its game ended) while held
    other = await app.jobs.enqueue_move("g2", "minishogi", MOVE_PAYLOAD)
    assert (await post(http, app, "/fishnet/acquire", WORKER))[0] == 202
    assert await app.store.cancel(other, now[0])
    assert (await post(http, app, f"/fishnet/keepalive/{other}"))[0] == 404
    # expired: a keepalive after the lease ran out does not take the job back
    third = await app.jobs.enqueue_analysis("g3", "minishogi", ANALYSIS_PAYLOAD)
    status, body = await post(http, app, "/fishnet/acquire", WORKER)
    assert status == 202 and body["work"] == {"type": "analysis", "id": third, "lease_s": 60.0}
    now[0] += timedelta(seconds=61)
    assert (await post(http, app, f"/fishnet/keepalive/{third}"))[0] == 404
    assert (await get_status(http, app))["queue"]["analysis"] == {"queued": 1, "acquired": 0}
    for job_id in ("unknown", "x" * 17):
        assert (await post(http, app, f"/fishnet/keepalive/{job_id}"))[0] == 404
    assert (await post(http, app, f"/fishnet/keepalive/{third}", headers={}))[0] == 401


async def test_keys_are_checked(start_app: StartApp, http: aiohttp.ClientSession) -> None:
    app = await start_app(fishnet_poll_s=0)
    job_id = await app.jobs.enqueue_move("g1", "minishogi", MOVE_PAYLOAD)
    for headers in (
        {},
        {"Authorization": "Bearer wrong-key-wrong-key"},
        {"Authorization": TEST_WORKER_KEY},
        {"Authorization": "Basic " + TEST_WORKER_KEY},
    ):
        status, error = await post(http, app, "/fishnet/acquire", WORKER, headers=headers)
        assert status == 401 and "error" in error
    async with http.get(f"http://127.0.0.1:{app.port}/fishnet/status") as answer:
        assert answer.status == 401
    job = await app.store.job(job_id)
    assert job is not None and job.state == "queued"


def test_the_embedded_run_creates_and_keeps_its_key(tmp_path: Any) -> None:
    from server.app.jobs import load_worker_keys
    from server.config import ConfigError, Settings

    path = tmp_path / "data" / "worker.key"
    settings = Settings(worker_key_file=str(path))
    (key,) = load_worker_keys(settings)
    assert len(key) >= 32 and path.read_text().strip() == key
    assert load_worker_keys(settings) == (key,)
    assert load_worker_keys(Settings(worker_keys="a" * 16 + ",b" * 1 + "b" * 15)) == (
        "a" * 16,
        "b" * 16,
    )
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    # Hubs starting together on one shared file agree on one key (the first one linked).
    shared = Settings(worker_key_file=str(tmp_path / "keys" / "worker.key"))
    with ThreadPoolExecutor(8) as pool:
        assert len(set(pool.map(lambda _: load_worker_keys(shared), range(8)))) == 1
    assert [p.name for p in (tmp_path / "keys").iterdir()] == ["worker.key"]
    # Never a published placeholder, nor a short key, from the file either.
    for bad in ("change-this-worker-key-0000", "short"):
        path.write_text(bad + "\n")
        with pytest.raises(ConfigError, match=r"worker\.key"):
            load_worker_keys(settings)


# --- bad input ------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)


def near(valid: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Bodies close to a valid one: one key's value replaced, a key dropped, or a key added."""
    keys = sorted(valid)

    def replace(key: str, value: Any) -> dict[str, Any]:
        return {**valid, key: value}

    return st.one_of(
        st.builds(replace, st.sampled_from(keys), json_values),
        st.builds(lambda key: {k: v for k, v in valid.items() if k != key}, st.sampled_from(keys)),
        json_values,
    )


ENTRY_FUZZ = st.builds(
    lambda key, value: [{**ENTRY, key: value}], st.sampled_from(sorted(ENTRY)), json_values
)
BODIES = {
    "acquire": st.one_of(near(WORKER), st.builds(lambda w: {"worker": w}, near(WORKER["worker"]))),
    "move": st.one_of(
        near({"move": {"bestmove": "a2a3"}}),
        st.builds(lambda v: {"move": {"bestmove": v}}, json_values.filter(lambda v: v is not None)),
        st.builds(
            lambda v: {"move": {"bestmove": v}},
            st.text(min_size=0, max_size=80).filter(
                lambda t: (
                    t == ""
                    or len(t) > 64
                    or any(c.isspace() or not c.isascii() or not c.isprintable() for c in t)
                )
            ),
        ),
    ),
    "analysis": st.one_of(
        near({"analysis": [ENTRY], "done": False}),
        st.builds(lambda entries: {"analysis": entries, "done": True}, ENTRY_FUZZ),
    ),
}
BODIES["keepalive"] = json_values  # any object (or no body at all); nothing else
RAW = st.one_of(
    st.binary(max_size=40), st.just(b""), st.just(b"[]"), st.just(b"null"), st.just(b"{")
)


def accepted(kind: str, body: Any) -> bool:
    """Whether ``body`` is in fact valid (the fuzz may draw one): then it may change things."""
    from server.transport.http_api import fishnet

    if not isinstance(body, dict):
        return False
    if kind == "keepalive":
        return True
    try:
        if kind == "analysis":
            fishnet.parse_analysis(body)
            return True
        if kind == "move":
            bestmove = body["move"]["bestmove"]
            return isinstance(body["move"], dict) and (
                bestmove is None
                or (
                    isinstance(bestmove, str) and fishnet._MOVE_TEXT.fullmatch(bestmove) is not None
                )
            )
        worker = body["worker"]
        name = worker["name"]
        variants = worker.get("variants")
        return (
            isinstance(name, str)
            and 0 < len(name) <= 64
            and name == name.strip()
            and (
                variants is None
                or (
                    isinstance(variants, list)
                    and len(variants) <= 32
                    and all(isinstance(v, str) and 0 < len(v) <= 32 for v in variants)
                )
            )
        )
    except (KeyError, TypeError, AttributeError, ApiError):
        return False


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_bad_bodies_are_refused_and_change_nothing(
    start_app: StartApp, http: aiohttp.ClientSession, backend: str
) -> None:
    app = await start_app(backend, fishnet_poll_s=0)
    results = Results(app)
    move_job = await app.jobs.enqueue_move("g1", "minishogi", MOVE_PAYLOAD)
    analysis_job = await app.jobs.enqueue_analysis("g2", "minishogi", ANALYSIS_PAYLOAD)
    for _ in range(2):
        assert (await post(http, app, "/fishnet/acquire", WORKER))[0] == 202
    before = {job.id: job for job in await app.store.open_jobs()}
    paths = {
        "acquire": "/fishnet/acquire",
        "move": f"/fishnet/move/{move_job}",
        "analysis": f"/fishnet/analysis/{analysis_job}",
        "keepalive": f"/fishnet/keepalive/{move_job}",
    }
    cases: list[tuple[str, Any, bytes | None]] = []
    for kind, strategy in BODIES.items():
        cases += [(kind, body, None) for body in draw_examples(strategy, 150)]
        cases += [(kind, None, raw) for raw in draw_examples(RAW, 20)]
    refused = 0
    for kind, body, raw in cases:
        if raw is None and accepted(kind, body):
            continue
        if kind == "keepalive" and raw in (None, b"") and body is None:
            continue  # no body at all: a keepalive (it would renew the lease)
        status, answer = await post(http, app, paths[kind], body, data=raw)
        assert status == 400, (kind, body, raw, status, answer)
        assert isinstance(answer, dict) and isinstance(answer.get("error"), str)
        refused += 1
    assert refused > 300
    after = {job.id: job for job in await app.store.open_jobs()}
    assert after == before
    assert results.moves == [] and results.analyses == []
    # bad job ids in the path: 404, nothing changed
    for job_id in ("x" * 17, "a-b", "%00", "a.b", "é"):
        status, answer = await post(
            http, app, f"/fishnet/move/{job_id}", {"move": {"bestmove": None}}
        )
        assert status == 404 and "error" in answer
    assert {job.id: job for job in await app.store.open_jobs()} == before

"""Nobody starves the computer (since 172efa8), on a live server: analyses are registered
players' only, one unfinished at a time and a quota a day, a player of the game replaces a
stranger's; a running analysis gives way to a computer move within one position (a REAL worker
with a real engine on one slot); move jobs go round-robin between players; guests are limited
in computer games. Every attack has an honest player beside it, served as usual."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from computer_support import TURN_TIMEOUT_S
from support import poll
from test_review import random_moves, save_game
from worker_support import StartWorker
from ws_support import TEST_WORKER_KEY, OpenClient, StartApp

from server.app import App
from server.rules.analysis import AnalysisLimits
from server.store.jobs import Job
from server.transport.analysis_api import AnalysisPolicy

AUTH = {"Authorization": f"Bearer {TEST_WORKER_KEY}"}
WORKER = {"worker": {"name": "w1", "version": "2", "engines": {}, "variants": ["minishogi"]}}
MOVE = {"position": None, "moves": "", "level": 1, "clock": None}
TC = {"kind": "fischer", "base_s": 300, "inc_s": 2}


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def fishnet(http: aiohttp.ClientSession, app: App, path: str, body: Any = None) -> tuple[int, Any]:
    async with http.post(f"http://127.0.0.1:{app.port}{path}", json=body or {}, headers=AUTH) as answer:
        text = await answer.text()
        return answer.status, (await answer.json() if text else None)


def entry(ply: int) -> dict[str, Any]:
    return {"ply": ply, "score": {"cp": ply}, "best": None, "pv": "", "depth": 1, "nodes": 1, "time_ms": 1}


async def test_analysis_requests_are_limited_at_every_door(start_app: StartApp, open_client: OpenClient) -> None:
    app = await start_app(
        "sqlite", analysis_daily_quota=2, analysis_request_burst=8, analysis_requests_per_min=0.01
    )
    games = [(await save_game(app.store, moves=random_moves("minishogi", s, 6)))[0] for s in range(4)]
    # Before login, and as a guest: refused, nothing stored.
    anonymous = await open_client(app, "anonymous")
    refused = await anonymous.request("analyse", {"game": games[0]})
    assert refused["d"]["code"] == "not_authenticated", refused
    await anonymous.guest()
    refused = await anonymous.request("analyse", {"game": games[0]})
    assert refused["d"]["code"] == "registered_only", refused
    # A registered attacker: a cheap analysis of alice's game, then a flood, refused.
    mallory = await open_client(app, "mallory")
    await mallory.register("mallory")
    await mallory.ok("analyse", {"game": games[0], "movetime_ms": 50})
    for game_id in games[1:]:
        refused = await mallory.request("analyse", {"game": game_id, "movetime_ms": 10_000})
        assert refused["d"]["code"] == "analysis_running", refused
    # Alice (a player of games[0]) replaces the stranger's cheap analysis with her own.
    alice = await open_client(app, "alice")
    await alice.register("alice")
    view = await alice.ok("analyse", {"game": games[0], "movetime_ms": 300})
    assert view["requested_by"] == "alice" and view["limits"]["movetime_ms"] == 300
    refused = await mallory.request("analyse", {"game": games[0]})
    assert refused["d"]["code"] == "analysis_exists"
    # The replaced request no longer counts for mallory's day: two more, then the quota.
    for game_id in games[1:3]:
        await mallory.ok("analyse", {"game": game_id, "movetime_ms": 50})
        await app.store.save_analysis_plies(game_id, [], done=True)
    refused = await mallory.request("analyse", {"game": games[3]})
    assert refused["d"]["code"] == "analysis_quota" and "(2)" in refused["d"]["message"], refused
    assert await app.store.get_analysis(games[3]) is None
    # Requests of one player beyond the rate (8 at once here: that was the 8th) are refused
    # before anything is read.
    refused = await mallory.request("analyse", {"game": games[3]})
    assert refused["d"]["code"] == "rate_limited" and "a minute" in refused["d"]["message"], refused
    # A request over the engine-time bound names the bound.
    app.analysis.analysis_policy = AnalysisPolicy(max_engine_s=1.0)
    bob = await open_client(app, "bob")
    await bob.register("bob")
    refused = await bob.request("analyse", {"game": games[3], "movetime_ms": 1000})
    assert refused["d"]["code"] == "analysis_too_long" and "at most 1 s" in refused["d"]["message"]


async def test_an_analysis_gives_way_to_waiting_moves_and_keeps_its_progress(
    start_app: StartApp, http: aiohttp.ClientSession
) -> None:
    """The protocol: a partial submission is answered with the waiting moves' variants; the
    worker gives the analysis back, takes the move, and gets the analysis again without the
    plies it sent. Move jobs go round-robin between the players they serve."""
    app = await start_app("sqlite", fishnet_poll_s=0)
    moves = random_moves("minishogi", 3, 6)
    game_id, _ = await save_game(app.store, moves=moves)
    await app.analysis.request_analysis(game_id, limits=AnalysisLimits(100, None), plies_total=len(moves) + 1, requested_by="carol")
    status, job = await fishnet(http, app, "/fishnet/acquire", WORKER)
    assert status == 202 and job["work"]["type"] == "analysis" and job["skip_plies"] == []
    analysis_url = f"/fishnet/analysis/{job['work']['id']}"
    assert (await fishnet(http, app, analysis_url, {"analysis": [entry(0)], "done": False}))[0] == 204
    # One player's many computer games, then another player's: queued while the analysis runs.
    hog = [await app.jobs.enqueue_move(f"hog{i}", "minishogi", MOVE, owner="u1") for i in range(3)]
    honest = await app.jobs.enqueue_move("honest", "minishogi", MOVE, owner="u2")
    status, answer = await fishnet(http, app, analysis_url, {"analysis": [entry(1)], "done": False})
    assert (status, answer) == (200, {"moves_waiting": ["minishogi"]})
    assert (await fishnet(http, app, f"/fishnet/abort/{job['work']['id']}"))[0] == 204
    order = []
    for _ in range(4):
        status, move_job = await fishnet(http, app, "/fishnet/acquire", WORKER)
        assert status == 202 and move_job["work"]["type"] == "move"
        order.append(move_job["work"]["id"])
        await fishnet(http, app, f"/fishnet/move/{move_job['work']['id']}", {"move": {"bestmove": None}})
    assert order == [hog[0], honest, hog[1], hog[2]]  # the honest player's second, not last
    status, again = await fishnet(http, app, "/fishnet/acquire", WORKER)
    assert status == 202 and again["work"]["id"] == job["work"]["id"] and again["skip_plies"] == [0, 1]
    rest = [entry(p) for p in range(2, len(moves) + 1)]
    assert (await fishnet(http, app, analysis_url, {"analysis": rest, "done": True}))[0] == 204
    stored = await app.store.get_analysis(game_id)
    assert stored is not None and stored.state == "done"
    assert [e.ply for e in stored.evals] == list(range(len(moves) + 1))
    done = await app.store.job(job["work"]["id"])
    assert done is not None and isinstance(done.result, list) and len(done.result) == len(moves) + 1


async def test_a_running_analysis_gives_way_to_a_computer_move(
    start_app: StartApp, open_client: OpenClient, start_worker: StartWorker
) -> None:
    """A real worker with a real engine on ONE slot analyses a 24-ply game at 300 ms a
    position; a level-1 game against the computer starts meanwhile: its first move comes within
    about one position's time and the move's own, long before the analysis ends, and the
    analysis then finishes with every position."""
    app = await start_app("sqlite", fishnet_poll_s=1)
    moves = random_moves("minishogi", 21, 24)
    game_id, _ = await save_game(app.store, moves=moves)
    progressed = asyncio.Event()
    finished = asyncio.Event()

    async def watch(job: Job, entries: list[Any], done: bool) -> None:
        if job.game_id == game_id and entries:
            progressed.set()
        if job.game_id == game_id and done:
            finished.set()

    app.jobs.on_analysis(watch)
    analyst = await open_client(app, "analyst")
    await analyst.register("analyst")
    view = await analyst.ok("analyse", {"game": game_id, "movetime_ms": 300})
    total = view["progress"]["total"]
    await start_worker(app)
    await asyncio.wait_for(progressed.wait(), TURN_TIMEOUT_S)
    # The honest player: the computer has the first move.
    human = await open_client(app, "human")
    await human.guest()
    started = time.monotonic()
    answer = await human.ok("challenge_ai", {"variant": "minishogi", "level": 1, "colour": "second", "tc": TC})
    reply = await human.next(lambda m: m["t"] == "move" and m["d"].get("game") == answer["game"], timeout=TURN_TIMEOUT_S)
    latency = time.monotonic() - started
    analysed = await app.store.get_analysis(game_id)
    assert analysed is not None and analysed.plies_done < total, "the analysis ended first"
    # One position (300 ms; an engine may take twice that) + the move (level 1: ~50 ms) + the
    # round trips and engine switches: far below the analysis left (~0.4 s x the positions).
    assert latency < 3.0, (latency, reply)
    await asyncio.wait_for(finished.wait(), TURN_TIMEOUT_S)
    done = await app.store.get_analysis(game_id)
    assert done is not None and done.state == "done"
    assert [e.ply for e in done.evals] == list(range(total))


async def test_a_long_position_gives_way_in_its_middle(
    start_app: StartApp, open_client: OpenClient, start_worker: StartWorker
) -> None:
    """A position of 8 s (the engine's move time) is not waited for: the worker, asking every
    second whether a move waits, abandons it and plays the computer's move at once."""
    app = await start_app("sqlite", fishnet_poll_s=1)
    game_id, _ = await save_game(app.store, moves=random_moves("minishogi", 22, 6))
    analyst = await open_client(app, "analyst")
    await analyst.register("analyst")
    await analyst.ok("analyse", {"game": game_id, "movetime_ms": 8000})
    await start_worker(app)

    async def held() -> int:
        return (await app.jobs.status())["queue"]["analysis"]["acquired"]

    await poll(held, lambda n: n == 1)  # the worker searches the first position
    human = await open_client(app, "human")
    await human.guest()
    started = time.monotonic()
    answer = await human.ok("challenge_ai", {"variant": "minishogi", "level": 1, "colour": "second", "tc": TC})
    await human.next(lambda m: m["t"] == "move" and m["d"].get("game") == answer["game"], timeout=TURN_TIMEOUT_S)
    latency = time.monotonic() - started
    # A poll (1 s), the engines restarted, the move (level 1): well within the 8-s position.
    assert latency < 5.0, latency
    analysis = await app.store.get_analysis(game_id)
    assert analysis is not None and analysis.state in ("queued", "running") and analysis.plies_done == 0
    # The analysis goes on; ended here, its worker drops it within a second (a quick teardown).
    job = await app.store.latest_job(game_id, "analysis")
    assert job is not None and await app.store.cancel(job.id)
    await poll(held, lambda n: n == 0)


async def test_guests_are_limited_in_computer_games(start_app: StartApp, open_client: OpenClient) -> None:
    app = await start_app("sqlite", max_guest_computer_games=1)
    first = await open_client(app, "g1")
    await first.guest()
    guest_game = (await first.ok("challenge_ai", {"variant": "minishogi", "level": 8, "tc": TC}))["game"]
    second = await open_client(app, "g2")
    await second.guest()
    refused = await second.request("challenge_ai", {"variant": "minishogi", "level": 8, "tc": TC})
    assert refused["d"]["code"] == "computer_guest_limit" and "log in" in refused["d"]["message"], refused
    # A registered player is not limited by the guests.
    honest = await open_client(app, "honest")
    await honest.register("honest")
    assert (await honest.ok("challenge_ai", {"variant": "minishogi", "level": 1, "tc": TC}))["game"]
    # The guest's game ends: another guest may play.
    await first.next("game_start")
    await first.ok("abort", {"game": guest_game})
    await second.ok("challenge_ai", {"variant": "minishogi", "level": 8, "tc": TC})

"""Computer analysis on a live server: ``POST``/``GET /api/game/{id}/analysis`` on the HTTP
API, the job a worker acquires over ``/fishnet``, its submissions stored (the job queue's
handler), progress and results read back, the PGN export carrying them; bad requests of any
shape (hypothesis) answered with a JSON error and nothing changed."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from fuzz_values import draw_examples
from hypothesis import strategies as st
from test_review import random_moves, save_game
from ws_support import TEST_WORKER_KEY, StartApp, registered_headers

from server.app import App
from server.rules import Game

WORKER_AUTH = {"Authorization": f"Bearer {TEST_WORKER_KEY}"}
WORKER = {"worker": {"name": "w1", "version": "1", "engines": {}, "variants": ["minishogi"]}}


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def call(
    http: aiohttp.ClientSession, app: App, method: str, path: str, **kwargs: Any
) -> tuple[int, Any]:
    async with http.request(method, f"http://127.0.0.1:{app.port}{path}", **kwargs) as answer:
        text = await answer.text()
        try:
            return answer.status, json.loads(text) if text else None
        except ValueError:
            return answer.status, text


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_request_work_results_and_export(
    start_app: StartApp, http: aiohttp.ClientSession, backend: str
) -> None:
    app = await start_app(backend, fishnet_poll_s=0)
    moves = random_moves("minishogi", 11, 5)
    game_id, game = await save_game(app.store, moves=moves)
    path = f"/api/game/{game_id}/analysis"
    assert (await call(http, app, "GET", path))[0] == 404
    carol = await registered_headers(app, "carol")
    status, view = await call(http, app, "POST", path, json={"movetime_ms": 120}, headers=carol)
    assert status == 202 and view["state"] == "queued"
    total = view["progress"]["total"]
    # A worker gets the job: the game's start, its moves, the limits.
    status, job = await call(http, app, "POST", "/fishnet/acquire", json=WORKER, headers=WORKER_AUTH)
    assert status == 202 and job["work"]["type"] == "analysis" and job["game_id"] == game_id
    assert job["moves"] == " ".join(moves) and job["position"] == game.start_fen
    assert job["limits"] == {"movetime_ms": 120, "depth": None}
    job_url = f"/fishnet/analysis/{job['work']['id']}"
    # Before the first player's moves the engine preferred another move; before the second
    # player's it preferred the move played (never judged, however the scores swing).
    best = [
        None if p >= game.ply else game.moves[p] if p % 2
        else next(m for m in Game(game.variant, game.position_at(p).fen()).legal_moves()
                  if m != game.moves[p])
        for p in range(total)
    ]
    entries = [
        {"ply": p, "score": {"cp": 20 - 300 * (p % 2)}, "best": best[p], "pv": best[p] or "",
         "depth": 6, "nodes": 500, "time_ms": 110}
        for p in range(total)
    ]
    status, _ = await call(http, app, "POST", job_url, json={"analysis": entries[:2], "done": False},
                           headers=WORKER_AUTH)
    assert status == 204
    status, view = await call(http, app, "GET", path)
    assert status == 200 and view["state"] == "running"
    assert view["progress"] == {"done": 2, "total": total}
    status, _ = await call(http, app, "POST", job_url, json={"analysis": entries, "done": True},
                           headers=WORKER_AUTH)
    assert status == 204
    status, view = await call(http, app, "GET", path)
    assert view["state"] == "done" and view["progress"] == {"done": total, "total": total}
    assert view["summary"]["first"]["blunder"] >= 1  # +20 → -280 for the first player's move
    assert {a["side"] for a in view["advice"]} == {0}  # the second played the engine's moves
    assert view["summary"]["second"]["acpl"] == 0
    status, pgn = await call(http, app, "GET", f"/api/games/{game_id}.pgn")
    assert status == 200 and "[%eval -2.80]" in pgn
    # Asking again is refused: the analysis is done.
    status, error = await call(http, app, "POST", path, json={}, headers=carol)
    assert status == 409 and "error" in error


async def test_a_job_no_engine_can_do_fails_the_analysis(
    start_app: StartApp, http: aiohttp.ClientSession
) -> None:
    """A worker answers a job it cannot do with an empty final submission: the analysis is
    failed (not "done" with nothing) and may be requested again."""
    app = await start_app("sqlite", fishnet_poll_s=0)
    game_id, _ = await save_game(app.store, moves=random_moves("minishogi", 8, 4))
    path = f"/api/game/{game_id}/analysis"
    carol = await registered_headers(app, "carol")
    assert (await call(http, app, "POST", path, json={}, headers=carol))[0] == 202
    status, job = await call(http, app, "POST", "/fishnet/acquire", json=WORKER, headers=WORKER_AUTH)
    assert status == 202
    status, _ = await call(http, app, "POST", f"/fishnet/analysis/{job['work']['id']}",
                           json={"analysis": [], "done": True}, headers=WORKER_AUTH)
    assert status == 204
    status, view = await call(http, app, "GET", path)
    assert view["state"] == "failed" and view["error"] == "no engine could analyse this game"
    assert (await call(http, app, "POST", path, json={"depth": 4}, headers=carol))[0] == 202


async def test_requester_and_refusals(start_app: StartApp, http: aiohttp.ClientSession) -> None:
    app = await start_app("sqlite", fishnet_poll_s=0)
    running, _ = await save_game(app.store, moves=random_moves("minishogi", 2, 3), result=None)
    finished, _ = await save_game(app.store, variant="daishogi", moves=random_moves("daishogi", 2, 3))
    carol = await registered_headers(app, "carol")
    assert (await call(http, app, "POST", f"/api/game/{running}/analysis", headers=carol))[0] == 409
    assert (await call(http, app, "POST", "/api/game/nosuchgm/analysis", headers=carol))[0] == 404
    bad_auth = {"Authorization": "Bearer nope"}
    assert (await call(http, app, "POST", f"/api/game/{finished}/analysis", headers=bad_auth))[0] == 401
    # Anonymous and guest requests are refused with a clear error (lichess's shape).
    status, error = await call(http, app, "POST", f"/api/game/{finished}/analysis")
    assert status == 401 and "registered account" in error["error"]
    guest = app.accounts.guest()
    status, error = await call(http, app, "POST", f"/api/game/{finished}/analysis",
                               headers={"Authorization": f"Bearer {guest.token}"})
    assert status in (401, 403) and "error" in error
    assert (await call(http, app, "POST", f"/api/game/{finished}/analysis", data=b"{",
                       headers={"Content-Type": "application/json", **carol}))[0] == 400
    assert await app.store.get_analysis(finished) is None
    # A form body; the logged-in player is the requester. A depth alone gets a move-time cap
    # (the engine-time bound: 600 s over 4 positions is more than the 10 s maximum).
    status, view = await call(
        http, app, "POST", f"/api/game/{finished}/analysis", data={"depth": "3"}, headers=carol
    )
    assert status == 202 and view["requested_by"] == "carol"
    assert view["limits"] == {"movetime_ms": 10_000, "depth": 3}


_values = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=10) | st.floats()
_bodies = st.dictionaries(st.sampled_from(["movetime_ms", "depth", "level", "x"]), _values, max_size=3)


async def test_bad_requests_change_nothing(start_app: StartApp, http: aiohttp.ClientSession) -> None:
    app = await start_app(
        "sqlite", fishnet_poll_s=0, analysis_daily_quota=1000, analysis_requests_per_min=6000.0,
        analysis_request_burst=1000,
    )
    game_id, _ = await save_game(app.store, moves=random_moves("minishogi", 5, 4))
    path = f"/api/game/{game_id}/analysis"
    carol = await registered_headers(app, "carol")
    refused = 0
    for body in draw_examples(_bodies, 60):
        status, answer = await call(http, app, "POST", path, json=body, headers=carol)
        stored = await app.store.get_analysis(game_id)
        if status == 202:
            assert stored is not None and answer["limits"] == stored.limits.as_json()
            await app.store.save_analysis_plies(game_id, [], done=True)  # one at a time
            game_id, _ = await save_game(app.store, moves=random_moves("minishogi", 5, 4))
            path = f"/api/game/{game_id}/analysis"
            continue
        refused += 1
        assert status == 400 and isinstance(answer["error"], str), (body, status, answer)
        assert stored is None
    assert refused > 20
    for raw in (b"[]", b"1", b"\xff", b'{"depth": 1e999}'):
        status, answer = await call(http, app, "POST", "/api/game/zzzzzzzz/analysis", data=raw,
                                    headers={"Content-Type": "application/json", **carol})
        assert status in (400, 404) and "error" in answer


def test_haproxy_routes_every_api_path_to_the_api() -> None:
    """config/haproxy.cfg's http_api paths are the HTTP API's (analysis's /api/game/ included)."""
    from server.transport.http_api.paths import API_PREFIXES

    cfg = (Path(__file__).resolve().parents[2] / "config" / "haproxy.cfg").read_text()
    acl = next(line.split() for line in cfg.splitlines() if line.split()[:2] == ["acl", "http_api"])
    assert acl[2] == "path_beg" and set(acl[3:]) == set(API_PREFIXES)
    assert "/api/game/" in API_PREFIXES

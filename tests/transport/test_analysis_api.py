"""Analysis requests and views (server.transport.analysis_api) through the review doors, on
real databases (SQLite and PostgreSQL): HTTP GET ``/api/game/{id}/analysis`` and the websocket
commands ``analysis`` / ``analyse``."""

from __future__ import annotations

import json
from typing import Any

import test_review
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.rules.analysis import AnalysisLimits, FirstPlayerScore, PlyEval
from server.store import Store
from server.transport.analysis_api import (
    DEFAULT_MOVETIME_MS,
    AnalysisPolicy,
    AnalysisRequestError,
    Requester,
    bounded_limits,
    parse_limits,
)
from server.transport.review import is_review_path, review_http, review_ws

empty_database = test_review.empty_database
database = test_review.database
store = test_review.store
save_game = test_review.save_game
random_moves = test_review.random_moves


async def get_analysis(store: Store, game_id: str) -> tuple[int, Any]:
    status, _, body = await review_http(store, f"/api/game/{game_id}/analysis", {})
    return status, json.loads(body)


def requester(name: str | None, guest: bool = False) -> Requester | None:
    return None if name is None else Requester(f"u-{name}", name, guest)


async def ws(
    store: Store, kind: str, player: str | None = "alice", guest: bool = False, **payload: Any
) -> dict[str, Any]:
    return await review_ws(store, {"t": kind, "d": payload, "a": 7}, requester(player, guest))


async def test_request_progress_and_results(store: Store) -> None:
    moves = random_moves("minishogi", 3, 6)
    game_id, game = await save_game(store, moves=moves)
    assert is_review_path(f"/api/game/{game_id}/analysis")
    status, body = await get_analysis(store, game_id)
    assert (status, body["error"]["code"]) == (404, "no_analysis")
    reply = await ws(store, "analyse", game=game_id)
    assert reply["t"] == "analyse" and reply["a"] == 7
    view = reply["d"]
    assert view["state"] == "queued" and view["requested_by"] == "alice"
    assert view["limits"] == {"movetime_ms": DEFAULT_MOVETIME_MS["minishogi"], "depth": None}
    total = game.ply + 1 - (1 if game.outcome() is not None else 0)
    assert view["progress"] == {"done": 0, "total": total}
    assert view["estimate_s"] > 0
    # Asking again while it is queued: refused, nothing changed.
    again = await ws(store, "analyse", game=game_id, depth=5)
    assert again["t"] == "error" and again["d"]["code"] == "analysis_exists"
    # A worker's partial submission shows as progress; the judgements come from the scores.
    partial = [PlyEval(0, FirstPlayerScore(10), "e1e2"), PlyEval(1, FirstPlayerScore(-400))]
    await store.save_analysis_plies(game_id, partial)
    status, body = await get_analysis(store, game_id)
    assert status == 200 and body["state"] == "running"
    assert body["progress"] == {"done": 2, "total": total}
    assert body["plies"][1]["score"] == {"cp": -400}
    assert body["advice"] == [
        {"ply": 1, "side": 0, "judgement": "blunder", "kind": "cp", "best": "e1e2",
         "best_display": "R-1d"}
    ]
    assert body["summary"]["first"]["blunder"] == 1
    rest = [PlyEval(p, FirstPlayerScore(-400)) for p in range(2, total)]
    await store.save_analysis_plies(game_id, rest, done=True)
    done = (await ws(store, "analysis", game=game_id))["d"]
    assert done["state"] == "done" and done["progress"]["done"] == total and done["estimate_s"] == 0


async def test_refusals(store: Store) -> None:
    unfinished, _ = await save_game(
        store, variant="spartan", moves=random_moves("spartan", 1, 4), result=None
    )
    finished, _ = await save_game(store, variant="daishogi", moves=random_moves("daishogi", 1, 4))
    cases: list[tuple[dict[str, Any], str]] = [
        ({"game": unfinished}, "game_not_finished"),
        ({"game": "nosuchgm"}, "not_found"),
        ({"game": finished, "movetime_ms": 10}, "bad_request"),
        ({"game": finished, "movetime_ms": 10**6}, "bad_request"),
        ({"game": finished, "depth": 0}, "bad_request"),
        ({"game": finished, "depth": "deep"}, "bad_request"),
        ({"game": finished, "depth": True}, "bad_request"),
        ({"game": finished, "level": 3}, "bad_request"),
        ({}, "bad_request"),
        ({"game": 5}, "bad_request"),
    ]
    for payload, code in cases:
        reply = await ws(store, "analyse", **payload)
        assert reply["t"] == "error" and reply["d"]["code"] == code, (payload, reply)
    assert await store.get_analysis(unfinished) is None
    assert await store.get_analysis(finished) is None
    status, body = await get_analysis(store, "nosuchgm")
    assert (status, body["error"]["code"]) == (404, "not_found")
    status, _, _ = await review_http(store, f"/api/game/{finished}/analysis", {"x": "1"})
    assert status == 400
    # Only registered players may request: anonymous and guests are refused, nothing stored.
    anonymous = await ws(store, "analyse", game=finished, player=None)
    assert anonymous["d"]["code"] == "not_authenticated" and "registered" in anonymous["d"]["message"]
    guest = await ws(store, "analyse", game=finished, player="Guest-abc123", guest=True)
    assert guest["d"]["code"] == "registered_only"
    assert await store.get_analysis(finished) is None
    # Dai Shogi's default is a second per position (slow: the estimate says so).
    view = (await ws(store, "analyse", game=finished, player="carol"))["d"]
    assert view["limits"]["movetime_ms"] == DEFAULT_MOVETIME_MS["daishogi"] == 1000
    assert view["requested_by"] == "carol"
    assert view["estimate_s"] >= view["progress"]["total"]


def test_limits() -> None:
    assert parse_limits("spartan", {"depth": "12"}).depth == 12
    both = parse_limits("spartan", {"depth": 8, "movetime_ms": 200})
    assert (both.depth, both.movetime_ms) == (8, 200)


_values = st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.text(max_size=12) | st.floats()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(payload=st.dictionaries(st.sampled_from(["movetime_ms", "depth", "level", "x"]), _values, max_size=3))
async def test_any_request_is_queued_or_refused_with_nothing_changed(store: Store, payload: dict[str, Any]) -> None:
    game_id, _ = await save_game(store, variant="wildcastle", moves=random_moves("wildcastle", 2, 3))
    reply = await ws(store, "analyse", player=f"p{game_id}", game=game_id, **payload)
    stored = await store.get_analysis(game_id)
    if reply["t"] == "error":
        assert reply["d"]["code"] == "bad_request" and stored is None
    else:
        assert stored is not None and stored.state == "queued"
        assert reply["d"]["limits"] == stored.limits.as_json()


async def test_exports_carry_a_done_analysis(store: Store) -> None:
    game_id, _ = await save_game(store, moves=random_moves("minishogi", 4, 6))
    await ws(store, "analyse", game=game_id, movetime_ms=100)
    evals = [PlyEval(p, FirstPlayerScore(10 * p)) for p in range(3)]
    await store.save_analysis_plies(game_id, evals)
    # Partial: the exports do not carry it yet.
    _, _, pgn = await review_http(store, f"/api/games/{game_id}.pgn", {})
    assert b"%eval" not in pgn
    await store.save_analysis_plies(game_id, [PlyEval(3, FirstPlayerScore(mate=-2))], done=True)
    _, _, pgn = await review_http(store, f"/api/games/{game_id}.pgn", {})
    assert b"[%eval 0.10]" in pgn and b"[%eval #-2]" in pgn
    _, _, kif = await review_http(store, f"/api/games/{game_id}.kif", {})
    assert "評価値 -詰2" in kif.decode()


def test_the_engine_time_of_an_analysis_is_bounded() -> None:
    """positions × move time ≤ the bound: a named move time over it is refused naming the
    longest that fits; the default is lowered to fit; a depth alone gets that as a cap."""
    limits = parse_limits("daishogi", {"movetime_ms": 10_000})
    try:
        bounded_limits(limits, {"movetime_ms": 10_000}, 240, 600.0)
        raise AssertionError("not refused")
    except AnalysisRequestError as refused:
        assert refused.code == "analysis_too_long" and refused.status == 400
        assert "at most 600 s" in refused.message and "at most 2500 ms a position" in refused.message
    assert bounded_limits(parse_limits("daishogi", {}), {}, 240, 120.0) == AnalysisLimits(500, None)
    assert bounded_limits(parse_limits("daishogi", {}), {}, 100, 600.0) == AnalysisLimits(1000, None)
    assert bounded_limits(AnalysisLimits(None, 12), {"depth": 12}, 240, 600.0) == AnalysisLimits(2500, 12)
    try:
        bounded_limits(parse_limits("daishogi", {}), {}, 20_000, 600.0)
        raise AssertionError("not refused")
    except AnalysisRequestError as refused:
        assert refused.code == "analysis_too_long" and "20000 positions" in refused.message


async def test_the_players_replace_a_strangers_analysis(store: Store) -> None:
    game_id, _ = await save_game(store, moves=random_moves("minishogi", 5, 6))  # alice vs bob
    cheap = await ws(store, "analyse", player="carol", game=game_id, movetime_ms=50)
    assert cheap["d"]["requested_by"] == "carol"
    await store.save_analysis_plies(game_id, [PlyEval(0, FirstPlayerScore(10))])  # running
    # A player's request replaces the stranger's (any state), plies cleared.
    full = await ws(store, "analyse", player="Alice", game=game_id, movetime_ms=400)
    assert full["t"] == "analyse", full
    stored = await store.get_analysis(game_id)
    assert stored is not None and stored.requested_by == "Alice" and stored.limits.movetime_ms == 400
    assert stored.state == "queued" and stored.evals == ()
    # Now it is the players': neither a stranger nor the other player replaces it.
    for name in ("carol", "bob"):
        again = await ws(store, "analyse", player=name, game=game_id, movetime_ms=50)
        assert again["d"]["code"] == "analysis_exists", (name, again)


async def test_one_unfinished_analysis_per_player_and_a_daily_quota(store: Store) -> None:
    games = [(await save_game(store, moves=random_moves("minishogi", seed, 4)))[0] for seed in range(3)]
    assert (await ws(store, "analyse", player="dave", game=games[0]))["t"] == "analyse"
    running = await ws(store, "analyse", player="dave", game=games[1])
    assert running["d"]["code"] == "analysis_running" and games[0] in running["d"]["message"]
    # An honest player beside him is served.
    assert (await ws(store, "analyse", player="erin", game=games[1]))["t"] == "analyse"
    await store.save_analysis_plies(games[0], [PlyEval(0, FirstPlayerScore(1))], done=True)
    store.analysis_policy = AnalysisPolicy(daily_quota=1)  # the desk carries it in the app
    quota = await ws(store, "analyse", player="dave", game=games[2])
    assert quota["d"]["code"] == "analysis_quota" and "(1)" in quota["d"]["message"]
    assert await store.get_analysis(games[2]) is None

"""Review API (server.transport.review) on real databases: SQLite and PostgreSQL.

The store fixtures of ``tests/store/conftest.py`` (a fresh PostgreSQL schema or SQLite file
per test, migrated to head) are loaded from that file, so both suites isolate the same way.
Games are stored through the real :class:`~server.store.Store` with moves played by the
adjudicator; the API's answers are checked against the engine's own replay.
"""

from __future__ import annotations

import importlib.util
import io
import json
import random
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import chess.pgn
from sqlalchemy import update

from server.rules import Game, MoveRecord, get_variant
from server.rules.time_control import Byoyomi, Fischer, TimeControl
from server.store import Store
from server.store.schema import games
from server.transport.review import (
    REVIEW_COMMAND_TYPES,
    is_review_path,
    review_http,
    review_http_target,
    review_ws,
)

_spec = importlib.util.spec_from_file_location(
    "review_store_fixtures", Path(__file__).resolve().parents[1] / "store" / "conftest.py"
)
assert _spec is not None and _spec.loader is not None
_store_fixtures = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _store_fixtures  # dataclasses look their module up there
_spec.loader.exec_module(_store_fixtures)
empty_database = _store_fixtures.empty_database
database = _store_fixtures.database
store = _store_fixtures.store

BLITZ = Fischer(180_000, 2_000)
BYOYOMI = Byoyomi(600_000, 30_000, 3)
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


def random_moves(variant: str, seed: int, plies: int, start_fen: str | None = None) -> list[str]:
    game = Game(get_variant(variant), start_fen)
    rng = random.Random(seed)
    while game.ply < plies and game.outcome() is None:
        game.play(rng.choice(game.legal_moves()))
    return list(game.moves)


async def save_game(
    store: Store,
    *,
    variant: str = "minishogi",
    moves: list[str] | None = None,
    first: str = "alice",
    second: str = "bob",
    result: str | None = "1-0",
    termination: str = "resignation",
    start_fen: str | None = None,
    created_at: datetime | None = None,
    control: TimeControl | None = None,
) -> tuple[str, Game]:
    """Store a game played by the engine: created, started, its moves with clocks, and (with a
    result) finished, or aborted when ``termination == "abort"``."""
    v = get_variant(variant)
    start = start_fen or v.start_fen
    control = control or (BYOYOMI if v.family == "shogi" else BLITZ)
    game_id = await store.create_game(
        variant=variant, start_fen=start, time_control=control, first_name=first, second_name=second
    )
    await store.start_game(game_id)
    game = Game(v, start)
    records = []
    for i, uci in enumerate(moves or [], 1):
        played = game.play(uci)
        periods = (3 - i % 2) if control.kind == "byoyomi" else None
        records.append(
            (
                game_id,
                MoveRecord(i, uci, played.display, 170_000 - 1_234 * i, 1_000 + 10 * i, periods),
            )
        )
    await store.append_moves(records)
    if termination == "abort":
        await store.abort_game(game_id, plies=game.ply, final_fen=game.fen())
    elif result is not None:
        await store.finish_game(game_id, result, termination, plies=game.ply, final_fen=game.fen())  # type: ignore[arg-type]
    if created_at is not None:
        async with store.engine.begin() as connection:
            await connection.execute(
                update(games).where(games.c.id == game_id).values(created_at=created_at)
            )
    return game_id, game


async def get(store: Store, path: str, **query: str) -> tuple[int, str, Any]:
    status, content_type, body = await review_http(store, path, query)
    if content_type == "application/json":
        return status, content_type, json.loads(body)
    return status, content_type, body.decode()


def ids(page: dict[str, Any]) -> list[str]:
    return [g["id"] for g in page["games"]]


# --------------------------------------------------------------------------- listing


async def test_listing_is_newest_first_with_offsets_and_cursors(store: Store) -> None:
    saved = [(await save_game(store, created_at=T0 + timedelta(minutes=i)))[0] for i in range(5)]
    newest_first = saved[::-1]
    status, _, page = await get(store, "/api/games", limit="2")
    assert status == 200
    assert ids(page) == newest_first[:2]
    assert (page["limit"], page["offset"], page["next_offset"]) == (2, 0, 2)
    _, _, second = await get(store, "/api/games", limit="2", offset="2")
    assert ids(second) == newest_first[2:4]
    _, _, last = await get(store, "/api/games", limit="2", offset="4")
    assert ids(last) == newest_first[4:]
    assert last["next_offset"] is None and last["next_cursor"] is None
    _, _, by_cursor = await get(store, "/api/games", limit="2", cursor=page["next_cursor"])
    assert ids(by_cursor) == newest_first[2:4]
    _, _, beyond = await get(store, "/api/games", offset="9")
    assert beyond["games"] == []
    _, _, everything = await get(store, "/api/games")
    assert ids(everything) == newest_first
    summary = everything["games"][0]
    assert summary["first"] == {
        "name": "alice",
        "id": None,
        "rating_before": None,
        "rating_after": None,
    }
    assert summary["time_control"] == {
        "kind": "byoyomi",
        "base_ms": 600_000,
        "increment_ms": 0,
        "byoyomi_ms": 30_000,
        "periods": 3,
        "text": "600+30x3",
    }
    assert summary["created_at"] == "2024-03-01T12:04:00Z"
    assert (summary["status"], summary["result"], summary["termination"]) == (
        "finished",
        "1-0",
        "resignation",
    )


async def test_listing_filters(store: Store) -> None:
    a, _ = await save_game(store, first="alice", second="bob", created_at=T0)
    b, _ = await save_game(
        store,
        variant="spartan",
        first="carol",
        second="alice",
        result="0-1",
        created_at=T0 + timedelta(days=1),
    )
    c, _ = await save_game(
        store, variant="spartan", first="bob", second="dave", result="1/2-1/2", termination="agreement",
        created_at=T0 + timedelta(days=2),
    )  # fmt: skip
    d, _ = await save_game(
        store, first="dave", second="erin", result=None, created_at=T0 + timedelta(days=3)
    )

    async def found(**query: str) -> list[str]:
        status, _, page = await get(store, "/api/games", **query)
        assert status == 200, page
        return ids(page)

    assert await found(player="alice") == [b, a]
    assert await found(player="bob") == [c, a]
    assert await found(player="Alice") == []
    assert await found(variant="spartan") == [c, b]
    assert await found(result="0-1") == [b]
    assert await found(result="1/2-1/2") == [c]
    assert await found(status="started") == [d]
    assert await found(since="2024-03-02") == [d, c, b]
    assert await found(until="2024-03-02") == [a]
    assert await found(since="2024-03-02T00:00:00Z", until="2024-03-03T12:00:01+00:00") == [c, b]
    assert await found(since="2024-03-02T00:00:00Z", until="2024-03-03T12:00:00+00:00") == [b]
    assert await found(since="2024-03-02T13:00:00+01:00", until="2024-03-04") == [c, b]
    assert await found(player="alice", variant="spartan", result="0-1") == [b]


BAD_FILTERS: list[tuple[dict[str, str], str]] = [
    ({"variant": "chess"}, "variant"),
    ({"result": "2-0"}, "result"),
    ({"status": "lost"}, "status"),
    ({"limit": "0"}, "limit"),
    ({"limit": "101"}, "limit"),
    ({"limit": "ten"}, "limit"),
    ({"offset": "-1"}, "offset"),
    ({"offset": "10001"}, "offset"),
    ({"since": "yesterday"}, "since"),
    ({"until": "2024-13-01"}, "until"),
    ({"since": "2024-03-02", "until": "2024-03-01"}, "since"),
    ({"player": ""}, "player"),
    ({"player": "x" * 65}, "player"),
    ({"cursor": "not-a-cursor"}, "cursor"),
    ({"colour": "white"}, "colour"),
]


async def test_listing_refuses_bad_filters(store: Store) -> None:
    await save_game(store)
    for query, mentions in BAD_FILTERS:
        status, content_type, body = await get(store, "/api/games", **query)
        assert status == 400 and content_type == "application/json", query
        assert body["error"]["code"] == "bad_request"
        assert mentions in body["error"]["message"], (query, body)


async def test_query_string_decoding(store: Store) -> None:
    drawn, _ = await save_game(store, first="al ice", result="1/2-1/2", termination="agreement")
    await save_game(store, first="al ice")
    status, _, body = await review_http_target(
        store, "/api/games?result=1%2F2-1%2F2&player=al%20ice"
    )
    assert status == 200 and [g["id"] for g in json.loads(body)["games"]] == [drawn]
    status, _, body = await review_http_target(store, "/api/games?limit=1&limit=2")
    assert status == 400 and "more than once" in json.loads(body)["error"]["message"]
    assert is_review_path("/api/games") and is_review_path("/api/games/abc.pgn")
    assert not is_review_path("/api/gamesx") and not is_review_path("/ws")


# ------------------------------------------------------------------------- one game


async def test_one_game_with_moves_clocks_and_positions(store: Store) -> None:
    moves = random_moves("minishogi", 4, 30)
    game_id, game = await save_game(store, moves=moves)
    status, _, view = await get(store, f"/api/games/{game_id}")
    assert status == 200
    assert view["id"] == game_id and view["variant"] == "minishogi"
    assert view["formats"] == ["pgn", "kif", "usi"]
    assert view["headers"]["Variant"] == "minishogi"
    assert view["headers"]["Result"] == "1-0"
    assert view["headers"]["TimeControl"] == "600+30x3"
    assert view["headers"]["PlyCount"] == str(len(moves))
    assert "position" not in view
    assert [m["uci"] for m in view["moves"]] == moves
    assert [m["display"] for m in view["moves"]] == game.displays
    first = view["moves"][0]
    assert (first["ply"], first["clock_ms"], first["spent_ms"], first["periods_left"]) == (
        1,
        170_000 - 1_234,
        1_010,
        2,
    )
    assert first["at"].endswith("Z")
    for ply in (0, 1, 17, len(moves)):
        status, _, at = await get(store, f"/api/games/{game_id}", ply=str(ply))
        assert status == 200
        position = at["position"]
        assert position["ply"] == ply
        assert position["fen"] == game.position_at(ply).fen()
        assert position["sfen"] == game.position_at(ply).sfen()
        assert position["move"] == (moves[ply - 1] if ply else None)
        assert position["turn"] == ("first" if game.position_at(ply).turn == 0 else "second")
    assert at["position"]["fen"] == view["final_fen"]


async def test_one_game_errors(store: Store) -> None:
    game_id, _ = await save_game(store, variant="spartan", moves=random_moves("spartan", 2, 6))
    for query, status in (
        ({"ply": "7"}, 400),
        ({"ply": "-1"}, 400),
        ({"ply": "x"}, 400),
        ({"at": "1"}, 400),
    ):
        got, _, body = await get(store, f"/api/games/{game_id}", **query)
        assert got == status, (query, body)
        assert body["error"]["code"] == "bad_request"
    got, _, body = await get(store, "/api/games/nosuchgame")
    assert got == 404 and body["error"]["code"] == "not_found"
    got, _, body = await get(store, "/api/games/bad!id")
    assert got == 404
    got, _, body = await get(store, f"/api/games/{game_id}/moves")
    assert got == 404


async def test_a_stored_game_that_does_not_replay_is_reported(store: Store) -> None:
    game_id, _ = await save_game(store, moves=["e1e4"], result=None)
    await store.append_move(game_id, MoveRecord(2, "e1e4", "bogus", 1_000, 1_000, 3))
    status, _, body = await get(store, f"/api/games/{game_id}")
    assert status == 500 and body["error"]["code"] == "corrupt_record"
    assert "move 2 (e1e4)" in body["error"]["message"]
    status, _, body = await get(store, f"/api/games/{game_id}.pgn")
    assert status == 500


async def test_store_outage_is_a_503() -> None:
    down = Store.from_url("postgresql+asyncpg://postgres@127.0.0.1:1/test", connect_timeout=1.0)
    try:
        status, _, body = await get(down, "/api/games")
        assert status == 503 and body["error"]["code"] == "unavailable"
        reply = await review_ws(down, {"t": "review", "d": {"game": "abc"}, "a": 3})
        assert reply == {
            "t": "error",
            "d": {"code": "unavailable", "message": "game storage is unavailable, try again later"},
            "a": 3,
        }
    finally:
        await down.close()


# --------------------------------------------------------------------------- exports


async def test_exports_and_content_types(store: Store) -> None:
    mini_id, mini = await save_game(store, moves=random_moves("minishogi", 8, 40))
    v = get_variant("wildcastle")
    start = v.random_start_fen(random.Random(11))
    wild_id, wild = await save_game(
        store,
        variant="wildcastle",
        start_fen=start,
        moves=random_moves("wildcastle", 3, 40, start),
        result="0-1",
    )
    status, content_type, pgn = await get(store, f"/api/games/{wild_id}.pgn")
    assert status == 200 and content_type == "application/x-chess-pgn; charset=utf-8"
    read = chess.pgn.read_game(io.StringIO(pgn))
    assert read is not None
    assert read.headers["FEN"] == start and read.headers["Result"] == "0-1"
    assert read.headers["GameId"] == wild_id and read.headers["TimeControl"] == "180+2"
    board = chess.Board(start)
    for move in read.mainline_moves():
        board.push(move)
    assert board.board_fen() == wild.position.board_fen()
    assert [node.clock() for node in read.mainline()][:2] == [168.7, 167.5]

    status, content_type, kif = await get(store, f"/api/games/{mini_id}.kif")
    assert status == 200 and content_type == "text/plain; charset=utf-8"
    assert kif.startswith("#KIF version=2.0 encoding=UTF-8\n")
    assert "手合割：5五将棋" in kif and "先手：alice" in kif and "まで40手で先手の勝ち" in kif
    status, content_type, usi = await get(store, f"/api/games/{mini_id}.usi")
    assert status == 200 and content_type == "text/plain; charset=utf-8"
    assert usi.startswith("position sfen rbsgk/4p/5/P4/KGSBR b - 1 moves ")
    assert len(usi.split(" moves ")[1].split()) == mini.ply
    status, _, mini_pgn = await get(store, f"/api/games/{mini_id}.PGN")
    assert status == 200 and '[Variant "minishogi"]' in mini_pgn

    for fmt in ("kif", "usi"):
        status, _, body = await get(store, f"/api/games/{wild_id}.{fmt}")
        assert status == 400 and body["error"]["code"] == "unsupported_format"
    status, _, body = await get(store, f"/api/games/{wild_id}.txt")
    assert status == 404
    status, _, body = await get(store, "/api/games/nosuchgame.pgn")
    assert status == 404 and body["error"]["code"] == "not_found"
    status, _, body = await get(store, f"/api/games/{wild_id}.pgn", ply="3")
    assert status == 400


async def test_aborted_and_unfinished_games_export(store: Store) -> None:
    aborted, _ = await save_game(store, variant="spartan", moves=["e2e4"], termination="abort")
    ongoing, _ = await save_game(store, variant="spartan", moves=["e2e4", "f7e6"], result=None)
    _, _, pgn = await get(store, f"/api/games/{aborted}.pgn")
    assert (
        '[Result "*"]' in pgn and '[Termination "abandoned"]' in pgn and "{ Game aborted. }" in pgn
    )
    _, _, pgn = await get(store, f"/api/games/{ongoing}.pgn")
    assert '[Result "*"]' in pgn and '[Termination "unterminated"]' in pgn
    assert pgn.rstrip().endswith("*")


# ------------------------------------------------------------------------- websocket


async def test_websocket_commands(store: Store) -> None:
    assert {"games", "review", "export", "analysis", "analyse"} == REVIEW_COMMAND_TYPES
    game_id, game = await save_game(
        store, variant="shoshogi", moves=random_moves("shoshogi", 5, 12)
    )

    reply = await review_ws(store, {"t": "games", "d": {"variant": "shoshogi", "limit": 5}, "a": 1})
    assert reply["t"] == "games" and reply["a"] == 1
    assert [g["id"] for g in reply["d"]["games"]] == [game_id]

    reply = await review_ws(store, {"t": "games"})
    assert reply["t"] == "games" and "a" not in reply and len(reply["d"]["games"]) == 1

    reply = await review_ws(store, {"t": "review", "d": {"game": game_id, "ply": 4}, "a": "r"})
    assert reply["t"] == "review" and reply["a"] == "r"
    assert reply["d"]["position"]["fen"] == game.position_at(4).fen()
    assert len(reply["d"]["moves"]) == 12

    reply = await review_ws(store, {"t": "export", "d": {"game": game_id, "format": "kif"}, "a": 2})
    assert reply["t"] == "export" and reply["a"] == 2
    assert reply["d"]["content_type"] == "text/plain; charset=utf-8"
    assert reply["d"]["game"] == game_id and reply["d"]["format"] == "kif"
    assert "手合割：小将棋" in reply["d"]["text"]
    http_status, _, http_body = await review_http(store, f"/api/games/{game_id}.kif", {})
    assert http_status == 200 and http_body.decode() == reply["d"]["text"]


WS_CASES: list[tuple[dict[str, Any], str | None]] = [
    ({"t": "games", "d": {"limit": True}}, "bad_request"),
    ({"t": "games", "d": {"limit": "5"}}, None),
    ({"t": "games", "d": {"variant": "go"}}, "bad_request"),
    ({"t": "games", "d": []}, "bad_request"),
    ({"t": "review", "d": {}}, "bad_request"),
    ({"t": "review", "d": {"game": 7}}, "bad_request"),
    ({"t": "review", "d": {"game": "nosuchgame"}}, "not_found"),
    ({"t": "review", "d": {"game": "GAME", "ply": 99}}, "bad_request"),
    ({"t": "review", "d": {"game": "GAME", "extra": 1}}, "bad_request"),
    ({"t": "export", "d": {"game": "GAME"}}, "bad_request"),
    ({"t": "export", "d": {"game": "GAME", "format": "kif"}}, "unsupported_format"),
    ({"t": "export", "d": {"game": "GAME", "format": "epd"}}, "bad_request"),
    ({"t": "export", "d": {"game": "nosuchgame", "format": "pgn"}}, "not_found"),
    ({"t": "replay", "d": {}}, "bad_request"),
]


async def test_websocket_errors(store: Store) -> None:
    game_id, _ = await save_game(store, variant="spartan", moves=["e2e4"])
    for frame, code in WS_CASES:
        if isinstance(frame["d"], dict) and frame["d"].get("game") == "GAME":
            frame = {**frame, "d": {**frame["d"], "game": game_id}}
        reply = await review_ws(store, {**frame, "a": 9})
        assert reply["a"] == 9
        if code is None:
            assert reply["t"] == frame["t"]
        else:
            assert reply["t"] == "error" and reply["d"]["code"] == code, (frame, reply)
            assert reply["d"]["message"]


# --------------------------------------------------------------------------- stable JSON

GOLDEN = Path(__file__).with_name("review_golden.json")
_WALL_CLOCK = re.compile(r"\d{4}[-.]\d\d[-.]\d\d.*|\d\d:\d\d:\d\d")


def _scrubbed(value: Any, game_id: str) -> Any:
    """The JSON with what differs between runs (the game id, wall-clock times) replaced."""
    if isinstance(value, dict):
        return {key: _scrubbed(item, game_id) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrubbed(item, game_id) for item in value]
    if isinstance(value, str):
        if value == game_id:
            return "<id>"
        if _WALL_CLOCK.fullmatch(value):
            return "<time>"
    return value


async def test_review_json_of_a_fischer_and_a_byoyomi_game_is_stable(store: Store) -> None:
    """The review API's JSON (listing and game view, time control included) is exactly what it
    was when this test was written: refactors of the time-control type must not change it."""
    seen: dict[str, Any] = {}
    for variant, seed in (("spartan", 5), ("minishogi", 6)):
        game_id, _ = await save_game(store, variant=variant, moves=random_moves(variant, seed, 6))
        _, _, listing = await get(store, "/api/games")
        _, _, view = await get(store, f"/api/games/{game_id}")
        seen[variant] = {
            "summary": _scrubbed(next(g for g in listing["games"] if g["id"] == game_id), game_id),
            "game": _scrubbed(view, game_id),
        }
    assert seen == json.loads(GOLDEN.read_text(encoding="utf-8"))

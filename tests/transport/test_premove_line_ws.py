"""``premove_line`` over the websocket (docs/protocol.md): the position and legal moves after a
sequence in a correspondence game, asked of a cold game after a restart (loaded on the way),
refusals (an illegal move named, another's game, the own turn, too long), the connection's
rate limit counting it; bad input answered as a local replay says and changing nothing
(hypothesis)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from ws_support import Game, OpenClient, StartApp, start_game

from server.app import App
from server.rules import Game as RulesGame
from server.rules import IllegalMoveError, InvalidMoveError, get_variant

DAY_TC = {"kind": "correspondence", "days": 1}
LINE = ["c5c4", "c1c2", "b5a4"]  # Mini-Shogi, after 1. a1b2: bob's move, alice's reply, bob's


async def test_premove_line_on_a_cold_game_refusals_and_the_rate_limit(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    alice, bob = await open_client(app, "alice"), await open_client(app, "bob")
    await alice.register("alice")
    await bob.register("bobby")
    game = await start_game(alice, bob, tc=DAY_TC, colour="first")
    await game.play("a1b2")
    tokens = (alice.token, bob.token)
    await app.stop()

    # Restarted: the game is cold; the request loads it like any room command (no join).
    again = await start_app(
        database_url=app.settings.database_url, rate_limit_per_s=0.01, rate_limit_burst=20
    )
    first, second = await open_client(again, "alice"), await open_client(again, "bobby")
    for client, token in zip((first, second), tokens, strict=True):
        assert token is not None
        await client.resume(token)
    assert again.hub.room(game.id) is None
    here = await first.ok("premove_line", {"game": game.id, "moves": []})
    assert here["ply"] == 1 and here["turn"] == "second" and here["moves"] == []
    assert "c5c4" in here["legal"] and here["check"] is False and here["result"] is None
    room = again.hub.room(game.id)
    assert room is not None and [m.uci for m in room.records] == ["a1b2"]
    after = await first.ok("premove_line", {"game": game.id, "moves": LINE})
    assert after["moves"] == LINE and len(after["displays"]) == 3 and after["turn"] == "first"
    assert after["legal"] == sorted(after["legal"]) and "b1c1" in after["legal"]

    def code(answer: dict[str, Any]) -> str:
        assert answer["t"] == "error", answer
        return str(answer["d"]["code"])

    illegal = await first.request("premove_line", {"game": game.id, "moves": ["c5c4", "zz"]})
    assert code(illegal) == "illegal_premove"
    assert illegal["d"]["message"].startswith("Move 2 (zz): illegal move"), illegal
    too_long = await first.request("premove_line", {"game": game.id, "moves": ["c5c4"] * 21})
    assert code(too_long) == "bad_request" and "0 to 20 moves" in too_long["d"]["message"]
    own_turn = await second.request("premove_line", {"game": game.id, "moves": []})
    assert code(own_turn) == "premoves_not_now"
    carol = await open_client(again, "carol")
    await carol.register("carol")
    theirs = await carol.request("premove_line", {"game": game.id, "moves": []})
    assert code(theirs) == "not_a_player"

    # A line made of the answers is what premoves stores.
    await first.ok("premoves", {"game": game.id, "lines": [after["moves"][:2]]})
    assert (await first.next("premoves"))["d"]["lines"] == [LINE[:2]]

    # Every frame counts towards the connection's limit: a burst of requests is cut off with
    # rate_limited, the honest opponent is still answered.
    frames = [
        json.dumps({"t": "premove_line", "d": {"game": game.id, "moves": LINE}, "a": f"r{n}"})
        for n in range(20)
    ]
    for text in frames:
        await first.ws.send(text)
    answers = [await first.next(lambda m: str(m.get("a", "")).startswith("r")) for _ in frames]
    kinds = [m["t"] if m["t"] != "error" else m["d"]["code"] for m in answers]
    served = kinds.count("premove_line")
    assert 0 < served < 20 and kinds == ["premove_line"] * served + ["rate_limited"] * (20 - served)
    await second.ok("join", {"game": game.id})
    assert await second.ok("move", {"game": game.id, "ply": 2, "move": "c5c4"})
    reply = await second.next(lambda m: m["t"] == "move" and m["d"]["ply"] == 3)
    assert reply["d"]["uci"] == "c1c2"  # the line saved above answered
    assert [m.uci for m in room.records] == ["a1b2", "c5c4", "c1c2"]


# Texts a frame carries: moves legal somewhere in the line, illegal ones, junk.
PLAUSIBLE = st.sampled_from(["c5c4", "c1c2", "b5a4", "b1c1", "a5a2", "b2c3", "e1e4", "zz", "a9a9"])
MOVE = st.one_of(PLAUSIBLE, st.sampled_from(["", "a" * 40, "é!", "\u200b"]))
BAD_MOVES = st.one_of(
    st.lists(PLAUSIBLE, max_size=5),  # half the examples: a line as a board would send it
    st.one_of(
        st.lists(MOVE, max_size=23),
        st.lists(st.one_of(st.integers(-(2**53), 2**53), st.none(), st.booleans()), max_size=3),
        st.text(max_size=5),
        st.integers(-(2**53), 2**53),
        st.dictionaries(st.text(max_size=3), MOVE, max_size=3),
        st.none(),
    ),
)


def expected(moves: object) -> str:
    """What the server must answer, by a local replay: ``premove_line``, ``illegal_premove:n``
    (the first illegal move) or ``bad_request``."""
    if not isinstance(moves, list) or len(moves) > 20:
        return "bad_request"
    if any(not isinstance(m, str) or not m or len(m) > 32 or m == "\u200b" for m in moves):
        return "bad_request"
    local = RulesGame(get_variant("minishogi"))
    local.play("a1b2")
    for n, move in enumerate(moves, 1):
        try:
            local.play(move)
        except (InvalidMoveError, IllegalMoveError):
            return f"illegal_premove:{n}"
    return "premove_line"


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(moves=BAD_MOVES, extra=st.sampled_from([False, False, False, True]))
async def test_any_moves_are_answered_as_a_replay_says_and_change_nothing(
    line_pair: tuple[App, Game], moves: Any, extra: bool
) -> None:
    app, game = line_pair
    alice, bob = game.first, game.second
    room = app.hub.room(game.id)
    assert room is not None
    fen = room.state.game.fen()
    fields: dict[str, Any] = {"game": game.id, "moves": moves}
    if extra:
        fields["when"] = "now"
    answer = await alice.request("premove_line", fields)
    want = "bad_request" if extra else expected(moves)
    event(want.partition(":")[0])
    if want == "premove_line":
        assert answer["t"] == "premove_line" and len(answer["d"]["moves"]) == len(moves), answer
    else:
        assert answer["t"] == "error", answer
        code, _, n = want.partition(":")
        assert answer["d"]["code"] == code, (moves, answer)
        if n:
            assert answer["d"]["message"].startswith(f"Move {n} ("), answer
    assert not [m for m in await bob.settled() if m.get("t") != "pong"]
    assert room.state.game.fen() == fen and [m.uci for m in room.records] == ["a1b2"]
    assert not room.state.premoves and not room.state.premove_writes
    assert room.state.pending is None


@pytest.fixture
async def line_pair(start_app: StartApp, open_client: OpenClient) -> tuple[App, Game]:
    app = await start_app(rate_limit_per_s=100_000.0, rate_limit_burst=100_000)
    alice, bob = await open_client(app, "alice"), await open_client(app, "bob")
    await alice.register("alice")
    await bob.register("bob")
    game = await start_game(alice, bob, tc=DAY_TC, colour="first")
    await game.play("a1b2")
    await bob.settled()  # the game's my_game pushes: later, bob must hear nothing
    return app, game

"""Conditional premoves over the websocket (docs/correspondence.md): set, kept across a
restart (SQLite and PostgreSQL), the reply played when the opponent's move is stored, seen by
their owner only; malformed ``premoves`` frames refused with nothing changed (hypothesis)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ws_support import Client, Game, OpenClient, StartApp, start_game

from server.app import App
from server.hub.effects import PremovesSet
from server.rules import Side

DAY_TC = {"kind": "correspondence", "days": 1}
DEEP = ["c5c4", "c1c2", "b5a4", "b1c1"]  # Mini-Shogi, after 1. a1b2
SHORT = ["a5a2", "b2c3"]


def names(client: Client) -> str:
    assert client.hello is not None
    return str(client.hello["d"]["player"]["name"])


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_premoves_survive_a_restart_and_answer_the_opponent(
    backend: str, start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(backend)
    alice, bob = await open_client(app, "alice"), await open_client(app, "bob")
    await alice.register("alice")
    await bob.register("bobby")
    game = await start_game(alice, bob, tc=DAY_TC, colour="first")
    assert game.first is alice
    await game.play("a1b2")
    assert await alice.ok("premoves", {"game": game.id, "lines": [DEEP, SHORT]}) == {
        "game": game.id
    }
    shown = await alice.next("premoves")
    assert shown["d"] == {"game": game.id, "ply": 1, "lines": [DEEP, SHORT]}
    assert not [m for m in await bob.settled() if m["t"] == "premoves"]
    tokens = (alice.token, bob.token)
    await app.stop()

    again = await start_app(database_url=app.settings.database_url)
    first, second = await open_client(again, "alice"), await open_client(again, "bobby")
    for client, token in zip((first, second), tokens, strict=True):
        assert token is not None
        await client.resume(token)
        await client.ok("join", {"game": game.id})
    mine = await first.next("premoves")
    assert mine["d"] == {"game": game.id, "ply": 1, "lines": [DEEP, SHORT]}
    ack = await second.ok("move", {"game": game.id, "ply": 2, "move": "c5c4"})
    assert ack == {"game": game.id, "ply": 2}
    for client in (first, second):
        reply = await client.next(lambda m: m["t"] == "move" and m["d"]["ply"] == 3)
        assert reply["d"]["uci"] == "c1c2" and reply["d"]["side"] == "first"
    advanced = await first.next("premoves")
    assert advanced["d"] == {"game": game.id, "ply": 3, "lines": [["b5a4", "b1c1"]]}
    assert not [m for m in await second.settled() if m["t"] == "premoves"]
    stored = await again.store.get_game(game.id)
    assert stored is not None and [m.uci for m in stored.moves] == ["a1b2", "c5c4", "c1c2"]
    # the row is not rewritten as the lines advance: a restore advances it the same way
    assert await again.store.premoves_of(game.id) == [
        PremovesSet(game.id, Side.FIRST, 1, (tuple(DEEP), tuple(SHORT)))
    ]
    # a real-time game has none
    blitz = await start_game(first, second, colour="first")
    await blitz.play("a1b2")
    refused = await first.request("premoves", {"game": blitz.id, "lines": [SHORT]})
    assert refused["t"] == "error" and refused["d"]["code"] == "premoves_correspondence"


MOVE = st.sampled_from(["c5c4", "c1c2", "a5a2", "b2c3", "zz", "", "a" * 40, "é!", "\u200b"])
LEGAL = ("c5c4", "c1c2", "a5a2", "b2c3")
# Frames stay far below max_frame_bytes (a larger one closes the connection instead).
BAD_LINES = st.one_of(
    st.just([]),
    st.lists(
        st.lists(MOVE, min_size=1, max_size=21).filter(lambda x: len(x) % 2), min_size=1, max_size=4
    ),
    st.lists(
        # numbers a frame can carry (a larger one is refused before the frame is read, without
        # an ack: tests/transport/test_transport_fuzz.py covers that)
        st.lists(
            st.one_of(st.integers(-(2**63), 2**63 - 1), st.none(), st.booleans()),
            min_size=2,
            max_size=2,
        ),
        min_size=1,
        max_size=3,
    ),
    st.lists(st.lists(MOVE, min_size=2, max_size=2), min_size=21, max_size=22),
    st.one_of(
        st.text(max_size=5),
        st.integers(-(2**63), 2**63 - 1),
        st.dictionaries(st.text(max_size=3), MOVE, max_size=3),
    ),
    st.lists(
        st.lists(MOVE, min_size=2, max_size=4).filter(lambda x: len(x) % 2 == 0),
        min_size=1,
        max_size=4,
    ).filter(lambda lines: any(m not in LEGAL for x in lines for m in x)),
)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(lines=BAD_LINES, extra=st.booleans())
async def test_malformed_premove_frames_are_refused_and_change_nothing(
    premove_pair: tuple[App, Game], lines: Any, extra: bool
) -> None:
    app, game = premove_pair
    alice = game.first
    fields: dict[str, Any] = {"game": game.id, "lines": lines}
    if extra:
        fields["when"] = "now"
    answer = await alice.request("premoves", fields)
    assert answer["t"] == "error", answer
    assert answer["d"]["code"] in ("bad_request", "illegal_premove"), answer
    await alice.ok("sought", {})
    room = app.hub.room(game.id)
    assert room is not None and not room.state.premoves and not room.state.premove_writes
    assert await app.store.premoves_of(game.id) == []
    assert [m.uci for m in room.records] == ["a1b2"]


@pytest.fixture
async def premove_pair(start_app: StartApp, open_client: OpenClient) -> tuple[App, Game]:
    app = await start_app(rate_limit_per_s=100_000.0, rate_limit_burst=100_000)
    alice, bob = await open_client(app, "alice"), await open_client(app, "bob")
    await alice.register("alice")
    await bob.register("bob")
    game = await start_game(alice, bob, tc=DAY_TC, colour="first")
    await game.play("a1b2")
    return app, game

"""Correspondence games on every door, live: a player with several correspondence games and one
real-time game at once over the websocket, the Bot API (berserk unmodified) and ICS, each move
landing in its own game; and bad input (days out of range, a move in a game that is not yours:
a clear error, nothing changed; hypothesis on the websocket)."""

from __future__ import annotations

from typing import Any

import berserk
import pytest
from bot_support import call, make_bot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ics_support import IcsClient
from ws_support import Client, OpenClient, StartApp, start_game

from server.app import App
from server.rules.time_control import CORRESPONDENCE_DAYS

RT = {"kind": "fischer", "base_s": 300, "inc_s": 0}
CONTROLS: list[dict[str, Any]] = [
    {"kind": "correspondence", "days": 1},
    {"kind": "correspondence", "days": 3},
    {"kind": "correspondence", "days": 14},
    {"kind": "unlimited"},
    {"kind": "correspondence", "days": 7},
]


async def challenge(sender: Client, target: Client, tc: dict[str, Any], colour: str) -> str:
    """``sender`` challenges ``target`` (``colour``: the sender's side), which accepts."""
    asked = await sender.ok(
        "match", {"to": target.name, "variant": "minishogi", "tc": tc, "colour": colour}
    )
    accepted = await target.ok("accept", {"id": asked["challenge"]})
    game_id: str = accepted["game"]
    for client in (sender, target):
        await client.next(lambda m: m["t"] == "game" and m["d"]["game"] == game_id)
    return game_id


def moves_of(app: App, game_id: str) -> list[str]:
    room = app.hub.room(game_id)
    assert room is not None
    return [record.uci for record in room.records]


async def test_five_correspondence_games_and_one_real_time_game_over_the_websocket(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    alice, bob = await open_client(app, "alice"), await open_client(app, "bob")
    await alice.register("alice")
    await bob.register("bob")
    corr = [await challenge(alice, bob, tc, "first") for tc in CONTROLS]
    realtime = await start_game(alice, bob, tc=RT, colour="first")
    alice_id = alice.hello["d"]["player"]["id"] if alice.hello else ""
    assert app.hub.games_of(alice_id) == [realtime.id, *sorted(corr)]
    # Alice moves in every game, then Bob answers in the reverse order: each move is acked for
    # its game and lands there only.
    everything = [*corr, realtime.id]
    for game_id in everything:
        ack = await alice.ok("move", {"game": game_id, "ply": 1, "move": "a1b2"})
        assert ack == {"game": game_id, "ply": 1}
    for game_id in reversed(everything):
        ack = await bob.ok("move", {"game": game_id, "ply": 2, "move": "a5a2"})
        assert ack == {"game": game_id, "ply": 2}
    for game_id in everything:
        assert moves_of(app, game_id) == ["a1b2", "a5a2"]
    # A second real-time game is refused; the correspondence games do not count against it.
    refused = await alice.request("seek", {"variant": "minishogi", "tc": RT, "colour": "first"})
    assert refused["t"] == "error" and refused["d"]["code"] == "already_playing"
    # Bob's snapshot of a correspondence game: its terms and a running day.
    joined = await bob.ok("join", {"game": corr[0]})
    assert joined["game"] == corr[0]
    game = await bob.next(lambda m: m["t"] == "game" and m["d"]["game"] == corr[0])
    assert game["d"]["tc"] == CONTROLS[0] and game["d"]["speed"] == "correspondence"
    assert game["d"]["clocks"]["running"] == "first" and game["d"]["first_move_ms"] is None


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    days=st.one_of(
        st.integers(-(10**6), 10**6).filter(lambda d: d not in CORRESPONDENCE_DAYS),
        st.text(max_size=4),
        st.booleans(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.none(),
    ),
    command=st.sampled_from(["seek", "match"]),
)
async def test_days_out_of_range_are_refused_and_change_nothing(
    corr_pair: tuple[App, Client, Client, str], days: object, command: str
) -> None:
    app, alice, bob, game_id = corr_pair
    before = (len(app.hub.seeks()), app.hub.state.challenges.ids.issued, moves_of(app, game_id))
    tc = {"kind": "correspondence", "days": days}
    fields: dict[str, Any] = {"variant": "minishogi", "tc": tc}
    if command == "match":
        fields["to"] = "bob"
    answer = await alice.request(command, fields)
    assert answer["t"] == "error" and answer["d"]["code"] == "bad_request"
    assert "days" in answer["d"]["message"]
    # A move by the player who is not to move: refused, nothing moves.
    wrong = await bob.request("move", {"game": game_id, "ply": 3, "move": "b2c3"})
    assert wrong["t"] == "error" and wrong["d"]["code"] == "not_your_turn"
    await alice.ok("sought", {})  # everything before it has arrived
    after = (len(app.hub.seeks()), app.hub.state.challenges.ids.issued, moves_of(app, game_id))
    assert after == before


@pytest.fixture
async def corr_pair(
    start_app: StartApp, open_client: OpenClient
) -> tuple[App, Client, Client, str]:
    # Every example uses these two clients: no rate limit in the way.
    app = await start_app(rate_limit_per_s=100_000.0, rate_limit_burst=100_000)
    alice, bob = await open_client(app, "alice"), await open_client(app, "bob")
    await alice.register("alice")
    await bob.register("bob")
    game_id = await challenge(alice, bob, CONTROLS[1], "first")
    await alice.ok("move", {"game": game_id, "ply": 1, "move": "a1b2"})
    await bob.ok("move", {"game": game_id, "ply": 2, "move": "a5a2"})
    return app, alice, bob, game_id


async def test_a_move_in_a_game_that_is_not_yours(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    alice, bob = await open_client(app, "alice"), await open_client(app, "bob")
    carol = await open_client(app, "carol")
    for client, name in ((alice, "alice"), (bob, "bob"), (carol, "carol")):
        await client.register(name)
    game_id = await challenge(alice, bob, CONTROLS[0], "first")
    room = app.hub.room(game_id)
    assert room is not None
    before = (room.log.version, room.clock.state())
    refused = await carol.request("move", {"game": game_id, "ply": 1, "move": "a1b2"})
    assert refused["t"] == "error" and refused["d"]["code"] == "not_a_player"
    await alice.ok("sought", {})
    assert (room.log.version, room.clock.state()) == before and moves_of(app, game_id) == []


async def test_a_bot_plays_correspondence_games_beside_a_real_time_one(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    bot = await make_bot(app, open_client, "robo")
    events = await bot.events()
    human = await open_client(app, "alice")
    await human.register("alice")
    games: list[str] = []
    for days in (3, 14, None, 1, 7):
        made = await call(
            bot.client.challenges.create,
            "alice",
            False,
            days=days,
            color="white",
            variant="minishogi",
        )
        assert made["speed"] == "correspondence"
        expected = (
            {"type": "unlimited"}
            if days is None
            else {"type": "correspondence", "daysPerTurn": days}
        )
        assert made["timeControl"] == expected
        accepted = await human.ok("accept", {"id": int(made["id"])})
        games.append(accepted["game"])
        await events.next(
            lambda e, g=accepted["game"]: e["type"] == "gameStart" and e["game"]["gameId"] == g
        )
    made = await call(
        bot.client.challenges.create,
        "alice",
        False,
        clock_limit=300,
        clock_increment=0,
        color="white",
        variant="minishogi",
    )
    accepted = await human.ok("accept", {"id": int(made["id"])})
    realtime = accepted["game"]
    await events.next(lambda e: e["type"] == "gameStart" and e["game"]["gameId"] == realtime)
    ongoing = await call(bot.client.games.get_ongoing)
    assert [g["gameId"] for g in ongoing] == [realtime, *games]
    by_id = {g["gameId"]: g for g in ongoing}
    assert by_id[games[0]]["speed"] == "correspondence" and by_id[games[0]]["isMyTurn"]
    assert by_id[games[2]]["secondsLeft"] is None
    assert 0 < by_id[games[0]]["secondsLeft"] <= 3 * 86_400
    stream = await bot.game(games[0])
    full = await stream.next("gameFull")
    assert full["clock"] is None and full["daysPerTurn"] == 3 and full["speed"] == "correspondence"
    for game_id in [realtime, *games]:
        await call(bot.client.bots.make_move, game_id, "a1b2")
    for game_id in [realtime, *games]:
        assert moves_of(app, game_id) == ["a1b2"]
    # Out of range: refused, nothing made.
    for bad in (4, 0, 15):
        with pytest.raises(berserk.exceptions.ResponseError, match="days"):
            await call(bot.client.challenges.create, "alice", False, days=bad, variant="minishogi")
    assert app.hub.state.challenges.involving(_player_id(app, "robo")) == []
    # A move in a game that is not the bot's.
    other = await open_client(app, "bob")
    await other.register("bob")
    theirs = await challenge(human, other, CONTROLS[0], "first")
    with pytest.raises(berserk.exceptions.ResponseError):
        await call(bot.client.bots.make_move, theirs, "a1b2")
    assert moves_of(app, theirs) == []


async def test_ics_lists_the_games_and_moves_in_the_primary_one(start_app: StartApp) -> None:
    app = await start_app(ics=True)
    alice = await IcsClient.registered(app, "alice")
    bob = await IcsClient.registered(app, "bobby")
    numbers: list[int] = []
    for terms in ("1d", "3d", "unlimited", "7d", "14d"):
        await alice.send(f"match bobby {terms} minishogi white")
        await bob.expect(r"^Challenge: ")
        await bob.send("accept alice")
        numbers.append(int((await alice.expect(r"^\{Game (\d+) \(")).group(1)))
        await alice.board()
    await alice.send("match bobby 5 0 minishogi white")
    await bob.expect(r"^Challenge: ")
    await bob.send("accept alice")
    realtime = int((await alice.expect(r"^\{Game (\d+) \(")).group(1))
    await alice.board()
    await alice.send("mygames")
    await alice.expect(r"^You are playing 6 games:")
    await alice.expect(rf"^\*\s*{realtime} alice vs bobby .*your move")
    for number in numbers:
        await alice.expect(rf"^\s+{number} alice vs bobby .*corr/.*your move")
    # Typed moves go to the primary game: the real-time one, then each correspondence game.
    await alice.send("a1b2")
    await alice.expect(rf"^<12> .* {realtime} alice bobby ")
    for number in numbers:
        await alice.send(f"primary {number}")
        await alice.expect(rf"^Your primary game is now game {number}\.")
        await alice.send("a1b2")
        await alice.expect(rf"^<12> .* {number} alice bobby .* K/a1-b2 ")
    for game_id in app.hub.games_of(_player_id(app, "alice")):
        assert moves_of(app, game_id) == ["a1b2"]
    await alice.send("primary 99999")
    await alice.expect(r'^You are not playing game "99999"\.')
    await alice.send("seek 4d minishogi")
    await alice.expect(r"Days per move are 1, 2, 3, 5, 7, 10, 14")
    await alice.close()
    await bob.close()


def _player_id(app: App, name: str) -> str:
    return next(i.id for i in app.hub.online_players() if i.name == name)

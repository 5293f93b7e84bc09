"""A player's lists of running games after a restart, with the correspondence games cold (in
no room; docs/correspondence.md "Memory"): the websocket ``hello``, the Bot API's
``nowPlaying`` (berserk's ``games.get_ongoing``, unmodified) and its event stream's first
``gameStart`` lines, ICS's ``mygames`` list every one, from the store; the
``max_correspondence_games`` limit counts them; ICS's login loads none of them, a move through
its ``primary`` loads and lands in its game alone."""

from __future__ import annotations

import pytest
from bot_support import Bot, call, new_token
from ics_support import IcsClient
from support import SteppedClock
from ws_support import OpenClient, StartApp, start_game

from server.app import App

DAY_TC = {"kind": "correspondence", "days": 1}
GAMES = 3


async def _cold_games(
    backend: str, start_app: StartApp, open_client: OpenClient, **overrides: object
) -> tuple[App, list[str], dict[str, str]]:
    """Three 1-day games between alice (first, to move in each) and bobby, the app
    restarted (``overrides`` its settings) with none of them loaded; the games' ids and the
    players' session tokens."""
    clock = SteppedClock()
    app = await start_app(backend, clock=clock)
    alice, bob = await open_client(app, "alice"), await open_client(app, "bob")
    await alice.register("alice")
    await bob.register("bobby")
    games = sorted(
        [(await start_game(alice, bob, tc=DAY_TC, colour="first")).id for _ in range(GAMES)]
    )
    assert alice.token is not None and bob.token is not None
    tokens = {"alice": alice.token, "bobby": bob.token}
    await app.stop()
    again = await start_app(database_url=app.settings.database_url, clock=clock, **overrides)
    assert again.cold is not None
    assert all(again.hub.room(game_id) is None for game_id in games)
    return again, games, tokens


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_hello_and_the_limit_count_the_cold_games(
    backend: str, start_app: StartApp, open_client: OpenClient
) -> None:
    app, games, tokens = await _cold_games(
        backend, start_app, open_client, max_correspondence_games=GAMES
    )
    alice = await open_client(app)
    await alice.resume(tokens["alice"])
    assert alice.hello is not None
    assert alice.hello["d"]["correspondence"] == games and alice.hello["d"]["game"] is None
    assert all(app.hub.room(game_id) is None for game_id in games)  # listed, not loaded
    # At the limit with cold games only: a fourth is refused, nothing made.
    refused = await alice.request("seek", {"variant": "minishogi", "tc": DAY_TC})
    assert refused["t"] == "error" and refused["d"]["code"] == "correspondence_limit"
    assert app.hub.seeks() == []
    # The opponent at the limit too: carol (no games) may seek, bobby may not take it.
    carol = await open_client(app, "carol")
    await carol.register("carol")
    seek = await carol.ok("seek", {"variant": "minishogi", "tc": DAY_TC})
    bob = await open_client(app)
    await bob.resume(tokens["bobby"])
    taken = await bob.request("play", {"id": seek["seek"]})
    assert taken["t"] == "error" and taken["d"]["code"] == "correspondence_limit"
    # One ends (alice resigns, the game loaded by the command): a game fits again (her seek
    # meets carol's: a new game).
    await alice.ok("resign", {"game": games[0]})
    paired = await alice.ok("seek", {"variant": "minishogi", "tc": DAY_TC})
    assert paired["game"] not in games
    assert alice.player is not None
    assert len(app.hub.games_of(alice.player["id"])) == GAMES


async def test_the_bot_api_lists_the_cold_games(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app, games, _ = await _cold_games("sqlite", start_app, open_client)
    bot = Bot(app, "alice", await new_token(app, "alice"))
    events = await bot.events()
    starts = [await events.next("gameStart") for _ in games]
    assert sorted(start["game"]["gameId"] for start in starts) == games
    assert all(start["game"]["speed"] == "correspondence" for start in starts)
    ongoing = await call(bot.client.games.get_ongoing)
    assert sorted(g["gameId"] for g in ongoing) == games
    assert all(g["isMyTurn"] for g in ongoing)


async def test_ics_lists_the_cold_games_and_moves_in_the_primary_one(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app, games, _ = await _cold_games("sqlite", start_app, open_client, ics=True)
    alice = await IcsClient.open(app.ics_port)
    await alice.send("alice")
    await alice.send("correct horse")
    await alice.expect(r"^\*\*\*\* Starting FICS session as alice \*\*\*\*$")
    alice.name = "alice"
    await alice.send("set style 12")
    await alice.expect(r"^Style 12 set\.")
    ics = app.ics
    assert ics is not None
    numbers = {game_id: ics.numbers.number(game_id) for game_id in games}
    # Listed from login, from the store's list; none is loaded (no room in memory, no read).
    await alice.send("mygames")
    await alice.expect(rf"^You are playing {GAMES} games:")
    for number in sorted(numbers.values()):
        await alice.expect(rf"^[ *]\s*{number} alice vs bobby .*corr/1d  your move")
    assert all(app.hub.room(game_id) is None for game_id in games)
    assert app.cold is not None and app.cold.reads == 0
    target = games[1]
    await alice.send(f"primary {numbers[target]}")
    await alice.expect(rf"^Your primary game is now game {numbers[target]}\.")
    await alice.send("a1b2")
    await alice.expect(rf"^<12> .* {numbers[target]} alice bobby .* K/a1-b2 ")
    room = app.hub.room(target)
    assert room is not None and [r.uci for r in room.records] == ["a1b2"]
    # Only the game made primary was loaded.
    assert [app.hub.room(g) is None for g in games] == [True, False, True]
    assert app.cold.reads == 1
    stored = await app.store.get_game(target)
    assert stored is not None and [m.uci for m in stored.moves] == ["a1b2"]
    await alice.close()

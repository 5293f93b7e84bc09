"""The Bot API's streams and reads with valid calls, against the live server on PostgreSQL
(docs/bots.md): the keep-alive line, a whole game under a byoyomi clock (every clock field as
documented), ``/api/account/playing``, ``/api/bot/online``, ``/api/user/{name}`` and
``/game/export/{id}`` in KIF and USI (the review API's exports).

The streams are read raw here (:meth:`bot_support.Bot.raw`): berserk turns clock fields into
timedeltas and drops blank lines, and these tests check the lines as sent.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import aiohttp
from bot_support import Event, base_url, call, challenge_bot, make_bot
from ws_support import OpenClient, StartApp

BACKEND = "postgresql"
MINI_MATE = ["a1b2", "a5a2", "b2c3", "d5c4"]  # Mini-Shogi: the second player mates
BYOYOMI = {"kind": "byoyomi", "main_s": 60, "period_s": 10, "periods": 3}
STATE_KEYS = {
    "type",
    "moves",
    "status",
    "wtime",
    "winc",
    "wbyoyomi",
    "wperiods",
    "btime",
    "binc",
    "bbyoyomi",
    "bperiods",
    "wdraw",
    "bdraw",
    "wtakeback",
    "btakeback",
}
"""A byoyomi game's ``gameState`` fields (docs/bots.md, "Variants, sides, moves and clocks")."""
LICHESS_LIMIT_S = 7.0
"""lichess sends a stream's keep-alive line at least this often."""


async def test_the_event_stream_sends_a_blank_line_when_nothing_happens(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(BACKEND)
    bot = await make_bot(app, open_client, "robo")
    loop = asyncio.get_running_loop()
    events = await bot.raw("/api/stream/event")  # the answer's headers have arrived
    opened = loop.time()
    # Nothing happens (no game, no challenge): the first line is the blank keep-alive one, in
    # time; waited for as an event with lichess's bound, not slept for.
    line = await asyncio.wait_for(events.next(), LICHESS_LIMIT_S)
    waited = loop.time() - opened
    assert line == {}, line
    assert waited < LICHESS_LIMIT_S, waited
    # The stream is still up and carries events after it: a challenge arrives.
    human = await open_client(app, "alice")
    await human.register("alice")
    await human.ok("match", {"to": "robo", "variant": "minishogi", "tc": BYOYOMI})
    assert (await events.next())["type"] == "challenge"


def _check_state(state: Event, moves: list[str]) -> None:
    """The documented byoyomi ``gameState``: every field there, no other but ``winner``."""
    assert state["type"] == "gameState"
    assert set(state) - {"winner"} == STATE_KEYS, sorted(state)
    assert state["moves"] == " ".join(moves)
    assert (state["winc"], state["binc"]) == (0, 0)
    for flag in ("wdraw", "bdraw", "wtakeback", "btakeback"):
        assert state[flag] is False, (flag, state)
    for side in "wb":
        assert isinstance(state[f"{side}time"], int) and 0 < state[f"{side}time"] <= 60_000
        # Still in main time: the current period is whole and none is used.
        assert (state[f"{side}byoyomi"], state[f"{side}periods"]) == (10_000, 3), state


async def test_a_whole_byoyomi_game_then_playing_and_the_exports(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(BACKEND)
    bot = await make_bot(app, open_client, "robo")
    events = await bot.events()
    human = await open_client(app, "alice")
    await human.register("alice")
    assert await call(bot.client.games.get_ongoing) == []
    game_id = await challenge_bot(human, bot, events, "minishogi", "first", BYOYOMI)
    challenge = next(e for e in events.seen if e["type"] == "challenge")["challenge"]
    assert challenge["timeControl"] == {
        "type": "byoyomi",
        "limit": 60,
        "byoyomi": 10,
        "periods": 3,
        "show": "1|10(3)",
    }
    stream = await bot.raw(f"/api/bot/game/stream/{game_id}")
    full = await stream.next()
    assert full["type"] == "gameFull" and full["id"] == game_id
    assert full["clock"] == {"initial": 60_000, "increment": 0, "byoyomi": 10_000, "periods": 3}
    assert full["variant"] == {"key": "minishogi", "name": "Mini-Shogi", "short": "Mini-Shogi"}
    assert full["perf"] == {"name": full["speed"]} and full["rated"] is False
    assert full["initialFen"] != "startpos" and "[" in full["initialFen"]  # shogi hands
    # one spelling of an empty hand: gameStart's fen (the position now) and gameFull's
    # initialFen are the same text before any move
    start = next(e for e in events.seen if e["type"] == "gameStart")["game"]
    assert start["fen"] == full["initialFen"] == "rbsgk/4p/5/P4/KGSBR[] w - - 0 1"
    assert full["state"] == {
        "type": "gameState",
        "moves": "",
        "status": "started",
        "wtime": 60_000,
        "winc": 0,
        "wbyoyomi": 10_000,
        "wperiods": 3,
        "btime": 60_000,
        "binc": 0,
        "bbyoyomi": 10_000,
        "bperiods": 3,
        "wdraw": False,
        "bdraw": False,
        "wtakeback": False,
        "btakeback": False,
    }

    [playing] = await call(bot.client.games.get_ongoing)
    assert (playing["gameId"], playing["color"]) == (game_id, "black")
    assert (playing["isMyTurn"], playing["hasMoved"]) == (False, False)
    assert playing["opponent"]["username"] == "alice"
    assert playing["variant"]["key"] == "minishogi"

    before = full["state"]
    for ply, uci in enumerate(MINI_MATE, start=1):
        if ply % 2:
            await human.ok("move", {"game": game_id, "ply": ply, "move": uci})
        else:
            answer = await call(bot.post, f"/api/bot/game/{game_id}/move/{uci}")
            assert answer.status_code == 200 and answer.json() == {"ok": True}
        state = await stream.next()
        _check_state(state, MINI_MATE[:ply])
        mover, waiting = ("w", "b") if ply % 2 else ("b", "w")
        assert state[f"{mover}time"] <= before[f"{mover}time"], (before, state)
        assert state[f"{waiting}time"] == before[f"{waiting}time"], (before, state)
        assert state["status"] == "started"  # the mating move first, then the end
        before = state
    final = await stream.next()
    _check_state(final, MINI_MATE)
    assert (final["status"], final["winner"]) == ("mate", "black")
    await stream.end()
    assert (await events.next("gameFinish"))["game"]["gameId"] == game_id
    assert await call(bot.client.games.get_ongoing) == []

    async with aiohttp.ClientSession() as http:
        for fmt in ("kif", "usi"):
            exported = await call(
                bot.session.get, f"{base_url(app)}/game/export/{game_id}?format={fmt}", timeout=10
            )
            assert exported.status_code == 200, exported.text
            async with http.get(f"{base_url(app)}/api/games/{game_id}.{fmt}") as review:
                assert review.status == 200
                assert exported.content == await review.read()
                assert exported.headers["Content-Type"] == review.headers["Content-Type"]
        usi = exported.text  # USI's own coordinates: "position sfen ... moves 5e4d ..."
        assert usi.startswith("position sfen ") and len(usi.split(" moves ")[1].split()) == 4
        refused = await call(
            bot.session.get, f"{base_url(app)}/game/export/{game_id}?format=fen", timeout=10
        )
        assert refused.status_code == 400 and refused.json()["error"], refused.text


async def test_online_bots_and_the_public_user_view(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app(BACKEND)
    bot = await make_bot(app, open_client, "robo")
    human = await open_client(app, "alice")
    await human.register("alice")

    async def online() -> list[str]:
        return [
            user["username"] for user in await call(lambda: list(bot.client.bots.get_online_bots()))
        ]

    assert "robo" not in await online()  # no event stream yet
    assert (await call(bot.client.users.get_public_data, "robo"))["online"] is False
    await bot.events()  # held open (the bot keeps its readers) until the test ends
    assert await online() == ["robo"]  # a bot with its event stream open; alice is no bot
    shown: dict[str, Any] = await call(bot.client.users.get_public_data, "robo")
    assert (shown["id"], shown["username"], shown["title"]) == ("robo", "robo", "BOT")
    assert shown["online"] is True
    person = await call(bot.client.users.get_public_data, "alice")
    assert person["username"] == "alice" and "title" not in person
    assert person["online"] is False


async def test_each_game_stream_gets_one_game_full_with_the_games_creation_time(
    start_app: StartApp, open_client: OpenClient
) -> None:
    """A second stream of the same game gets its own ``gameFull`` (since d4d9a3a), and the stream
    already open gets none (at most the same state again); ``createdAt`` is the game's stored
    creation time, not 0."""
    app = await start_app(BACKEND)
    bot = await make_bot(app, open_client, "robo")
    events = await bot.events()
    human = await open_client(app, "alice")
    await human.register("alice")
    game_id = await challenge_bot(human, bot, events, "minishogi", "first", BYOYOMI)
    first = await bot.raw(f"/api/bot/game/stream/{game_id}")
    full = await first.next()
    stored = await app.store.get_game(game_id)
    assert stored is not None
    assert full["type"] == "gameFull"
    assert full["createdAt"] == int(stored.created_at.timestamp() * 1000)
    assert abs(full["createdAt"] / 1000 - time.time()) < 600
    second = await bot.raw(f"/api/bot/game/stream/{game_id}")
    assert (await second.next())["type"] == "gameFull"
    await human.ok("move", {"game": game_id, "ply": 1, "move": MINI_MATE[0]})
    for stream in (first, second):
        seen = []
        while not seen or seen[-1].get("moves") != MINI_MATE[0]:
            seen.append(await stream.next())
        assert [line["type"] for line in seen] in (["gameState"], ["gameState"] * 2), seen

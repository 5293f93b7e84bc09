"""The Bot API driven by berserk against the live server (docs/bots.md)."""

from __future__ import annotations

from typing import Any

import berserk
import pytest
from bot_support import Bot, call, make_bot
from ws_support import Client, OpenClient, StartApp

MINI_MATE = ["a1b2", "a5a2", "b2c3", "d5c4"]  # Mini-Shogi: the second player mates
FISCHER = {"kind": "fischer", "base_s": 60, "inc_s": 0}


async def _challenge_bot(human: Client, bot: Bot, events: Any, variant: str, colour: str) -> str:
    """The websocket player challenges the bot, which accepts: the game id."""
    answer = await human.ok(
        "match", {"to": bot.name, "variant": variant, "tc": FISCHER, "colour": colour}
    )
    challenge = await events.next("challenge")
    assert challenge["challenge"]["id"] == str(answer["challenge"])
    assert challenge["challenge"]["variant"]["key"] == variant
    assert challenge["challenge"]["challenger"]["name"] == human.name
    await call(bot.client.bots.accept_challenge, challenge["challenge"]["id"])
    start = await events.next("gameStart")
    game_id: str = start["game"]["gameId"]
    assert start["game"]["color"] == ("black" if colour == "first" else "white")
    await human.next(lambda m: m["t"] == "game" and m["d"]["game"] == game_id)
    return game_id


async def test_a_bot_upgrades_and_shows_its_account(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    bot = await make_bot(app, open_client, "robo")
    account = await call(bot.client.account.get)
    assert account["username"] == "robo" and account["title"] == "BOT"
    with pytest.raises(berserk.exceptions.ResponseError) as refused:
        await call(bot.client.account.upgrade_to_bot)
    assert refused.value.status_code == 400


async def test_a_bot_plays_mini_shogi_to_mate_against_a_websocket_player(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    bot = await make_bot(app, open_client, "robo")
    events = bot.events()
    human = await open_client(app, "alice")
    await human.register("alice")
    game_id = await _challenge_bot(human, bot, events, "minishogi", "first")
    stream = bot.game(game_id)
    full = await stream.next("gameFull")
    assert full["id"] == game_id and full["variant"]["key"] == "minishogi"
    assert full["white"]["name"] == "alice" and full["black"]["name"] == "robo"
    assert full["state"]["moves"] == "" and full["state"]["status"] == "started"
    for ply, uci in enumerate(MINI_MATE, start=1):
        if ply % 2 == 1:
            await human.ok("move", {"game": game_id, "ply": ply, "move": uci})
        else:
            await call(bot.client.bots.make_move, game_id, uci)
        state = await stream.next(
            lambda e, n=ply: e["type"] == "gameState" and len(e["moves"].split()) == n
        )
        assert state["moves"] == " ".join(MINI_MATE[:ply])
    final = await stream.next(lambda e: e["type"] == "gameState" and e["status"] != "started")
    assert final["status"] == "mate" and final["winner"] == "black"
    assert final["moves"] == " ".join(MINI_MATE)
    await stream.end()
    finish = await events.next("gameFinish")
    assert finish["game"]["gameId"] == game_id
    exported = await call(
        bot.session.get, f"http://127.0.0.1:{app.port}/game/export/{game_id}", timeout=10
    )
    assert exported.status_code == 200 and "[Variant" in exported.text, exported.text

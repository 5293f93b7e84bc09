"""The Bot API driven by berserk against the live server (docs/bots.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import berserk
import pytest
from bot_support import Bot, call, challenge_bot, make_bot
from ws_support import Client, OpenClient, StartApp

MINI_MATE = ["a1b2", "a5a2", "b2c3", "d5c4"]  # Mini-Shogi: the second player mates


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
    events = await bot.events()
    human = await open_client(app, "alice")
    await human.register("alice")
    game_id = await challenge_bot(human, bot, events, "minishogi", "first")
    stream = await bot.game(game_id)
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
    # One gameStart for the game, although the game stream joined its room again.
    assert [e["type"] for e in events.seen if e["type"].startswith("game")] == [
        "gameStart",
        "gameFinish",
    ]
    exported = await call(
        bot.session.get, f"http://127.0.0.1:{app.port}/game/export/{game_id}", timeout=10
    )
    assert exported.status_code == 200 and "[Variant" in exported.text, exported.text


async def _state(stream: Any, plies: int) -> dict[str, Any]:
    state: dict[str, Any] = await stream.next(
        lambda e: e["type"] == "gameState" and len(e["moves"].split()) == plies
    )
    return state


async def _over(stream: Any) -> dict[str, Any]:
    final: dict[str, Any] = await stream.next(
        lambda e: e["type"] == "gameState" and e["status"] != "started"
    )
    await stream.end()
    return final


async def _bot_game(
    start_app: StartApp, open_client: OpenClient, variant: str
) -> tuple[Client, Bot, Any, Any, str]:
    app = await start_app()
    bot = await make_bot(app, open_client, "robo")
    events = await bot.events()
    human = await open_client(app, "alice")
    await human.register("alice")
    game_id = await challenge_bot(human, bot, events, variant, "first")
    stream = await bot.game(game_id)
    full = await stream.next("gameFull")
    assert full["variant"]["key"] == variant and full["clock"] == {"initial": 60000, "increment": 0}
    return human, bot, events, stream, game_id


async def test_wild_castle_moves_from_the_legal_lists_then_the_human_resigns(
    start_app: StartApp, open_client: OpenClient
) -> None:
    """Wild Castle starts from one of 36 setups: the moves come from the server's lists."""
    human, bot, events, stream, game_id = await _bot_game(start_app, open_client, "wildcastle")
    snapshot = next(m for m in reversed(human.seen) if m["t"] == "game")
    legal: list[str] = snapshot["d"]["legal"]
    for ply in range(1, 5):
        uci = legal[0]
        if ply % 2:
            await human.ok("move", {"game": game_id, "ply": ply, "move": uci})
        else:
            await call(bot.client.bots.make_move, game_id, uci)
        event = await human.next(lambda m, n=ply: m["t"] == "move" and m["d"]["ply"] == n)
        legal = event["d"]["legal"]
        assert (await _state(stream, ply))["moves"].split()[-1] == uci
    await human.ok("resign", {"game": game_id})
    final = await _over(stream)
    assert (final["status"], final["winner"]) == ("resign", "black")
    assert (await events.next("gameFinish"))["game"]["winner"] == "black"


async def test_spartan_drawn_by_agreement_offered_with_a_move(
    start_app: StartApp, open_client: OpenClient
) -> None:
    human, bot, _, stream, game_id = await _bot_game(start_app, open_client, "spartan")
    await human.ok("move", {"game": game_id, "ply": 1, "move": "a2a3"})
    await _state(stream, 1)
    answer = await call(bot.post, f"/api/bot/game/{game_id}/move/a7b6?offeringDraw=true")
    assert answer.status_code == 200 and answer.json() == {"ok": True}
    offered = await stream.next(lambda e: e["type"] == "gameState" and e["bdraw"])
    assert offered["moves"] == "a2a3 a7b6" and not offered["wdraw"]
    await human.next(lambda m: m["t"] == "offer" and m["d"]["kind"] == "draw")
    await human.ok("draw_accept", {"game": game_id})
    final = await _over(stream)
    assert final["status"] == "draw" and "winner" not in final


async def test_sho_shogi_takeback_then_the_human_resigns(
    start_app: StartApp, open_client: OpenClient
) -> None:
    human, bot, _, stream, game_id = await _bot_game(start_app, open_client, "shoshogi")
    await human.ok("move", {"game": game_id, "ply": 1, "move": "a1a2"})
    await _state(stream, 1)
    await call(bot.client.bots.make_move, game_id, "a7a6")
    await _state(stream, 2)
    await human.ok("takeback_offer", {"game": game_id})
    asked = await stream.next(lambda e: e["type"] == "gameState" and e["wtakeback"])
    assert asked["moves"] == "a1a2 a7a6"
    answer = await call(bot.post, f"/api/bot/game/{game_id}/takeback/yes")
    assert answer.status_code == 200, answer.text
    back = await stream.next(lambda e: e["type"] == "gameState" and e["moves"] == "")
    assert not back["wtakeback"] and not back["btakeback"]
    await human.ok("move", {"game": game_id, "ply": 1, "move": "a3a4"})
    await _state(stream, 1)
    await human.ok("resign", {"game": game_id})
    final = await _over(stream)
    assert (final["status"], final["winner"]) == ("resign", "black")


async def test_dai_shogi_chat_then_the_bot_resigns(
    start_app: StartApp, open_client: OpenClient
) -> None:
    human, bot, events, stream, game_id = await _bot_game(start_app, open_client, "daishogi")
    await human.ok("move", {"game": game_id, "ply": 1, "move": "a2a3"})
    await _state(stream, 1)
    await call(bot.client.bots.make_move, game_id, "a11a10")
    await _state(stream, 2)
    await call(bot.client.bots.post_message, game_id, "good luck")
    said = await human.next(lambda m: m["t"] == "chat")
    assert said["d"]["text"] == "good luck" and said["d"]["user"] == "robo"
    await human.ok("chat", {"game": game_id, "text": "you too"})
    line = await stream.next(lambda e: e["type"] == "chatLine" and e["username"] == "alice")
    assert line == {"type": "chatLine", "room": "player", "username": "alice", "text": "you too"}
    await call(bot.client.bots.resign_game, game_id)
    final = await _over(stream)
    assert (final["status"], final["winner"]) == ("resign", "white")
    assert (await events.next("gameFinish"))["game"]["gameId"] == game_id


async def test_two_berserk_bots_play_each_other(
    start_app: StartApp, open_client: OpenClient
) -> None:
    app = await start_app()
    white, black = (
        await make_bot(app, open_client, "robo"),
        await make_bot(app, open_client, "tron"),
    )
    white_events, black_events = await white.events(), await black.events()
    made = await call(
        white.client.challenges.create,
        "tron",
        False,
        clock_limit=60,
        clock_increment=1,
        color="white",
        variant="minishogi",
    )
    incoming = await black_events.next("challenge")
    assert incoming["challenge"]["id"] == made["id"]
    assert incoming["challenge"]["timeControl"]["increment"] == 1
    await call(black.client.bots.accept_challenge, made["id"])
    game_id = (await white_events.next("gameStart"))["game"]["gameId"]
    assert (await black_events.next("gameStart"))["game"]["color"] == "black"
    streams = {"white": await white.game(game_id), "black": await black.game(game_id)}
    for stream in streams.values():
        await stream.next("gameFull")
    for ply, uci in enumerate(MINI_MATE, start=1):
        mover = white if ply % 2 else black
        await call(mover.client.bots.make_move, game_id, uci)
        for stream in streams.values():
            await _state(stream, ply)
    for stream in streams.values():
        final = await _over(stream)
        assert (final["status"], final["winner"]) == ("mate", "black")


async def test_a_bot_is_marked_in_who_the_game_header_and_on_ics(
    start_app: StartApp, open_client: OpenClient, ics_guest: Any
) -> None:
    app = await start_app(ics=True)
    bot = await make_bot(app, open_client, "robo")
    events = await bot.events()
    human = await open_client(app, "alice")
    await human.register("alice")
    listed = {p["name"]: p for p in (await human.ok("who"))["players"]}
    assert listed["robo"]["bot"] is True and "bot" not in listed["alice"]
    telnet = await ics_guest(app)
    await telnet.send("who")
    await telnet.expect(r"robo\(C\)")
    game_id = await challenge_bot(human, bot, events, "minishogi", "first")
    snapshot = next(m for m in reversed(human.seen) if m["t"] == "game")
    assert snapshot["d"]["players"]["second"]["bot"] is True
    full = await (await bot.game(game_id)).next("gameFull")
    assert full["black"]["title"] == "BOT" and full["white"]["title"] is None


async def test_an_ics_player_challenging_a_bot_is_told_it_is_a_computer(
    start_app: StartApp, open_client: OpenClient, ics_guest: Any
) -> None:
    """FICS's way over raw TCP: ``--** robo is a computer **--`` under the ``Issuing:`` line,
    ``robo(C)`` in ``who``, and plain handles in the game lines clients parse."""
    app = await start_app(ics=True)
    bot = await make_bot(app, open_client, "robo")
    events = await bot.events()
    telnet = await ics_guest(app)
    await telnet.send("match robo 1 0 minishogi")
    await telnet.expect(r"^Issuing: .* robo \(\d+\) unrated minishogi 1 0\.$")
    await telnet.expect(r"^--\*\* robo is a computer \*\*--$")
    challenge = await events.next("challenge")
    await call(bot.client.bots.accept_challenge, challenge["challenge"]["id"])
    await telnet.expect(
        rf"^Creating: (robo \(\d+\) {telnet.name}|{telnet.name} \(\+\+\+\+\) robo) "
    )
    await telnet.expect(rf"^{{Game \d+ \((robo vs\. {telnet.name}|{telnet.name} vs\. robo)\) ")


async def test_a_game_resumed_after_a_restart_shows_the_bot_before_it_reconnects(
    tmp_path: Path, start_app: StartApp, open_client: OpenClient
) -> None:
    """Restart recovery reads the bot flag with the unfinished games: the resumed game's
    snapshot marks the bot while only the human is back."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'restart.sqlite3'}"
    app = await start_app(database_url=url)
    bot = await make_bot(app, open_client, "robo")
    events = await bot.events()
    human = await open_client(app, "alice")
    await human.register("alice")
    game_id = await challenge_bot(human, bot, events, "minishogi", "first")
    token = human.token
    assert token is not None
    await app.stop()

    again = await start_app(database_url=url)
    back = await open_client(again, "alice")
    await back.resume(token)
    await back.ok("join", {"game": game_id})
    snapshot = await back.next("game")
    players = snapshot["d"]["players"]
    assert players["second"]["name"] == "robo" and players["second"]["bot"] is True
    assert "bot" not in players["first"]

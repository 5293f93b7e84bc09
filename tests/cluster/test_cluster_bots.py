"""The Bot API on several hubs: a bot's event stream on one hub, its game stream on another,
its moves posted to others (directly and through HAProxy), its opponent a websocket player on a
third; all of them see one game. And a game stream survives its game's owner killed: the bot
opens it again on a survivor and finishes the game."""

from __future__ import annotations

import asyncio
from typing import Any

import berserk
import pytest
from bot_support import Bot, Event, StreamReader, call, new_token
from cluster_support import FISCHER, Client, LocalCluster, finished_game, scripted_game

pytestmark = pytest.mark.asyncio(loop_scope="module")

MINI_MATE = ["a1b2", "a5a2", "b2c3", "d5c4"]  # Mini-Shogi: the second player mates


def http(port: int) -> str:
    return f"http://127.0.0.1:{port}"


async def test_a_bot_streams_on_one_hub_and_acts_through_any(cluster: LocalCluster) -> None:
    hub1, hub2, hub3 = cluster.hubs
    registered = await Client.register(hub2.url, "robo")
    await registered.close()
    token = await new_token(http(hub2.port), "robo")
    on_hub2 = Bot(http(hub2.port), "robo", token)
    via_proxy = Bot(http(cluster.proxy.port), "robo", token)
    on_hub3 = Bot(http(hub3.port), "robo", token)
    await call(via_proxy.client.account.upgrade_to_bot)
    events = await on_hub2.events()
    alice = await Client.register(hub1.url, "alice")
    made = await alice.ok(
        "match", {"to": "robo", "variant": "minishogi", "tc": FISCHER, "colour": "first"}
    )
    challenge = await events.next("challenge")
    assert challenge["challenge"]["id"] == str(made["challenge"])
    # A challenge is answered where the bot received it (its event stream's hub): HAProxy sends
    # all of a token's requests to one hub (docs/bots.md).
    await call(on_hub2.client.bots.accept_challenge, challenge["challenge"]["id"])
    game_id = (await events.next("gameStart"))["game"]["gameId"]
    stream = await on_hub3.game(game_id)
    assert (await stream.next("gameFull"))["black"]["name"] == "robo"
    for ply, uci in enumerate(MINI_MATE, start=1):
        if ply % 2:
            await alice.ok("move", {"game": game_id, "ply": ply, "move": uci})
        else:
            await call((via_proxy if ply == 2 else on_hub2).client.bots.make_move, game_id, uci)
        await stream.next(
            lambda e, n=ply: e["type"] == "gameState" and len(e["moves"].split()) == n
        )
    final = await stream.next(lambda e: e["type"] == "gameState" and e["status"] != "started")
    assert (final["status"], final["winner"]) == ("mate", "black")
    assert (await events.next("gameFinish"))["game"]["gameId"] == game_id
    await alice.close()


async def _owner(cluster: LocalCluster) -> Any:
    """The hub that runs the (only) game."""
    for hub in cluster.hubs:
        health = await hub.health() if hub.child.running else None
        if health is not None and health["cluster"]["owned_games"] > 0:
            return hub
    raise AssertionError("no hub owns the game")


async def _game_stream(bot: Bot, game_id: str, within: float = 30.0) -> tuple[StreamReader, Event]:
    """The bot's game stream and its ``gameFull``, retried while the game has no owner (503)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        stream = await bot.game(game_id)
        try:
            return stream, await stream.next("gameFull")
        except berserk.exceptions.ResponseError as error:
            if error.status_code != 503 or loop.time() > deadline:
                raise
        await asyncio.sleep(0.2)


async def _move(bot: Bot, game_id: str, uci: str, within: float = 30.0) -> None:
    """Post a move; a 503 (not stored: the game's hub is being replaced) is posted again."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        try:
            await call(bot.client.bots.make_move, game_id, uci)
            return
        except berserk.exceptions.ResponseError as error:
            if error.status_code != 503 or loop.time() > deadline:
                raise
        await asyncio.sleep(0.2)


async def test_a_game_stream_survives_its_owner_killed(cluster: LocalCluster) -> None:
    """The bot streams its game through the game's owner; the owner dies (SIGKILL) and a
    survivor takes the game over; the bot opens its stream again on a survivor and gets
    ``gameFull`` with every acknowledged move, then finishes the game: no move lost or
    doubled, in the stream or in the database."""
    hub1, hub2, _ = cluster.hubs
    registered = await Client.register(hub1.url, "phoenix")
    await registered.close()
    token = await new_token(http(hub1.port), "phoenix")
    home = Bot(http(hub1.port), "phoenix", token)
    await call(home.client.account.upgrade_to_bot)
    events = await home.events()
    human = await Client.register(hub2.url, "walker")
    await human.ok(
        "match", {"to": "phoenix", "variant": "minishogi", "tc": FISCHER, "colour": "first"}
    )
    challenge = await events.next("challenge")
    await call(home.client.bots.accept_challenge, challenge["challenge"]["id"])
    game_id = (await events.next("gameStart"))["game"]["gameId"]
    owner = await _owner(cluster)
    on_owner = Bot(http(owner.port), "phoenix", token)
    stream, full = await _game_stream(on_owner, game_id)
    assert full["state"]["moves"] == ""
    moves = scripted_game(seed=11)
    killed_at = 8

    async def play(ply: int, bot: Bot, stream: StreamReader) -> None:
        if ply % 2:
            answer = await human.retry(
                "move", {"game": game_id, "ply": ply, "move": moves[ply - 1]}
            )
            assert answer["t"] == "ack", f"ply {ply}: {answer}"
        else:
            await _move(bot, game_id, moves[ply - 1])
        state = await stream.next(
            lambda e: e["type"] == "gameState" and len(e["moves"].split()) == ply
        )
        assert state["moves"].split() == moves[:ply]

    for ply in range(1, killed_at + 1):
        await play(ply, on_owner, stream)
    survivors = [hub for hub in cluster.hubs if hub is not owner]
    await owner.kill()
    try:
        with pytest.raises(Exception):  # noqa: B017 - the connection breaks, whatever requests says
            await stream.next()  # the stream went down with its hub
        if owner is hub2:  # the human's hub went down with it
            assert await human.closed()
            await human.reconnect(survivors[0].url)
        elsewhere = Bot(http(survivors[-1].port), "phoenix", token)
        stream, full = await _game_stream(elsewhere, game_id)
        assert full["state"]["moves"].split() == moves[:killed_at]  # every acked move, once
        assert full["state"]["status"] == "started"
        for ply in range(killed_at + 1, len(moves) + 1):
            await play(ply, elsewhere, stream)
        final = await stream.next(lambda e: e["type"] == "gameState" and e["status"] != "started")
        assert final["status"] == "mate" and final["moves"].split() == moves
        plies = [len(e["moves"].split()) for e in stream.seen if e["type"] == "gameState"]
        assert plies == [*range(killed_at + 1, len(moves) + 1), len(moves)]  # none twice
        row, stored = await finished_game(cluster.database_url, game_id)
        assert stored == moves and row["status"] == "finished"
    finally:
        await owner.start()  # back for the next test
    await human.close()

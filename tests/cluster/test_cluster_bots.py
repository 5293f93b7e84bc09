"""The Bot API on several hubs: a bot's event stream on one hub, its game stream on another,
its moves posted to others (directly and through HAProxy), its opponent a websocket player on a
third; all of them see one game."""

from __future__ import annotations

import pytest
from bot_support import Bot, call, new_token
from cluster_support import FISCHER, Client, LocalCluster

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

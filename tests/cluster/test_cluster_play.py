"""Three real hub processes, one Redis, one PostgreSQL: the shared lobby, cross-node games,
presence.

Clients connect to a chosen hub directly (``hub.url``) so that "on different nodes" is certain;
HAProxy in front of them is tested in test_cluster_failures.py (websockets) and here (ICS).
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
from cluster_support import (
    FISCHER,
    TIMEOUT,
    Client,
    LocalCluster,
    finished_game,
    move_events,
    pair,
    scripted_game,
)
from support import poll

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_a_seek_posted_on_one_node_is_listed_and_accepted_on_another(
    cluster: LocalCluster,
) -> None:
    hub1, hub2, hub3 = cluster.hubs
    alice = await Client.register(hub1.url, "alice")
    bob = await Client.register(hub2.url, "bob")
    watcher = await Client.register(hub3.url, "watcher")
    assert (await watcher.ok("sought", {"watch": True}))["watching"]

    posted = await alice.ok("seek", {"variant": "minishogi", "tc": FISCHER, "colour": "first"})
    added = await watcher.next("seek_added")  # relayed to hub3's watchers
    assert added["d"]["id"] == posted["seek"]
    assert added["d"]["player"]["name"] == "alice"
    listed = await bob.ok("sought")
    assert [seek["id"] for seek in listed["seeks"]] == [posted["seek"]]

    game_id = (await bob.ok("play", {"id": posted["seek"]}))["game"]
    removed = await watcher.next("seek_removed")
    assert removed["d"]["id"] == posted["seek"]
    for client, side in ((alice, "first"), (bob, "second")):
        start = await client.next("game_start")
        assert start["d"] == {**start["d"], "game": game_id, "side": side}
        snapshot = await client.next("game")
        assert snapshot["d"]["game"] == game_id and snapshot["d"]["role"] == side
    assert (await bob.ok("sought"))["seeks"] == []
    await alice.ok("resign", {"game": game_id})
    for client in (alice, bob, watcher):
        await client.close()


async def test_a_correspondence_seek_stays_listed_while_its_player_is_offline(
    cluster: LocalCluster,
) -> None:
    """A registered player's correspondence seek outlives the connection: listed on every
    node while the seeker is away, accepted on another node, the game found on return."""
    hub1, hub2, hub3 = cluster.hubs
    dora = await Client.register(hub1.url, "dora")
    erik = await Client.register(hub2.url, "erik")
    posted = await dora.ok(
        "seek", {"variant": "minishogi", "tc": {"kind": "correspondence", "days": 2}}
    )
    await dora.close()
    # Sentinel: hub1 lists dora no more, so its hub has run her disconnect (which withdraws
    # every seek but a stored one).
    local = await Client.register(hub1.url, "fern")

    async def names() -> list[str]:
        return [p["name"] for p in (await local.ok("who"))["players"]]

    await poll(names, lambda listed: "dora" not in listed)
    await local.close()
    for number, url in ((2, hub2.url), (3, hub3.url)):
        watcher = await Client.register(url, f"gus{number}")
        listed = await watcher.ok("sought")
        assert [seek["id"] for seek in listed["seeks"]] == [posted["seek"]]
        await watcher.close()
    game_id = (await erik.ok("play", {"id": posted["seek"]}))["game"]
    start = await erik.next("game_start")
    assert start["d"]["game"] == game_id
    await dora.reconnect(hub1.url)
    assert dora.hello is not None and dora.hello["d"]["correspondence"] == [game_id]
    assert (await erik.ok("sought"))["seeks"] == []
    await erik.ok("resign", {"game": game_id})
    for client in (dora, erik):
        await client.close()


async def test_the_same_seek_is_never_taken_twice(cluster: LocalCluster) -> None:
    seeker = await Client.register(cluster.hubs[0].url, "seeker")
    takers = [await Client.register(hub.url, f"taker{i}") for i, hub in enumerate(cluster.hubs)]
    for round_ in range(3):
        posted = await seeker.ok("seek", {"variant": "minishogi", "tc": FISCHER})
        await poll(
            lambda: takers[1].ok("sought"),
            lambda listed, seek_id=posted["seek"]: any(s["id"] == seek_id for s in listed["seeks"]),
        )
        # Takers on all three nodes (one on the seek's own node) accept at the same moment.
        answers = await asyncio.gather(
            *(taker.request("play", {"id": posted["seek"]}) for taker in takers)
        )
        winners = [a for a in answers if a["t"] == "ack"]
        losers = [a for a in answers if a["t"] == "error"]
        assert len(winners) == 1, f"round {round_}: {answers}"
        assert {a["d"]["code"] for a in losers} == {"no_such_seek"}
        game_id = winners[0]["d"]["game"]
        await seeker.next(lambda m, g=game_id: m["t"] == "game_start" and m["d"]["game"] == g)
        await seeker.ok("resign", {"game": game_id})
    for client in (seeker, *takers):
        await client.close()


async def test_a_new_seek_that_fits_a_waiting_one_on_another_node_pairs_at_once(
    cluster: LocalCluster,
) -> None:
    hub1, hub2, hub3 = cluster.hubs
    early = await Client.register(hub1.url, "early")
    late = await Client.register(hub3.url, "late")
    unfit = await Client.register(hub2.url, "unfit")
    # A waiting seek with other terms does not pair.
    await unfit.ok("seek", {"variant": "shoshogi", "tc": FISCHER})
    waiting = await early.ok("seek", {"variant": "minishogi", "tc": FISCHER, "colour": "second"})
    await poll(lambda: late.ok("sought"), lambda listed: len(listed["seeks"]) >= 2)

    answer = await late.ok("seek", {"variant": "minishogi", "tc": FISCHER, "colour": "random"})
    assert "game" in answer, answer  # paired at once, not posted
    game_id = answer["game"]
    start = await early.next("game_start")
    assert start["d"]["game"] == game_id and start["d"]["side"] == "second"
    assert (await late.next("game_start"))["d"]["side"] == "first"
    left = (await unfit.ok("sought"))["seeks"]
    assert [seek["player"]["name"] for seek in left] == ["unfit"]
    assert waiting["seek"] not in [seek["id"] for seek in left]
    await late.ok("resign", {"game": game_id})
    for client in (early, late, unfit):
        await client.close()


async def test_fitting_seeks_posted_at_the_same_moment_on_two_nodes_pair(
    cluster: LocalCluster,
) -> None:
    hub1, hub2, _ = cluster.hubs
    one = await Client.register(hub1.url, "simul1")
    two = await Client.register(hub2.url, "simul2")
    for round_ in range(3):
        seek = {"variant": "spartan", "tc": FISCHER}
        answers = await asyncio.gather(one.ok("seek", seek), two.ok("seek", seek))
        # Each may have been posted before the other was listed; they pair all the same.
        starts = await asyncio.gather(one.next("game_start"), two.next("game_start"))
        game_id = starts[0]["d"]["game"]
        assert starts[1]["d"]["game"] == game_id, (round_, answers)
        await one.ok("resign", {"game": game_id})
        for client in (one, two):
            await client.next(lambda m, g=game_id: m["t"] == "end" and m["d"]["game"] == g)
        assert (await one.ok("sought"))["seeks"] == []
    for client in (one, two):
        await client.close()


async def test_a_challenge_reaches_a_player_on_another_node(cluster: LocalCluster) -> None:
    hub1, hub2, _ = cluster.hubs
    sender = await Client.register(hub1.url, "sender")
    target = await Client.register(hub2.url, "target")
    challenge = {"to": "TARGET", "variant": "minishogi", "tc": FISCHER, "colour": "first"}
    challenge_id = (await sender.ok("match", challenge))["challenge"]
    seen = await target.next("challenge")
    assert seen["d"]["id"] == challenge_id and seen["d"]["from"]["name"] == "sender"
    game_id = (await target.ok("accept", {"id": challenge_id}))["game"]
    accepted = await sender.next("challenge_accepted")
    assert accepted["d"] == {"id": challenge_id, "game": game_id}
    assert (await sender.next("game_start"))["d"]["side"] == "first"
    await sender.ok("resign", {"game": game_id})
    nobody = await sender.request("match", {**challenge, "to": "nobody"})
    assert nobody["d"]["code"] == "no_such_player"
    for client in (sender, target):
        await client.close()


async def test_a_game_started_on_one_node_voids_the_players_challenges_on_another(
    cluster: LocalCluster,
) -> None:
    hub1, hub2, _ = cluster.hubs
    busy = await Client.register(hub1.url, "busy")
    waiting = await Client.register(hub2.url, "waiting")
    other = await Client.register(hub1.url, "other")
    challenge = {"to": "waiting", "variant": "minishogi", "tc": FISCHER}
    challenge_id = (await busy.ok("match", challenge))["challenge"]  # held by hub2's hub
    assert (await waiting.next("challenge"))["d"]["id"] == challenge_id
    game_id = await pair(busy, other)  # a game on hub1
    withdrawn = await waiting.next("challenge_withdrawn")
    assert withdrawn["d"] == {"id": challenge_id}
    refused = await waiting.request("accept", {"id": challenge_id})
    assert refused["d"]["code"] == "no_such_challenge"
    await busy.ok("resign", {"game": game_id})
    for client in (busy, waiting, other):
        await client.close()


def _get_json(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=5) as answer:
        result: dict[str, Any] = json.loads(answer.read())
        return result


async def wait_for_presence(
    port: int, condition: Callable[[dict[str, dict[str, Any]]], bool]
) -> dict[str, dict[str, Any]]:
    """Poll ``GET /presence`` of one hub until its ``players`` satisfy ``condition``."""
    presence = await poll(
        lambda: asyncio.to_thread(_get_json, f"http://127.0.0.1:{port}/presence"),
        lambda presence: condition(presence["players"]),
        TIMEOUT,
        interval=0.1,
    )
    players: dict[str, dict[str, Any]] = presence["players"]
    return players


async def test_a_full_game_with_players_on_two_nodes_and_an_observer_on_a_third(
    cluster: LocalCluster,
) -> None:
    hub1, hub2, hub3 = cluster.hubs
    first = await Client.register(hub1.url, "first")
    second = await Client.register(hub2.url, "second")
    observer = await Client.register(hub3.url, "observer")
    game_id = await pair(first, second)
    joined = await observer.ok("join", {"game": game_id})
    assert joined["game"] == game_id

    # Presence: who is online and on which game, asked of the node none of them plays on.
    wanted = {
        client.player["id"]: {game_id: role}  # type: ignore[index]
        for client, role in ((first, "playing"), (second, "playing"), (observer, "watching"))
    }

    def games_as_wanted(players: dict[str, dict[str, object]]) -> bool:
        return all(players.get(p, {}).get("games") == games for p, games in wanted.items())

    await wait_for_presence(hub3.port, games_as_wanted)
    # A second tab of a player, on a node where the game does not run, is told of the game.
    tab = Client("second, another tab")
    tab.token = second.token
    await tab.reconnect(hub3.url)
    assert tab.hello is not None and tab.hello["d"]["game"] == game_id
    await tab.close()

    moves = scripted_game(seed=0)
    for ply, move in enumerate(moves, start=1):
        mover = first if ply % 2 else second
        ack = await mover.ok("move", {"game": game_id, "ply": ply, "move": move})
        assert ack == {"game": game_id, "ply": ply}
    for client in (first, second, observer):
        end = await client.next("end")
        assert end["d"]["termination"] == "checkmate"
    # Everyone saw every move, in version order.
    for client in (first, second, observer):
        events = move_events(client, game_id)
        assert [uci for _, uci in events] == moves
        versions = [v for v, _ in events]
        assert versions == sorted(versions)
    row, stored = await finished_game(cluster.database_url, game_id)
    assert stored == moves
    assert row["status"] == "finished" and row["termination"] == "checkmate"
    for client in (first, second, observer):
        await client.close()


async def test_presence_lists_players_online_on_every_node(cluster: LocalCluster) -> None:
    clients = [await Client.register(hub.url, f"online{i}") for i, hub in enumerate(cluster.hubs)]
    ids = {client.player["id"] for client in clients}  # type: ignore[index]
    for hub in cluster.hubs:
        await wait_for_presence(hub.port, lambda players: ids <= set(players))
    gone = clients.pop()
    assert gone.player is not None
    await gone.close()
    await wait_for_presence(cluster.hubs[0].port, lambda players: gone.player["id"] not in players)  # type: ignore[index]
    for client in clients:
        await client.close()


async def test_haproxy_forwards_the_ics_port_to_a_hub(cluster: LocalCluster) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", cluster.proxy.ics_port)
    try:
        received = b""
        while b"login: " not in received:  # the hub's FICS-style greeting, through HAProxy
            chunk = await asyncio.wait_for(reader.read(4096), TIMEOUT)
            assert chunk, f"closed before the login prompt: {received!r}"
            received += chunk
    finally:
        writer.close()


async def listings(hub: Any) -> int:
    """How many listings of the unfinished games ``hub``'s sweep made (``/healthz``)."""
    report = await hub.health() or {}
    count: int = report.get("cluster", {}).get("unfinished_listings", 0)
    return count


async def test_a_player_seeks_again_as_soon_as_its_game_on_another_node_ends(
    cluster: LocalCluster,
) -> None:
    """The seek right after the ``end`` is not refused ``already_playing``: the sweep's
    listing of the unfinished games (which a seek asks) may predate the end, and the owner
    holds the game's lease until it evicts the room (4–24 such refusals per cluster storm)."""
    hub1, hub2, _ = cluster.hubs
    first = await Client.register(hub1.url, "again-first")
    second = await Client.register(hub2.url, "again-second")
    for _ in range(3):
        game_id = await pair(first, second)  # owned by hub1; the second player is on hub2
        # Two listings on hub2 begin after the game was created: the last one names it.
        listed = await listings(hub2)
        await poll(lambda: listings(hub2), lambda n, since=listed: n >= since + 2, TIMEOUT)
        await first.ok("abort", {"game": game_id})
        await second.next(lambda m, g=game_id: m["t"] == "end" and m["d"]["game"] == g)
        answer = await second.request(
            "seek", {"variant": "minishogi", "tc": FISCHER, "colour": "second"}
        )
        assert answer["t"] == "ack", answer
        await second.ok("unseek")
    for client in (first, second):
        await client.close()

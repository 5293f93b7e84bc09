"""Stored correspondence seeks and challenges in a cluster (docs/correspondence.md, "Seeks and
challenges"): two in-process nodes on the real Redis and PostgreSQL. An offer is written by the
node it is made on (``offers.node``) before its ack, listed on every node, a challenge may
name an offline player and is answered from another node; a dead node's offers are claimed by
exactly one live node, and a restarted node gives back its own."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from cluster_support import Client
from support import create_database, drop_database, node_settings, poll

from server.app import App
from server.rules.time_control import Correspondence
from server.store import StoredOffer, StoredOfferPlayer, node_of
from server.transport.accounts import store_player_id

DAYS = {"kind": "correspondence", "days": 3}

StartNode = Callable[[str], Awaitable[App]]


@pytest.fixture
async def start_node() -> AsyncIterator[StartNode]:
    database = await create_database("cluster_offers")
    prefix = f"offers-{uuid.uuid4().hex[:8]}:"
    running: list[App] = []

    async def start(node_id: str) -> App:
        settings = node_settings(node_id, database, prefix)
        app = App(settings)
        await app.start()
        running.append(app)
        return app

    try:
        yield start
    finally:
        for app in reversed(running):
            if app not in STOPPED:
                await app.stop()
        await drop_database(database)


STOPPED: list[App] = []
"""Nodes a test stopped itself (the fixture does not stop them again)."""


async def stop(app: App) -> None:
    await app.stop()
    STOPPED.append(app)


async def rows(app: App) -> list[tuple[str, str, str, str]]:
    """The stored offers: (owner, target or "", holder, key), sorted."""
    return sorted(
        (o.player.name, "" if o.target is None else o.target.name, str(o.node), o.key)
        for o in await app.store.stored_offers()
    )


def named(stored: list[tuple[str, str, str, str]]) -> list[tuple[str, str, str]]:
    """(owner, target, node id) of each stored offer."""
    return [(owner, target, node_of(holder)) for owner, target, holder, _ in stored]


def held(app: App) -> set[str]:
    """The keys of the stored offers this node's hub holds."""
    hub = app.hub
    offers = [*hub.seeks(), *hub.state.challenges.all()]
    return {o.key for o in offers if o.key is not None}


async def offline(app: App, client: Client) -> None:
    """``client`` closed and its node's hub has run the disconnect."""
    assert client.player is not None
    player_id = client.player["id"]
    await client.close()

    async def online() -> bool:
        return app.hub.online(player_id)

    await poll(online, lambda here: not here)


async def test_offers_are_written_by_their_node_listed_everywhere_and_answered_elsewhere(
    start_node: StartNode,
) -> None:
    a, b = await start_node("node-a"), await start_node("node-b")
    bob = await Client.register(b.url, "bob")
    await offline(b, bob)
    alice = await Client.register(a.url, "alice")
    seek = await alice.ok("seek", {"variant": "minishogi", "tc": DAYS})
    # Acknowledged means stored: the row is there at the ack, naming its node.
    assert named(await rows(a)) == [("alice", "", "node-a")]
    # bob is offline everywhere: his account is read from the store.
    challenge = await alice.ok("match", {"to": "bob", "variant": "shoshogi", "tc": DAYS})
    assert named(await rows(a)) == [("alice", "", "node-a"), ("alice", "bob", "node-a")]
    carol = await Client.register(b.url, "carol")
    listed = await carol.ok("sought")
    assert [s["id"] for s in listed["seeks"]] == [seek["seek"]]
    # bob comes back on the other node: told the challenge waiting on node-a, accepts it there.
    await bob.reconnect(b.url)
    told = await bob.next("challenge")
    assert told["d"]["id"] == challenge["challenge"] and told["d"]["from"]["name"] == "alice"
    game_id = (await bob.ok("accept", {"id": challenge["challenge"]}))["game"]
    assert (await bob.next("game_start"))["d"]["game"] == game_id
    await poll(lambda: rows(a), lambda got: [(r[0], r[1]) for r in got] == [("alice", "")])
    for client in (alice, bob, carol):
        await client.close()


async def test_a_dead_nodes_offers_go_to_one_live_node_and_a_restart_gives_its_own_back(
    start_node: StartNode,
) -> None:
    a, b = await start_node("node-a"), await start_node("node-b")
    dora = await Client.register(a.url, "dora")
    erik = await Client.register(b.url, "erik")
    await dora.ok("seek", {"variant": "minishogi", "tc": DAYS})
    assert dora.player is not None and erik.player is not None
    dora_id, erik_id = store_player_id(dora.player["id"]), store_player_id(erik.player["id"])
    assert dora_id is not None and erik_id is not None
    # A node that died with offers of its own: written by it, held by nobody now.
    dora_row = StoredOfferPlayer(dora_id, "dora", False)
    erik_row = StoredOfferPlayer(erik_id, "erik", False)
    dead = [
        StoredOffer(
            f"dead{n:012d}",
            dora_row,
            None,
            "minishogi",
            Correspondence(n + 1),
            False,
            "random",
            None,
            False,
            node="node-gone",
        )
        for n in range(3)
    ]
    dead.append(
        StoredOffer(
            "deadchallenge000",
            erik_row,
            dora_row,
            "shoshogi",
            Correspondence(2),
            False,
            "first",
            None,
            False,
            node="node-gone",
        )
    )
    for offer in dead:
        await a.store.add_offer(offer)
    # Both live nodes claim at once: each offer goes to exactly one.
    taken = await asyncio.gather(a.offers.claim({"node-gone"}), b.offers.claim({"node-gone"}))
    assert sum(taken) == len(dead)
    assert held(a) & held(b) == set()
    stored = await rows(a)
    assert {r[3] for r in stored} == held(a) | held(b)
    assert all((r[3] in held(a)) == (r[2] == a.offers.holder) for r in stored)
    assert all(r[2] in (a.offers.holder, b.offers.holder) for r in stored)
    # Listed on every node.
    listed = await erik.ok("sought")
    assert len(listed["seeks"]) == 1 + 3
    # node-a restarts: its rows are given back by one live node, whichever claims them first
    # (node-b, seeing node-a gone while it was down, races its successor), none twice.
    await dora.close()
    keys = {r[3] for r in await rows(b)}
    await stop(a)
    again = await start_node("node-a")

    async def holders() -> tuple[set[str], set[str]]:
        return held(again), held(b)

    mine, others = await poll(holders, lambda got: got[0] | got[1] == keys)
    assert mine & others == set()
    assert await a_claim_changes_nothing(again, b)
    assert {r[3] for r in await rows(b) if r[2] == again.offers.holder} == mine
    # node-a was taken for dead while it ran (its presence lapsed) and node-b claimed its
    # rows: when node-a finds the lapse, those offers leave its hub; node-b opens them.
    holder = again.offers.holder
    assert holder is not None and b.offers.holder is not None
    assert await again.store.claim_offers(holder, b.offers.holder) == len(mine)
    assert await again.offers.recheck() == len(mine) and held(again) == set()
    assert await b.offers.claim(set()) == len(mine)
    assert held(b) == keys
    await erik.close()


async def a_claim_changes_nothing(*apps: App) -> bool:
    """Claiming again (no node gone) opens nothing twice."""
    counts = [await app.offers.claim(set()) for app in apps]
    return counts == [0] * len(apps)


async def test_an_offer_claimed_from_a_running_node_makes_one_game(
    start_node: StartNode,
) -> None:
    """node-a is taken for dead while it runs: node-b claims its seek's row and lists it too
    (until node-a's heartbeat finds the lapse). The row's node fences it: a taker on node-a
    is refused (``no_such_seek``; node-a forgets the seek, the row is untouched), a taker on
    node-b gets the game; one game row."""
    a, b = await start_node("node-a"), await start_node("node-b")
    alice = await Client.register(a.url, "alice")
    await alice.ok("seek", {"variant": "minishogi", "tc": DAYS})
    await offline(a, alice)
    (on_a,) = a.hub.seeks()
    assert a.offers.holder is not None and b.offers.holder is not None
    assert await b.store.claim_offers(a.offers.holder, b.offers.holder) == 1
    assert await b.offers.claim(set()) == 1
    (on_b,) = b.hub.seeks()
    assert on_b.key == on_a.key and on_b.id != on_a.id
    bob = await Client.register(a.url, "bob")
    refused_game = (await bob.ok("play", {"id": on_a.id}))["game"]
    assert (await bob.next("error"))["d"]["code"] == "no_such_seek"
    assert a.hub.seeks() == [] and a.hub.state.consuming == {}
    assert [(r[0], r[2]) for r in await rows(a)] == [("alice", b.offers.holder)]
    carol = await Client.register(b.url, "carol")
    game_id = (await carol.ok("play", {"id": on_b.id}))["game"]
    assert (await carol.next("game_start"))["d"]["game"] == game_id
    assert await rows(a) == []
    assert alice.player is not None
    alice_id = store_player_id(alice.player["id"])
    assert alice_id is not None
    assert [g.id for g in await a.store.running_games(alice_id)] == [game_id]
    assert await a.store.get_game(refused_game) is None
    for client in (bob, carol):
        await client.close()

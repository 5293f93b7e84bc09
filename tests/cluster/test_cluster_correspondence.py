"""Correspondence games in a cluster: cold rooms with no owner, loaded under their lease on
whichever node a command names them, their deadline decided once through the lease, and the
players' lists read from the store (docs/correspondence.md "Memory").

Two in-process nodes (``node-a``, ``node-b``) on the real Redis and one PostgreSQL database,
both on the test's clock (``App(clock=)``: hub time and the wall clock of the stored instants),
so that the test serves the deadlines (``cold.fire_due()``) and idle rooms
(``cold.drop_idle()``) itself. A dead owner is a node id (``node-dead``) holding a game's lease
in Redis with no process behind it.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from cluster_support import Client, finished_game, stored_game
from support import SteppedClock, create_database, drop_database, node_settings, poll

from server.app import App
from server.cluster.node import ClusterDriver
from server.rules import Game, MoveRecord, get_variant
from server.rules.time_control import DAY_MS, Correspondence
from server.transport.accounts import store_player_id

TTL_MS = 3000
HOUR = 3_600_000
IDLE_MS = 600_000
T0 = SteppedClock().now
START_FEN = "rbsgk/4p/5/P4/KGSBR[-] w 0 1"
DEAD = "node-dead"


def instant(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


@dataclass
class Nodes:
    a: App
    b: App
    clock: SteppedClock
    database: str

    def driver(self, app: App) -> ClusterDriver:
        assert isinstance(app.driver, ClusterDriver)
        return app.driver


@pytest.fixture
async def nodes() -> AsyncIterator[Nodes]:
    database = await create_database("corr_cluster")
    clock = SteppedClock()
    prefix = f"corr-{uuid.uuid4().hex[:8]}:"
    a = App(node_settings("node-a", database, prefix, lease_ttl_ms=TTL_MS), clock=clock)
    await a.start()
    b = App(node_settings("node-b", database, prefix, lease_ttl_ms=TTL_MS), clock=clock, migrate=False)
    try:
        await b.start()
        try:
            yield Nodes(a, b, clock, database)
        finally:
            await b.stop()
    finally:
        await a.stop()
        await drop_database(database)


async def stored_cold_game(app: App, first: Client, second: Client) -> tuple[str, int]:
    """A 1-day game of the two players, two moves played (the second at T0 + 2 h), stored and
    held by no node; returns its id and the instant its running turn started."""
    assert first.player is not None and second.player is not None
    game_id = await app.store.create_game(
        variant="minishogi",
        start_fen=START_FEN,
        time_control=Correspondence(1),
        first_name=first.name,
        second_name=second.name,
        first_player_id=store_player_id(first.player["id"]),
        second_player_id=store_player_id(second.player["id"]),
        started=True,
        created_at=instant(T0),
    )
    for ply, uci, at in ((1, "a1b2", T0 + HOUR), (2, "a5a2", T0 + 2 * HOUR)):
        await app.store.append_move(
            game_id, MoveRecord(ply, uci, uci, DAY_MS, HOUR, played_at=instant(at))
        )
    await app.store.postpone_deadline(game_id, T0 + 2 * HOUR + DAY_MS)
    return game_id, T0 + 2 * HOUR


def legal_after(moves: list[str]) -> list[str]:
    game = Game(get_variant("minishogi"), START_FEN)
    for move in moves:
        game.play(move)
    return sorted(game.legal_moves())


async def test_a_cold_game_has_no_owner_loads_on_any_node_and_leaves_when_idle(
    nodes: Nodes,
) -> None:
    a, b = nodes.driver(nodes.a), nodes.driver(nodes.b)
    alice = await Client.register(nodes.a.url, "alice")
    bob = await Client.register(nodes.b.url, "bob")
    game_id, _ = await stored_cold_game(nodes.a, alice, bob)

    # The takeover sweep (a node's start-up and every renewal period) leaves it in the store.
    assert await a.ownership.sweep() == 0 and await b.ownership.sweep() == 0
    assert a.hub.state.rooms == {} and b.hub.state.rooms == {}
    assert await a.cluster.leases.owner(game_id) is None

    # Held by no node: a login on either lists it (the store's list, read at connection).
    await bob.reconnect(nodes.b.url)
    assert bob.hello is not None and bob.hello["d"]["correspondence"] == [game_id]

    # A move (no join first) on node A: A takes the lease, loads the room, answers.
    move = await alice.ok("move", {"game": game_id, "ply": 3, "move": "b2c3"})
    assert move == {"game": game_id, "ply": 3}
    assert a.hub.room(game_id) is not None and b.hub.room(game_id) is None
    assert await a.cluster.leases.owner(game_id) == "node-a"
    assert a.ownership.loaded_cold == 1 and a.ownership.taken_over == 0
    _, moves = await stored_game(nodes.database, game_id)
    assert moves == ["a1b2", "a5a2", "b2c3"]

    # Held by node A: a login on node B lists it too; bob's move there goes to A's room.
    await bob.reconnect(nodes.b.url)
    assert bob.hello is not None and bob.hello["d"]["correspondence"] == [game_id]
    reply = legal_after(["a1b2", "a5a2", "b2c3"])[0]
    assert await bob.ok("move", {"game": game_id, "ply": 4, "move": reply}) == {
        "game": game_id,
        "ply": 4,
    }
    assert b.hub.room(game_id) is None

    # Idle for correspondence_idle_s (nobody in the room): A drops it and gives the lease up.
    assert nodes.a.cold.drop_idle() == 0  # first seen idle now
    nodes.clock.now += IDLE_MS
    assert nodes.a.cold.drop_idle() == 1
    assert a.hub.state.rooms == {}
    await poll(lambda: a.cluster.leases.owner(game_id), lambda owner: owner is None, 5.0)

    # The next command, on node B this time, loads it there with the moves stored.
    joined = await bob.ok("join", {"game": game_id})
    assert joined["snapshot"] is True
    room = b.hub.room(game_id)
    assert room is not None and [m.uci for m in room.state.records][-1] == reply
    assert await b.cluster.leases.owner(game_id) == "node-b" and a.hub.room(game_id) is None

    # A command forwarded to a node that dropped the room meanwhile (node A still takes B
    # for its owner): B answers "moved", A routes it again, loads the game and answers.
    await bob.ok("leave", {"game": game_id})
    assert nodes.b.cold.drop_idle() == 0
    nodes.clock.now += IDLE_MS
    assert nodes.b.cold.drop_idle() == 1
    await poll(lambda: b.cluster.leases.owner(game_id), lambda owner: owner is None, 5.0)
    a.ownership.set_cached_owner(game_id, "node-b")
    third = legal_after(["a1b2", "a5a2", "b2c3", reply])[0]
    assert await alice.ok("move", {"game": game_id, "ply": 5, "move": third}) == {
        "game": game_id,
        "ply": 5,
    }
    assert a.hub.room(game_id) is not None and b.hub.room(game_id) is None
    assert await a.cluster.leases.owner(game_id) == "node-a"
    _, moves = await stored_game(nodes.database, game_id)
    assert moves == ["a1b2", "a5a2", "b2c3", reply, third]
    for client in (alice, bob):
        await client.close()


@pytest.mark.parametrize("owner", ["none", "dead"])
async def test_a_cold_deadline_ends_the_game_once_across_the_nodes(
    nodes: Nodes, owner: str
) -> None:
    """At the stored deadline both live nodes fire it together; only the lease's holder ends
    it, once. ``dead``: a node that loaded the game died holding its lease; nothing ends the
    game until the lease lapses, then one of the survivors does, once."""
    a, b = nodes.driver(nodes.a), nodes.driver(nodes.b)
    alice = await Client.register(nodes.a.url, "alice")
    bob = await Client.register(nodes.b.url, "bob")
    game_id, turn_started = await stored_cold_game(nodes.a, alice, bob)
    deadline = turn_started + DAY_MS
    if owner == "dead":
        assert await a.cluster.leases.acquire(game_id, DEAD, 300)
    nodes.clock.now = deadline - 1
    assert await nodes.a.cold.fire_due() == 0 and await nodes.b.cold.fire_due() == 0
    nodes.clock.now = deadline
    if owner == "dead":
        fired = await asyncio.gather(nodes.a.cold.fire_due(), nodes.b.cold.fire_due())
        assert fired == [0, 0]  # its lease is the dead node's, not lapsed yet
        row, _ = await stored_game(nodes.database, game_id)
        assert row["status"] == "started"
        await poll(lambda: a.cluster.leases.owner(game_id), lambda holder: holder is None, 5.0)
    fired = await asyncio.gather(nodes.a.cold.fire_due(), nodes.b.cold.fire_due())
    assert sorted(fired) in ([0, 1], [1, 1])  # the second may find it over, or held
    row, moves = await finished_game(nodes.database, game_id)
    assert row["termination"] == "time" and row["result"] == "0-1"  # alice, to move, lost
    assert moves == ["a1b2", "a5a2"]
    assert a.ownership.loaded_cold + b.ownership.loaded_cold >= 1
    # Once: never due again, nothing left to take over.
    nodes.clock.now += 2 * DAY_MS
    assert await nodes.a.cold.fire_due() == 0 and await nodes.b.cold.fire_due() == 0
    assert await a.ownership.sweep() == 0 and await b.ownership.sweep() == 0
    assert (await stored_game(nodes.database, game_id))[0]["finished_at"] == row["finished_at"]
    for client in (alice, bob):
        await client.close()


async def test_a_conditional_premove_answers_a_move_made_on_another_node(nodes: Nodes) -> None:
    """Alice stores "if bob plays X, answer Y" through node A (which loads the game); bob's
    X through node B goes to A's room, and the reply is played and stored."""
    alice = await Client.register(nodes.a.url, "alice")
    bob = await Client.register(nodes.b.url, "bob")
    game_id, _ = await stored_cold_game(nodes.a, alice, bob)
    played = ["a1b2", "a5a2", "b2c3"]
    await alice.ok("move", {"game": game_id, "ply": 3, "move": "b2c3"})
    threat = legal_after(played)[0]
    answer = legal_after([*played, threat])[0]
    stored = await alice.ok("premoves", {"game": game_id, "lines": [[threat, answer]]})
    assert stored == {"game": game_id}
    await bob.ok("join", {"game": game_id})
    await bob.ok("move", {"game": game_id, "ply": 4, "move": threat})
    reply = await bob.next(lambda m: m["t"] == "move" and m["d"].get("ply") == 5)
    assert reply["d"]["uci"] == answer
    _, moves = await poll(
        lambda: stored_game(nodes.database, game_id), lambda s: len(s[1]) == 5, 5.0
    )
    assert moves == [*played, threat, answer]
    for client in (alice, bob):
        await client.close()


async def test_a_correspondence_game_on_another_node_leaves_the_real_time_slot_free(
    nodes: Nodes,
) -> None:
    """Alice's correspondence game is owned by a live other node (its lease held): she may
    still start a real-time game here, and her login's ``hello.game`` does not name it."""
    driver = nodes.driver(nodes.b)
    alice = await Client.register(nodes.b.url, "alice")
    bob = await Client.register(nodes.b.url, "bob")
    game_id, _ = await stored_cold_game(nodes.b, alice, bob)
    assert await driver.cluster.leases.acquire(game_id, DEAD, 60_000)
    assert await driver.ownership.sweep() == 0  # not listed: cold
    await alice.reconnect(nodes.b.url)
    assert alice.hello is not None and alice.hello["d"]["game"] is None
    assert alice.hello["d"]["correspondence"] == [game_id]
    seek = {"variant": "minishogi", "tc": {"kind": "fischer", "base_s": 60, "inc_s": 0}}
    answer = await alice.request("seek", seek)
    assert answer["t"] == "ack", answer
    assert driver.hub.room(game_id) is None  # still the other node's
    await driver.cluster.leases.release(game_id, DEAD)
    for client in (alice, bob):
        await client.close()

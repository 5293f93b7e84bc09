"""A player comes back before the game of a dead node is taken over (the storm bench's race).

One in-process node (``node-b``, the survivor) on the real Redis and PostgreSQL; the dead
node's game is a stored unfinished row whose lease nobody holds. The survivor's takeover is
held by its ownership's fake clock (a lease must be seen free for ``ttl / 3`` first), so the
player's reconnection, seek and join deterministically happen while the takeover is pending.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator

import pytest
from cluster_support import FISCHER, Client, pair, stored_game
from support import FakeClock, create_database, drop_database

from server.app import App
from server.cluster.node import ClusterDriver
from server.config import Settings
from server.rules import MoveRecord
from server.store import StoredTimeControl
from server.transport.accounts import store_player_id

REDIS_URL = os.environ.get("HUB_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
TTL_MS = 3000
PERIOD_S = TTL_MS / 3000
START_FEN = "rbsgk/4p/5/P4/KGSBR[-] w 0 1"
ILLEGAL = "a1a5"
"""A stored move the rules refuse from the start position (no hub can resume the game)."""


@pytest.fixture
async def database() -> AsyncIterator[str]:
    url = await create_database("takeover_race")
    try:
        yield url
    finally:
        await drop_database(url)


@pytest.fixture
async def survivor(database: str) -> AsyncIterator[tuple[App, FakeClock]]:
    settings = Settings(
        port=0,
        ics_port=0,
        node_id="node-b",
        database_url=database,
        redis_url=REDIS_URL,
        bus_prefix=f"race-{uuid.uuid4().hex[:8]}:",
        lease_ttl_ms=TTL_MS,
        log_level="WARNING",
        argon2_time_cost=1,
        argon2_memory_kib=8,
        argon2_parallelism=1,
    )
    app = App(settings)
    await app.start()
    clock = FakeClock()
    assert isinstance(app.driver, ClusterDriver)
    app.driver.ownership._clock = clock  # holds every takeover until the test advances it
    try:
        yield app, clock
    finally:
        await app.stop()


async def dead_nodes_game(app: App, first: Client, second: Client) -> str:
    """A started game of the two players, stored by a node that died (no lease held)."""
    assert first.player is not None and second.player is not None
    game_id = await app.store.create_game(
        variant="minishogi",
        start_fen=START_FEN,
        time_control=StoredTimeControl("fischer", 300_000, 0),
        first_name=first.name,
        second_name=second.name,
        first_player_id=store_player_id(first.player["id"]),
        second_player_id=store_player_id(second.player["id"]),
        rated=False,
    )
    await app.store.start_game(game_id)
    return game_id


async def test_a_player_back_before_the_takeover_rejoins_and_cannot_start_another_game(
    survivor: tuple[App, FakeClock],
) -> None:
    app, clock = survivor
    driver = app.driver
    assert isinstance(driver, ClusterDriver)
    alice = await Client.register(app.url, "alice")
    bob = await Client.register(app.url, "bob")
    game_id = await dead_nodes_game(app, alice, bob)
    # The survivor's sweep lists it (its lease free: the takeover waits for the clock); a
    # login asks that listing, not the store (Ownership.unfinished_game_of).
    assert await driver.ownership.sweep() == 0

    await alice.reconnect(app.url)  # the dead node's player, through the balancer
    assert alice.hello is not None and alice.hello["d"]["game"] == game_id
    assert driver.hub.room(game_id) is None  # still pending: the clock has not moved
    refused = await alice.request("seek", {"variant": "minishogi", "tc": FISCHER})
    assert refused["t"] == "error" and refused["d"]["code"] == "already_playing"
    ai = await alice.request("challenge_ai", {"variant": "minishogi", "level": 1, "tc": FISCHER})
    assert ai["t"] == "error" and ai["d"]["code"] == "already_playing"
    waiting = await alice.request("join", {"game": game_id})
    assert waiting["t"] == "error" and waiting["d"]["code"] == "node_unavailable"  # retry

    clock.advance(PERIOD_S)  # the lease has been seen free long enough
    joined = await alice.retry("join", {"game": game_id})
    assert joined["t"] == "ack" and joined["d"]["game"] == game_id, joined
    snapshot = await alice.next(lambda m: m["t"] == "game" and m["d"]["game"] == game_id)
    assert snapshot["d"]["status"] == "started"
    assert alice.player is not None and driver.hub.active_game(alice.player["id"]) == game_id
    for client in (alice, bob):
        await client.close()


async def test_a_game_no_hub_can_resume_is_aborted_not_retried_for_ever(
    survivor: tuple[App, FakeClock], database: str
) -> None:
    app, clock = survivor
    driver = app.driver
    assert isinstance(driver, ClusterDriver)
    ownership = driver.ownership
    carol = await Client.register(app.url, "carol")
    dave = await Client.register(app.url, "dave")
    erin = await Client.register(app.url, "erin")
    running = await pair(carol, erin)  # carol plays here already
    blocked = await dead_nodes_game(app, carol, dave)  # so this one cannot be restored here
    broken = await dead_nodes_game(app, dave, erin)
    await app.store.append_move(broken, MoveRecord(1, ILLEGAL, ILLEGAL, 300_000, 0))

    for game_id in (blocked, broken):
        assert await ownership.take_over(game_id) == "pending"  # first seen free
    clock.advance(PERIOD_S)
    for game_id in (blocked, broken):
        assert await ownership.take_over(game_id) == "none"
        row, _ = await stored_game(database, game_id)
        assert row["status"] == "aborted" and row["termination"] == "abort"
        assert await driver.cluster.leases.owner(game_id) is None
    assert ownership.abandoned == 2
    assert await ownership.sweep() == 0 and ownership.abandoned == 2  # nothing left to try
    assert carol.player is not None and driver.hub.active_game(carol.player["id"]) == running
    for client in (carol, dave, erin):
        await client.close()

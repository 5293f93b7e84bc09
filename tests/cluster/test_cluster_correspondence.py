"""A correspondence game whose owner died before its deadline ends on time, once, on the node
that takes it over (in-process survivor on the real Redis and PostgreSQL, as in
``test_cluster_takeover_race.py``).

The dead owner's game is a stored unfinished row (its moves stamped with their instants) whose
lease nobody holds. The survivor's hub runs on the test's clock (``App(clock=)``: hub time and the
wall clock of the stored instants), its ownership on a fake one that releases the takeover when
the test says.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from cluster_support import Client, finished_game, stored_game
from support import FakeClock, SteppedClock, create_database, drop_database

from server.app import App
from server.cluster.node import ClusterDriver
from server.config import Settings
from server.rules import MoveRecord
from server.rules.time_control import DAY_MS, Correspondence
from server.transport.accounts import store_player_id

REDIS_URL = os.environ.get("HUB_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
TTL_MS = 3000
HOUR = 3_600_000
T0 = SteppedClock().now
START_FEN = "rbsgk/4p/5/P4/KGSBR[-] w 0 1"


def instant(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


@pytest.fixture
async def survivor() -> AsyncIterator[tuple[App, SteppedClock, FakeClock, str]]:
    database = await create_database("corr_takeover")
    hub_clock, lease_clock = SteppedClock(), FakeClock()
    settings = Settings(
        port=0,
        ics_port=0,
        node_id="node-b",
        database_url=database,
        redis_url=REDIS_URL,
        bus_prefix=f"corr-{uuid.uuid4().hex[:8]}:",
        lease_ttl_ms=TTL_MS,
        log_level="WARNING",
        argon2_time_cost=1,
        argon2_memory_kib=8,
        argon2_parallelism=1,
    )
    app = App(settings, clock=hub_clock)
    await app.start()
    assert isinstance(app.driver, ClusterDriver)
    app.driver.ownership._clock = lease_clock  # holds every takeover until the test advances it
    try:
        yield app, hub_clock, lease_clock, database
    finally:
        await app.stop()
        await drop_database(database)


async def dead_owners_game(app: App, first: Client, second: Client) -> tuple[str, int]:
    """A 1-day game of the two players, two moves played (the second at T0 + 2 h), stored by a
    node that died; returns its id and the instant its running turn started."""
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
    return game_id, T0 + 2 * HOUR


@pytest.mark.parametrize("late", [False, True], ids=["before-the-deadline", "after-it"])
async def test_a_dead_owners_correspondence_game_ends_on_time_once(
    survivor: tuple[App, SteppedClock, FakeClock, str], late: bool
) -> None:
    app, hub_clock, lease_clock, database = survivor
    driver = app.driver
    assert isinstance(driver, ClusterDriver)
    alice = await Client.register(app.url, "alice")
    bob = await Client.register(app.url, "bob")
    game_id, turn_started = await dead_owners_game(app, alice, bob)
    deadline = turn_started + DAY_MS
    # The owner died at 23 h into the turn; the survivor takes the game over before the
    # deadline, or (late) only after it.
    hub_clock.now = deadline + 5 * 60_000 if late else turn_started + 23 * HOUR
    assert await driver.ownership.take_over(game_id) == "pending"  # first seen free
    lease_clock.advance(TTL_MS / 3000)
    assert await driver.ownership.take_over(game_id) == "taken"
    room = driver.hub.room(game_id)
    assert room is not None
    if not late:
        assert room.clock.deadline() == deadline and not room.finished
        hub_clock.now = deadline - 1
        driver.check_deadlines()
        assert not room.finished
        hub_clock.now = deadline
        driver.check_deadlines()
    row, moves = await finished_game(database, game_id)
    assert row["status"] == "finished" and row["termination"] == "time"
    assert row["result"] == "0-1" and moves == ["a1b2", "a5a2"]  # alice, to move, lost
    assert room.finished and room.termination == "time"
    # Once: nothing is left to take over or to end again.
    hub_clock.now += 2 * DAY_MS
    driver.check_deadlines()
    assert await driver.ownership.sweep() == 0
    assert (await stored_game(database, game_id))[0]["finished_at"] == row["finished_at"]
    for client in (alice, bob):
        await client.close()


async def test_a_correspondence_game_on_another_node_leaves_the_real_time_slot_free(
    survivor: tuple[App, SteppedClock, FakeClock, str],
) -> None:
    """Alice's correspondence game is owned by a live other node (its lease held): she may
    still start a real-time game here, and her login's ``hello.game`` does not name it."""
    app, _, _, _ = survivor
    driver = app.driver
    assert isinstance(driver, ClusterDriver)
    alice = await Client.register(app.url, "alice")
    bob = await Client.register(app.url, "bob")
    game_id, _ = await dead_owners_game(app, alice, bob)
    assert await driver.cluster.leases.acquire(game_id, "node-a", 60_000)
    assert await driver.ownership.sweep() == 0  # listed, owned elsewhere
    await alice.reconnect(app.url)
    assert alice.hello is not None and alice.hello["d"]["game"] is None
    seek = {"variant": "minishogi", "tc": {"kind": "fischer", "base_s": 60, "inc_s": 0}}
    answer = await alice.request("seek", seek)
    assert answer["t"] == "ack", answer
    assert driver.hub.room(game_id) is None  # still node-a's
    await driver.cluster.leases.release(game_id, "node-a")
    for client in (alice, bob):
        await client.close()

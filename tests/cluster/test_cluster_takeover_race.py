"""A player comes back before the game of a dead node is taken over (the storm bench's race).

One in-process node (``node-b``, the survivor) on the real Redis and PostgreSQL; the dead
node's game is a stored unfinished row whose lease nobody holds. The survivor's takeover is
held by its ownership's fake clock (a lease must be seen free for ``ttl / 3`` first), so the
player's reconnection, seek and join deterministically happen while the takeover is pending.
A takeover's load is held on a row lock the test takes in PostgreSQL.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
import pytest
from cluster_support import FISCHER, Client, pair, stored_game
from support import FakeClock, create_database, drop_database, node_settings, pg_dsn, poll

from server.app import App
from server.cluster.node import ClusterDriver
from server.cluster.ownership import Takeover
from server.rules import Game, MoveRecord, get_variant
from server.rules.time_control import Fischer
from server.transport.accounts import store_player_id

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
async def survivor(
    database: str, request: pytest.FixtureRequest
) -> AsyncIterator[tuple[App, FakeClock]]:
    """The survivor node; its lease TTL ``TTL_MS`` unless the test gives another
    (``indirect`` parametrization)."""
    ttl_ms: int = getattr(request, "param", TTL_MS)
    settings = node_settings("node-b", database, f"race-{uuid.uuid4().hex[:8]}:", lease_ttl_ms=ttl_ms)
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
        time_control=Fischer(300_000, 0),
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


LONG_TTL_MS = 60_000
"""A lease that cannot lapse while the test holds the takeover's load (Redis keeps real time)."""
FIRST_MOVE = Game(get_variant("minishogi")).legal_moves()[0]


@asynccontextmanager
async def load_held(app: App, database: str, game_id: str) -> AsyncIterator[None]:
    """Hold a takeover of ``game_id`` in its load from the store, lease acquired, until the
    block ends: a kept room version makes the load write the game's row
    (``Store.take_room_version``), and this holds that row locked."""
    await app.store.save_room_versions({game_id: 7})
    lock = await asyncpg.connect(pg_dsn(database))
    locked = lock.transaction()
    await locked.start()
    try:
        await lock.execute("SELECT 1 FROM games WHERE id = $1 FOR UPDATE", game_id)
        yield
    finally:
        await locked.rollback()
        await lock.close()


async def takeover_loading(app: App, clock: FakeClock, game_id: str) -> asyncio.Task[Takeover]:
    """A takeover of ``game_id`` by the survivor that has acquired the lease (and loads)."""
    assert isinstance(app.driver, ClusterDriver)
    ownership, leases = app.driver.ownership, app.driver.cluster.leases
    assert await ownership.take_over(game_id) == "pending"  # first seen free
    clock.advance(LONG_TTL_MS / 3000)
    takeover = asyncio.create_task(ownership.take_over(game_id))
    await poll(lambda: leases.owner(game_id), lambda owner: owner == "node-b")
    return takeover


@pytest.mark.parametrize("survivor", [LONG_TTL_MS], indirect=True)
async def test_commands_wait_while_the_takeover_loads_the_game_then_it_is_served(
    survivor: tuple[App, FakeClock], database: str
) -> None:
    """The survivor holds the lease of a game it is still loading (the bench's
    ``no_such_game`` just before a takeover): its sweep sees the lease name this node, but no
    room exists yet, so the players' commands are answered ``node_unavailable`` (retry), not
    ``no_such_game``, until the game is restored; then they are served."""
    app, clock = survivor
    driver = app.driver
    assert isinstance(driver, ClusterDriver)
    alice = await Client.register(app.url, "alice")
    bob = await Client.register(app.url, "bob")
    game_id = await dead_nodes_game(app, alice, bob)
    move = {"game": game_id, "ply": 1, "move": FIRST_MOVE}
    async with load_held(app, database, game_id):
        takeover = await takeover_loading(app, clock, game_id)
        assert await driver.ownership.sweep() == 0  # lists the game: its lease names this node
        assert driver.hub.room(game_id) is None and not takeover.done()
        refused = await alice.request("move", move)
        assert refused["t"] == "error" and refused["d"]["code"] == "node_unavailable", refused
        joining = await bob.request("join", {"game": game_id})
        assert joining["t"] == "error" and joining["d"]["code"] == "node_unavailable", joining
        unknown = await alice.request("move", {**move, "game": "Zz0Zz0Zz"})  # no such game
        assert unknown["t"] == "error" and unknown["d"]["code"] == "no_such_game", unknown

    assert await takeover == "taken"
    played = await alice.retry("move", move)
    assert played["t"] == "ack" and played["d"]["ply"] == 1, played
    _, moves = await stored_game(database, game_id)
    assert moves == [FIRST_MOVE]
    for client in (alice, bob):
        await client.close()


@pytest.mark.parametrize("survivor", [LONG_TTL_MS], indirect=True)
async def test_a_takeover_stopped_half_way_leaves_its_game_to_the_next_one(
    survivor: tuple[App, FakeClock], database: str
) -> None:
    """A takeover here that stopped after it took the lease (its task cancelled; a lost
    Redis reply does the same) leaves the lease naming this node and no room: the owner
    lookup asks the store, answers ``node_unavailable`` while the game waits for its next
    takeover, and that one serves it."""
    app, clock = survivor
    driver = app.driver
    assert isinstance(driver, ClusterDriver)
    alice = await Client.register(app.url, "alice")
    bob = await Client.register(app.url, "bob")
    game_id = await dead_nodes_game(app, alice, bob)
    move = {"game": game_id, "ply": 1, "move": FIRST_MOVE}
    async with load_held(app, database, game_id):
        takeover = await takeover_loading(app, clock, game_id)
        takeover.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await takeover
        assert await driver.cluster.leases.owner(game_id) == "node-b"
        refused = await alice.request("move", move)
        assert refused["t"] == "error" and refused["d"]["code"] == "node_unavailable", refused

    clock.advance(LONG_TTL_MS / 3000)  # seen free (by the store's word) long enough
    played = await alice.retry("move", move)
    assert played["t"] == "ack" and played["d"]["ply"] == 1, played
    assert driver.hub.room(game_id) is not None
    for client in (alice, bob):
        await client.close()

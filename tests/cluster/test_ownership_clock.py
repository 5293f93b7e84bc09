"""Ownership with an injected clock. Taking over a dead owner's game: the lease must have
been seen free for a renewal period (``ttl / 3``) first, and a sighting older than four ttls
starts the wait again; the renewal of every lease in one batch; a player's unfinished game from
the sweep's listing. The leases (in-process cluster state) and the ownership share one fake clock, so
nothing sleeps; the store is a real SQLite database.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Iterable
from pathlib import Path
from typing import Any

import pytest
from support import FakeClock

from server.bus import Cluster, InProcessClusterState
from server.cluster.ownership import Ownership
from server.cluster.restore import Resumable
from server.rules.time_control import Fischer
from server.store import Store
from server.store.migrate import upgrade_to_head

TTL_MS = 9_000
PERIOD_S = TTL_MS / 3000  # how long a lease must be seen free before a takeover
START_FEN = "rbsgk/4p/5/P4/KGSBR[-] w 0 1"


class Room:
    pass


class Hub:
    """The hub as ownership sees it: which rooms run here."""

    def __init__(self) -> None:
        self.rooms: dict[str, Room] = {}

    def room(self, game_id: str) -> Room | None:
        return self.rooms.get(game_id)


class Node:
    """The node as :class:`Ownership` needs it (``server.cluster.ownership.Owner``)."""

    def __init__(self, node_id: str) -> None:
        self.node_id = node_id
        self.hub = Hub()
        self.remember = None
        self.restored: list[Resumable] = []
        self.published: list[tuple[str, bytes]] = []

    @property
    def degraded(self) -> bool:
        return False

    def is_live(self, node_id: str) -> bool:
        return True

    def healthy_for(self, seconds: float) -> bool:
        return True

    def clock(self) -> int:
        return 0

    def restore(self, game: Resumable, *, announce: bool = True) -> None:
        self.restored.append(game)
        self.hub.rooms[game.game_id] = Room()

    def publish(self, channel: str, data: bytes) -> None:
        self.published.append((channel, data))

    def rejoin(self, game_id: str, player_ids: Iterable[Any]) -> None:
        pass

    def mark_presence(self, reannounce: bool = False) -> None:
        pass

    def spawn(self, coroutine: Awaitable[Any], name: str = "cluster") -> None:
        raise AssertionError("the tests sweep with wait=True")


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite3'}"
    await upgrade_to_head(url)
    async with Store.from_url(url) as store:
        yield store


async def unfinished_game(
    store: Store, first_player_id: int | None = None, second_player_id: int | None = None
) -> str:
    game_id = await store.create_game(
        variant="minishogi",
        start_fen=START_FEN,
        time_control=Fischer(180_000, 2_000),
        first_name="alice",
        second_name="bob",
        first_player_id=first_player_id,
        second_player_id=second_player_id,
        rated=False,
    )
    await store.start_game(game_id)
    return game_id


async def test_a_free_lease_is_taken_over_only_after_a_renewal_period(store: Store) -> None:
    clock = FakeClock()
    leases = Cluster.in_process(InProcessClusterState(clock=clock)).leases
    node = Node("node-b")
    ownership = Ownership(node, leases, store, TTL_MS, clock=clock)
    game_id = await unfinished_game(store)
    assert await leases.acquire(game_id, "node-a", TTL_MS)  # its owner, about to die

    clock.advance(TTL_MS / 1000 - 0.001)
    assert await leases.owner(game_id) == "node-a"  # (callers try only a free lease)
    clock.advance(0.001)  # the owner died: its lease lapses
    assert await leases.owner(game_id) is None
    assert await ownership.take_over(game_id) == "pending"  # free, seen for the first time
    clock.advance(PERIOD_S - 0.001)
    assert await ownership.take_over(game_id) == "pending"  # not quite a period yet
    assert node.restored == []
    clock.advance(0.001)
    assert await ownership.take_over(game_id) == "taken"
    assert [game.game_id for game in node.restored] == [game_id]
    assert await leases.owner(game_id) == "node-b"
    assert ownership.owned == {game_id} and ownership.taken_over == 1


async def test_an_old_sighting_of_a_free_lease_starts_the_wait_again(store: Store) -> None:
    clock = FakeClock()
    leases = Cluster.in_process(InProcessClusterState(clock=clock)).leases
    node = Node("node-b")
    ownership = Ownership(node, leases, store, TTL_MS, clock=clock)
    game_id = await unfinished_game(store)

    assert await ownership.take_over(game_id) == "pending"  # first seen free
    clock.advance(4 * TTL_MS / 1000 + 1)  # nobody looked for a long while
    assert await ownership.take_over(game_id) == "pending"  # a fresh sighting
    clock.advance(PERIOD_S)
    assert await ownership.take_over(game_id) == "taken"


async def test_renewal_renews_retakes_fences_and_releases_in_one_batch(store: Store) -> None:
    """``renew_all``: a lease held is renewed, a lapsed one taken again, one another node
    took is fenced here, an evicted room's lease released."""
    clock = FakeClock()
    leases = Cluster.in_process(InProcessClusterState(clock=clock)).leases
    node = Node("node-b")
    ownership = Ownership(node, leases, store, TTL_MS, clock=clock)
    held, lapsed, taken, evicted = "held", "lapsed", "taken", "evicted"
    for game_id in (held, lapsed, taken, evicted):
        assert await ownership.claim_new(game_id)
        node.hub.rooms[game_id] = Room()
    del node.hub.rooms[evicted]
    assert await leases.release(lapsed, "node-b")  # as if Redis had restarted
    assert await leases.release(taken, "node-b")
    assert await leases.acquire(taken, "node-c", 3 * TTL_MS)  # taken over while we were late
    clock.advance(TTL_MS / 1000 - 0.001)

    await ownership.renew_all()
    assert ownership.owned == {held, lapsed}
    assert ownership.lost == {taken} and not ownership.runs(taken)
    clock.advance(TTL_MS / 1000 - 0.001)  # the first leases would have lapsed by now
    assert await leases.owners([held, lapsed, taken, evicted]) == [
        "node-b",
        "node-b",
        "node-c",
        None,
    ]
    await ownership.release_all()
    assert ownership.owned == set()
    assert await leases.owners([held, lapsed, taken]) == [None, None, "node-c"]


async def test_a_players_unfinished_game_comes_from_a_fresh_sweep_listing(store: Store) -> None:
    """While the sweep's listing is fresh, a login asks it rather than the store (a game
    created since is not in it); once it is older than ``listing_fresh_s``, the store."""
    clock = FakeClock()
    leases = Cluster.in_process(InProcessClusterState(clock=clock)).leases
    node = Node("node-b")
    ownership = Ownership(node, leases, store, TTL_MS, clock=clock, listing_fresh_s=1.0)
    alice = (await store.create_player("alice", "x" * 20)).id
    bob = (await store.create_player("bob", "x" * 20)).id
    first = await unfinished_game(store, alice, None)
    assert await leases.acquire(first, "node-a", TTL_MS)
    assert await ownership.unfinished_game_of(f"u{alice}") == first  # no listing yet: store

    assert await ownership.sweep() == 0  # the listing: node-a owns the game
    later = await unfinished_game(store, None, bob)
    assert await leases.acquire(later, "node-a", TTL_MS)
    assert await ownership.unfinished_game_of(f"u{alice}") == first
    assert await ownership.unfinished_game_of(f"u{bob}") is None  # not listed yet
    assert await ownership.unfinished_game_of("gguest") is None
    clock.advance(1.0)
    assert await ownership.unfinished_game_of(f"u{bob}") == later  # the store again

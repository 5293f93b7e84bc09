"""Cluster state in this process's memory, with the semantics of the Redis implementation
(:mod:`server.bus.state`): for the embedded single-node run and for tests.
"""

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from server.bus.state import (
    DEFAULT_CLAIM_TTL_MS,
    GameLeases,
    GameRole,
    NodeNotLiveError,
    Presence,
    PresenceChanges,
    SeekRegistry,
    merge_roles,
)

__all__ = ["InProcessClusterState", "memory_state"]


@dataclass
class _MemoryNode:
    expires_at: float
    online: set[str] = field(default_factory=set)
    games: dict[str, dict[str, GameRole]] = field(default_factory=dict)  # player -> game -> role
    seeks: set[str] = field(default_factory=set)


class InProcessClusterState:
    """The in-memory state behind :meth:`Cluster.in_process`.

    :param clock: seconds from a monotonic source; ``time.monotonic`` unless a test injects one.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.leases: dict[str, tuple[str, float]] = {}  # game -> (node, expires_at)
        self.nodes: dict[str, _MemoryNode] = {}
        self.seeks: dict[str, tuple[str, str]] = {}  # seek id -> (payload, node)
        self.claims: dict[str, tuple[str, float]] = {}  # seek id -> (claimer, expires_at)

    def now(self) -> float:
        return self._clock()

    def expiry(self, ttl_ms: int) -> float:
        return self._clock() + ttl_ms / 1000

    def live_node(self, node_id: str) -> _MemoryNode | None:
        """The node's state if it is live; a lapsed node is dropped on the way."""
        node = self.nodes.get(node_id)
        if node is not None and node.expires_at <= self.now():
            self.drop_node(node_id)
            return None
        return node

    def live_nodes(self) -> dict[str, _MemoryNode]:
        for node_id in list(self.nodes):
            self.live_node(node_id)
        return self.nodes

    def drop_node(self, node_id: str) -> None:
        node = self.nodes.pop(node_id, None)
        if node is not None:
            for seek_id in node.seeks:
                self.seeks.pop(seek_id, None)

    def heartbeat(self, node_id: str, ttl_ms: int) -> bool:
        node = self.live_node(node_id)
        if node is None:
            self.nodes[node_id] = _MemoryNode(self.expiry(ttl_ms))
            return False
        node.expires_at = self.expiry(ttl_ms)
        return True

    def claim_holder(self, seek_id: str) -> str | None:
        claim = self.claims.get(seek_id)
        if claim is None:
            return None
        if claim[1] <= self.now():
            del self.claims[seek_id]
            return None
        return claim[0]

    def unlist_seek(self, seek_id: str) -> bool:
        """Remove a listed seek of a live node; False if there is none."""
        entry = self.seeks.get(seek_id)
        if entry is None:
            return False
        node = self.live_node(entry[1])
        if node is None:
            return False
        del self.seeks[seek_id]
        node.seeks.discard(seek_id)
        return True


class _MemoryLeases(GameLeases):
    def __init__(self, state: InProcessClusterState) -> None:
        self._state = state

    def _holder(self, game_id: str) -> str | None:
        lease = self._state.leases.get(game_id)
        if lease is None:
            return None
        if lease[1] <= self._state.now():
            del self._state.leases[game_id]
            return None
        return lease[0]

    async def _acquire(self, game_id: str, node_id: str, ttl_ms: int) -> bool:
        holder = self._holder(game_id)
        if holder is not None and holder != node_id:
            return False
        self._state.leases[game_id] = (node_id, self._state.expiry(ttl_ms))
        return True

    async def _renew(self, game_id: str, node_id: str, ttl_ms: int) -> bool:
        if self._holder(game_id) != node_id:
            return False
        self._state.leases[game_id] = (node_id, self._state.expiry(ttl_ms))
        return True

    async def _release(self, game_id: str, node_id: str) -> bool:
        if self._holder(game_id) != node_id:
            return False
        del self._state.leases[game_id]
        return True

    async def _owner(self, game_id: str) -> str | None:
        return self._holder(game_id)

    async def _hold_many(self, game_ids: Sequence[str], node_id: str, ttl_ms: int) -> set[str]:
        lost: set[str] = set()
        for game_id in game_ids:
            holder = self._holder(game_id)
            if holder is None or holder == node_id:
                self._state.leases[game_id] = (node_id, self._state.expiry(ttl_ms))
            else:
                lost.add(game_id)
        return lost

    async def _release_many(self, game_ids: Sequence[str], node_id: str) -> int:
        return sum([await self._release(game_id, node_id) for game_id in game_ids])

    async def _owners(self, game_ids: Sequence[str]) -> list[str | None]:
        return [self._holder(game_id) for game_id in game_ids]


class _MemorySeeks(SeekRegistry):
    def __init__(self, state: InProcessClusterState) -> None:
        self._state = state

    async def _add(self, seek_id: str, payload: str, node_id: str) -> bool:
        state = self._state
        node = state.live_node(node_id)
        if node is None:
            raise NodeNotLiveError(f"node {node_id!r} has no live heartbeat: cannot list a seek")
        if state.claim_holder(seek_id) is not None or await self.get(seek_id) is not None:
            return False
        state.seeks[seek_id] = (payload, node_id)
        node.seeks.add(seek_id)
        return True

    async def _remove(self, seek_id: str) -> bool:
        return self._state.unlist_seek(seek_id)

    async def _get(self, seek_id: str) -> str | None:
        entry = self._state.seeks.get(seek_id)
        if entry is None or self._state.live_node(entry[1]) is None:
            return None
        return entry[0]

    async def all(self) -> dict[str, str]:
        self._state.live_nodes()  # drops lapsed nodes and their seeks
        return {seek_id: payload for seek_id, (payload, _) in self._state.seeks.items()}

    async def _claim(self, seek_id: str, claimer: str, ttl_ms: int = DEFAULT_CLAIM_TTL_MS) -> bool:
        state = self._state
        if state.claim_holder(seek_id) is not None or not state.unlist_seek(seek_id):
            return False
        state.claims[seek_id] = (claimer, state.expiry(ttl_ms))
        return True

    async def _claimant(self, seek_id: str) -> str | None:
        return self._state.claim_holder(seek_id)


class _MemoryPresence(Presence):
    def __init__(self, state: InProcessClusterState) -> None:
        self._state = state

    async def _heartbeat(self, node_id: str, ttl_ms: int) -> bool:
        return self._state.heartbeat(node_id, ttl_ms)

    async def _announce(self, node_id: str, ttl_ms: int, changes: PresenceChanges) -> bool:
        was_live = self._state.heartbeat(node_id, ttl_ms)
        for player_id in changes.online:
            await self._set_online(player_id, node_id, ttl_ms)
        for player_id in changes.offline:
            await self._set_offline(player_id, node_id)
        for player_id, game_id, role in changes.games:
            await self._add_game(player_id, node_id, game_id, GameRole(role))
        for player_id, game_id in changes.gone:
            await self._remove_game(player_id, node_id, game_id)
        return was_live

    async def _node_down(self, node_id: str) -> None:
        self._state.drop_node(node_id)

    async def live_nodes(self) -> set[str]:
        return set(self._state.live_nodes())

    async def _set_online(self, player_id: str, node_id: str, ttl_ms: int) -> bool:
        was_live = self._state.heartbeat(node_id, ttl_ms)
        self._state.nodes[node_id].online.add(player_id)
        return was_live

    async def _set_offline(self, player_id: str, node_id: str) -> None:
        node = self._state.live_node(node_id)
        if node is not None:
            node.online.discard(player_id)
            node.games.pop(player_id, None)

    async def online_players(self) -> set[str]:
        players: set[str] = set()
        for node in self._state.live_nodes().values():
            players |= node.online
        return players

    async def _is_online(self, player_id: str) -> bool:
        return any(player_id in node.online for node in self._state.live_nodes().values())

    async def _add_game(self, player_id: str, node_id: str, game_id: str, role: GameRole) -> None:
        node = self._state.live_node(node_id)
        if node is None:
            raise NodeNotLiveError(f"node {node_id!r} has no live heartbeat: cannot add a game")
        node.games.setdefault(player_id, {})[game_id] = role

    async def _remove_game(self, player_id: str, node_id: str, game_id: str) -> None:
        node = self._state.live_node(node_id)
        if node is None:
            return
        games = node.games.get(player_id, {})
        games.pop(game_id, None)
        if not games:
            node.games.pop(player_id, None)

    async def _games_of(self, player_id: str) -> dict[str, GameRole]:
        nodes = self._state.live_nodes().values()
        return merge_roles(
            (game_id, role)
            for node in nodes
            for game_id, role in node.games.get(player_id, {}).items()
        )


def memory_state(state: InProcessClusterState) -> tuple[GameLeases, SeekRegistry, Presence]:
    """The three primitives over ``state``."""
    return _MemoryLeases(state), _MemorySeeks(state), _MemoryPresence(state)

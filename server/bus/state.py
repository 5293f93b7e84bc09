"""State shared by the nodes of a cluster: the interfaces of game leases, the seek registry and
presence, and the argument checks both implementations make.

Each primitive is an abstract class with two implementations: one over Redis (atomic Lua
scripts, so concurrent nodes can never both win; :mod:`server.bus.state_redis`) and one in
process memory with the same semantics, for the embedded single-node run and for tests
(:mod:`server.bus.state_memory`). :class:`server.bus.cluster.Cluster` holds one of each.

Node liveness ties the parts together. A node calls :meth:`Presence.heartbeat` more often
than its ``ttl_ms``; when a node's heartbeat lapses, everything it announced (online
players, their games, its seeks) vanishes for every reader, and is deleted for good as soon
as any node looks or the lapsed node heartbeats again. ``heartbeat`` returns ``False`` when
the node was not live before the call, telling a node that survived a lapse to re-announce
its players and seeks.

Game leases stand alone: a lease is owned by one node until it lapses ``ttl_ms`` after the
last acquire or renew, and then any node may take it over.
"""

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from server.bus.base import BusError

__all__ = [
    "DEFAULT_CLAIM_TTL_MS",
    "GameLeases",
    "GameRole",
    "NodeNotLiveError",
    "Presence",
    "PresenceChanges",
    "SeekRegistry",
    "merge_roles",
]

DEFAULT_CLAIM_TTL_MS = 24 * 3600 * 1000
"""How long a seek id stays claimed (and cannot be listed again) after :meth:`SeekRegistry.claim`."""

_MAX_ID_LENGTH = 256
_NODE_ID_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


class NodeNotLiveError(BusError):
    """The node has no live heartbeat, so what it tried to announce would be invisible."""


class GameRole(StrEnum):
    """How a player takes part in a game."""

    PLAYING = "playing"
    WATCHING = "watching"


def _check_id(kind: str, value: str) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{kind} must be a str, not {type(value).__name__}")
    if not value or len(value) > _MAX_ID_LENGTH:
        raise ValueError(f"{kind} must be 1-{_MAX_ID_LENGTH} characters, got {value!r}")


def _check_node(node_id: str) -> None:
    _check_id("node_id", node_id)
    if len(node_id) > 64 or not set(node_id) <= _NODE_ID_CHARS:
        raise ValueError(f"node_id must be 1-64 characters from A-Z a-z 0-9 _ . -, got {node_id!r}")


def _check_ttl(ttl_ms: int) -> None:
    if not isinstance(ttl_ms, int) or isinstance(ttl_ms, bool):
        raise TypeError(f"ttl_ms must be an int, not {type(ttl_ms).__name__}")
    if ttl_ms < 1:
        raise ValueError(f"ttl_ms must be at least 1, got {ttl_ms}")


def _check_payload(payload: str) -> None:
    if not isinstance(payload, str):
        raise TypeError(f"payload must be a JSON str, not {type(payload).__name__}")
    try:
        json.loads(payload)
    except ValueError as exc:
        raise ValueError(f"payload must be JSON text: {exc}") from None


class GameLeases(ABC):
    """Which node runs a game: a lease per game, held by one node at a time."""

    async def acquire(self, game_id: str, node_id: str, ttl_ms: int) -> bool:
        """Take the lease of ``game_id`` for ``ttl_ms`` ms; True if ``node_id`` now holds it.

        Acquiring a lease the node already holds succeeds and extends it.
        """
        _check_id("game_id", game_id)
        _check_node(node_id)
        _check_ttl(ttl_ms)
        return await self._acquire(game_id, node_id, ttl_ms)

    @abstractmethod
    async def _acquire(self, game_id: str, node_id: str, ttl_ms: int) -> bool:
        """:meth:`acquire`, its arguments checked."""

    async def renew(self, game_id: str, node_id: str, ttl_ms: int) -> bool:
        """Extend the lease to ``ttl_ms`` ms from now, only if ``node_id`` still holds it."""
        _check_id("game_id", game_id)
        _check_node(node_id)
        _check_ttl(ttl_ms)
        return await self._renew(game_id, node_id, ttl_ms)

    @abstractmethod
    async def _renew(self, game_id: str, node_id: str, ttl_ms: int) -> bool:
        """:meth:`renew`, its arguments checked."""

    async def release(self, game_id: str, node_id: str) -> bool:
        """Give up the lease, only if ``node_id`` holds it; True if it did."""
        _check_id("game_id", game_id)
        _check_node(node_id)
        return await self._release(game_id, node_id)

    @abstractmethod
    async def _release(self, game_id: str, node_id: str) -> bool:
        """:meth:`release`, its arguments checked."""

    async def owner(self, game_id: str) -> str | None:
        """The node holding the lease of ``game_id``, or None."""
        _check_id("game_id", game_id)
        return await self._owner(game_id)

    @abstractmethod
    async def _owner(self, game_id: str) -> str | None:
        """:meth:`owner`, its arguments checked."""

    # Batches: one round trip per chunk of games however many a node holds (a node of a big
    # cluster renews hundreds of leases every ttl / 3; one call per lease took seconds).

    async def hold_many(self, game_ids: Sequence[str], node_id: str, ttl_ms: int) -> set[str]:
        """Keep the leases of ``game_ids`` for ``node_id``, ``ttl_ms`` ms from now: each lease
        the node holds is renewed, each free one (it lapsed: Redis restarted, or a renewal came
        late) is taken again, as :meth:`acquire` would. Returns the games whose lease another
        node holds, left untouched.
        """
        for game_id in game_ids:
            _check_id("game_id", game_id)
        _check_node(node_id)
        _check_ttl(ttl_ms)
        return await self._hold_many(game_ids, node_id, ttl_ms) if game_ids else set()

    @abstractmethod
    async def _hold_many(self, game_ids: Sequence[str], node_id: str, ttl_ms: int) -> set[str]:
        """:meth:`hold_many`, its arguments checked (at least one game)."""

    async def release_many(self, game_ids: Sequence[str], node_id: str) -> int:
        """:meth:`release` each of ``game_ids``; how many leases ``node_id`` gave up."""
        for game_id in game_ids:
            _check_id("game_id", game_id)
        _check_node(node_id)
        return await self._release_many(game_ids, node_id) if game_ids else 0

    @abstractmethod
    async def _release_many(self, game_ids: Sequence[str], node_id: str) -> int:
        """:meth:`release_many`, its arguments checked (at least one game)."""

    async def owners(self, game_ids: Sequence[str]) -> list[str | None]:
        """:meth:`owner` of each of ``game_ids``, in their order."""
        for game_id in game_ids:
            _check_id("game_id", game_id)
        return await self._owners(game_ids) if game_ids else []

    @abstractmethod
    async def _owners(self, game_ids: Sequence[str]) -> list[str | None]:
        """:meth:`owners`, its arguments checked (at least one game)."""


class SeekRegistry(ABC):
    """The list of open seeks shared by all nodes: seek id -> JSON payload.

    A seek belongs to the node of its seeker and vanishes when that node's heartbeat lapses.
    Taking a seek (accepting it) and withdrawing it race safely: :meth:`claim` and
    :meth:`remove` are atomic and succeed only while the seek is listed, so exactly one
    of any number of concurrent calls wins.
    """

    async def add(self, seek_id: str, payload: str, node_id: str) -> bool:
        """List a seek; False if ``seek_id`` is already listed or was claimed.

        :raises NodeNotLiveError: if ``node_id`` has no live heartbeat.
        :raises ValueError: if ``payload`` is not JSON text.
        """
        _check_id("seek_id", seek_id)
        _check_payload(payload)
        _check_node(node_id)
        return await self._add(seek_id, payload, node_id)

    @abstractmethod
    async def _add(self, seek_id: str, payload: str, node_id: str) -> bool:
        """:meth:`add`, its arguments checked."""

    async def remove(self, seek_id: str) -> bool:
        """Withdraw a seek; True if it was listed (so no claim can take it any more)."""
        _check_id("seek_id", seek_id)
        return await self._remove(seek_id)

    @abstractmethod
    async def _remove(self, seek_id: str) -> bool:
        """:meth:`remove`, its arguments checked."""

    async def get(self, seek_id: str) -> str | None:
        """The payload of a listed seek, or None."""
        _check_id("seek_id", seek_id)
        return await self._get(seek_id)

    @abstractmethod
    async def _get(self, seek_id: str) -> str | None:
        """:meth:`get`, its arguments checked."""

    @abstractmethod
    async def all(self) -> dict[str, str]:
        """Every listed seek of a live node: seek id -> payload."""

    async def claim(self, seek_id: str, claimer: str, ttl_ms: int = DEFAULT_CLAIM_TTL_MS) -> bool:
        """Atomically take a listed seek: unlist it and record ``claimer`` for ``ttl_ms`` ms.

        True for exactly one claimer; False if the seek is not listed (already claimed,
        withdrawn, or its node lapsed). A claimed id cannot be listed again while the
        claim lasts.
        """
        _check_id("seek_id", seek_id)
        _check_id("claimer", claimer)
        _check_ttl(ttl_ms)
        return await self._claim(seek_id, claimer, ttl_ms)

    @abstractmethod
    async def _claim(self, seek_id: str, claimer: str, ttl_ms: int = DEFAULT_CLAIM_TTL_MS) -> bool:
        """:meth:`claim`, its arguments checked."""

    async def claimant(self, seek_id: str) -> str | None:
        """Who claimed ``seek_id`` (within the claim's ttl), or None."""
        _check_id("seek_id", seek_id)
        return await self._claimant(seek_id)

    @abstractmethod
    async def _claimant(self, seek_id: str) -> str | None:
        """:meth:`claimant`, its arguments checked."""


@dataclass(frozen=True)
class PresenceChanges:
    """What :meth:`Presence.announce` changes of a node's announcements, in this order."""

    online: Sequence[str] = ()
    """Players now online through the node (:meth:`Presence.set_online`)."""
    offline: Sequence[str] = ()
    """Players gone from the node, their games there too (:meth:`Presence.set_offline`)."""
    games: Sequence[tuple[str, str, GameRole]] = ()
    """(player, game, role) now announced through the node (:meth:`Presence.add_game`)."""
    gone: Sequence[tuple[str, str]] = ()
    """(player, game) no longer announced through the node (:meth:`Presence.remove_game`)."""

    def __len__(self) -> int:
        return len(self.online) + len(self.offline) + len(self.games) + len(self.gone)


class Presence(ABC):
    """Which nodes are live, which players are online, which games they play or watch."""

    async def heartbeat(self, node_id: str, ttl_ms: int) -> bool:
        """Mark ``node_id`` live for ``ttl_ms`` ms; call it every ``ttl_ms / 3`` or so.

        Returns True if the node was live before. False means it was not (first heartbeat,
        or it lapsed): whatever it announced before is gone and must be announced again.
        """
        _check_node(node_id)
        _check_ttl(ttl_ms)
        return await self._heartbeat(node_id, ttl_ms)

    @abstractmethod
    async def _heartbeat(self, node_id: str, ttl_ms: int) -> bool:
        """:meth:`heartbeat`, its arguments checked."""

    async def announce(self, node_id: str, ttl_ms: int, changes: PresenceChanges) -> bool:
        """:meth:`heartbeat`, then every change of ``changes`` as the single calls would make
        it, in one round trip (or one per 500 changes): a node announces thousands of players
        after a reconnect storm or a lapse, and a call each took seconds.

        Returns what :meth:`heartbeat` returns: when False, the node's earlier announcements
        were gone, and only these changes are announced.
        """
        _check_node(node_id)
        _check_ttl(ttl_ms)
        for player_id in (*changes.online, *changes.offline):
            _check_id("player_id", player_id)
        for player_id, game_id, role in changes.games:
            _check_id("player_id", player_id)
            _check_id("game_id", game_id)
            GameRole(role)
        for player_id, game_id in changes.gone:
            _check_id("player_id", player_id)
            _check_id("game_id", game_id)
        return await self._announce(node_id, ttl_ms, changes)

    @abstractmethod
    async def _announce(self, node_id: str, ttl_ms: int, changes: PresenceChanges) -> bool:
        """:meth:`announce`, its arguments checked."""

    async def node_down(self, node_id: str) -> None:
        """Remove a node and all it announced at once (graceful shutdown)."""
        _check_node(node_id)
        return await self._node_down(node_id)

    @abstractmethod
    async def _node_down(self, node_id: str) -> None:
        """:meth:`node_down`, its arguments checked."""

    @abstractmethod
    async def live_nodes(self) -> set[str]:
        """The nodes whose heartbeat has not lapsed."""

    async def set_online(self, player_id: str, node_id: str, ttl_ms: int) -> bool:
        """Mark ``player_id`` online through ``node_id``; also a heartbeat of the node.

        Returns what :meth:`heartbeat` returns.
        """
        _check_id("player_id", player_id)
        _check_node(node_id)
        _check_ttl(ttl_ms)
        return await self._set_online(player_id, node_id, ttl_ms)

    @abstractmethod
    async def _set_online(self, player_id: str, node_id: str, ttl_ms: int) -> bool:
        """:meth:`set_online`, its arguments checked."""

    async def set_offline(self, player_id: str, node_id: str) -> None:
        """The player left ``node_id``; its games announced through that node go too."""
        _check_id("player_id", player_id)
        _check_node(node_id)
        return await self._set_offline(player_id, node_id)

    @abstractmethod
    async def _set_offline(self, player_id: str, node_id: str) -> None:
        """:meth:`set_offline`, its arguments checked."""

    @abstractmethod
    async def online_players(self) -> set[str]:
        """Players online through at least one live node."""

    async def is_online(self, player_id: str) -> bool:
        """Whether ``player_id`` is online through at least one live node."""
        _check_id("player_id", player_id)
        return await self._is_online(player_id)

    @abstractmethod
    async def _is_online(self, player_id: str) -> bool:
        """:meth:`is_online`, its arguments checked."""

    async def add_game(self, player_id: str, node_id: str, game_id: str, role: GameRole) -> None:
        """Record that the player plays or watches ``game_id`` through ``node_id``.

        :raises NodeNotLiveError: if ``node_id`` has no live heartbeat.
        """
        _check_id("player_id", player_id)
        _check_node(node_id)
        _check_id("game_id", game_id)
        role = GameRole(role)
        return await self._add_game(player_id, node_id, game_id, role)

    @abstractmethod
    async def _add_game(self, player_id: str, node_id: str, game_id: str, role: GameRole) -> None:
        """:meth:`add_game`, its arguments checked."""

    async def remove_game(self, player_id: str, node_id: str, game_id: str) -> None:
        """The player no longer plays or watches ``game_id`` through ``node_id``."""
        _check_id("player_id", player_id)
        _check_node(node_id)
        _check_id("game_id", game_id)
        return await self._remove_game(player_id, node_id, game_id)

    @abstractmethod
    async def _remove_game(self, player_id: str, node_id: str, game_id: str) -> None:
        """:meth:`remove_game`, its arguments checked."""

    async def games_of(self, player_id: str) -> dict[str, GameRole]:
        """Games the player plays or watches through live nodes; playing beats watching."""
        _check_id("player_id", player_id)
        return await self._games_of(player_id)

    @abstractmethod
    async def _games_of(self, player_id: str) -> dict[str, GameRole]:
        """:meth:`games_of`, its arguments checked."""


def merge_roles(pairs: Iterable[tuple[str, GameRole]]) -> dict[str, GameRole]:
    games: dict[str, GameRole] = {}
    for game_id, role in pairs:
        if games.get(game_id) is not GameRole.PLAYING:
            games[game_id] = role
    return games

"""State shared by the nodes of a cluster: game leases, the seek registry, presence.

Each primitive is an abstract class with two implementations: one over Redis (atomic Lua
scripts, so concurrent nodes can never both win) and one in process memory with the same
semantics, for the embedded single-node run and for tests.

Node liveness ties the parts together. A node calls :meth:`Presence.heartbeat` more often
than its ``ttl_ms``; when a node's heartbeat lapses, everything it announced (online
players, their games, its seeks) vanishes for every reader, and is deleted for good as soon
as any node looks or the lapsed node heartbeats again. ``heartbeat`` returns ``False`` when
the node was not live before the call, telling a node that survived a lapse to re-announce
its players and seeks.

Game leases stand alone: a lease is owned by one node until it lapses ``ttl_ms`` after the
last acquire or renew, and then any node may take it over.

The Redis implementation builds key names inside its scripts from the key prefix; that is
fine for one Redis server, not for Redis Cluster.
"""

import json
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from server.bus.base import BusError, BusUnavailableError
from server.bus.redis_bus import redact_url

__all__ = [
    "DEFAULT_CLAIM_TTL_MS",
    "Cluster",
    "GameLeases",
    "GameRole",
    "InProcessClusterState",
    "NodeNotLiveError",
    "Presence",
    "SeekRegistry",
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


# --------------------------------------------------------------------------------------------
# Interfaces


class GameLeases(ABC):
    """Which node runs a game: a lease per game, held by one node at a time."""

    @abstractmethod
    async def acquire(self, game_id: str, node_id: str, ttl_ms: int) -> bool:
        """Take the lease of ``game_id`` for ``ttl_ms`` ms; True if ``node_id`` now holds it.

        Acquiring a lease the node already holds succeeds and extends it.
        """

    @abstractmethod
    async def renew(self, game_id: str, node_id: str, ttl_ms: int) -> bool:
        """Extend the lease to ``ttl_ms`` ms from now, only if ``node_id`` still holds it."""

    @abstractmethod
    async def release(self, game_id: str, node_id: str) -> bool:
        """Give up the lease, only if ``node_id`` holds it; True if it did."""

    @abstractmethod
    async def owner(self, game_id: str) -> str | None:
        """The node holding the lease of ``game_id``, or None."""


class SeekRegistry(ABC):
    """The list of open seeks shared by all nodes: seek id -> JSON payload.

    A seek belongs to the node of its seeker and vanishes when that node's heartbeat lapses.
    Taking a seek (accepting it) and withdrawing it race safely: :meth:`claim` and
    :meth:`remove` are atomic and succeed only while the seek is listed, so exactly one
    of any number of concurrent calls wins.
    """

    @abstractmethod
    async def add(self, seek_id: str, payload: str, node_id: str) -> bool:
        """List a seek; False if ``seek_id`` is already listed or was claimed.

        :raises NodeNotLiveError: if ``node_id`` has no live heartbeat.
        :raises ValueError: if ``payload`` is not JSON text.
        """

    @abstractmethod
    async def remove(self, seek_id: str) -> bool:
        """Withdraw a seek; True if it was listed (so no claim can take it any more)."""

    @abstractmethod
    async def get(self, seek_id: str) -> str | None:
        """The payload of a listed seek, or None."""

    @abstractmethod
    async def all(self) -> dict[str, str]:
        """Every listed seek of a live node: seek id -> payload."""

    @abstractmethod
    async def claim(self, seek_id: str, claimer: str, ttl_ms: int = DEFAULT_CLAIM_TTL_MS) -> bool:
        """Atomically take a listed seek: unlist it and record ``claimer`` for ``ttl_ms`` ms.

        True for exactly one claimer; False if the seek is not listed (already claimed,
        withdrawn, or its node lapsed). A claimed id cannot be listed again while the
        claim lasts.
        """

    @abstractmethod
    async def claimant(self, seek_id: str) -> str | None:
        """Who claimed ``seek_id`` (within the claim's ttl), or None."""


class Presence(ABC):
    """Which nodes are live, which players are online, which games they play or watch."""

    @abstractmethod
    async def heartbeat(self, node_id: str, ttl_ms: int) -> bool:
        """Mark ``node_id`` live for ``ttl_ms`` ms; call it every ``ttl_ms / 3`` or so.

        Returns True if the node was live before. False means it was not (first heartbeat,
        or it lapsed): whatever it announced before is gone and must be announced again.
        """

    @abstractmethod
    async def node_down(self, node_id: str) -> None:
        """Remove a node and all it announced at once (graceful shutdown)."""

    @abstractmethod
    async def live_nodes(self) -> set[str]:
        """The nodes whose heartbeat has not lapsed."""

    @abstractmethod
    async def set_online(self, player_id: str, node_id: str, ttl_ms: int) -> bool:
        """Mark ``player_id`` online through ``node_id``; also a heartbeat of the node.

        Returns what :meth:`heartbeat` returns.
        """

    @abstractmethod
    async def set_offline(self, player_id: str, node_id: str) -> None:
        """The player left ``node_id``; its games announced through that node go too."""

    @abstractmethod
    async def online_players(self) -> set[str]:
        """Players online through at least one live node."""

    @abstractmethod
    async def is_online(self, player_id: str) -> bool:
        """Whether ``player_id`` is online through at least one live node."""

    @abstractmethod
    async def add_game(self, player_id: str, node_id: str, game_id: str, role: GameRole) -> None:
        """Record that the player plays or watches ``game_id`` through ``node_id``.

        :raises NodeNotLiveError: if ``node_id`` has no live heartbeat.
        """

    @abstractmethod
    async def remove_game(self, player_id: str, node_id: str, game_id: str) -> None:
        """The player no longer plays or watches ``game_id`` through ``node_id``."""

    @abstractmethod
    async def games_of(self, player_id: str) -> dict[str, GameRole]:
        """Games the player plays or watches through live nodes; playing beats watching."""


class Cluster:
    """The three shared-state primitives of one backend, closed together."""

    def __init__(
        self,
        leases: GameLeases,
        seeks: SeekRegistry,
        presence: Presence,
        closer: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.leases = leases
        self.seeks = seeks
        self.presence = presence
        self._closer = closer

    @classmethod
    def in_process(cls, state: "InProcessClusterState | None" = None) -> "Cluster":
        """Cluster state in this process's memory; nodes sharing ``state`` see each other."""
        shared = state if state is not None else InProcessClusterState()
        return cls(_MemoryLeases(shared), _MemorySeeks(shared), _MemoryPresence(shared))

    @classmethod
    def redis(cls, url: str, *, prefix: str = "", timeout_s: float = 5.0) -> "Cluster":
        """Cluster state in the Redis server at ``url``, keys prefixed by ``prefix``."""
        client = Redis.from_url(
            url,
            decode_responses=True,
            socket_connect_timeout=timeout_s,
            socket_timeout=timeout_s,
            retry=Retry(NoBackoff(), 1),
        )
        scripts = _RedisScripts(client, prefix, redact_url(url))
        return cls(
            _RedisLeases(scripts), _RedisSeeks(scripts), _RedisPresence(scripts), client.aclose
        )

    async def close(self) -> None:
        """Release the backend's connections; the state itself stays for the other nodes."""
        if self._closer is not None:
            closer, self._closer = self._closer, None
            await closer()


# --------------------------------------------------------------------------------------------
# Redis implementation

# Shared Lua helpers. P is the key prefix (ARGV[1]). A node's announcements live in:
#   P..'node:'..n      string with PX expiry: the node is live while it exists
#   P..'nodes'         set of node ids that may have state (for garbage collection)
#   P..'online:'..n    set of players online through n
#   P..'gamers:'..n    set of players with a games hash on n
#   P..'games:'..n..':'..player   hash game id -> role
#   P..'seeks_of:'..n  set of seek ids listed by n
# Seeks: P..'seeks' (id -> payload), P..'seek_nodes' (id -> node), P..'seek_claim:'..id.
_LUA_NODES = """
local P = ARGV[1]
local function unlist_seek(id, n)
  redis.call('HDEL', P .. 'seeks', id)
  redis.call('HDEL', P .. 'seek_nodes', id)
  redis.call('SREM', P .. 'seeks_of:' .. n, id)
end
local function drop_node(n)
  redis.call('DEL', P .. 'node:' .. n, P .. 'online:' .. n)
  for _, player in ipairs(redis.call('SMEMBERS', P .. 'gamers:' .. n)) do
    redis.call('DEL', P .. 'games:' .. n .. ':' .. player)
  end
  for _, id in ipairs(redis.call('SMEMBERS', P .. 'seeks_of:' .. n)) do
    redis.call('HDEL', P .. 'seeks', id)
    redis.call('HDEL', P .. 'seek_nodes', id)
  end
  redis.call('DEL', P .. 'gamers:' .. n, P .. 'seeks_of:' .. n)
  redis.call('SREM', P .. 'nodes', n)
end
local function is_live(n)
  return redis.call('EXISTS', P .. 'node:' .. n) == 1
end
local function live_nodes()
  local live = {}
  for _, n in ipairs(redis.call('SMEMBERS', P .. 'nodes')) do
    if is_live(n) then live[#live + 1] = n else drop_node(n) end
  end
  return live
end
local function heartbeat(n, ttl)
  local existed = redis.call('EXISTS', P .. 'node:' .. n)
  if existed == 0 then drop_node(n) end
  redis.call('SET', P .. 'node:' .. n, '1', 'PX', ttl)
  redis.call('SADD', P .. 'nodes', n)
  return existed
end
local function live_seek_node(id)
  local n = redis.call('HGET', P .. 'seek_nodes', id)
  if not n then return nil end
  if not is_live(n) then drop_node(n); return nil end
  return n
end
"""

_LUA = {
    # KEYS[1] lease key; ARGV node, ttl
    "lease_acquire": """
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
""",
    "lease_renew": """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
""",
    "lease_release": """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
""",
    # ARGV: P, node, ttl
    "heartbeat": _LUA_NODES + "return heartbeat(ARGV[2], ARGV[3])",
    # ARGV: P, node
    "node_down": _LUA_NODES + "drop_node(ARGV[2]) return 1",
    # ARGV: P
    "live_nodes": _LUA_NODES + "return live_nodes()",
    # ARGV: P, player, node, ttl
    "set_online": _LUA_NODES
    + """
local existed = heartbeat(ARGV[3], ARGV[4])
redis.call('SADD', P .. 'online:' .. ARGV[3], ARGV[2])
return existed
""",
    # ARGV: P, player, node
    "set_offline": _LUA_NODES
    + """
redis.call('SREM', P .. 'online:' .. ARGV[3], ARGV[2])
redis.call('DEL', P .. 'games:' .. ARGV[3] .. ':' .. ARGV[2])
redis.call('SREM', P .. 'gamers:' .. ARGV[3], ARGV[2])
return 1
""",
    # ARGV: P
    "online_players": _LUA_NODES
    + """
local seen, out = {}, {}
for _, n in ipairs(live_nodes()) do
  for _, player in ipairs(redis.call('SMEMBERS', P .. 'online:' .. n)) do
    if not seen[player] then seen[player] = true; out[#out + 1] = player end
  end
end
return out
""",
    # ARGV: P, player
    "is_online": _LUA_NODES
    + """
for _, n in ipairs(live_nodes()) do
  if redis.call('SISMEMBER', P .. 'online:' .. n, ARGV[2]) == 1 then return 1 end
end
return 0
""",
    # ARGV: P, player, node, game, role
    "add_game": _LUA_NODES
    + """
if not is_live(ARGV[3]) then return -1 end
redis.call('HSET', P .. 'games:' .. ARGV[3] .. ':' .. ARGV[2], ARGV[4], ARGV[5])
redis.call('SADD', P .. 'gamers:' .. ARGV[3], ARGV[2])
return 1
""",
    # ARGV: P, player, node, game
    "remove_game": _LUA_NODES
    + """
local key = P .. 'games:' .. ARGV[3] .. ':' .. ARGV[2]
redis.call('HDEL', key, ARGV[4])
if redis.call('EXISTS', key) == 0 then redis.call('SREM', P .. 'gamers:' .. ARGV[3], ARGV[2]) end
return 1
""",
    # ARGV: P, player -> flat list game, role, game, role ... over live nodes
    "games_of": _LUA_NODES
    + """
local out = {}
for _, n in ipairs(live_nodes()) do
  for _, item in ipairs(redis.call('HGETALL', P .. 'games:' .. n .. ':' .. ARGV[2])) do
    out[#out + 1] = item
  end
end
return out
""",
    # ARGV: P, id, payload, node
    "seek_add": _LUA_NODES
    + """
if not is_live(ARGV[4]) then return -1 end
if redis.call('EXISTS', P .. 'seek_claim:' .. ARGV[2]) == 1 then return 0 end
if redis.call('HSETNX', P .. 'seeks', ARGV[2], ARGV[3]) == 0 then return 0 end
redis.call('HSET', P .. 'seek_nodes', ARGV[2], ARGV[4])
redis.call('SADD', P .. 'seeks_of:' .. ARGV[4], ARGV[2])
return 1
""",
    # ARGV: P, id
    "seek_remove": _LUA_NODES
    + """
local n = live_seek_node(ARGV[2])
if not n then return 0 end
unlist_seek(ARGV[2], n)
return 1
""",
    # ARGV: P, id
    "seek_get": _LUA_NODES
    + """
if not live_seek_node(ARGV[2]) then return false end
return redis.call('HGET', P .. 'seeks', ARGV[2])
""",
    # ARGV: P -> flat list id, payload ...
    "seek_all": _LUA_NODES
    + """
local live = {}
for _, n in ipairs(live_nodes()) do live[n] = true end
local owners = redis.call('HGETALL', P .. 'seek_nodes')
local out = {}
for i = 1, #owners, 2 do
  local id, n = owners[i], owners[i + 1]
  if live[n] then
    local payload = redis.call('HGET', P .. 'seeks', id)
    if payload then out[#out + 1] = id; out[#out + 1] = payload end
  else
    unlist_seek(id, n)
  end
end
return out
""",
    # ARGV: P, id, claimer, ttl
    "seek_claim": _LUA_NODES
    + """
local claim = P .. 'seek_claim:' .. ARGV[2]
if redis.call('EXISTS', claim) == 1 then return 0 end
local n = live_seek_node(ARGV[2])
if not n then return 0 end
unlist_seek(ARGV[2], n)
redis.call('SET', claim, ARGV[3], 'PX', ARGV[4])
return 1
""",
}


class _RedisScripts:
    """Runs the Lua scripts (EVALSHA, reloading them after a Redis restart)."""

    def __init__(self, client: Redis, prefix: str, url: str) -> None:
        self.client = client
        self.prefix = prefix
        self._url = url
        self._scripts = {name: client.register_script(source) for name, source in _LUA.items()}

    async def run(self, name: str, *args: str | int, keys: tuple[str, ...] = ()) -> Any:
        """Run script ``name``; the key prefix is passed first unless ``keys`` are given."""
        argv = list(args) if keys else [self.prefix, *args]
        try:
            return await self._scripts[name](keys=list(keys), args=argv)
        except (RedisError, OSError) as exc:
            raise BusUnavailableError(f"Redis at {self._url} failed ({name}): {exc}") from exc

    async def get(self, key: str) -> str | None:
        try:
            value = await self.client.get(key)
        except (RedisError, OSError) as exc:
            raise BusUnavailableError(f"Redis at {self._url} failed (GET): {exc}") from exc
        return None if value is None else str(value)


class _RedisLeases(GameLeases):
    def __init__(self, scripts: _RedisScripts) -> None:
        self._scripts = scripts

    def _key(self, game_id: str) -> str:
        return f"{self._scripts.prefix}lease:{game_id}"

    async def acquire(self, game_id: str, node_id: str, ttl_ms: int) -> bool:
        _check_id("game_id", game_id)
        _check_node(node_id)
        _check_ttl(ttl_ms)
        keys = (self._key(game_id),)
        return bool(await self._scripts.run("lease_acquire", node_id, ttl_ms, keys=keys))

    async def renew(self, game_id: str, node_id: str, ttl_ms: int) -> bool:
        _check_id("game_id", game_id)
        _check_node(node_id)
        _check_ttl(ttl_ms)
        keys = (self._key(game_id),)
        return bool(await self._scripts.run("lease_renew", node_id, ttl_ms, keys=keys))

    async def release(self, game_id: str, node_id: str) -> bool:
        _check_id("game_id", game_id)
        _check_node(node_id)
        keys = (self._key(game_id),)
        return bool(await self._scripts.run("lease_release", node_id, keys=keys))

    async def owner(self, game_id: str) -> str | None:
        _check_id("game_id", game_id)
        return await self._scripts.get(self._key(game_id))


class _RedisSeeks(SeekRegistry):
    def __init__(self, scripts: _RedisScripts) -> None:
        self._scripts = scripts

    async def add(self, seek_id: str, payload: str, node_id: str) -> bool:
        _check_id("seek_id", seek_id)
        _check_payload(payload)
        _check_node(node_id)
        result = await self._scripts.run("seek_add", seek_id, payload, node_id)
        if result == -1:
            raise NodeNotLiveError(f"node {node_id!r} has no live heartbeat: cannot list a seek")
        return bool(result)

    async def remove(self, seek_id: str) -> bool:
        _check_id("seek_id", seek_id)
        return bool(await self._scripts.run("seek_remove", seek_id))

    async def get(self, seek_id: str) -> str | None:
        _check_id("seek_id", seek_id)
        payload = await self._scripts.run("seek_get", seek_id)
        return None if payload is None else str(payload)

    async def all(self) -> dict[str, str]:
        flat = await self._scripts.run("seek_all")
        return dict(zip(flat[::2], flat[1::2]))

    async def claim(self, seek_id: str, claimer: str, ttl_ms: int = DEFAULT_CLAIM_TTL_MS) -> bool:
        _check_id("seek_id", seek_id)
        _check_id("claimer", claimer)
        _check_ttl(ttl_ms)
        return bool(await self._scripts.run("seek_claim", seek_id, claimer, ttl_ms))

    async def claimant(self, seek_id: str) -> str | None:
        _check_id("seek_id", seek_id)
        return await self._scripts.get(f"{self._scripts.prefix}seek_claim:{seek_id}")


class _RedisPresence(Presence):
    def __init__(self, scripts: _RedisScripts) -> None:
        self._scripts = scripts

    async def heartbeat(self, node_id: str, ttl_ms: int) -> bool:
        _check_node(node_id)
        _check_ttl(ttl_ms)
        return bool(await self._scripts.run("heartbeat", node_id, ttl_ms))

    async def node_down(self, node_id: str) -> None:
        _check_node(node_id)
        await self._scripts.run("node_down", node_id)

    async def live_nodes(self) -> set[str]:
        return set(await self._scripts.run("live_nodes"))

    async def set_online(self, player_id: str, node_id: str, ttl_ms: int) -> bool:
        _check_id("player_id", player_id)
        _check_node(node_id)
        _check_ttl(ttl_ms)
        return bool(await self._scripts.run("set_online", player_id, node_id, ttl_ms))

    async def set_offline(self, player_id: str, node_id: str) -> None:
        _check_id("player_id", player_id)
        _check_node(node_id)
        await self._scripts.run("set_offline", player_id, node_id)

    async def online_players(self) -> set[str]:
        return set(await self._scripts.run("online_players"))

    async def is_online(self, player_id: str) -> bool:
        _check_id("player_id", player_id)
        return bool(await self._scripts.run("is_online", player_id))

    async def add_game(self, player_id: str, node_id: str, game_id: str, role: GameRole) -> None:
        _check_id("player_id", player_id)
        _check_node(node_id)
        _check_id("game_id", game_id)
        role = GameRole(role)
        result = await self._scripts.run("add_game", player_id, node_id, game_id, role.value)
        if result == -1:
            raise NodeNotLiveError(f"node {node_id!r} has no live heartbeat: cannot add a game")

    async def remove_game(self, player_id: str, node_id: str, game_id: str) -> None:
        _check_id("player_id", player_id)
        _check_node(node_id)
        _check_id("game_id", game_id)
        await self._scripts.run("remove_game", player_id, node_id, game_id)

    async def games_of(self, player_id: str) -> dict[str, GameRole]:
        _check_id("player_id", player_id)
        flat = await self._scripts.run("games_of", player_id)
        return _merge_roles(zip(flat[::2], (GameRole(role) for role in flat[1::2])))


def _merge_roles(pairs: Iterable[tuple[str, GameRole]]) -> dict[str, GameRole]:
    games: dict[str, GameRole] = {}
    for game_id, role in pairs:
        if games.get(game_id) is not GameRole.PLAYING:
            games[game_id] = role
    return games


# --------------------------------------------------------------------------------------------
# In-process implementation


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

    async def acquire(self, game_id: str, node_id: str, ttl_ms: int) -> bool:
        _check_id("game_id", game_id)
        _check_node(node_id)
        _check_ttl(ttl_ms)
        holder = self._holder(game_id)
        if holder is not None and holder != node_id:
            return False
        self._state.leases[game_id] = (node_id, self._state.expiry(ttl_ms))
        return True

    async def renew(self, game_id: str, node_id: str, ttl_ms: int) -> bool:
        _check_id("game_id", game_id)
        _check_node(node_id)
        _check_ttl(ttl_ms)
        if self._holder(game_id) != node_id:
            return False
        self._state.leases[game_id] = (node_id, self._state.expiry(ttl_ms))
        return True

    async def release(self, game_id: str, node_id: str) -> bool:
        _check_id("game_id", game_id)
        _check_node(node_id)
        if self._holder(game_id) != node_id:
            return False
        del self._state.leases[game_id]
        return True

    async def owner(self, game_id: str) -> str | None:
        _check_id("game_id", game_id)
        return self._holder(game_id)


class _MemorySeeks(SeekRegistry):
    def __init__(self, state: InProcessClusterState) -> None:
        self._state = state

    async def add(self, seek_id: str, payload: str, node_id: str) -> bool:
        _check_id("seek_id", seek_id)
        _check_payload(payload)
        _check_node(node_id)
        state = self._state
        node = state.live_node(node_id)
        if node is None:
            raise NodeNotLiveError(f"node {node_id!r} has no live heartbeat: cannot list a seek")
        if state.claim_holder(seek_id) is not None or await self.get(seek_id) is not None:
            return False
        state.seeks[seek_id] = (payload, node_id)
        node.seeks.add(seek_id)
        return True

    async def remove(self, seek_id: str) -> bool:
        _check_id("seek_id", seek_id)
        return self._state.unlist_seek(seek_id)

    async def get(self, seek_id: str) -> str | None:
        _check_id("seek_id", seek_id)
        entry = self._state.seeks.get(seek_id)
        if entry is None or self._state.live_node(entry[1]) is None:
            return None
        return entry[0]

    async def all(self) -> dict[str, str]:
        self._state.live_nodes()  # drops lapsed nodes and their seeks
        return {seek_id: payload for seek_id, (payload, _) in self._state.seeks.items()}

    async def claim(self, seek_id: str, claimer: str, ttl_ms: int = DEFAULT_CLAIM_TTL_MS) -> bool:
        _check_id("seek_id", seek_id)
        _check_id("claimer", claimer)
        _check_ttl(ttl_ms)
        state = self._state
        if state.claim_holder(seek_id) is not None or not state.unlist_seek(seek_id):
            return False
        state.claims[seek_id] = (claimer, state.expiry(ttl_ms))
        return True

    async def claimant(self, seek_id: str) -> str | None:
        _check_id("seek_id", seek_id)
        return self._state.claim_holder(seek_id)


class _MemoryPresence(Presence):
    def __init__(self, state: InProcessClusterState) -> None:
        self._state = state

    async def heartbeat(self, node_id: str, ttl_ms: int) -> bool:
        _check_node(node_id)
        _check_ttl(ttl_ms)
        return self._state.heartbeat(node_id, ttl_ms)

    async def node_down(self, node_id: str) -> None:
        _check_node(node_id)
        self._state.drop_node(node_id)

    async def live_nodes(self) -> set[str]:
        return set(self._state.live_nodes())

    async def set_online(self, player_id: str, node_id: str, ttl_ms: int) -> bool:
        _check_id("player_id", player_id)
        _check_node(node_id)
        _check_ttl(ttl_ms)
        was_live = self._state.heartbeat(node_id, ttl_ms)
        self._state.nodes[node_id].online.add(player_id)
        return was_live

    async def set_offline(self, player_id: str, node_id: str) -> None:
        _check_id("player_id", player_id)
        _check_node(node_id)
        node = self._state.live_node(node_id)
        if node is not None:
            node.online.discard(player_id)
            node.games.pop(player_id, None)

    async def online_players(self) -> set[str]:
        players: set[str] = set()
        for node in self._state.live_nodes().values():
            players |= node.online
        return players

    async def is_online(self, player_id: str) -> bool:
        _check_id("player_id", player_id)
        return any(player_id in node.online for node in self._state.live_nodes().values())

    async def add_game(self, player_id: str, node_id: str, game_id: str, role: GameRole) -> None:
        _check_id("player_id", player_id)
        _check_node(node_id)
        _check_id("game_id", game_id)
        role = GameRole(role)
        node = self._state.live_node(node_id)
        if node is None:
            raise NodeNotLiveError(f"node {node_id!r} has no live heartbeat: cannot add a game")
        node.games.setdefault(player_id, {})[game_id] = role

    async def remove_game(self, player_id: str, node_id: str, game_id: str) -> None:
        _check_id("player_id", player_id)
        _check_node(node_id)
        _check_id("game_id", game_id)
        node = self._state.live_node(node_id)
        if node is None:
            return
        games = node.games.get(player_id, {})
        games.pop(game_id, None)
        if not games:
            node.games.pop(player_id, None)

    async def games_of(self, player_id: str) -> dict[str, GameRole]:
        _check_id("player_id", player_id)
        nodes = self._state.live_nodes().values()
        return _merge_roles(
            (game_id, role)
            for node in nodes
            for game_id, role in node.games.get(player_id, {}).items()
        )

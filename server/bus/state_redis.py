"""Cluster state over Redis: atomic Lua scripts, so concurrent nodes can never both win.

The scripts build key names from the key prefix; that is fine for one Redis server, not for
Redis Cluster. Semantics: :mod:`server.bus.state`.
"""

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from server.bus.base import BusUnavailableError
from server.bus.redis_bus import redact_url
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

__all__ = ["LEASE_BATCH", "redis_state"]

LEASE_BATCH = 500
"""Leases (or presence changes) per script call of the batch methods (``hold_many``,
``announce`` …): Redis runs a script alone, so a chunk is kept short (500 leases: about a
millisecond of Redis's time)."""


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
    # KEYS lease keys; ARGV node, ttl -> the (1-based) positions of the keys another node holds
    "lease_hold_many": """
local lost = {}
for i, key in ipairs(KEYS) do
  local holder = redis.call('GET', key)
  if holder == ARGV[1] then
    redis.call('PEXPIRE', key, ARGV[2])
  elseif not holder then
    redis.call('SET', key, ARGV[1], 'PX', ARGV[2])
  else
    lost[#lost + 1] = i
  end
end
return lost
""",
    # KEYS lease keys; ARGV node -> how many were released
    "lease_release_many": """
local released = 0
for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then
    redis.call('DEL', key)
    released = released + 1
  end
end
return released
""",
    # ARGV: P, node, ttl
    "heartbeat": _LUA_NODES + "return heartbeat(ARGV[2], ARGV[3])",
    # ARGV: P, node
    "node_down": _LUA_NODES + "drop_node(ARGV[2]) return 1",
    # ARGV: P, node, ttl, then the counts of players online, players offline, games added,
    # games gone, then their items (a player; a player; player, game, role; player, game)
    "announce": _LUA_NODES
    + """
local n = ARGV[2]
local existed = heartbeat(n, ARGV[3])
local i = 8
for _ = 1, tonumber(ARGV[4]) do
  redis.call('SADD', P .. 'online:' .. n, ARGV[i]); i = i + 1
end
for _ = 1, tonumber(ARGV[5]) do
  local player = ARGV[i]; i = i + 1
  redis.call('SREM', P .. 'online:' .. n, player)
  redis.call('DEL', P .. 'games:' .. n .. ':' .. player)
  redis.call('SREM', P .. 'gamers:' .. n, player)
end
for _ = 1, tonumber(ARGV[6]) do
  local player = ARGV[i]
  redis.call('HSET', P .. 'games:' .. n .. ':' .. player, ARGV[i + 1], ARGV[i + 2])
  redis.call('SADD', P .. 'gamers:' .. n, player)
  i = i + 3
end
for _ = 1, tonumber(ARGV[7]) do
  local key = P .. 'games:' .. n .. ':' .. ARGV[i]
  redis.call('HDEL', key, ARGV[i + 1])
  if redis.call('EXISTS', key) == 0 then redis.call('SREM', P .. 'gamers:' .. n, ARGV[i]) end
  i = i + 2
end
return existed
""",
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

    async def get_many(self, keys: Sequence[str]) -> list[str | None]:
        try:
            values = await self.client.mget(keys)
        except (RedisError, OSError) as exc:
            raise BusUnavailableError(f"Redis at {self._url} failed (MGET): {exc}") from exc
        return [None if value is None else str(value) for value in values]


class _RedisLeases(GameLeases):
    def __init__(self, scripts: _RedisScripts) -> None:
        self._scripts = scripts

    def _key(self, game_id: str) -> str:
        return f"{self._scripts.prefix}lease:{game_id}"

    async def _acquire(self, game_id: str, node_id: str, ttl_ms: int) -> bool:
        keys = (self._key(game_id),)
        return bool(await self._scripts.run("lease_acquire", node_id, ttl_ms, keys=keys))

    async def _renew(self, game_id: str, node_id: str, ttl_ms: int) -> bool:
        keys = (self._key(game_id),)
        return bool(await self._scripts.run("lease_renew", node_id, ttl_ms, keys=keys))

    async def _release(self, game_id: str, node_id: str) -> bool:
        keys = (self._key(game_id),)
        return bool(await self._scripts.run("lease_release", node_id, keys=keys))

    async def _owner(self, game_id: str) -> str | None:
        return await self._scripts.get(self._key(game_id))

    async def _hold_many(self, game_ids: Sequence[str], node_id: str, ttl_ms: int) -> set[str]:
        lost: set[str] = set()
        for chunk in _chunks(game_ids):
            keys = tuple(self._key(game_id) for game_id in chunk)
            positions = await self._scripts.run("lease_hold_many", node_id, ttl_ms, keys=keys)
            lost.update(chunk[position - 1] for position in positions)
        return lost

    async def _release_many(self, game_ids: Sequence[str], node_id: str) -> int:
        released = 0
        for chunk in _chunks(game_ids):
            keys = tuple(self._key(game_id) for game_id in chunk)
            released += int(await self._scripts.run("lease_release_many", node_id, keys=keys))
        return released

    async def _owners(self, game_ids: Sequence[str]) -> list[str | None]:
        owners: list[str | None] = []
        for chunk in _chunks(game_ids):
            owners += await self._scripts.get_many([self._key(game_id) for game_id in chunk])
        return owners


def _parts(changes: PresenceChanges) -> list[PresenceChanges]:
    """``changes`` in parts of at most :data:`LEASE_BATCH` changes, in order (one at least)."""
    parts = [PresenceChanges()]
    for field in ("online", "offline", "games", "gone"):
        items: Sequence[Any] = getattr(changes, field)
        for start in range(0, len(items), LEASE_BATCH):
            chunk = items[start : start + LEASE_BATCH]
            if len(parts[-1]) + len(chunk) > LEASE_BATCH:
                parts.append(PresenceChanges())
            parts[-1] = replace(parts[-1], **{field: chunk})
    return parts


def _chunks(game_ids: Sequence[str]) -> list[Sequence[str]]:
    """``game_ids`` in runs of :data:`LEASE_BATCH`: one script call each."""
    return [game_ids[i : i + LEASE_BATCH] for i in range(0, len(game_ids), LEASE_BATCH)]


class _RedisSeeks(SeekRegistry):
    def __init__(self, scripts: _RedisScripts) -> None:
        self._scripts = scripts

    async def _add(self, seek_id: str, payload: str, node_id: str) -> bool:
        result = await self._scripts.run("seek_add", seek_id, payload, node_id)
        if result == -1:
            raise NodeNotLiveError(f"node {node_id!r} has no live heartbeat: cannot list a seek")
        return bool(result)

    async def _remove(self, seek_id: str) -> bool:
        return bool(await self._scripts.run("seek_remove", seek_id))

    async def _get(self, seek_id: str) -> str | None:
        payload = await self._scripts.run("seek_get", seek_id)
        return None if payload is None else str(payload)

    async def all(self) -> dict[str, str]:
        flat = await self._scripts.run("seek_all")
        return dict(zip(flat[::2], flat[1::2]))

    async def _claim(self, seek_id: str, claimer: str, ttl_ms: int = DEFAULT_CLAIM_TTL_MS) -> bool:
        return bool(await self._scripts.run("seek_claim", seek_id, claimer, ttl_ms))

    async def _claimant(self, seek_id: str) -> str | None:
        return await self._scripts.get(f"{self._scripts.prefix}seek_claim:{seek_id}")


class _RedisPresence(Presence):
    def __init__(self, scripts: _RedisScripts) -> None:
        self._scripts = scripts

    async def _heartbeat(self, node_id: str, ttl_ms: int) -> bool:
        return bool(await self._scripts.run("heartbeat", node_id, ttl_ms))

    async def _announce(self, node_id: str, ttl_ms: int, changes: PresenceChanges) -> bool:
        was_live: bool | None = None
        for part in _parts(changes):
            args: list[str | int] = [node_id, ttl_ms]
            args += [len(part.online), len(part.offline), len(part.games), len(part.gone)]
            args += [*part.online, *part.offline]
            args += [item for p, g, role in part.games for item in (p, g, GameRole(role).value)]
            args += [item for pair in part.gone for item in pair]
            existed = bool(await self._scripts.run("announce", *args))
            was_live = existed if was_live is None else was_live
        assert was_live is not None
        return was_live

    async def _node_down(self, node_id: str) -> None:
        await self._scripts.run("node_down", node_id)

    async def live_nodes(self) -> set[str]:
        return set(await self._scripts.run("live_nodes"))

    async def _set_online(self, player_id: str, node_id: str, ttl_ms: int) -> bool:
        return bool(await self._scripts.run("set_online", player_id, node_id, ttl_ms))

    async def _set_offline(self, player_id: str, node_id: str) -> None:
        await self._scripts.run("set_offline", player_id, node_id)

    async def online_players(self) -> set[str]:
        return set(await self._scripts.run("online_players"))

    async def _is_online(self, player_id: str) -> bool:
        return bool(await self._scripts.run("is_online", player_id))

    async def _add_game(self, player_id: str, node_id: str, game_id: str, role: GameRole) -> None:
        result = await self._scripts.run("add_game", player_id, node_id, game_id, role.value)
        if result == -1:
            raise NodeNotLiveError(f"node {node_id!r} has no live heartbeat: cannot add a game")

    async def _remove_game(self, player_id: str, node_id: str, game_id: str) -> None:
        await self._scripts.run("remove_game", player_id, node_id, game_id)

    async def _games_of(self, player_id: str) -> dict[str, GameRole]:
        flat = await self._scripts.run("games_of", player_id)
        return merge_roles(zip(flat[::2], (GameRole(role) for role in flat[1::2])))


def redis_state(
    url: str, prefix: str, timeout_s: float
) -> tuple[GameLeases, SeekRegistry, Presence, Redis]:
    """The three primitives over the Redis server at ``url``, and their client."""
    client = Redis.from_url(
        url,
        decode_responses=True,
        socket_connect_timeout=timeout_s,
        socket_timeout=timeout_s,
        retry=Retry(NoBackoff(), 1),
    )
    scripts = _RedisScripts(client, prefix, redact_url(url))
    return _RedisLeases(scripts), _RedisSeeks(scripts), _RedisPresence(scripts), client

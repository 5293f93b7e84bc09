"""Presence: which nodes are live, and what this node announces of its players.

:class:`Liveness` keeps the set of live nodes, looked up every third of the presence TTL and
on demand. :class:`PresenceKeeper` works out what should be announced (:data:`Wanted`) and
has it sent in turn with the other cluster-state updates.

The node says what should be announced (:data:`Wanted`: the players connected here, and the
``(player, game) -> role`` pairs: the two players of each running game this node owns, and the
players here who watch a game); :class:`Announcer` sends only the differences with what it
announced before. Announcements live in Redis and lapse with the node's heartbeat; when
``heartbeat`` says the node was not live (Redis restarted, or the node stalled past the TTL)
everything is announced again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from server.bus import GameRole, Presence
from server.cluster.connections import LocalConnections
from server.cluster.outgoing import Outgoing
from server.hub.effects import GameId
from server.hub.hub import Hub
from server.hub.identity import PlayerId

__all__ = ["Announcer", "Liveness", "PresenceKeeper", "Wanted"]

LIVE_RECHECK_S = 0.25

Wanted = tuple[set[PlayerId], dict[tuple[PlayerId, GameId], GameRole]]
"""(online players, (player, game) -> role)."""


class Announcer:
    """See the module docstring.

    :param on_lapse: called after a heartbeat found the node not live, before re-announcing
        (the node lists its seeks again).
    """

    def __init__(
        self,
        presence: Presence,
        node_id: str,
        ttl_ms: int,
        on_lapse: Callable[[], Awaitable[None]],
    ) -> None:
        self._presence = presence
        self._node_id = node_id
        self._ttl_ms = ttl_ms
        self._on_lapse = on_lapse
        self._online: set[PlayerId] = set()
        self._games: dict[tuple[PlayerId, GameId], GameRole] = {}
        self._last_heartbeat = float("-inf")

    def forget(self) -> None:
        """Announce everything again at the next :meth:`sync` (the state in Redis was lost)."""
        self._online.clear()
        self._games.clear()
        self._last_heartbeat = float("-inf")

    async def sync(self, wanted: Wanted) -> None:
        """Heartbeat when due, then announce the differences.

        :raises BusError: Redis is unreachable (the next sync tries again).
        """
        if time.monotonic() - self._last_heartbeat >= self._ttl_ms / 6000:
            live = await self._presence.heartbeat(self._node_id, self._ttl_ms)
            self._last_heartbeat = time.monotonic()
            if not live:
                self._online.clear()
                self._games.clear()
                await self._on_lapse()
        online, games = wanted
        presence, node_id = self._presence, self._node_id
        for player_id in sorted(online - self._online):
            await presence.set_online(player_id, node_id, self._ttl_ms)
            self._online.add(player_id)
        for player_id in sorted(self._online - online):
            await presence.set_offline(player_id, node_id)  # also drops its games here
            self._online.discard(player_id)
            for key in [key for key in self._games if key[0] == player_id]:
                del self._games[key]
        for key, role in games.items():
            if self._games.get(key) is not role:
                await presence.add_game(key[0], node_id, key[1], role)
                self._games[key] = role
        for key in [key for key in self._games if key not in games]:
            await presence.remove_game(key[0], node_id, key[1])
            del self._games[key]


class PresenceKeeper:
    """Keeps the announcements in step with the node: each change marks them, and one sync per
    burst of changes is queued (see :meth:`mark`).

    :param owned: the games this node owns (their players are announced as playing).
    :param enqueue: queues a cluster-state update (in order with the seek registry's).
    """

    def __init__(
        self,
        announcer: Announcer,
        hub: Hub,
        locals_: LocalConnections,
        owned: set[GameId],
        enqueue: Callable[[Outgoing], None],
    ) -> None:
        self._announcer = announcer
        self._hub = hub
        self._locals = locals_
        self._owned = owned
        self._enqueue = enqueue
        self._dirty = False
        self.started = False

    def mark(self, reannounce: bool = False) -> None:
        """Bring the presence announcements in step with this node soon."""
        if reannounce:
            self._announcer.forget()
        if not self._dirty and self.started:
            self._dirty = True
            self._enqueue(self._sync)

    async def _sync(self) -> None:
        self._dirty = False
        await self._announcer.sync(self.wanted())

    def wanted(self) -> Wanted:
        online = {local.player.id for _, local in self._locals.items() if local.connected}
        games: dict[tuple[PlayerId, GameId], GameRole] = {}
        for game_id in self._owned:
            room = self._hub.room(game_id)
            if room is not None and room.started:
                for player in room.players:
                    games[(player.id, game_id)] = GameRole.PLAYING
                for conn_id, side in room.members.items():
                    local = self._locals.get(conn_id)
                    if side is None and local is not None:
                        games.setdefault((local.player.id, game_id), GameRole.WATCHING)
        for _, local in self._locals.items():
            for game_id, follow in local.follows.items():
                if not follow.finished:
                    games.setdefault((local.player.id, game_id), GameRole.WATCHING)
        return online, games


class Liveness:
    """The nodes live at the last look.

    :param on_look: told of the live nodes after each look, with those live before.
    """

    def __init__(
        self,
        presence: Presence,
        node_id: str,
        on_look: Callable[[set[str], set[str]], None],
    ) -> None:
        self._presence = presence
        self._node_id = node_id
        self._on_look = on_look
        self.live: set[str] = {node_id}
        self._checked = 0.0
        self._refresh: asyncio.Future[None] | None = None

    def is_live(self, node_id: str) -> bool:
        """Whether ``node_id`` was live at the last look (a new node may not be known yet)."""
        return node_id == self._node_id or node_id in self.live

    async def alive(self, node_id: str) -> bool:
        """Whether ``node_id`` is live, looking again if it was not at the last look.

        :raises BusError: Redis is unreachable.
        """
        if self.is_live(node_id):
            return True
        if self._refresh is None:
            # Looks are at most every LIVE_RECHECK_S; a node that started after the last look is
            # not in it yet, so wait for the next look rather than call it dead.
            delay = LIVE_RECHECK_S - (time.monotonic() - self._checked)
            self._refresh = asyncio.ensure_future(self._look_after(delay))
            self._refresh.add_done_callback(self._refreshed)
        if self._refresh is not None:  # wait for the look in progress, whoever started it
            await asyncio.shield(self._refresh)
        return self.is_live(node_id)

    def _refreshed(self, refresh: asyncio.Future[None]) -> None:
        self._refresh = None
        if not refresh.cancelled():
            refresh.exception()  # retrieved: the waiters got it

    async def _look_after(self, delay: float) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        await self.look()

    async def look(self) -> None:
        """Look the live nodes up now.

        :raises BusError: Redis is unreachable.
        """
        self._checked = time.monotonic()
        live = await self._presence.live_nodes()
        live.add(self._node_id)
        before, self.live = self.live, live
        self._on_look(before, live)

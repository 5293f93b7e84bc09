"""Presence: what this node announces of its players.

:class:`PresenceKeeper` works out what should be announced (:data:`Wanted`: the players
connected here, and the ``(player, game) -> role`` pairs: the two players of each running game
this node owns, and the players here who watch a game) and has it sent in turn with the other
cluster-state updates; :class:`Announcer` sends only the differences with what it
announced before. Announcements live in Redis and lapse with the node's heartbeat; when
``heartbeat`` says the node was not live (Redis restarted, or the node stalled past the TTL)
everything is announced again.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from server.bus import GameRole, Presence
from server.cluster.shared import Part, Shared
from server.hub.effects import GameId
from server.hub.identity import PlayerId

__all__ = ["Announcer", "PresenceKeeper", "Wanted"]

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


class PresenceKeeper(Part):
    """Keeps the announcements in step with the node: each change marks them, and one sync per
    burst of changes is queued, in order with the seek registry's updates (see :meth:`mark`).
    """

    def __init__(self, shared: Shared, announcer: Announcer) -> None:
        super().__init__(shared)
        self._announcer = announcer
        self._dirty = False
        self.started = False

    def mark(self, reannounce: bool = False) -> None:
        """Bring the presence announcements in step with this node soon."""
        if reannounce:
            self._announcer.forget()
        if not self._dirty and self.started:
            self._dirty = True
            self._sender.enqueue(self._sync, state=True)

    async def _sync(self) -> None:
        self._dirty = False
        await self._announcer.sync(self.wanted())

    def wanted(self) -> Wanted:
        online = {local.player.id for _, local in self._locals.items() if local.connected}
        games: dict[tuple[PlayerId, GameId], GameRole] = {}
        for game_id in self._ownership.owned:
            room = self._host.hub.room(game_id)
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

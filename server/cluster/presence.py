"""Presence announcements of one node, kept in step with what the node knows.

The node says what should be announced (:data:`Wanted`: the players connected here, and the
``(player, game) -> role`` pairs: the two players of each running game this node owns, and the
players here who watch a game); :class:`Announcer` sends only the differences with what it
announced before. Announcements live in Redis and lapse with the node's heartbeat; when
``heartbeat`` says the node was not live (Redis restarted, or the node stalled past the TTL)
everything is announced again.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from server.bus import GameRole, Presence
from server.hub.effects import GameId
from server.hub.identity import PlayerId

__all__ = ["Announcer", "Wanted"]

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

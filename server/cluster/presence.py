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

import asyncio
import time
from collections.abc import Awaitable, Callable

from server.bus import GameRole, Presence, PresenceChanges
from server.cluster.shared import Part, Shared
from server.hub.effects import GameId
from server.hub.identity import PlayerId

__all__ = ["Announcer", "PresenceKeeper", "Wanted"]

PRESENCE_STEP = 500
"""Connections or games :meth:`PresenceKeeper.wanted` looks at in one turn of the loop: after a
reconnect storm a node holds thousands of each, and all at once held the loop for tens of ms."""

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
        """Announce the differences, with a heartbeat, in one batch (:meth:`Presence.announce`);
        only a heartbeat when nothing changed and one is due.

        :raises BusError: Redis is unreachable (the next sync tries again).
        """
        online, games = wanted
        changes = self._changes(online, games)
        due = time.monotonic() - self._last_heartbeat >= self._ttl_ms / 6000
        if not changes and not due:
            return
        live = await self._presence.announce(self._node_id, self._ttl_ms, changes)
        self._last_heartbeat = time.monotonic()
        if not live:  # what the node announced had lapsed: announce everything again
            self._online.clear()
            self._games.clear()
            await self._on_lapse()
            changes = self._changes(online, games)
            await self._presence.announce(self._node_id, self._ttl_ms, changes)
        self._online = set(online)
        self._games = dict(games)

    def _changes(
        self, online: set[PlayerId], games: dict[tuple[PlayerId, GameId], GameRole]
    ) -> PresenceChanges:
        """From what was announced to ``online`` and ``games``: a player gone offline takes
        its games announced here with it, so those still wanted are announced again."""
        offline = self._online - online
        kept = {key: role for key, role in self._games.items() if key[0] not in offline}
        return PresenceChanges(
            online=sorted(online - self._online),
            offline=sorted(offline),
            games=[(p, g, role) for (p, g), role in games.items() if kept.get((p, g)) is not role],
            gone=[key for key in kept if key not in games],
        )


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
        await self._announcer.sync(await self.wanted())

    async def wanted(self) -> Wanted:
        """What to announce now, gathered :data:`PRESENCE_STEP` connections or games per turn of
        the loop. A change meanwhile marks the keeper again (:meth:`mark`), so the sync that
        follows this one announces it."""
        online: set[PlayerId] = set()
        followed: list[tuple[PlayerId, GameId]] = []
        for n, (_, local) in enumerate(self._locals.items(), 1):
            if local.connected:
                online.add(local.player.id)
            followed += [(local.player.id, g) for g, f in local.follows.items() if not f.finished]
            if n % PRESENCE_STEP == 0:
                await asyncio.sleep(0)
        games: dict[tuple[PlayerId, GameId], GameRole] = {}
        for n, game_id in enumerate(list(self._ownership.owned), 1):
            room = self._host.hub.room(game_id)
            if room is not None and room.started:
                # A correspondence game is not its players' one real-time game (which the
                # cluster's "already playing" checks look for): they count as following it.
                role = GameRole.WATCHING if room.state.correspondence else GameRole.PLAYING
                for player in room.players:
                    games[(player.id, game_id)] = role
                for conn_id, side in room.members.items():
                    watcher = self._locals.get(conn_id)
                    if side is None and watcher is not None:
                        games.setdefault((watcher.player.id, game_id), GameRole.WATCHING)
            if n % PRESENCE_STEP == 0:
                await asyncio.sleep(0)
        for key in followed:  # the games this node's players follow (watching, unless playing)
            games.setdefault(key, GameRole.WATCHING)
        return online, games

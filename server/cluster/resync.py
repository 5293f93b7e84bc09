"""Degraded mode while Redis is unreachable, resynchronisation after it, and re-joining games
that moved to another node.

While degraded, the node's own games go on; what needs another node is refused
(``cluster_unavailable``, see :mod:`server.cluster.routing`), calls waiting for an answer end
at once, and every local connection is told (``degraded`` ``on``/``off``). When Redis is back
the node announces itself again, re-acquires its leases, and re-joins each remote game its
connections follow, from the last event version they saw.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from typing import Any

from server.cluster.connections import LocalConnection
from server.cluster.forwarding import Forwarder
from server.cluster.host import INTERNAL_ACK
from server.cluster.shared import Part, Shared
from server.hub.commands import JoinCommand
from server.hub.effects import ConnId, GameId
from server.hub.messages import Message, MessageKind

__all__ = ["Resync"]

logger = logging.getLogger(__name__)

REJOIN_RETRY_S = 0.5


class Resync(Part):
    """See the module docstring."""

    def __init__(self, shared: Shared, forwarder: Forwarder) -> None:
        super().__init__(shared)
        self._forwarder = forwarder
        self._healthy_since = float("-inf")  # reset when the bus recovers from an outage

    def healthy_for(self, seconds: float) -> bool:
        """Whether the bus has been up (not degraded) for at least ``seconds``."""
        return not self._host.degraded and time.monotonic() - self._healthy_since >= seconds

    def on_degraded(self, degraded: bool) -> None:
        """The bus went down (``degraded``) or came back."""
        notice = Message(MessageKind.DEGRADED, {"on": degraded})
        for conn_id, local in self._locals.items():
            if local.connected:
                self._host.send(conn_id, notice)
        if degraded:
            logger.warning("cluster degraded: Redis is unreachable")
            self._forwarder.fail_all()
            return
        logger.warning("cluster recovered")
        self._healthy_since = time.monotonic()
        self._host.spawn(self._recover(), "recover")

    async def _recover(self) -> None:
        """After an outage: re-announce, re-acquire leases, re-join followed remote games."""
        self._host.mark_presence(reannounce=True)
        await self._ownership.renew_all()
        self.rejoin_followed()

    def rejoin_followed(self) -> None:
        """Re-join every unfinished game the connections here follow, from the last version
        each saw: after an outage, or after this node's heartbeat lapsed (the other nodes may
        have taken it for dead and dropped its connections: its players there would get no
        event of their games again, while their sockets here stay open)."""
        followed: set[GameId] = set()
        for _, local in self._locals.items():
            for game_id, follow in local.follows.items():
                if not follow.finished:
                    followed.add(game_id)
        for game_id in sorted(followed):
            self._ownership.forget(game_id)
            self.rejoin(game_id, ())

    def rejoin(self, game_id: GameId, player_ids: Iterable[Any]) -> None:
        """Re-join a game that moved to another node (or after an outage): its followers here
        with the last version they saw, and its players' connections here."""
        players = {p for p in player_ids if isinstance(p, str)}
        candidates = dict(self._locals.followers(game_id))
        for player_id in players:
            candidates.update(self._locals.of_player(player_id))
        for conn_id, local in candidates.items():
            follow = local.follows.get(game_id)
            if follow is not None and not follow.finished:
                since: int | None = follow.version
            elif local.player.id in players and local.connected:
                since = None
            else:
                continue
            self._host.spawn(self._rejoin_one(conn_id, local, game_id, since), "rejoin")

    async def _rejoin_one(
        self, conn_id: ConnId, local: LocalConnection, game_id: GameId, since: int | None
    ) -> None:
        """Join one connection to a game's current owner, waiting while it has none yet (right
        after an outage, or while the game is being taken over)."""
        host, ownership = self._host, self._ownership
        command = JoinCommand(game_id, since, ack=INTERNAL_ACK)
        timeout_s = 2 * ownership.ttl_ms / 1000 + self._forwarder.call_timeout_s
        deadline = time.monotonic() + timeout_s
        while not local.closed and time.monotonic() < deadline:
            if host.degraded:
                return  # the recovery rejoins again
            owner = await host.limited(ownership.owner_of(game_id, take_over=True))
            if owner == host.node_id:
                host.handle_here(conn_id, command)
                return
            reachable = False
            if owner:
                reachable = await host.limited(self._liveness.alive(owner))
            if owner and reachable:  # noqa: SIM102
                if await self._forwarder.call_internal(conn_id, local, owner, command) is not None:
                    return
            await asyncio.sleep(REJOIN_RETRY_S)

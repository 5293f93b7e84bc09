"""A forwarded call answered ``moved`` (its game runs on another node now) is routed again after
one more look-up of the owner. That look-up reads Redis: when it fails, the connection must still
get an answer (``cluster_unavailable``, as any command routed while Redis is unreachable), not
wait for one that never comes."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable
from typing import Any, cast

from server.bus import BusError, Cluster
from server.cluster.connections import EndedGames, LocalConnection, LocalConnections
from server.cluster.forwarding import Forwarder
from server.cluster.host import Host, cluster_unavailable
from server.cluster.liveness import Liveness
from server.cluster.outgoing import Sender
from server.cluster.ownership import Ownership
from server.cluster.shared import Shared
from server.hub.commands import Command, parse_command
from server.hub.effects import ConnId, GameId
from server.hub.identity import PlayerId, PlayerInfo
from server.hub.messages import Message
from server.transport.driver_ports import Peer


class _Host:
    node_id = "hub1"
    degraded = False

    def __init__(self) -> None:
        self.sent: list[tuple[ConnId, Message]] = []
        self.tasks: list[asyncio.Task[Any]] = []

    def send(self, conn_id: ConnId, message: Message) -> None:
        self.sent.append((conn_id, message))

    def spawn(self, coroutine: Awaitable[Any], name: str = "cluster") -> None:
        self.tasks.append(asyncio.ensure_future(coroutine))


class _Sender:
    def envelope(self, node_id: str, header: object) -> None:
        pass


class _Ownership:
    def forget(self, game_id: GameId) -> None:
        pass


async def test_a_moved_reply_whose_new_lookup_fails_is_answered_cluster_unavailable() -> None:
    host = _Host()
    locals_ = LocalConnections()
    conn = LocalConnection(PlayerInfo(PlayerId("u1"), "u1"), cast(Peer, None), pending=deque())
    locals_.add(ConnId(7), conn)
    looked_up: list[GameId] = []

    async def locate(conn_id: ConnId, game_id: GameId, command: Command) -> str:
        looked_up.append(game_id)
        raise BusError("Redis is unreachable")

    shared = Shared(
        cast(Host, host),
        cast(Cluster, None),
        locals_,
        EndedGames(),
        cast(Ownership, _Ownership()),
        cast(Liveness, None),
        cast(Sender, _Sender()),
    )
    forwarder = Forwarder(shared, locate=locate, call_timeout_s=60)
    command = parse_command({"t": "move", "d": {"game": "g1", "ply": 1, "move": "e2e4"}, "a": "m1"})
    forwarder.forward(ConnId(7), conn, "hub2", command, 0)
    forwarder.on_reply("hub2", {"c": 7, "call": 1, "moved": True})
    await asyncio.gather(*host.tasks)
    assert looked_up == ["g1"]
    assert host.sent == [(ConnId(7), cluster_unavailable("m1"))]

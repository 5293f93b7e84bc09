"""What the parts of a cluster node share: the channels, the errors they answer with, and
:class:`Host`, the few driver operations every part calls.

The node (:class:`server.cluster.node.ClusterDriver`) is the one implementation of
:class:`Host`; the parts depend on this protocol rather than on the node, so the node module
imports them and none of them imports it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from server.hub.commands import Command
from server.hub.effects import ConnId, Effect
from server.hub.errors import ErrorCode
from server.hub.hub import Hub
from server.hub.messages import AckId, Message, error_message
from server.transport.driver_ports import Peer

__all__ = [
    "GAMES_CHANNEL",
    "INTERNAL_ACK",
    "LOBBY_CHANNEL",
    "NODES_CHANNEL",
    "NODE_CHANNEL_PREFIX",
    "Host",
    "cluster_unavailable",
    "node_channel",
    "node_unavailable",
]

LOBBY_CHANNEL = "lobby"
GAMES_CHANNEL = "games"
NODES_CHANNEL = "nodes"
"""Cluster-wide notices: ``whois`` questions and ``moved`` (a game was taken over)."""
NODE_CHANNEL_PREFIX = "node:"

INTERNAL_ACK = "~0"
"""Ack id of the commands the node itself runs in its hub; their answers are dropped."""

T = TypeVar("T")


def node_channel(node_id: str) -> str:
    """The bus channel a node reads its envelopes from."""
    return f"{NODE_CHANNEL_PREFIX}{node_id}"


def cluster_unavailable(ack: AckId | None) -> Message:
    return error_message(ErrorCode.CLUSTER_UNAVAILABLE, ack=ack)


def node_unavailable(ack: AckId | None) -> Message:
    return error_message(ErrorCode.NODE_UNAVAILABLE, ack=ack)


class Host(Protocol):
    """The driver operations the parts of a node call (all on the event loop thread)."""

    node_id: str
    hub: Hub

    @property
    def degraded(self) -> bool:
        """Whether Redis is unreachable (the bus is degraded)."""
        ...

    def new_conn_id(self) -> ConnId:
        """A new connection id of this node's hub."""
        ...

    def peer(self, conn_id: ConnId) -> Peer | None:
        """The websocket side of a connection that joined this node's hub, if it did."""
        ...

    def send(self, conn_id: ConnId, message: Message) -> None:
        """Send ``message`` to a connection of this node's hub."""
        ...

    def call(self, call: Callable[[int], list[Effect]]) -> None:
        """Run a hub call at the current time and run its effects."""
        ...

    def handle_here(self, conn_id: ConnId, command: Command, lag_ms: int = 0) -> None:
        """Run a command in this node's hub, without routing it."""
        ...

    def spawn(self, coroutine: Awaitable[Any], name: str = "cluster") -> None:
        """Run a background coroutine; its failure is logged."""
        ...

    async def limited(self, call: Awaitable[T]) -> T:
        """Await a cluster-state call, with a bounded number at once."""
        ...

    def mark_presence(self, reannounce: bool = False) -> None:
        """Bring the presence announcements in step with this node soon."""
        ...

"""What every part of a node shares (:class:`Shared`), and :class:`Part`, their base class."""

from __future__ import annotations

from dataclasses import dataclass

from server.bus import Cluster
from server.cluster.connections import EndedGames, LocalConnections
from server.cluster.host import Host
from server.cluster.liveness import Liveness
from server.cluster.outgoing import Sender
from server.cluster.ownership import Ownership

__all__ = ["Part", "Shared"]


@dataclass(frozen=True)
class Shared:
    """The node's driver operations, its cluster state, and what it knows of connections,
    games and nodes."""

    host: Host
    cluster: Cluster
    locals: LocalConnections
    ended: EndedGames
    ownership: Ownership
    liveness: Liveness
    sender: Sender


class Part:
    """A part of a node: reaches the others through :class:`Shared`."""

    def __init__(self, shared: Shared) -> None:
        self._host = shared.host
        self._cluster = shared.cluster
        self._locals = shared.locals
        self._ended = shared.ended
        self._ownership = shared.ownership
        self._liveness = shared.liveness
        self._sender = shared.sender

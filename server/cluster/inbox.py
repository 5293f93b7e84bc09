"""What a node receives on the bus: envelopes on its own channel, and the cluster notices.

Each envelope kind (:class:`~server.cluster.envelopes.EnvelopeKind`, checked by
:func:`~server.cluster.envelopes.parse_header`; a bad envelope is logged and dropped) goes to
the part that handles it: ``out`` and ``reply`` (answers to this
node's forwarded calls) to :mod:`~server.cluster.forwarding`; ``cmd``, ``attach`` and
``detach`` (another node's connections) to :mod:`~server.cluster.remote`; ``close`` (the
remote hub closed a local connection) to the connection itself; ``here`` (the answer to a
``whois``) to :mod:`~server.cluster.routing`. Notices: ``whois`` (where is a player?) and
``moved`` (a game was taken over: follow it to its new owner).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from server.cluster.envelopes import (
    EnvelopeError,
    EnvelopeKind,
    Header,
    parse_header,
    split_batch,
    unpack,
)
from server.cluster.forwarding import Forwarder
from server.cluster.remote import RemoteConnections
from server.cluster.routing import Router
from server.cluster.shared import Part, Shared
from server.cluster.wire import player_from_json
from server.hub.effects import GameId

__all__ = ["Inbox"]

logger = logging.getLogger(__name__)


class Inbox(Part):
    """See the module docstring.

    :param rejoin: re-joins a game taken over by another node (its followers and players here).
    """

    def __init__(
        self,
        shared: Shared,
        forwarder: Forwarder,
        remotes: RemoteConnections,
        router: Router,
        rejoin: Callable[[GameId, Iterable[Any]], None],
    ) -> None:
        super().__init__(shared)
        self._forwarder = forwarder
        self._remotes = remotes
        self._router = router
        self._rejoin = rejoin

    def on_node_message(self, channel: str, data: bytes) -> None:
        """A message on this node's channel: a batch of envelopes (a bad one is dropped)."""
        try:
            envelopes = split_batch(data)
        except EnvelopeError as error:
            logger.warning("dropped a message on %s: %s", channel, error)
            return
        for line, body in envelopes:
            try:
                node_id, header = parse_header(line)
            except EnvelopeError as error:
                logger.warning("dropped an envelope on %s: %s", channel, error)
                continue
            self._on_envelope(node_id, header, body)

    def _on_envelope(self, node_id: str, header: Header, body: bytes) -> None:
        match header["k"]:
            case EnvelopeKind.OUT:
                self._forwarder.on_out(node_id, header, body)
            case EnvelopeKind.REPLY:
                self._forwarder.on_reply(node_id, header)
            case EnvelopeKind.CMD:
                self._remotes.on_cmd(node_id, header)
            case EnvelopeKind.ATTACH:
                self._remotes.attach(node_id, header["c"], player_from_json(header["p"]))
            case EnvelopeKind.DETACH:
                self._remotes.detach(node_id, header["c"])
            case EnvelopeKind.CLOSE:
                peer = self._host.peer(header["c"])
                local = self._locals.get(header["c"])
                if local is not None:
                    local.attached.discard(node_id)
                if peer is not None:
                    peer.close_soon(1008, header["r"])
            case EnvelopeKind.HERE:
                self._router.on_here(node_id, header)
            case kind:
                logger.warning("dropped a %s notice sent to this node's channel", kind)

    def on_notice(self, channel: str, data: bytes) -> None:
        """A cluster-wide notice (see the module docstring)."""
        try:
            node_id, header, _ = unpack(data)
        except EnvelopeError as error:
            logger.warning("dropped a notice: %s", error)
            return
        match header["k"]:
            case EnvelopeKind.WHOIS:
                self._router.on_whois(node_id, header)
            case EnvelopeKind.MOVED:
                if node_id != self._host.node_id:
                    self._ownership.set_cached_owner(header["g"], node_id)
                    self._rejoin(header["g"], header["players"])
            case kind:
                logger.warning("dropped a %s envelope sent as a notice", kind)

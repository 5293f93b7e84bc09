"""What a node receives on the bus: envelopes on its own channel, and the cluster notices.

Each envelope kind goes to the part that handles it: ``out`` and ``reply`` (answers to this
node's forwarded calls) to :mod:`~server.cluster.forwarding`; ``cmd``, ``attach`` and
``detach`` (another node's connections) to :mod:`~server.cluster.remote`; ``close`` (the
remote hub closed a local connection) to the connection itself; ``here`` (the answer to a
``whois``) to :mod:`~server.cluster.routing`. Notices: ``whois`` (where is a player?) and
``moved`` (a game was taken over: follow it to its new owner).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable
from typing import Any

from server.cluster.forwarding import Forwarder
from server.cluster.remote import RemoteConnections
from server.cluster.routing import Router
from server.cluster.shared import Part, Shared
from server.cluster.wire import EnvelopeError, Header, player_from_json, unpack, unpack_batch
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
        """A message on this node's channel: a batch of envelopes."""
        try:
            envelopes = unpack_batch(data)
        except EnvelopeError as error:
            logger.warning("dropped a message on %s: %s", channel, error)
            return
        for header, body in envelopes:
            self._on_envelope(header, body)

    def _on_envelope(self, header: Header, body: bytes) -> None:
        kind = header["k"]
        node_id = header.get("from")
        if not isinstance(node_id, str):
            return
        if kind == "out":
            self._forwarder.on_out(node_id, header, body)
        elif kind == "reply":
            self._forwarder.on_reply(node_id, header)
        elif kind == "cmd":
            self._remotes.on_cmd(node_id, header)
        elif kind == "attach":
            with contextlib.suppress(ValueError):
                if isinstance(header.get("c"), int):
                    self._remotes.attach(node_id, header["c"], player_from_json(header.get("p")))
        elif kind == "detach":
            if isinstance(header.get("c"), int):
                self._remotes.detach(node_id, header["c"])
        elif kind == "close":
            peer = self._host.peer(header.get("c", -1))
            local = self._locals.get(header.get("c", -1))
            if local is not None:
                local.attached.discard(node_id)
            if peer is not None:
                peer.close_soon(1008, str(header.get("r", "closed")))
        elif kind == "here":
            self._router.on_here(node_id, header)

    def on_notice(self, channel: str, data: bytes) -> None:
        """A cluster-wide notice (see the module docstring)."""
        try:
            header, _ = unpack(data)
        except EnvelopeError:
            return
        node_id = header.get("from")
        if not isinstance(node_id, str):
            return
        if header["k"] == "whois":
            self._router.on_whois(node_id, header)
        elif header["k"] == "moved" and node_id != self._host.node_id:
            game_id = header.get("g")
            players = header.get("players")
            if isinstance(game_id, str):
                self._ownership.set_cached_owner(game_id, node_id)
                self._rejoin(game_id, players if isinstance(players, list) else [])

"""Forwarding, on a connection's home node: commands sent to the node that runs them, their
replies, their timeouts, and the frames that node's hub sends back for local connections.

Each forwarded command is a *call* with its own id: the remote hub runs it with ack
``~<call id>`` and its answer comes back as a ``reply`` envelope, re-acked with the client's
own ack. A call without an answer within ``call_timeout_s`` (its node died or stalled) is
answered ``node_unavailable``. A reply ``moved`` means the node no longer runs the command's
game: the owner is looked up again, once.

Room events from a remote hub arrive on the at-most-once bus: one that carries a previous
version (``pv``) other than the last one passed on to the connection shows that an event went
missing. It is held back (dropped, with those after it), and the connection joins again from
its last version: the owner replays what is missing, in order.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from server.bus import BusError
from server.cluster.connections import Follow, LocalConnection
from server.cluster.envelopes import OutHeader, ReplyHeader, cmd_header
from server.cluster.host import INTERNAL_ACK, cluster_unavailable, node_unavailable
from server.cluster.remote import CALL_ACK_PREFIX
from server.cluster.shared import Part, Shared
from server.cluster.wire import command_game, command_to_frame, player_to_json
from server.hub.commands import Command, JoinCommand
from server.hub.effects import ConnId, GameId
from server.hub.errors import ErrorCode
from server.hub.messages import AckId, Message, MessageJson, MessageKind, error_message
from server.transport.outbox import fan_out

__all__ = ["Forwarder", "Locate"]

logger = logging.getLogger(__name__)

Locate = Callable[[ConnId, GameId, Command], Awaitable[str]]
"""The node that runs a game's command now (``""``: the connection was answered already)."""


@dataclass
class _Call:
    """A command forwarded to another node, waiting for its answer."""

    conn: ConnId
    ack: AckId | None
    node: str
    command: Command
    lag: int
    internal: bool
    future: asyncio.Future[MessageJson | None] | None
    bounces: int = 0
    timer: asyncio.TimerHandle | None = None


class Forwarder(Part):
    """The calls this node has forwarded (see the module docstring).

    :param locate: looks a game's owner up again after a ``moved`` reply.
    """

    def __init__(self, shared: Shared, *, locate: Locate, call_timeout_s: float) -> None:
        super().__init__(shared)
        self._locate = locate
        self.call_timeout_s = call_timeout_s
        self._calls: dict[int, _Call] = {}
        self._last_call = 0

    # --- sending ------------------------------------------------------------------------------

    def forward(
        self,
        conn_id: ConnId,
        local: LocalConnection,
        node_id: str,
        command: Command,
        lag_ms: int,
        internal: bool = False,
        bounces: int = 0,
    ) -> asyncio.Future[MessageJson | None] | None:
        """Run ``command`` of a local connection in ``node_id``'s hub.

        :param internal: the node keeps the answer to itself: it is the result of the returned
            future (None when there is none: no answer, or the bus is down).
        """
        if self._host.degraded:
            if not internal:
                self._host.send(conn_id, cluster_unavailable(command.ack))
                return None
            future: asyncio.Future[MessageJson | None] = asyncio.get_running_loop().create_future()
            future.set_result(None)
            return future
        call_id, call = self._new_call(conn_id, node_id, command, lag_ms, internal, bounces)
        frame = command_to_frame(command, ack=f"{CALL_ACK_PREFIX}{call_id}")
        player = None
        if node_id not in local.attached:  # the identity goes with the first command only
            player = player_to_json(local.player)
            local.attached.add(node_id)
        self._sender.envelope(node_id, cmd_header(conn_id, frame, lag_ms, call_id, player))
        return call.future

    async def call_internal(
        self, conn_id: ConnId, local: LocalConnection, node_id: str, command: Command
    ) -> MessageJson | None:
        """Run a command on behalf of a connection whose answer the node keeps to itself."""
        future = self.forward(conn_id, local, node_id, command, 0, internal=True)
        return None if future is None else await future

    def _new_call(
        self,
        conn_id: ConnId,
        node_id: str,
        command: Command,
        lag_ms: int,
        internal: bool,
        bounces: int,
    ) -> tuple[int, _Call]:
        self._last_call += 1
        loop = asyncio.get_running_loop()
        future: asyncio.Future[MessageJson | None] | None = None
        if internal:
            future = loop.create_future()
        call = _Call(conn_id, command.ack, node_id, command, lag_ms, internal, future, bounces)
        call.timer = loop.call_later(self.call_timeout_s, self._timed_out, self._last_call)
        self._calls[self._last_call] = call
        return self._last_call, call

    # --- ending calls -------------------------------------------------------------------------

    def _timed_out(self, call_id: int) -> None:
        call = self._calls.get(call_id)
        if call is None:
            return
        logger.info("no answer from node %s for %s", call.node, type(call.command).__name__)
        self._ownership.forget_node(call.node)
        self._finish(call_id, None)
        if not call.internal:
            self._host.send(call.conn, node_unavailable(call.ack))

    def _finish(self, call_id: int, reply: MessageJson | None) -> _Call | None:
        call = self._calls.pop(call_id, None)
        if call is None:
            return None
        if call.timer is not None:
            call.timer.cancel()
        if call.future is not None and not call.future.done():
            call.future.set_result(reply)
        return call

    def drop_all(self) -> None:
        """End every call without an answer (the node is closing)."""
        for call_id in list(self._calls):
            self._finish(call_id, None)

    def drop_of(self, conn_id: ConnId) -> None:
        """End the calls of a connection that closed (its internal calls run on)."""
        for call_id, call in list(self._calls.items()):
            if call.conn == conn_id and not call.internal:
                self._finish(call_id, None)

    def fail_all(self) -> None:
        """End every call: Redis is unreachable, no answer can come."""
        for call_id, call in list(self._calls.items()):
            self._finish(call_id, None)
            if not call.internal:
                self._host.send(call.conn, cluster_unavailable(call.ack))

    def fail_dead(self, live: set[str]) -> None:
        """End the calls to nodes that are not live: no answer can come."""
        for call_id, call in list(self._calls.items()):
            if call.node not in live:
                self._finish(call_id, None)
                if not call.internal:
                    self._host.send(call.conn, node_unavailable(call.ack))

    # --- replies ------------------------------------------------------------------------------

    def on_reply(self, node_id: str, header: ReplyHeader) -> None:
        call_id = header["call"]
        call = self._calls.get(call_id)
        if call is None:
            return
        if header.get("moved"):
            self._reroute(call_id, call)
            return
        if header.get("unknown"):
            self._finish(call_id, None)
            local = self._locals.get(call.conn)
            if local is not None and not local.closed and call.bounces < 1:
                local.attached.discard(node_id)
                self.forward(call.conn, local, node_id, call.command, call.lag, call.internal, 1)
            return
        message = header.get("m")
        if message is None:
            return
        self._finish(call_id, message)  # its readers use .get()
        if call.internal:
            return
        self._host.send(
            call.conn, Message(message["t"], message.get("d") or {}, message.get("v"), call.ack)
        )

    def _reroute(self, call_id: int, call: _Call) -> None:
        """The node no longer runs the call's game: look the owner up again (once)."""
        self._finish(call_id, None)
        game_id = command_game(call.command)
        local = self._locals.get(call.conn)
        if game_id is None or local is None or local.closed:
            return
        self._ownership.forget(game_id)
        if call.bounces >= 1:
            if not call.internal:
                self._host.send(call.conn, node_unavailable(call.ack))
            return
        self._host.spawn(self._reroute_call(call, local, game_id), "reroute")

    async def _reroute_call(self, call: _Call, local: LocalConnection, game_id: GameId) -> None:
        try:
            destination = await self._locate(call.conn, game_id, call.command)
        except BusError:  # as any command routed while Redis is unreachable
            if not call.internal:
                self._host.send(call.conn, cluster_unavailable(call.ack))
            return
        except Exception:
            logger.exception("re-routing %s failed", type(call.command).__name__)
            if not call.internal:
                failure = "The server failed on this command."
                self._host.send(
                    call.conn, error_message(ErrorCode.INTERNAL_ERROR, failure, call.ack)
                )
            return
        if not destination or local.closed:
            return
        if destination == self._host.node_id:
            self._host.handle_here(call.conn, call.command, call.lag)
            return
        self.forward(
            call.conn,
            local,
            destination,
            call.command,
            call.lag,
            call.internal,
            bounces=call.bounces + 1,
        )

    # --- frames from remote hubs --------------------------------------------------------------

    def on_out(self, node_id: str, header: OutHeader, body: bytes) -> None:
        """Frames from a remote hub for local connections."""
        conns = header["c"]
        game_id = header.get("g")
        version = header.get("v")
        kind = header["t"]
        previous = header.get("pv") or [None] * len(conns)
        outboxes = []
        for conn_id, pv in zip(conns, previous, strict=True):
            local = self._locals.get(conn_id)
            peer = self._host.peer(conn_id)
            if local is None or peer is None:
                continue
            if game_id is not None:
                follow = local.follows.get(game_id)
                known = follow is not None and follow.node == node_id
                if follow is None or follow.node != node_id:
                    follow = self._locals.follow(conn_id, local, game_id, node_id)
                    self._host.mark_presence()
                if version is not None:
                    if kind == MessageKind.GAME:  # a snapshot: everything up to its version
                        follow.version = version
                    elif version <= follow.version:
                        # Already delivered: a re-join's replay can overlap the live events
                        # that reached this connection while it was asked for.
                        continue
                    elif known and pv is not None and pv != follow.version:
                        self._resync(conn_id, local, node_id, game_id, follow)
                        continue
                    else:
                        follow.version = version
                if kind == MessageKind.END:
                    follow.finished = True
                    self._ended.saw_end(game_id)
                    self._host.mark_presence()
            if kind == MessageKind.CHALLENGE and "cid" in header:
                local.challenges[header["cid"]] = node_id
            outboxes.append(peer.outbox)
        if outboxes:
            fan_out(outboxes, body)

    def _resync(
        self, conn_id: ConnId, local: LocalConnection, node_id: str, game_id: GameId, follow: Follow
    ) -> None:
        """An event of ``game_id`` sent to the connection was lost: join again from the last
        version passed on (once at a time; a later gap asks again)."""
        if follow.resyncing:
            return
        follow.resyncing = True
        logger.info(
            "room event lost for %s in %s after v=%d: resync", conn_id, game_id, follow.version
        )
        command = JoinCommand(game_id, follow.version, ack=INTERNAL_ACK)

        async def resync() -> None:
            try:
                await self.call_internal(conn_id, local, node_id, command)
            finally:
                follow.resyncing = False

        self._host.spawn(resync(), "resync")

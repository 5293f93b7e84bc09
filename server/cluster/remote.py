"""Remote connections: connections of other nodes attached to this node's hub.

A connection's home node forwards its commands here (``cmd`` envelopes on this node's channel);
the hub's effects for it go back to the home node, one bus message per node per broadcast, in
hub order. A command's answer goes back as a ``reply`` to the forwarded call.

The bus delivers at most once, so each room event sent to a remote connection carries (``pv``,
one per connection) the version of the previous room event of that game sent to that
connection: its home node sees from it that one went missing (see
:meth:`~server.cluster.forwarding.Forwarder.on_out`). A ``join`` with ``since`` restarts the
count there, since the hub replays the events after it.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from server.cluster.envelopes import CmdHeader, OutHeader, close_header, out_header, reply_header
from server.cluster.shared import Part, Shared
from server.cluster.wire import command_game, player_from_json
from server.hub.commands import JoinCommand, parse_command
from server.hub.effects import Broadcast, ConnId, Effect, GameId, Send
from server.hub.errors import ErrorCode, ProtocolError
from server.hub.identity import PlayerId, PlayerInfo
from server.hub.lobby import Challenge
from server.hub.messages import Message, MessageKind, error_message
from server.transport.codec import encode_message

__all__ = ["CALL_ACK_PREFIX", "Remote", "RemoteConnections"]

logger = logging.getLogger(__name__)

CALL_ACK_PREFIX = "~"
"""A forwarded command runs with ack ``~<call id>``: its answer is the call's reply."""
DROP_STEP = 250
"""A dead node's connections leave this hub this many per turn of the loop: the 2,000-odd of a
killed hub, each leaving its games' rooms at once, held a survivor's loop 19 ms in one step
(docs/benchmarks.md, "The survivor's long turns taken apart")."""


@dataclass(frozen=True)
class Remote:
    """A connection of another node attached to this hub."""

    node: str
    conn: ConnId
    player_id: PlayerId


class RemoteConnections(Part):
    """The other nodes' connections attached to this hub (see the module docstring)."""

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared)
        self._hub_conns: dict[tuple[str, ConnId], ConnId] = {}
        self._remote_of: dict[ConnId, Remote] = {}
        self._doomed: set[tuple[str, ConnId]] = set()
        """Connections of dead nodes waiting for their turn to leave (:meth:`drop_node`)."""
        self._last_sent: dict[ConnId, dict[GameId, int]] = {}
        """The version of the last room event of each game sent to each remote connection."""

    def __len__(self) -> int:
        return len(self._remote_of)

    def __contains__(self, hub_conn: object) -> bool:
        return hub_conn in self._remote_of

    def nodes(self) -> set[str]:
        """The nodes that have connections attached here."""
        return {remote.node for remote in self._remote_of.values()}

    def hub_conn_of(self, player_id: PlayerId) -> ConnId | None:
        """The hub connection of a remote connection of ``player_id``, if any."""
        for hub_conn, remote in self._remote_of.items():
            if remote.player_id == player_id:
                return hub_conn
        return None

    # --- attach and detach --------------------------------------------------------------------

    def attach(self, node_id: str, conn_id: ConnId, player: PlayerInfo) -> ConnId:
        key = (node_id, conn_id)
        self._doomed.discard(key)  # its node is back: it stays
        hub_conn = self._hub_conns.get(key)
        if hub_conn is None:
            hub = self._host.hub
            hub_conn = self._host.new_conn_id()
            self._hub_conns[key] = hub_conn
            self._remote_of[hub_conn] = Remote(node_id, conn_id, player.id)
            self._host.call(lambda now: hub.connect(hub_conn, player, now))
            # Its hello came from its home node, whose hub does not hold the stored
            # challenges waiting here: tell them.
            self._host.call(lambda now: _waiting(hub.stored_challenges(player.id), hub_conn))
        return hub_conn

    def detach(self, node_id: str, conn_id: ConnId) -> None:
        hub_conn = self._hub_conns.pop((node_id, conn_id), None)
        if hub_conn is None:
            return
        self._remote_of.pop(hub_conn, None)
        self._last_sent.pop(hub_conn, None)
        hub = self._host.hub
        self._host.call(lambda now: hub.disconnect(hub_conn, now))

    async def drop_node(self, node_id: str) -> None:
        """A node is dead: its connections leave this hub, :data:`DROP_STEP` per turn of the
        loop (one that came back meanwhile is attached again by its ``attach``: a detach of a
        connection already gone does nothing; one attached again before its turn stays)."""
        keys = [key for key in self._hub_conns if key[0] == node_id]
        self._doomed.update(keys)
        try:
            for start in range(0, len(keys), DROP_STEP):
                if start:
                    await asyncio.sleep(0)
                for key in keys[start : start + DROP_STEP]:
                    if key in self._doomed:
                        self._doomed.discard(key)
                        self.detach(*key)
        finally:
            self._doomed.difference_update(keys)

    def closed(self, hub_conn: ConnId, reason: str) -> None:
        """The hub closed a remote connection: tell its home node."""
        remote = self._remote_of.pop(hub_conn)
        self._last_sent.pop(hub_conn, None)
        self._hub_conns.pop((remote.node, remote.conn), None)
        self._sender.envelope(remote.node, close_header(remote.conn, reason))

    # --- commands in --------------------------------------------------------------------------

    def on_cmd(self, node_id: str, header: CmdHeader) -> None:
        """A command forwarded by a connection's home node: run it in this hub."""
        call_id = header["call"]
        conn_id = header["c"]
        try:
            command = parse_command(header["f"])
        except (ValueError, ProtocolError) as error:
            logger.warning("bad command from node %s: %s", node_id, error)
            return
        hub_conn = self._hub_conns.get((node_id, conn_id))
        player: PlayerInfo | None = None
        if hub_conn is None and "p" in header:
            player = player_from_json(header["p"])
        game_id = command_game(command)
        if game_id is not None and not self._ownership.runs(game_id):
            self._sender.envelope(node_id, reply_header(conn_id, call_id, moved=True))
            return
        if hub_conn is None:
            if player is None:  # detached here meanwhile: the home node sends the identity
                self._sender.envelope(node_id, reply_header(conn_id, call_id, unknown=True))
                return
            hub_conn = self.attach(node_id, conn_id, player)
        if isinstance(command, JoinCommand):
            sent = self._last_sent.setdefault(hub_conn, {})
            if command.since is None:
                sent.pop(command.game_id, None)
            else:
                sent[command.game_id] = command.since
        lag_ms = max(header["lag"], 0)
        hub = self._host.hub
        try:
            self._host.call(lambda now: hub.handle(hub_conn, command, now, lag_ms=lag_ms))
        except Exception:
            logger.exception("hub failed on %s from node %s", type(command).__name__, node_id)
            failure = error_message(ErrorCode.INTERNAL_ERROR)
            reply = reply_header(conn_id, call_id, message=failure.to_json_obj())
            self._sender.envelope(node_id, reply)

    # --- effects out --------------------------------------------------------------------------

    def send(self, hub_conn: ConnId, message: Message) -> None:
        """Send a hub message to a remote connection's home node."""
        remote = self._remote_of[hub_conn]
        if message.t == MessageKind.HELLO:
            return  # the connection's hello came from its home node
        if isinstance(message.a, str) and message.a.startswith(CALL_ACK_PREFIX):
            call_id = message.a[len(CALL_ACK_PREFIX) :]
            if call_id.isascii() and call_id.isdigit():
                obj = message.to_json_obj()
                obj.pop("a", None)
                reply = reply_header(remote.conn, int(call_id), message=obj)
                self._sender.envelope(remote.node, reply)
                return
        out = _meta(message, [remote.conn])
        if "g" in out and "v" in out:
            out["pv"] = [self._previous(hub_conn, out["g"], out["v"], out["t"])]
        self._sender.envelope(remote.node, out, encode_message(message))

    def broadcast(self, effect: Broadcast) -> list[ConnId]:
        """Send the remote part of a broadcast (one message per node); return the local
        connections it goes to."""
        local: list[ConnId] = []
        by_node: dict[str, list[ConnId]] = {}
        previous: dict[str, list[int | None]] = {}
        meta = _meta(effect.message, [])
        for conn_id in effect.conn_ids:
            remote = self._remote_of.get(conn_id)
            if remote is None:
                local.append(conn_id)
                continue
            by_node.setdefault(remote.node, []).append(remote.conn)
            if "g" in meta and "v" in meta:
                pv = self._previous(conn_id, meta["g"], meta["v"], meta["t"])
                previous.setdefault(remote.node, []).append(pv)
        if by_node:
            frame = encode_message(effect.message)
            for node_id, conns in by_node.items():
                header: OutHeader = {**meta, "c": conns}
                if node_id in previous:
                    header["pv"] = previous[node_id]
                self._sender.envelope(node_id, header, frame)
        return local

    def _previous(self, hub_conn: ConnId, game_id: GameId, version: int, kind: str) -> int | None:
        """The version of the room event of ``game_id`` last sent to ``hub_conn`` (None: not
        known), and remember ``version`` as the last; forget the game at its end."""
        sent = self._last_sent.setdefault(hub_conn, {})
        previous = sent.get(game_id)
        if kind == MessageKind.END:
            sent.pop(game_id, None)
        else:
            sent[game_id] = version
        return previous


def _waiting(challenges: list[Challenge], hub_conn: ConnId) -> list[Effect]:
    """``challenge`` messages of ``challenges`` to a connection attached from another node."""
    return [Send(hub_conn, Message(MessageKind.CHALLENGE, c.view())) for c in challenges]


def _meta(message: Message, conns: list[ConnId]) -> OutHeader:
    """The header of an ``out`` envelope to ``conns``: what the home node needs to know of the
    frame."""
    game_id = message.d.get("game")
    if not isinstance(game_id, str) or (message.v is None and message.t != MessageKind.GAME_START):
        game_id = None
    challenge = message.d.get("id") if message.t == MessageKind.CHALLENGE else None
    return out_header(
        message.t,
        conns,
        game=game_id,
        version=message.v if game_id is not None else None,
        challenge=challenge if isinstance(challenge, int) else None,
    )

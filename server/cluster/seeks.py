"""This node's part of the cluster lobby: the seek registry kept in step with the hub's seeks,
where seek commands run, ``sought`` over every node, and the seeks and challenges that a game
started elsewhere makes void.

A seek lives in exactly one hub; the registry (:class:`server.bus.SeekRegistry`, entries in
:mod:`server.cluster.lobby`) lists every node's seeks. A new seek pairs at once where a fitting
seek is; two fitting seeks posted at the same moment on two nodes are brought together by
:meth:`ClusterSeeks.reconcile`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterable
from typing import cast

from server.bus import NodeNotLiveError
from server.cluster.connections import LocalConnection
from server.cluster.forwarding import Forwarder
from server.cluster.host import INTERNAL_ACK, LOBBY_CHANNEL
from server.cluster.lobby import Listed, listed_from_payload, registry_payload
from server.cluster.remote import RemoteConnections
from server.cluster.shared import Part, Shared
from server.hub.commands import (
    Command,
    DeclineCommand,
    SeekCommand,
    SoughtCommand,
    UnseekCommand,
    WithdrawCommand,
)
from server.hub.effects import ConnId
from server.hub.identity import PlayerId, PlayerInfo
from server.hub.lobby import GameTerms, Seek, seeks_fit
from server.hub.messages import Message, MessageKind, ack_message
from server.hub.payloads import AckPayload, SoughtPayload
from server.jsontypes import JsonObject
from server.rules import get_variant
from server.transport.outbox import fan_out

__all__ = ["ClusterSeeks"]

logger = logging.getLogger(__name__)

RECONCILE_DELAY_S = 0.05
CHALLENGES_TRACKED = 1_000


class ClusterSeeks(Part):
    """See the module docstring."""

    def __init__(self, shared: Shared, remotes: RemoteConnections, forwarder: Forwarder) -> None:
        super().__init__(shared)
        self._registry = shared.cluster.seeks
        self._remotes = remotes
        self._forwarder = forwarder
        self._watchers: set[ConnId] = set()
        self._reconcile_pending = False
        self._hub_challenges: set[int] = set()  # ids of challenges this hub announced

    # --- where seek commands run --------------------------------------------------------------

    async def listed(self) -> list[Listed]:
        """The registry's entries, oldest first.

        :raises BusError: Redis is unreachable.
        """
        entries = await self._host.limited(self._registry.all())
        listed: list[Listed] = []
        for payload in entries.values():
            try:
                listed.append(listed_from_payload(payload))
            except ValueError as error:
                logger.warning("%s", error)
        listed.sort(key=lambda entry: (entry.posted, entry.node, entry.seek.id))
        return listed

    async def seek_destination(self, player: PlayerInfo, command: SeekCommand) -> str:
        """Where a new seek pairs at once: here if a seek of this hub fits, else the node of the
        oldest fitting listed seek, else here (where it is posted)."""
        node_id = self._host.node_id
        if command.manual:
            return node_id
        try:
            variant = get_variant(command.variant)
        except KeyError:
            return node_id  # the hub answers unknown_variant
        terms = GameTerms(variant.name, command.control, command.rated)
        mine = Seek(0, player, terms, command.colour, command.rating_range, False, 0)
        if any(seeks_fit(seek, mine) for seek in self._host.hub.seeks()):
            return node_id
        for entry in await self.listed():
            # The registry lists the seeks of live nodes only.
            if entry.node != node_id and seeks_fit(entry.seek, mine):
                return entry.node
        return node_id

    async def seek_node(self, seek_id: int) -> str:
        """The node holding seek ``seek_id`` (here when unknown: the hub answers)."""
        node_id = self._host.node_id
        if any(seek.id == seek_id for seek in self._host.hub.seeks()):
            return node_id
        payload = await self._host.limited(self._registry.get(str(seek_id)))
        if payload is None:
            return node_id  # the hub answers no_such_seek
        try:
            return listed_from_payload(payload).node
        except ValueError:
            return node_id

    async def unseek_everywhere(
        self, conn_id: ConnId, local: LocalConnection, command: UnseekCommand
    ) -> None:
        """``unseek`` without an id: every node holding a seek of the player drops them all."""
        host = self._host
        player_id = local.player.id
        removed = [seek.id for seek in host.hub.seeks() if seek.player.id == player_id]
        host.handle_here(conn_id, UnseekCommand(None, ack=INTERNAL_ACK))
        nodes = {
            entry.node
            for entry in await self.listed()
            if entry.seek.player.id == player_id and entry.node != host.node_id
        }
        replies = await asyncio.gather(
            *(
                self._forwarder.call_internal(conn_id, local, node_id, UnseekCommand(None))
                for node_id in sorted(nodes)
            )
        )
        for reply in replies:
            if reply is not None and reply.get("t") == MessageKind.ACK:
                answer = cast(AckPayload, reply["d"])  # another hub's ack, decoded
                removed += answer.get("removed", [])
        host.send(conn_id, ack_message(command.ack, {"removed": sorted(removed)}))

    # --- sought -------------------------------------------------------------------------------

    async def answer_sought(self, conn_id: ConnId, command: SoughtCommand) -> None:
        """Answer ``sought`` with every node's seeks (this hub's alone while degraded)."""
        if self._host.degraded:
            views = [seek.view() for seek in self._host.hub.seeks()]
        else:
            views = [entry.view for entry in await self.listed()]
        if command.watch is True:
            self._watchers.add(conn_id)
        elif command.watch is False:
            self._watchers.discard(conn_id)
        data: SoughtPayload = {"seeks": views, "watching": conn_id in self._watchers}
        self._host.send(conn_id, Message(MessageKind.SOUGHT, data, a=command.ack))

    def forget(self, conn_id: ConnId) -> None:
        """A connection closed: it watches the seeks no more."""
        self._watchers.discard(conn_id)

    def relay(self, frame: bytes) -> None:
        """Send a lobby frame to this node's seek watchers."""
        peers = [self._host.peer(conn_id) for conn_id in self._watchers]
        outboxes = [peer.outbox for peer in peers if peer is not None]
        if outboxes:
            fan_out(outboxes, frame)

    # --- the registry -------------------------------------------------------------------------

    def changed(self, message: Message, frame: bytes) -> None:
        """A lobby message of this hub: keep the registry in step with this hub's seeks, then
        tell every node."""
        seek_id = message.d.get("id")
        if not isinstance(seek_id, int):
            return
        seek = next((s for s in self._host.hub.seeks() if s.id == seek_id), None)
        if message.t == MessageKind.SEEK_ADDED and seek is not None:
            payload = registry_payload(seek, self._host.node_id)
            self._sender.enqueue(lambda: self._add(str(seek_id), payload), state=True)
        elif message.t == MessageKind.SEEK_REMOVED:
            self._sender.enqueue(lambda: self._remove(str(seek_id)), state=True)
        # After the registry update: a node told of the seek finds it listed.
        self._sender.enqueue((LOBBY_CHANNEL, frame), state=True)

    async def _add(self, seek_id: str, payload: str) -> None:
        try:
            if not await self._registry.add(seek_id, payload, self._host.node_id):
                logger.warning("seek %s is already listed by another node", seek_id)
        except NodeNotLiveError:
            self._host.mark_presence(reannounce=True)

    async def _remove(self, seek_id: str) -> None:
        await self._registry.remove(seek_id)

    async def relist(self) -> None:
        """List every seek of this hub again (the node's registry entries lapsed)."""
        node_id = self._host.node_id
        for seek in self._host.hub.seeks():
            await self._registry.add(str(seek.id), registry_payload(seek, node_id), node_id)

    # --- lobby messages of other nodes --------------------------------------------------------

    def on_lobby(self, channel: str, data: bytes) -> None:
        self.relay(data)
        if data.startswith(b'{"t":"seek_added"') and not self._reconcile_pending:
            self._reconcile_pending = True
            loop = asyncio.get_running_loop()
            loop.call_later(
                RECONCILE_DELAY_S, lambda: self._host.spawn(self.reconcile(), "reconcile")
            )

    async def reconcile(self) -> None:
        """Two fitting seeks posted at the same moment on two nodes (each before the other was
        listed) stay apart; the newer one moves to the older one's node, where they pair. Every
        node applies the same order (posted time, node, id), so exactly one of them moves."""
        self._reconcile_pending = False
        node_id = self._host.node_id
        mine = [seek for seek in self._host.hub.seeks() if not seek.manual]
        if not mine or self._host.degraded:
            return
        listed = await self.listed()
        rank = {(e.node, e.seek.id): (e.posted, e.node, e.seek.id) for e in listed}
        for seek in mine:
            own_rank = rank.get((node_id, seek.id))
            if own_rank is None:
                continue  # not listed yet: the next reconcile sees it
            older = next(
                (
                    entry
                    for entry in listed
                    if entry.node != node_id
                    and rank[(entry.node, entry.seek.id)] < own_rank
                    and seeks_fit(entry.seek, seek)
                ),
                None,
            )
            if older is not None:
                await self._move(seek, older.node)

    async def _move(self, seek: Seek, node_id: str) -> None:
        """Withdraw a seek of this hub and run it again on ``node_id`` for its player."""
        hub = self._host.hub
        conn_id = self._locals.connected_conn_of(seek.player.id)
        if conn_id is None or all(s.id != seek.id for s in hub.seeks()):
            return
        local = self._locals.get(conn_id)
        assert local is not None
        logger.info("seek %d fits an older seek on %s: moving it there", seek.id, node_id)
        unseek = UnseekCommand(seek.id, ack=INTERNAL_ACK)
        self._host.call(lambda now: hub.handle(conn_id, unseek, now))
        again = SeekCommand(
            seek.terms.variant,
            seek.terms.control,
            seek.terms.rated,
            seek.colour,
            seek.rating_range,
            seek.manual,
        )
        await self._forwarder.call_internal(conn_id, local, node_id, again)

    def on_games(self, channel: str, data: bytes) -> None:
        """A game started somewhere: its players' seeks here are void. A game ended: its
        players are free, whatever presence says until the owner updates it."""
        try:
            message = Message(**{k: v for k, v in _decode(data).items() if k in ("t", "d")})
        except (TypeError, ValueError):
            return
        game_id = message.d.get("game")
        if message.t == MessageKind.GAME_END and isinstance(game_id, str):
            self._ended.saw_end(game_id)
        if message.t != MessageKind.GAME_START:
            return
        if not isinstance(game_id, str) or self._host.hub.room(game_id) is not None:
            return
        listed = message.d.get("players", [])
        players = (
            [p.get("id") for p in listed if isinstance(p, dict)] if isinstance(listed, list) else []
        )
        self.withdraw_lobby_of([p for p in players if isinstance(p, str)])

    # --- challenges ---------------------------------------------------------------------------

    def track_challenge(self, challenge_id: int) -> None:
        """This hub announced a challenge (see :meth:`withdraw_lobby_of`)."""
        self._hub_challenges.add(challenge_id)
        if len(self._hub_challenges) > CHALLENGES_TRACKED:
            hub = self._host.hub
            self._hub_challenges = {c for c in self._hub_challenges if hub.challenge(c)}

    def withdraw_lobby_of(self, player_ids: Iterable[PlayerId]) -> None:
        """Drop the seeks and challenges in this hub of players who started a game on another
        hub: the players withdraw their seeks and challenges and decline those made to them.
        The stored (correspondence) ones stay, as a game started here leaves them."""
        hub = self._host.hub
        players = set(player_ids)
        for seek in hub.seeks():
            if seek.player.id in players and not seek.stored:
                conn_id = self._hub_conn_of(seek.player.id)
                if conn_id is not None:
                    self._run(conn_id, UnseekCommand(seek.id, ack=INTERNAL_ACK))
        for challenge_id in sorted(self._hub_challenges, key=str):
            challenge = hub.challenge(challenge_id)
            if challenge is None:
                self._hub_challenges.discard(challenge_id)
                continue
            if challenge.stored:
                continue
            answer: Command
            if challenge.sender.id in players:
                answer = WithdrawCommand(challenge.id, ack=INTERNAL_ACK)
                party = challenge.sender.id
            elif challenge.target.id in players:
                answer = DeclineCommand(challenge.id, "playing another game", ack=INTERNAL_ACK)
                party = challenge.target.id
            else:
                continue
            conn_id = self._hub_conn_of(party)
            if conn_id is not None:
                self._run(conn_id, answer)
                self._hub_challenges.discard(challenge_id)

    def _run(self, conn_id: ConnId, command: Command) -> None:
        hub = self._host.hub
        self._host.call(lambda now: hub.handle(conn_id, command, now))

    def _hub_conn_of(self, player_id: PlayerId) -> ConnId | None:
        conn_id = self._locals.connected_conn_of(player_id)
        return conn_id if conn_id is not None else self._remotes.hub_conn_of(player_id)


def _decode(data: bytes) -> JsonObject:
    obj = json.loads(data)
    if not isinstance(obj, dict):
        raise ValueError("not a message object")
    return obj

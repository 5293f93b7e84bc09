"""Routing: each command of a local connection runs in the hub that holds what it acts on.

That is the game's owner (its lease), the seek's node (the registry), the challenge's node,
the node of the oldest fitting seek, the target player's home node (a ``whois`` question to
every node); everything else runs here. A connection's commands are routed strictly in
order: while one waits for an asynchronous lookup, the next ones queue behind it. While Redis
is unreachable (degraded mode) everything runs here except the commands of games known to
run elsewhere, which are refused with ``cluster_unavailable``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque

from server.bus import BusError, GameRole
from server.cluster.connections import LocalConnection
from server.cluster.envelopes import HereHeader, WhoisHeader, here_header, whois_header
from server.cluster.forwarding import Forwarder
from server.cluster.host import (
    cluster_unavailable,
    node_unavailable,
)
from server.cluster.ownership import ORPHANED
from server.cluster.seeks import ClusterSeeks
from server.cluster.shared import Part, Shared
from server.cluster.wire import command_game
from server.hub.commands import (
    AcceptCommand,
    ChallengeAiCommand,
    Command,
    DeclineCommand,
    LeaveCommand,
    MatchCommand,
    PlayCommand,
    SeekCommand,
    SoughtCommand,
    UnseekCommand,
    WithdrawCommand,
)
from server.hub.effects import ConnId, GameId
from server.hub.errors import ErrorCode
from server.hub.identity import PlayerId
from server.hub.messages import error_message
from server.store import StoreError

__all__ = ["Router"]

logger = logging.getLogger(__name__)

WHOIS_TIMEOUT_S = 1.0


class Router(Part):
    """See the module docstring."""

    def __init__(self, shared: Shared, forwarder: Forwarder, seeks: ClusterSeeks) -> None:
        super().__init__(shared)
        self._forwarder = forwarder
        self._seeks = seeks
        self._whois: dict[int, asyncio.Future[str]] = {}
        self._last_query = 0

    # --- a connection's commands, in order ----------------------------------------------------

    def handle(
        self, conn_id: ConnId, local: LocalConnection, command: Command, lag_ms: int
    ) -> None:
        """Route one command of a local connection (queued behind any still being routed)."""
        if local.pending is not None:
            local.pending.append((command, lag_ms))
            return
        destination = self._route_now(command)
        if destination is None:
            local.pending = deque([(command, lag_ms)])
            self.drain_later(conn_id, local)
        else:
            self._dispatch_to(conn_id, local, destination, command, lag_ms)

    def drain_later(self, conn_id: ConnId, local: LocalConnection) -> None:
        """Route the commands queued meanwhile, if any (else stop queueing)."""
        if local.pending:
            self._host.spawn(self._drain(conn_id, local), "route")
        else:
            local.pending = None

    async def _drain(self, conn_id: ConnId, local: LocalConnection) -> None:
        """Route the queued commands of one connection in order (some need lookups)."""
        assert local.pending is not None
        host = self._host
        try:
            while local.pending and not local.closed:
                command, lag_ms = local.pending.popleft()
                try:
                    destination = await self._route(conn_id, local, command)
                except BusError:
                    fallback = self._degraded_destination(command)
                    if fallback is None:
                        host.send(conn_id, cluster_unavailable(command.ack))
                        continue
                    destination = fallback
                except Exception:
                    logger.exception("routing %s failed", type(command).__name__)
                    failure = "The server failed on this command."
                    host.send(
                        conn_id, error_message(ErrorCode.INTERNAL_ERROR, failure, command.ack)
                    )
                    continue
                if destination:
                    self._dispatch_to(conn_id, local, destination, command, lag_ms)
        finally:
            local.pending = None

    def _dispatch_to(
        self, conn_id: ConnId, local: LocalConnection, node_id: str, command: Command, lag_ms: int
    ) -> None:
        if isinstance(command, LeaveCommand):
            self._locals.unfollow(conn_id, local, command.game_id)
            self._host.mark_presence()
        if node_id == self._host.node_id:
            self._host.handle_here(conn_id, command, lag_ms)
        else:
            self._forwarder.forward(conn_id, local, node_id, command, lag_ms)

    # --- where a command runs -----------------------------------------------------------------

    def _route_now(self, command: Command) -> str | None:
        """The node that runs ``command`` when it is known without waiting, else None."""
        game_id = command_game(command)
        if game_id is None:
            return None
        if self._ownership.runs(game_id):
            return self._host.node_id
        if self._host.degraded:
            return self._degraded_destination(command)
        owner = self._ownership.cached_owner(game_id)
        if owner is not None and self._liveness.is_live(owner):
            return owner
        return None

    def _degraded_destination(self, command: Command) -> str | None:
        """Where a command goes while Redis is down: here, unless it needs another node (None:
        it is answered ``cluster_unavailable``). A game this node does not run goes here only
        when it saw the game end (the hub answers); any other may run on a node that cannot be
        asked now — here it would get ``no_such_game`` for a game going on elsewhere."""
        node_id = self._host.node_id
        game_id = command_game(command)
        if game_id is not None and not self._ownership.runs(game_id):
            return node_id if game_id in self._ended else None
        return node_id

    async def _route(self, conn_id: ConnId, local: LocalConnection, command: Command) -> str:
        """The node that runs ``command`` (this one: ``node_id``); ``""`` when it was answered
        here already."""
        host, seeks = self._host, self._seeks
        if host.degraded:
            if isinstance(command, SoughtCommand):
                await seeks.answer_sought(conn_id, command)
                return ""
            destination = self._degraded_destination(command)
            if destination is None:
                host.send(conn_id, cluster_unavailable(command.ack))
                return ""
            return destination
        game_id = command_game(command)
        if game_id is not None:
            return await self.game_destination(conn_id, game_id, command)
        match command:
            case SoughtCommand():
                await seeks.answer_sought(conn_id, command)
                return ""
            case SeekCommand():
                if await self._refuse_if_playing(conn_id, local, command):
                    return ""
                return await seeks.seek_destination(local.player, command)
            case PlayCommand():
                if await self._refuse_if_playing(conn_id, local, command):
                    return ""
                return await seeks.seek_node(command.seek_id)
            case UnseekCommand(seek_id=None):
                await seeks.unseek_everywhere(conn_id, local, command)
                return ""
            case UnseekCommand(seek_id=int(seek_id)):
                return await seeks.seek_node(seek_id)
            case MatchCommand():
                if await self._refuse_if_playing(conn_id, local, command):
                    return ""
                return await self._home_of(command.to)
            case AcceptCommand():
                if await self._refuse_if_playing(conn_id, local, command):
                    return ""
                return local.challenges.get(command.challenge_id, host.node_id)
            case ChallengeAiCommand():
                if await self._refuse_if_playing(conn_id, local, command):
                    return ""
            case DeclineCommand() | WithdrawCommand():
                return local.challenges.get(command.challenge_id, host.node_id)
        return host.node_id

    async def game_destination(self, conn_id: ConnId, game_id: GameId, command: Command) -> str:
        """The node that runs ``game_id`` now; ``""`` when the connection was answered
        ``node_unavailable`` (the owner died, or its takeover is under way)."""
        host = self._host
        if self._ownership.runs(game_id):
            return host.node_id
        owner = await host.limited(self._ownership.owner_of(game_id, take_over=True))
        if owner == ORPHANED:  # its node died: another one takes it over in a moment
            host.send(conn_id, node_unavailable(command.ack))
            return ""
        if owner is None or owner == host.node_id:
            return host.node_id  # unknown or finished: the hub answers
        if not await host.limited(self._liveness.alive(owner)):
            host.send(conn_id, node_unavailable(command.ack))
            return ""
        return owner

    async def running_game_elsewhere(self, player_id: PlayerId) -> GameId | None:
        """A game the player plays on another node, as presence tells (ignoring the games this
        node has seen end: the owner may not have updated presence yet); else, as the store
        tells, an unfinished game of the player whose node died and whose takeover is pending
        (presence no longer names it).

        :raises BusError: Redis is unreachable.
        :raises StoreError: the store is unreachable.
        """
        games = await self._host.limited(self._cluster.presence.games_of(player_id))
        for game_id, role in games.items():
            ended = game_id in self._ended
            if role is GameRole.PLAYING and self._host.hub.room(game_id) is None and not ended:
                return game_id
        # Not within ``limited``: its slots are for Redis calls, and this waits on the store.
        return await self._ownership.unfinished_game_of(player_id, self._ended)

    async def _refuse_if_playing(
        self, conn_id: ConnId, local: LocalConnection, command: Command
    ) -> bool:
        """Answer ``already_playing`` when the player plays a game on another node."""
        if self._host.hub.active_game(local.player.id) is not None:
            return False  # this hub refuses by itself
        try:
            playing = await self.running_game_elsewhere(local.player.id)
        except StoreError:
            # Unknown whether a game of the player waits for its takeover: starting another
            # one now could leave that one without a hub for good.
            self._host.send(conn_id, error_message(ErrorCode.UNAVAILABLE, ack=command.ack))
            return True
        if playing is None:
            return False
        failure = error_message(ErrorCode.ALREADY_PLAYING, ack=command.ack)
        self._host.send(conn_id, failure)
        return True

    # --- whois --------------------------------------------------------------------------------

    async def _home_of(self, name: str) -> str:
        """The node where a player named ``name`` is connected (here if unknown)."""
        node_id = self._host.node_id
        if self._locals.has_name(name.lower()):
            return node_id
        self._last_query += 1
        query = self._last_query
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._whois[query] = future
        try:
            self._sender.notice(whois_header(query, name))
            return await asyncio.wait_for(future, WHOIS_TIMEOUT_S)
        except TimeoutError:
            return node_id
        finally:
            self._whois.pop(query, None)

    def on_whois(self, node_id: str, header: WhoisHeader) -> None:
        """Another node asks where a player is: answer if the player is connected here."""
        if node_id != self._host.node_id and self._locals.has_name(header["name"]):
            self._sender.envelope(node_id, here_header(header["q"]))

    def on_here(self, node_id: str, header: HereHeader) -> None:
        """The answer to this node's ``whois``: the player is connected on ``node_id``."""
        future = self._whois.get(header["q"])
        if future is not None and not future.done():
            future.set_result(node_id)

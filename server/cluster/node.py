"""One node of a cluster: the hub driver that reaches hubs on other nodes.

:class:`ClusterDriver` is the transport's :class:`~server.transport.driver.HubDriver` plus what
several hub processes need (design: ``docs/architecture.md``, "Scale-out"):

* **routing** — each command of a local connection runs in the hub that holds what it acts on:
  the game's owner (lease), the seek's node (registry), the challenge's node, the node of the
  oldest fitting seek, the target's home node; everything else here;
* **remote connections** — a connection of another node, attached to this hub: commands arrive
  on this node's channel ``node:<id>``, and the hub's effects for it go back to its home node,
  one bus message per node per broadcast, in hub order;
* **ownership** — leases of the games this hub runs, takeover of orphaned games from the store,
  fencing (:mod:`server.cluster.ownership`);
* **presence** and the **seek registry** kept in step with the hub;
* **degraded mode** while Redis is unreachable, and resynchronisation after it.

Everything runs on the event loop thread; hub calls stay synchronous. A local connection's
commands are routed strictly in order: while one waits for an asynchronous lookup (registry,
lease owner, a ``whois``), the next ones queue behind it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from server.bus import Bus, BusError, Cluster, GameRole, NodeNotLiveError
from server.cluster.lobby import Listed, listed_from_payload, registry_payload
from server.cluster.ownership import ORPHANED, FencedRecorder, Ownership
from server.cluster.presence import Announcer, Wanted
from server.cluster.restore import Resumable
from server.cluster.wire import (
    EnvelopeError,
    command_game,
    command_to_frame,
    pack,
    player_from_json,
    player_to_json,
    unpack,
    unpack_batch,
)
from server.config import Settings
from server.hub.commands import (
    AcceptCommand,
    Command,
    DeclineCommand,
    JoinCommand,
    LeaveCommand,
    MatchCommand,
    PlayCommand,
    SeekCommand,
    SoughtCommand,
    UnseekCommand,
    WithdrawCommand,
    parse_command,
)
from server.hub.effects import Broadcast, Close, ConnId, Effect, GameId, Publish, Send
from server.hub.errors import ProtocolError
from server.hub.hub import Hub
from server.hub.identity import PlayerId, PlayerInfo
from server.hub.lobby import GameTerms, Seek, seeks_fit
from server.hub.messages import AckId, Message, ack_message, error_message
from server.rules import get_variant
from server.store import Store, StoredGame
from server.transport.codec import encode_message
from server.transport.driver import HubDriver, Peer, Recorder, monotonic_ms
from server.transport.outbox import fan_out

__all__ = [
    "INTERNAL_ACK",
    "LOBBY_CHANNEL",
    "NODES_CHANNEL",
    "ClusterDriver",
    "node_channel",
]

logger = logging.getLogger(__name__)

LOBBY_CHANNEL = "lobby"
GAMES_CHANNEL = "games"
NODES_CHANNEL = "nodes"
"""Cluster-wide notices: ``whois`` questions and ``moved`` (a game was taken over)."""

INTERNAL_ACK = "~0"
"""Ack id of the commands the node itself runs in its hub; their answers are dropped."""
CALL_ACK_PREFIX = "~"
WHOIS_TIMEOUT_S = 1.0
MIN_CALL_TIMEOUT_S = 5.0
LIVE_RECHECK_S = 0.25
REJOIN_RETRY_S = 0.5
CLOSE_FLUSH_S = 1.0
RECONCILE_DELAY_S = 0.05
SEND_BATCH = 256
REDIS_CONCURRENCY = 32
PUBLISH_CONCURRENCY = 16
NODE_CHANNEL_PREFIX = "node:"
ENDED_MEMORY = 10_000
CHALLENGES_TRACKED = 1_000
ENDED_MEMORY_S = 600.0
OUTGOING_LIMIT = 100_000
ID_BASE_BITS = 32
"""Each hub numbers seeks and challenges from a random multiple of 2**32 (ids stay < 2**53)."""


def node_channel(node_id: str) -> str:
    """The bus channel a node reads its envelopes from."""
    return f"{NODE_CHANNEL_PREFIX}{node_id}"


def _error(code: str, text: str, ack: AckId | None) -> Message:
    return error_message(code, text, ack)


def cluster_unavailable(ack: AckId | None) -> Message:
    return _error(
        "cluster_unavailable",
        "This needs another server of the cluster, which cannot be reached right now; "
        "your games on this server go on. Please retry shortly.",
        ack,
    )


def node_unavailable(ack: AckId | None) -> Message:
    return _error(
        "node_unavailable",
        "The server running this is not reachable right now (another server takes its games "
        "over within seconds). Please retry shortly.",
        ack,
    )


@dataclass
class _Follow:
    """A remote game a local connection receives events of."""

    node: str
    version: int = 0
    finished: bool = False


@dataclass
class _Local:
    """A connection whose websocket is on this node."""

    player: PlayerInfo
    peer: Peer
    connected: bool = False
    closed: bool = False
    pending: deque[tuple[Command, int]] | None = None
    attached: set[str] = field(default_factory=set)
    follows: dict[GameId, _Follow] = field(default_factory=dict)
    challenges: dict[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Remote:
    """A connection of another node attached to this hub."""

    node: str
    conn: ConnId
    player_id: PlayerId


@dataclass
class _Call:
    """A command forwarded to another node, waiting for its answer."""

    conn: ConnId
    ack: AckId | None
    node: str
    command: Command
    lag: int
    internal: bool
    future: asyncio.Future[dict[str, Any] | None] | None
    bounces: int = 0
    timer: asyncio.TimerHandle | None = None


Outgoing = tuple[str, bytes] | Callable[[], Awaitable[None]]
T = TypeVar("T")


class ClusterDriver(HubDriver):
    """The hub driver of one node of a cluster (see the module docstring).

    :param remember: told of each stored game this node takes over, before it resumes (the
        store recorder learns the game's pool and clock kind).
    """

    def __init__(
        self,
        hub: Hub,
        recorder: Recorder,
        *,
        settings: Settings,
        bus: Bus,
        cluster: Cluster,
        store: Store,
        clock: Callable[[], int] = monotonic_ms,
        rng: random.Random | None = None,
        remember: Callable[[StoredGame], None] | None = None,
    ) -> None:
        self.node_id = settings.node_id
        self.remember = remember
        self.bus = bus
        self.cluster = cluster
        self.store = store
        self.settings = settings
        self.ownership = Ownership(self, cluster.leases, store, settings.lease_ttl_ms)
        super().__init__(hub, FencedRecorder(recorder, self.ownership), None, clock)
        rng = rng or random.Random()
        # Unique seek and challenge ids across the cluster's hubs (see ID_BASE_BITS).
        hub.set_id_base(rng.randrange(1, 2**20) << ID_BASE_BITS)
        self._presence_ttl = settings.presence_ttl_ms
        self.call_timeout_s = max(MIN_CALL_TIMEOUT_S, settings.lease_ttl_ms / 1000)
        self._locals: dict[ConnId, _Local] = {}
        self._player_conns: dict[PlayerId, set[ConnId]] = {}
        self._names: dict[str, PlayerId] = {}
        self._remotes: dict[tuple[str, ConnId], ConnId] = {}
        self._remote_of: dict[ConnId, _Remote] = {}
        self._calls: dict[int, _Call] = {}
        self._last_call = 0
        self._whois: dict[int, asyncio.Future[str]] = {}
        self._seek_watchers: set[ConnId] = set()
        self._hello_game: dict[ConnId, GameId] = {}
        # Two ordered senders: messages (node channels, games), and the shared state (the seek
        # registry with the lobby channel, presence), whose slower scripts must not hold up moves.
        self._outgoing: asyncio.Queue[Outgoing] = asyncio.Queue(OUTGOING_LIMIT)
        self._state_updates: asyncio.Queue[Outgoing] = asyncio.Queue(OUTGOING_LIMIT)
        self._background: set[asyncio.Task[Any]] = set()
        self._loops: list[asyncio.Task[None]] = []
        self._live_nodes: set[str] = {self.node_id}
        self._live_checked = 0.0
        self._live_refresh: asyncio.Future[None] | None = None
        self._healthy_since = float("-inf")  # reset when the bus recovers from an outage
        self._announcer = Announcer(
            cluster.presence, self.node_id, self._presence_ttl, self._relist_seeks
        )
        self._presence_dirty = False
        self._reconcile_pending = False
        self._ended: dict[GameId, float] = {}
        self._hub_challenges: set[Any] = set()  # ids of challenges this hub announced
        self._redis_slots = asyncio.Semaphore(REDIS_CONCURRENCY)
        self._publish_slots = asyncio.Semaphore(PUBLISH_CONCURRENCY)
        self._started = False
        self.dropped_publishes = 0
        self._remove_degraded_listener: Callable[[], None] | None = None

    # ============================================================ lifecycle

    async def start(self) -> None:
        """Announce the node, subscribe its channels, start the background loops, and take over
        the unfinished games nobody owns (this is also restart recovery)."""
        await self.cluster.presence.heartbeat(self.node_id, self._presence_ttl)
        await self.bus.subscribe(node_channel(self.node_id), self._on_node_message)
        await self.bus.subscribe(NODES_CHANNEL, self._on_notice)
        await self.bus.subscribe(LOBBY_CHANNEL, self._on_lobby)
        await self.bus.subscribe(GAMES_CHANNEL, self._on_games)
        self._remove_degraded_listener = self.bus.add_degraded_listener(self._on_degraded)
        self._started = True
        await self._refresh_live_nodes()
        self._loops = [
            asyncio.create_task(self._send_forever(self._outgoing), name="cluster-sender"),
            asyncio.create_task(self._send_forever(self._state_updates), name="cluster-state"),
            asyncio.create_task(self._presence_forever(), name="cluster-presence"),
            asyncio.create_task(self.ownership.renew_forever(), name="cluster-leases"),
            asyncio.create_task(self.ownership.sweep_forever(), name="cluster-sweep"),
        ]
        await self.ownership.sweep()

    async def close(self, timeout: float = 10.0) -> None:
        """Finish the writes in flight, give up the leases and leave the cluster."""
        # The last messages (detaches of the connections just closed) go out first.
        deadline = time.monotonic() + CLOSE_FLUSH_S
        while not (self._outgoing.empty() and self._state_updates.empty()):
            if time.monotonic() >= deadline:
                break
            await asyncio.sleep(0.01)
        for task in self._loops:
            task.cancel()
        for task in self._loops:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._loops = []
        if self._remove_degraded_listener is not None:
            self._remove_degraded_listener()
        for call_id in list(self._calls):
            self._finish_call(call_id, None)
        await super().close(timeout)
        with contextlib.suppress(BusError):
            await self.ownership.release_all()
            await self.cluster.presence.node_down(self.node_id)
        for task in list(self._background):
            task.cancel()

    def spawn(self, coroutine: Awaitable[Any], name: str = "cluster") -> None:
        """Run a background coroutine; its failure is logged."""

        async def run() -> None:
            try:
                await coroutine
            except asyncio.CancelledError:
                raise
            except BusError as error:
                logger.info("%s: cluster unavailable (%s)", name, error)
            except Exception:
                logger.exception("%s failed", name)

        task = asyncio.get_running_loop().create_task(run(), name=name)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    @property
    def degraded(self) -> bool:
        return self.bus.degraded

    def healthy_for(self, seconds: float) -> bool:
        """Whether the bus has been up (not degraded) for at least ``seconds``."""
        return not self.bus.degraded and time.monotonic() - self._healthy_since >= seconds

    async def _limited(self, call: Awaitable[T]) -> T:
        """Await a cluster-state call, at most :data:`REDIS_CONCURRENCY` at once: commands of
        many connections look things up at the same time, and Redis clients have a bounded
        connection pool."""
        async with self._redis_slots:
            return await call

    def is_live(self, node_id: str) -> bool:
        """Whether ``node_id`` was live at the last look (a new node may not be known yet)."""
        return node_id == self.node_id or node_id in self._live_nodes

    async def alive(self, node_id: str) -> bool:
        """Whether ``node_id`` is live, looking again if it was not at the last look.

        :raises BusError: Redis is unreachable.
        """
        if self.is_live(node_id):
            return True
        if self._live_refresh is None:
            # Looks are at most every LIVE_RECHECK_S; a node that started after the last look is
            # not in it yet, so wait for the next look rather than call it dead.
            delay = LIVE_RECHECK_S - (time.monotonic() - self._live_checked)
            self._live_refresh = asyncio.ensure_future(self._refresh_live_nodes_after(delay))
            self._live_refresh.add_done_callback(self._live_refreshed)
        if self._live_refresh is not None:  # wait for the look in progress, whoever started it
            await asyncio.shield(self._live_refresh)
        return self.is_live(node_id)

    def _live_refreshed(self, refresh: asyncio.Future[None]) -> None:
        self._live_refresh = None
        if not refresh.cancelled():
            refresh.exception()  # retrieved: the waiters got it

    def report(self) -> dict[str, Any]:
        """Cluster facts for ``/healthz``."""
        return {
            "node": self.node_id,
            "degraded": self.degraded,
            "live_nodes": sorted(self._live_nodes),
            "owned_games": len(self.ownership.owned),
            "fenced_games": len(self.ownership.lost),
            "taken_over": self.ownership.taken_over,
            "remote_connections": len(self._remote_of),
            "dropped_publishes": self.dropped_publishes,
        }

    async def presence_report(self) -> dict[str, Any]:
        """Who is online through a live node, and the games each one plays or watches.

        :raises BusError: Redis is unreachable.
        """
        presence = self.cluster.presence
        players: dict[str, Any] = {}
        for player_id in sorted(await presence.online_players()):
            games = await presence.games_of(player_id)
            players[player_id] = {"games": {g: role.value for g, role in sorted(games.items())}}
        return {"nodes": sorted(await presence.live_nodes()), "players": players}

    def clock(self) -> int:
        """The hub's current time (ms)."""
        return self._clock()

    def restore(self, game: Resumable) -> None:
        """Resume a stored game in this hub (takeover); its effects run at once.

        The resumed room's event versions restart above every version the old owner can have
        issued (the wall clock in ms): a client that reconnects with a version seen before the
        takeover gets a snapshot, never a replay of unrelated events with the same numbers.

        :raises ValueError: the hub refuses it (see :meth:`Hub.restore_game`).
        """
        first_version = int(time.time() * 1000) + 1
        self.call(
            lambda now: self.hub.restore_game(
                game.game_id,
                game.terms,
                game.players,
                game.start_fen,
                game.moves,
                now,
                first_version=first_version,
            )
        )

    # ============================================================ outgoing bus messages

    def publish(self, channel: str, data: bytes) -> None:
        """Queue one bus message; sent in order by one task, dropped while degraded."""
        self._enqueue((channel, data))

    def _enqueue(self, item: Outgoing, state: bool = False) -> None:
        """Queue a message (or, with ``state``, a cluster-state update) for its sender."""
        try:
            (self._state_updates if state else self._outgoing).put_nowait(item)
        except asyncio.QueueFull:
            self.dropped_publishes += 1

    async def _send_forever(self, queue: asyncio.Queue[Outgoing]) -> None:
        """Send the queued items in order: each round takes what queued up meanwhile, merges
        the envelopes for one node channel into one bus message (a batch), and publishes the
        channels concurrently — the order within each channel is kept, a publish waiting for
        Redis does not hold up the others. Callables (state updates) run in turn."""
        while True:
            items = [await queue.get()]
            while len(items) < SEND_BATCH and not queue.empty():
                items.append(queue.get_nowait())
            channels: dict[str, list[bytes]] = {}
            for item in items:
                if isinstance(item, tuple):
                    channels.setdefault(item[0], []).append(item[1])
                    continue
                await self._send_channels(channels)  # what was queued before goes first
                await self._send_one(item)
            await self._send_channels(channels)

    async def _send_channels(self, channels: dict[str, list[bytes]]) -> None:
        async def send(channel: str, messages: list[bytes]) -> None:
            async with self._publish_slots:
                if channel.startswith(NODE_CHANNEL_PREFIX):
                    await self._send_one((channel, b"\n".join(messages)))
                    return
                for message in messages:
                    await self._send_one((channel, message))

        if channels:
            await asyncio.gather(*(send(c, m) for c, m in channels.items()))
            channels.clear()

    async def _send_one(self, item: Outgoing) -> None:
        try:
            if isinstance(item, tuple):
                if self.bus.degraded:
                    self.dropped_publishes += 1
                    self._publish_failed(*item)
                    return
                await self.bus.publish(*item)
            else:
                await item()
        except BusError as error:
            self.dropped_publishes += 1
            logger.info("bus message dropped: %s", error)
            if isinstance(item, tuple):
                self._publish_failed(*item)
        except Exception:
            logger.exception("cluster sender failed on one message")

    def _publish_failed(self, channel: str, data: bytes) -> None:
        # Lobby changes still reach this node's own watchers without the bus.
        if channel == LOBBY_CHANNEL:
            self._relay_lobby(data)

    def _envelope(self, node_id: str, header: dict[str, Any], body: bytes = b"") -> None:
        header["from"] = self.node_id
        self.publish(node_channel(node_id), pack(header, body))

    # ============================================================ local connections

    def connect(self, conn_id: ConnId, peer: Peer, player: PlayerInfo) -> None:
        local = _Local(player, peer, pending=deque())
        self._locals[conn_id] = local
        self._player_conns.setdefault(player.id, set()).add(conn_id)
        self._names[player.name.lower()] = player.id
        self.spawn(self._connect(conn_id, local), "connect")

    async def _connect(self, conn_id: ConnId, local: _Local) -> None:
        """Look up the player's running game elsewhere (for ``hello``), then join the hub."""
        game_id: GameId | None = None
        owner: str | None = None
        try:
            if not self.degraded:
                game_id = await self._running_game_elsewhere(local.player.id)
                if game_id is not None:
                    owner = await self._limited(self.ownership.owner_of(game_id, take_over=True))
        except BusError:
            game_id = None
        finally:
            if not local.closed:
                if game_id is not None:
                    self._hello_game[conn_id] = game_id
                local.connected = True
                super().connect(conn_id, local.peer, local.player)
                self._hello_game.pop(conn_id, None)
                if self.degraded:
                    self.send(conn_id, Message("degraded", {"on": True}))
                self.mark_presence()
            self._drain_later(conn_id, local)
        if owner and owner != self.node_id and not local.closed:
            # End the player's absence on the owner: attach this connection there.
            local.attached.add(owner)
            player = player_to_json(local.player)
            self._envelope(owner, {"k": "attach", "c": conn_id, "p": player})

    def disconnect(self, conn_id: ConnId) -> None:
        local = self._locals.pop(conn_id, None)
        if local is None:
            super().disconnect(conn_id)
            return
        local.closed = True
        conns = self._player_conns.get(local.player.id, set())
        conns.discard(conn_id)
        if not conns:
            self._player_conns.pop(local.player.id, None)
            if self._names.get(local.player.name.lower()) == local.player.id:
                del self._names[local.player.name.lower()]
        self._seek_watchers.discard(conn_id)
        for node_id in local.attached:
            self._envelope(node_id, {"k": "detach", "c": conn_id})
        for call_id, call in list(self._calls.items()):
            if call.conn == conn_id and not call.internal:
                self._finish_call(call_id, None)
        if local.connected:
            super().disconnect(conn_id)
        self.mark_presence()

    def handle(self, conn_id: ConnId, command: Command, lag_ms: int = 0) -> None:
        local = self._locals.get(conn_id)
        if local is None:
            super().handle(conn_id, command, lag_ms)
            return
        if local.pending is not None:
            local.pending.append((command, lag_ms))
            return
        destination = self._route_now(command)
        if destination is None:
            local.pending = deque([(command, lag_ms)])
            self._drain_later(conn_id, local)
        else:
            self._dispatch_to(conn_id, local, destination, command, lag_ms)

    def _drain_later(self, conn_id: ConnId, local: _Local) -> None:
        if local.pending:
            self.spawn(self._drain(conn_id, local), "route")
        else:
            local.pending = None

    async def _drain(self, conn_id: ConnId, local: _Local) -> None:
        """Route the queued commands of one connection in order (some need lookups)."""
        assert local.pending is not None
        try:
            while local.pending and not local.closed:
                command, lag_ms = local.pending.popleft()
                try:
                    destination = await self._route(conn_id, local, command)
                except BusError:
                    fallback = self._degraded_destination(command)
                    if fallback is None:
                        self.send(conn_id, cluster_unavailable(command.ack))
                        continue
                    destination = fallback
                except Exception:
                    logger.exception("routing %s failed", type(command).__name__)
                    failure = "The server failed on this command."
                    self.send(conn_id, _error("internal_error", failure, command.ack))
                    continue
                if destination:
                    self._dispatch_to(conn_id, local, destination, command, lag_ms)
        finally:
            local.pending = None

    def _dispatch_to(
        self, conn_id: ConnId, local: _Local, node_id: str, command: Command, lag_ms: int
    ) -> None:
        if isinstance(command, LeaveCommand):
            local.follows.pop(command.game_id, None)
            self.mark_presence()
        if node_id == self.node_id:
            super().handle(conn_id, command, lag_ms)
        else:
            self._forward(conn_id, local, node_id, command, lag_ms)

    # ============================================================ routing

    def _route_now(self, command: Command) -> str | None:
        """The node that runs ``command`` when it is known without waiting, else None."""
        game_id = command_game(command)
        if game_id is None:
            return None
        if self.ownership.runs(game_id):
            return self.node_id
        if self.degraded:
            return self._degraded_destination(command)
        owner = self.ownership.cached_owner(game_id)
        if owner is not None and self.is_live(owner):
            return owner
        return None

    def _degraded_destination(self, command: Command) -> str | None:
        """Where a command goes while Redis is down: here, unless it needs another node."""
        game_id = command_game(command)
        if game_id is not None and not self.ownership.runs(game_id):
            known_elsewhere = self.ownership.cached_owner(game_id) not in (None, self.node_id)
            return None if known_elsewhere else self.node_id
        return self.node_id

    async def _route(self, conn_id: ConnId, local: _Local, command: Command) -> str:
        """The node that runs ``command`` (this one: ``node_id``); ``""`` when it was answered
        here already."""
        if self.degraded:
            if isinstance(command, SoughtCommand):
                self._answer_sought(conn_id, command, self._local_seek_views())
                return ""
            destination = self._degraded_destination(command)
            if destination is None:
                self.send(conn_id, cluster_unavailable(command.ack))
                return ""
            return destination
        game_id = command_game(command)
        if game_id is not None:
            return await self._game_destination(conn_id, game_id, command)
        match command:
            case SoughtCommand():
                views = await self._cluster_seek_views()
                self._answer_sought(conn_id, command, views)
                return ""
            case SeekCommand():
                if await self._refuse_if_playing(conn_id, local, command):
                    return ""
                return await self._seek_destination(local.player, command)
            case PlayCommand():
                if await self._refuse_if_playing(conn_id, local, command):
                    return ""
                return await self._seek_node(command.seek_id)
            case UnseekCommand(seek_id=None):
                await self._unseek_everywhere(conn_id, local, command)
                return ""
            case UnseekCommand(seek_id=int(seek_id)):
                return await self._seek_node(seek_id)
            case MatchCommand():
                if await self._refuse_if_playing(conn_id, local, command):
                    return ""
                return await self._home_of(command.to)
            case AcceptCommand():
                if await self._refuse_if_playing(conn_id, local, command):
                    return ""
                return local.challenges.get(command.challenge_id, self.node_id)
            case DeclineCommand() | WithdrawCommand():
                return local.challenges.get(command.challenge_id, self.node_id)
        return self.node_id

    async def _game_destination(self, conn_id: ConnId, game_id: GameId, command: Command) -> str:
        if self.ownership.runs(game_id):
            return self.node_id
        owner = await self._limited(self.ownership.owner_of(game_id, take_over=True))
        if owner == ORPHANED:  # its node died: another one takes it over in a moment
            self.send(conn_id, node_unavailable(command.ack))
            return ""
        if owner is None or owner == self.node_id:
            return self.node_id  # unknown or finished: the hub answers
        if not await self._limited(self.alive(owner)):
            self.send(conn_id, node_unavailable(command.ack))
            return ""
        return owner

    async def _running_game_elsewhere(self, player_id: PlayerId) -> GameId | None:
        """A game the player plays on another node, as presence tells (ignoring the games this
        node has seen end: the owner may not have updated presence yet)."""
        games = await self._limited(self.cluster.presence.games_of(player_id))
        for game_id, role in games.items():
            ended = game_id in self._ended
            if role is GameRole.PLAYING and self.hub.room(game_id) is None and not ended:
                return game_id
        return None

    def _saw_end(self, game_id: GameId) -> None:
        now = time.monotonic()
        self._ended[game_id] = now
        if len(self._ended) > ENDED_MEMORY:
            for old in [g for g, at in self._ended.items() if now - at > ENDED_MEMORY_S]:
                del self._ended[old]

    async def _refuse_if_playing(self, conn_id: ConnId, local: _Local, command: Command) -> bool:
        """Answer ``already_playing`` when the player plays a game on another node."""
        if self.hub.active_game(local.player.id) is not None:
            return False  # this hub refuses by itself
        if await self._running_game_elsewhere(local.player.id) is None:
            return False
        self.send(
            conn_id, _error("already_playing", "Finish your current game first.", command.ack)
        )
        return True

    async def _listed_seeks(self) -> list[Listed]:
        entries = await self._limited(self.cluster.seeks.all())
        listed: list[Listed] = []
        for payload in entries.values():
            try:
                listed.append(listed_from_payload(payload))
            except ValueError as error:
                logger.warning("%s", error)
        listed.sort(key=lambda entry: (entry.posted, entry.node, entry.seek.id))
        return listed

    async def _seek_destination(self, player: PlayerInfo, command: SeekCommand) -> str:
        """Where a new seek pairs at once: here if a seek of this hub fits, else the node of the
        oldest fitting listed seek, else here (where it is posted)."""
        if command.manual:
            return self.node_id
        try:
            variant = get_variant(command.variant)
        except KeyError:
            return self.node_id  # the hub answers unknown_variant
        terms = GameTerms(variant.name, command.control, command.rated)
        mine = Seek(0, player, terms, command.colour, command.rating_range, False, 0)
        if any(seeks_fit(seek, mine) for seek in self.hub.seeks()):
            return self.node_id
        for entry in await self._listed_seeks():
            # The registry lists the seeks of live nodes only.
            if entry.node != self.node_id and seeks_fit(entry.seek, mine):
                return entry.node
        return self.node_id

    async def _seek_node(self, seek_id: int) -> str:
        if any(seek.id == seek_id for seek in self.hub.seeks()):
            return self.node_id
        payload = await self._limited(self.cluster.seeks.get(str(seek_id)))
        if payload is None:
            return self.node_id  # the hub answers no_such_seek
        try:
            node_id = listed_from_payload(payload).node
        except ValueError:
            return self.node_id
        return node_id

    async def _unseek_everywhere(
        self, conn_id: ConnId, local: _Local, command: UnseekCommand
    ) -> None:
        """``unseek`` without an id: every node holding a seek of the player drops them all."""
        player_id = local.player.id
        removed = [seek.id for seek in self.hub.seeks() if seek.player.id == player_id]
        super().handle(conn_id, UnseekCommand(None, ack=INTERNAL_ACK))
        nodes = {
            entry.node
            for entry in await self._listed_seeks()
            if entry.seek.player.id == player_id and entry.node != self.node_id
        }
        replies = await asyncio.gather(
            *(
                self._call_internal(conn_id, local, node_id, UnseekCommand(None))
                for node_id in sorted(nodes)
            )
        )
        for reply in replies:
            if reply is not None and reply.get("t") == "ack":
                removed += reply.get("d", {}).get("removed", [])
        self.send(conn_id, ack_message(command.ack, {"removed": sorted(removed)}))

    async def _home_of(self, name: str) -> str:
        """The node where a player named ``name`` is connected (here if unknown)."""
        if name.lower() in self._names:
            return self.node_id
        self._last_call += 1
        query = self._last_call
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._whois[query] = future
        try:
            header = {"k": "whois", "from": self.node_id, "q": query, "name": name.lower()}
            self.publish(NODES_CHANNEL, pack(header))
            return await asyncio.wait_for(future, WHOIS_TIMEOUT_S)
        except TimeoutError:
            return self.node_id
        finally:
            self._whois.pop(query, None)

    # ============================================================ sought

    def _local_seek_views(self) -> list[dict[str, Any]]:
        return [seek.view() for seek in self.hub.seeks()]

    async def _cluster_seek_views(self) -> list[dict[str, Any]]:
        return [entry.view for entry in await self._listed_seeks()]

    def _answer_sought(
        self, conn_id: ConnId, command: SoughtCommand, views: list[dict[str, Any]]
    ) -> None:
        if command.watch is True:
            self._seek_watchers.add(conn_id)
        elif command.watch is False:
            self._seek_watchers.discard(conn_id)
        data = {"seeks": views, "watching": conn_id in self._seek_watchers}
        self.send(conn_id, Message("sought", data, a=command.ack))

    def _on_lobby(self, channel: str, data: bytes) -> None:
        self._relay_lobby(data)
        if data.startswith(b'{"t":"seek_added"') and not self._reconcile_pending:
            self._reconcile_pending = True
            loop = asyncio.get_running_loop()
            loop.call_later(RECONCILE_DELAY_S, lambda: self.spawn(self._reconcile(), "reconcile"))

    async def _reconcile(self) -> None:
        """Two fitting seeks posted at the same moment on two nodes (each before the other was
        listed) stay apart; the newer one moves to the older one's node, where they pair. Every
        node applies the same order (posted time, node, id), so exactly one of them moves."""
        self._reconcile_pending = False
        mine = [seek for seek in self.hub.seeks() if not seek.manual]
        if not mine or self.degraded:
            return
        listed = await self._listed_seeks()
        rank = {(e.node, e.seek.id): (e.posted, e.node, e.seek.id) for e in listed}
        for seek in mine:
            own_rank = rank.get((self.node_id, seek.id))
            if own_rank is None:
                continue  # not listed yet: the next reconcile sees it
            older = next(
                (
                    entry
                    for entry in listed
                    if entry.node != self.node_id
                    and rank[(entry.node, entry.seek.id)] < own_rank
                    and seeks_fit(entry.seek, seek)
                ),
                None,
            )
            if older is not None:
                await self._move_seek(seek, older.node)

    async def _move_seek(self, seek: Seek, node_id: str) -> None:
        """Withdraw a seek of this hub and run it again on ``node_id`` for its player."""
        conn_id = next(
            (c for c in self._player_conns.get(seek.player.id, ()) if self._locals[c].connected),
            None,
        )
        if conn_id is None or all(s.id != seek.id for s in self.hub.seeks()):
            return
        local = self._locals[conn_id]
        logger.info("seek %d fits an older seek on %s: moving it there", seek.id, node_id)
        self.call(partial(self._hub_handle, conn_id, UnseekCommand(seek.id, ack=INTERNAL_ACK)))
        again = SeekCommand(
            seek.terms.variant,
            seek.terms.control,
            seek.terms.rated,
            seek.colour,
            seek.rating_range,
            seek.manual,
        )
        await self._call_internal(conn_id, local, node_id, again)

    def _relay_lobby(self, frame: bytes) -> None:
        outboxes = [
            peer.outbox for peer in map(self._peers.get, self._seek_watchers) if peer is not None
        ]
        if outboxes:
            fan_out(outboxes, frame)

    # ============================================================ forwarding (home side)

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
        future: asyncio.Future[dict[str, Any] | None] | None = None
        if internal:
            future = asyncio.get_running_loop().create_future()
        call = _Call(conn_id, command.ack, node_id, command, lag_ms, internal, future, bounces)
        call.timer = asyncio.get_running_loop().call_later(
            self.call_timeout_s, self._call_timed_out, self._last_call
        )
        self._calls[self._last_call] = call
        return self._last_call, call

    def _forward(
        self,
        conn_id: ConnId,
        local: _Local,
        node_id: str,
        command: Command,
        lag_ms: int,
        internal: bool = False,
        bounces: int = 0,
    ) -> asyncio.Future[dict[str, Any] | None] | None:
        """Run ``command`` of a local connection in ``node_id``'s hub."""
        if self.degraded:
            if not internal:
                self.send(conn_id, cluster_unavailable(command.ack))
                return None
            future: asyncio.Future[dict[str, Any] | None] = (
                asyncio.get_running_loop().create_future()
            )
            future.set_result(None)
            return future
        call_id, call = self._new_call(conn_id, node_id, command, lag_ms, internal, bounces)
        header = {
            "k": "cmd",
            "c": conn_id,
            "f": command_to_frame(command, ack=f"{CALL_ACK_PREFIX}{call_id}"),
            "lag": lag_ms,
            "call": call_id,
        }
        if node_id not in local.attached:  # the identity goes with the first command only
            header["p"] = player_to_json(local.player)
            local.attached.add(node_id)
        self._envelope(node_id, header)
        return call.future

    async def _call_internal(
        self, conn_id: ConnId, local: _Local, node_id: str, command: Command
    ) -> dict[str, Any] | None:
        """Run a command on behalf of a connection whose answer the node keeps to itself."""
        future = self._forward(conn_id, local, node_id, command, 0, internal=True)
        return None if future is None else await future

    def _call_timed_out(self, call_id: int) -> None:
        call = self._calls.get(call_id)
        if call is None:
            return
        logger.info("no answer from node %s for %s", call.node, type(call.command).__name__)
        self.ownership.forget_node(call.node)
        self._finish_call(call_id, None)
        if not call.internal:
            self.send(call.conn, node_unavailable(call.ack))

    def _finish_call(self, call_id: int, reply: dict[str, Any] | None) -> _Call | None:
        call = self._calls.pop(call_id, None)
        if call is None:
            return None
        if call.timer is not None:
            call.timer.cancel()
        if call.future is not None and not call.future.done():
            call.future.set_result(reply)
        return call

    def _on_reply(self, node_id: str, header: dict[str, Any]) -> None:
        call_id = header.get("call")
        if not isinstance(call_id, int):
            return
        call = self._calls.get(call_id)
        if call is None:
            return
        if header.get("moved"):
            self._reroute(call_id, call)
            return
        if header.get("unknown"):
            self._finish_call(call_id, None)
            local = self._locals.get(call.conn)
            if local is not None and not local.closed and call.bounces < 1:
                local.attached.discard(node_id)
                self._forward(call.conn, local, node_id, call.command, call.lag, call.internal, 1)
            return
        message = header.get("m")
        if not isinstance(message, dict):
            return
        self._finish_call(call_id, message)
        if call.internal:
            return
        self.send(
            call.conn,
            Message(str(message.get("t")), message.get("d") or {}, message.get("v"), call.ack),
        )

    def _reroute(self, call_id: int, call: _Call) -> None:
        """The node no longer runs the call's game: look the owner up again (once)."""
        self._finish_call(call_id, None)
        game_id = command_game(call.command)
        local = self._locals.get(call.conn)
        if game_id is None or local is None or local.closed:
            return
        self.ownership.forget(game_id)
        if call.bounces >= 1:
            if not call.internal:
                self.send(call.conn, node_unavailable(call.ack))
            return
        self.spawn(self._reroute_call(call, local, game_id), "reroute")

    async def _reroute_call(self, call: _Call, local: _Local, game_id: GameId) -> None:
        destination = await self._game_destination(call.conn, game_id, call.command)
        if not destination or local.closed:
            return
        if destination == self.node_id:
            HubDriver.handle(self, call.conn, call.command, call.lag)
            return
        self._forward(
            call.conn,
            local,
            destination,
            call.command,
            call.lag,
            call.internal,
            bounces=call.bounces + 1,
        )

    def _on_out(self, node_id: str, header: dict[str, Any], body: bytes) -> None:
        """Frames from a remote hub for local connections."""
        conns = header.get("c")
        if not isinstance(conns, list):
            return
        game_id = header.get("g")
        version = header.get("v")
        kind = header.get("t")
        outboxes = []
        for conn_id in conns:
            local = self._locals.get(conn_id)
            peer = self._peers.get(conn_id)
            if local is None or peer is None:
                continue
            outboxes.append(peer.outbox)
            if isinstance(game_id, str):
                follow = local.follows.get(game_id)
                if follow is None or follow.node != node_id:
                    follow = local.follows[game_id] = _Follow(node_id)
                    self.mark_presence()
                if isinstance(version, int):
                    follow.version = max(follow.version, version)
                if kind == "end":
                    follow.finished = True
                    self._saw_end(game_id)
                    self.mark_presence()
            if kind == "challenge" and isinstance(header.get("cid"), int):
                local.challenges[header["cid"]] = node_id
        if outboxes:
            fan_out(outboxes, body)

    # ============================================================ remote connections (this hub)

    def _attach(self, node_id: str, conn_id: ConnId, player: PlayerInfo) -> ConnId:
        key = (node_id, conn_id)
        hub_conn = self._remotes.get(key)
        if hub_conn is None:
            hub_conn = self.new_conn_id()
            self._remotes[key] = hub_conn
            self._remote_of[hub_conn] = _Remote(node_id, conn_id, player.id)
            self.call(lambda now: self.hub.connect(hub_conn, player, now))
        return hub_conn

    def _detach(self, node_id: str, conn_id: ConnId) -> None:
        hub_conn = self._remotes.pop((node_id, conn_id), None)
        if hub_conn is None:
            return
        self._remote_of.pop(hub_conn, None)
        self.call(lambda now: self.hub.disconnect(hub_conn, now))

    def drop_node(self, node_id: str) -> None:
        """A node is dead: its connections leave this hub."""
        for key in [key for key in self._remotes if key[0] == node_id]:
            self._detach(*key)

    def _on_cmd(self, node_id: str, header: dict[str, Any]) -> None:
        call_id = header.get("call")
        conn_id = header.get("c")
        if not isinstance(call_id, int) or not isinstance(conn_id, int):
            return
        try:
            command = parse_command(header.get("f"))
            hub_conn = self._remotes.get((node_id, conn_id))
            if hub_conn is None and "p" in header:
                player: PlayerInfo | None = player_from_json(header["p"])
            else:
                player = None
        except (ValueError, ProtocolError) as error:
            logger.warning("bad command from node %s: %s", node_id, error)
            return
        game_id = command_game(command)
        if game_id is not None and not self.ownership.runs(game_id):
            self._envelope(node_id, {"k": "reply", "c": conn_id, "call": call_id, "moved": True})
            return
        if hub_conn is None:
            if player is None:  # detached here meanwhile: the home node sends the identity
                reply = {"k": "reply", "c": conn_id, "call": call_id, "unknown": True}
                self._envelope(node_id, reply)
                return
            hub_conn = self._attach(node_id, conn_id, player)
        lag = header.get("lag")
        lag_ms = lag if isinstance(lag, int) and lag >= 0 else 0
        try:
            self.call(lambda now: self.hub.handle(hub_conn, command, now, lag_ms=lag_ms))
        except Exception:
            logger.exception("hub failed on %s from node %s", type(command).__name__, node_id)
            failure = error_message("internal_error", "The server failed on this command.")
            self._envelope(
                node_id,
                {"k": "reply", "c": conn_id, "call": call_id, "m": failure.to_json_obj()},
            )

    # ============================================================ effects

    def run(self, effects: list[Effect]) -> None:
        """Effects for remote connections go to their home nodes; the rest run as usual."""
        here: list[Effect] = []
        for effect in effects:
            if isinstance(effect, Send):
                if effect.message.t == "challenge":
                    self._track_challenge(effect.message.d.get("id"))
                if effect.conn_id in self._remote_of:
                    self._send_remote(effect.conn_id, effect.message)
                    continue
                if effect.message.a == INTERNAL_ACK or self._fenced_message(effect.message):
                    continue
                if effect.message.t == "hello" and effect.conn_id in self._hello_game:
                    data = {**effect.message.d, "game": self._hello_game[effect.conn_id]}
                    effect = Send(effect.conn_id, Message("hello", data))
                self._watch_local(effect.conn_id, effect.message)
            elif isinstance(effect, Broadcast):
                if self._fenced_message(effect.message):
                    continue
                effect = self._broadcast_remote(effect)
                if not effect.conn_ids:
                    continue
            elif isinstance(effect, Close) and effect.conn_id in self._remote_of:
                remote = self._remote_of.pop(effect.conn_id)
                self._remotes.pop((remote.node, remote.conn), None)
                self._envelope(remote.node, {"k": "close", "c": remote.conn, "r": effect.reason})
                continue
            elif isinstance(effect, Publish):
                if not self._fenced_message(effect.message):
                    self._on_publish(effect)
                continue
            here.append(effect)
        if here:
            super().run(here)

    def _fenced_message(self, message: Message) -> bool:
        """A message of a game this node lost to another owner: never shown to anyone."""
        game_id = message.d.get("game") if isinstance(message.d, dict) else None
        return isinstance(game_id, str) and game_id in self.ownership.lost

    def _meta(self, message: Message) -> dict[str, Any]:
        header: dict[str, Any] = {"k": "out", "t": message.t}
        game_id = message.d.get("game")
        if message.v is not None and isinstance(game_id, str):
            header["g"] = game_id
            header["v"] = message.v
        elif message.t == "game_start" and isinstance(game_id, str):
            header["g"] = game_id
        if message.t == "challenge" and isinstance(message.d.get("id"), int):
            header["cid"] = message.d["id"]
        return header

    def _send_remote(self, hub_conn: ConnId, message: Message) -> None:
        remote = self._remote_of[hub_conn]
        if message.t == "hello":
            return  # the connection's hello came from its home node
        if isinstance(message.a, str) and message.a.startswith(CALL_ACK_PREFIX):
            call_id = message.a[len(CALL_ACK_PREFIX) :]
            if call_id.isdigit():
                obj = message.to_json_obj()
                obj.pop("a", None)
                header = {"k": "reply", "c": remote.conn, "call": int(call_id), "m": obj}
                self._envelope(remote.node, header)
                return
        header = self._meta(message)
        header["c"] = [remote.conn]
        self._envelope(remote.node, header, encode_message(message))

    def _broadcast_remote(self, effect: Broadcast) -> Broadcast:
        """Send the remote part of a broadcast (one message per node); return the local part."""
        local: list[ConnId] = []
        by_node: dict[str, list[ConnId]] = {}
        for conn_id in effect.conn_ids:
            remote = self._remote_of.get(conn_id)
            if remote is None:
                local.append(conn_id)
            else:
                by_node.setdefault(remote.node, []).append(remote.conn)
        if by_node:
            frame = encode_message(effect.message)
            for node_id, conns in by_node.items():
                header = self._meta(effect.message)
                header["c"] = conns
                self._envelope(node_id, header, frame)
        for conn_id in local:
            self._watch_local(conn_id, effect.message)
        if len(local) == len(effect.conn_ids):
            return effect
        return Broadcast(effect.topic, effect.message, tuple(local))

    def _watch_local(self, conn_id: ConnId, message: Message) -> None:
        if message.t == "game" and message.d.get("role") == "spectator":
            self.mark_presence()

    def _on_publish(self, effect: Publish) -> None:
        message = effect.message
        frame = encode_message(message)
        if effect.channel == LOBBY_CHANNEL:
            self._lobby_changed(message, frame)
            return
        if effect.channel == GAMES_CHANNEL:
            self.mark_presence()
        self.publish(effect.channel, frame)

    def _lobby_changed(self, message: Message, frame: bytes) -> None:
        """Keep the registry in step with this hub's seeks, then tell every node."""
        seek_id = message.d.get("id")
        if not isinstance(seek_id, int):
            return
        seek = next((s for s in self.hub.seeks() if s.id == seek_id), None)
        if message.t == "seek_added" and seek is not None:
            payload = registry_payload(seek, self.node_id)
            self._enqueue(lambda: self._registry_add(str(seek_id), payload), state=True)
        elif message.t == "seek_removed":
            self._enqueue(lambda: self._registry_remove(str(seek_id)), state=True)
        # After the registry update: a node told of the seek finds it listed.
        self._enqueue((LOBBY_CHANNEL, frame), state=True)

    async def _registry_add(self, seek_id: str, payload: str) -> None:
        try:
            if not await self.cluster.seeks.add(seek_id, payload, self.node_id):
                logger.warning("seek %s is already listed by another node", seek_id)
        except NodeNotLiveError:
            self.mark_presence(reannounce=True)

    async def _registry_remove(self, seek_id: str) -> None:
        await self.cluster.seeks.remove(seek_id)

    # ============================================================ incoming bus messages

    def _on_node_message(self, channel: str, data: bytes) -> None:
        try:
            envelopes = unpack_batch(data)
        except EnvelopeError as error:
            logger.warning("dropped a message on %s: %s", channel, error)
            return
        for header, body in envelopes:
            self._on_envelope(header, body)

    def _on_envelope(self, header: dict[str, Any], body: bytes) -> None:
        kind = header["k"]
        node_id = header.get("from")
        if not isinstance(node_id, str):
            return
        if kind == "out":
            self._on_out(node_id, header, body)
        elif kind == "reply":
            self._on_reply(node_id, header)
        elif kind == "cmd":
            self._on_cmd(node_id, header)
        elif kind == "attach":
            with contextlib.suppress(ValueError):
                if isinstance(header.get("c"), int):
                    self._attach(node_id, header["c"], player_from_json(header.get("p")))
        elif kind == "detach":
            if isinstance(header.get("c"), int):
                self._detach(node_id, header["c"])
        elif kind == "close":
            peer = self._peers.get(header.get("c", -1))
            local = self._locals.get(header.get("c", -1))
            if local is not None:
                local.attached.discard(node_id)
            if peer is not None:
                peer.close_soon(1008, str(header.get("r", "closed")))
        elif kind == "here":
            future = self._whois.get(header.get("q", -1))
            if future is not None and not future.done():
                future.set_result(node_id)

    def _on_notice(self, channel: str, data: bytes) -> None:
        try:
            header, _ = unpack(data)
        except EnvelopeError:
            return
        node_id = header.get("from")
        if not isinstance(node_id, str):
            return
        if header["k"] == "whois":
            if node_id != self.node_id and header.get("name") in self._names:
                self._envelope(node_id, {"k": "here", "q": header.get("q")})
        elif header["k"] == "moved" and node_id != self.node_id:
            game_id = header.get("g")
            players = header.get("players")
            if isinstance(game_id, str):
                self.ownership.set_cached_owner(game_id, node_id)
                self.rejoin(game_id, players if isinstance(players, list) else [])

    def _on_games(self, channel: str, data: bytes) -> None:
        """A game started somewhere: its players' seeks here are void. A game ended: its
        players are free, whatever presence says until the owner updates it."""
        try:
            message = Message(**{k: v for k, v in _decode(data).items() if k in ("t", "d")})
        except (TypeError, ValueError):
            return
        game_id = message.d.get("game")
        if message.t == "game_end" and isinstance(game_id, str):
            self._saw_end(game_id)
        if message.t != "game_start":
            return
        if not isinstance(game_id, str) or self.hub.room(game_id) is not None:
            return
        players = [p.get("id") for p in message.d.get("players", []) if isinstance(p, dict)]
        self.withdraw_lobby_of([p for p in players if isinstance(p, str)])

    def withdraw_lobby_of(self, player_ids: Iterable[PlayerId]) -> None:
        """Drop the seeks and challenges in this hub of players who started a game on another
        hub: the players withdraw their seeks and challenges and decline those made to them."""
        players = set(player_ids)
        for player_id in players:
            conn_id = self._hub_conn_of(player_id)
            if conn_id is not None and any(s.player.id == player_id for s in self.hub.seeks()):
                unseek = UnseekCommand(None, ack=INTERNAL_ACK)
                self.call(partial(self._hub_handle, conn_id, unseek))
        for challenge_id in sorted(self._hub_challenges, key=str):
            challenge = self.hub.challenge(challenge_id) if isinstance(challenge_id, int) else None
            if challenge is None:
                self._hub_challenges.discard(challenge_id)
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
                self.call(partial(self._hub_handle, conn_id, answer))
                self._hub_challenges.discard(challenge_id)

    def _track_challenge(self, challenge_id: Any) -> None:
        self._hub_challenges.add(challenge_id)
        if len(self._hub_challenges) > CHALLENGES_TRACKED:
            self._hub_challenges = {
                c for c in self._hub_challenges if isinstance(c, int) and self.hub.challenge(c)
            }

    def _hub_handle(self, conn_id: ConnId, command: Command, now_ms: int) -> list[Effect]:
        return self.hub.handle(conn_id, command, now_ms)

    def _hub_conn_of(self, player_id: PlayerId) -> ConnId | None:
        for conn_id in self._player_conns.get(player_id, ()):
            if self._locals[conn_id].connected:
                return conn_id
        for hub_conn, remote in self._remote_of.items():
            if remote.player_id == player_id:
                return hub_conn
        return None

    def rejoin(self, game_id: GameId, player_ids: Iterable[Any]) -> None:
        """Re-join a game that moved to another node (or after an outage): its followers here
        with the last version they saw, and its players' connections here."""
        players = {p for p in player_ids if isinstance(p, str)}
        for conn_id, local in list(self._locals.items()):
            follow = local.follows.get(game_id)
            if follow is not None and not follow.finished:
                since: int | None = follow.version
            elif local.player.id in players and local.connected:
                since = None
            else:
                continue
            self.spawn(self._rejoin_one(conn_id, local, game_id, since), "rejoin")

    async def _rejoin_one(
        self, conn_id: ConnId, local: _Local, game_id: GameId, since: int | None
    ) -> None:
        """Join one connection to a game's current owner, waiting while it has none yet (right
        after an outage, or while the game is being taken over)."""
        command = JoinCommand(game_id, since, ack=INTERNAL_ACK)
        deadline = time.monotonic() + 2 * self.ownership.ttl_ms / 1000 + self.call_timeout_s
        while not local.closed and time.monotonic() < deadline:
            if self.degraded:
                return  # the recovery rejoins again
            owner = await self._limited(self.ownership.owner_of(game_id, take_over=True))
            if owner == self.node_id:
                super().handle(conn_id, command)
                return
            reachable = False
            if owner:
                reachable = await self._limited(self.alive(owner))
            if owner and reachable:  # noqa: SIM102
                if await self._call_internal(conn_id, local, owner, command) is not None:
                    return
            await asyncio.sleep(REJOIN_RETRY_S)

    # ============================================================ degraded mode

    def _on_degraded(self, degraded: bool) -> None:
        notice = Message("degraded", {"on": degraded})
        for conn_id, local in self._locals.items():
            if local.connected:
                self.send(conn_id, notice)
        if degraded:
            logger.warning("cluster degraded: Redis is unreachable")
            for call_id, call in list(self._calls.items()):
                self._finish_call(call_id, None)
                if not call.internal:
                    self.send(call.conn, cluster_unavailable(call.ack))
            return
        logger.warning("cluster recovered")
        self._healthy_since = time.monotonic()
        self.spawn(self._recover(), "recover")

    async def _recover(self) -> None:
        """After an outage: re-announce, re-acquire leases, re-join followed remote games."""
        self.mark_presence(reannounce=True)
        await self.ownership.renew_all()
        followed: dict[GameId, set[ConnId]] = {}
        for conn_id, local in self._locals.items():
            for game_id, follow in local.follows.items():
                if not follow.finished:
                    followed.setdefault(game_id, set()).add(conn_id)
        for game_id in followed:
            self.ownership.forget(game_id)
            self.rejoin(game_id, ())

    # ============================================================ presence

    def mark_presence(self, reannounce: bool = False) -> None:
        """Bring the presence announcements in step with this node soon."""
        if reannounce:
            self._announcer.forget()
        if not self._presence_dirty and self._started:
            self._presence_dirty = True
            self._enqueue(self._sync_presence, state=True)

    async def _sync_presence(self) -> None:
        self._presence_dirty = False
        await self._announcer.sync(self._wanted_presence())

    def _wanted_presence(self) -> Wanted:
        online = {local.player.id for local in self._locals.values() if local.connected}
        games: dict[tuple[PlayerId, GameId], GameRole] = {}
        for game_id in self.ownership.owned:
            room = self.hub.room(game_id)
            if room is not None and room.started:
                for player in room.players:
                    games[(player.id, game_id)] = GameRole.PLAYING
                for conn_id, side in room.members.items():
                    local = self._locals.get(conn_id)
                    if side is None and local is not None:
                        games.setdefault((local.player.id, game_id), GameRole.WATCHING)
        for local in self._locals.values():
            for game_id, follow in local.follows.items():
                if not follow.finished:
                    games.setdefault((local.player.id, game_id), GameRole.WATCHING)
        return online, games

    async def _relist_seeks(self) -> None:
        for seek in self.hub.seeks():
            payload = registry_payload(seek, self.node_id)
            await self.cluster.seeks.add(str(seek.id), payload, self.node_id)

    async def _refresh_live_nodes_after(self, delay: float) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        await self._refresh_live_nodes()

    async def _refresh_live_nodes(self) -> None:
        self._live_checked = time.monotonic()
        live = await self.cluster.presence.live_nodes()
        live.add(self.node_id)
        for node_id in self._live_nodes - live:
            self.ownership.forget_node(node_id)
        self._live_nodes = live
        for call_id, call in list(self._calls.items()):
            if call.node not in live:
                self._finish_call(call_id, None)
                if not call.internal:
                    self.send(call.conn, node_unavailable(call.ack))
        # Right after an outage the other nodes may not have heartbeated yet: wait a TTL.
        if self.healthy_for(self._presence_ttl / 1000):
            for node_id in {remote.node for remote in self._remote_of.values()} - live:
                logger.warning("node %s is gone: dropping its connections here", node_id)
                self.drop_node(node_id)

    async def _presence_forever(self) -> None:
        interval = self._presence_ttl / 3000
        while True:
            await asyncio.sleep(interval)
            if self.degraded:
                continue
            try:
                self.mark_presence()
                await self._refresh_live_nodes()
            except BusError as error:
                logger.info("presence: cluster unavailable (%s)", error)


def _decode(data: bytes) -> dict[str, Any]:
    obj = json.loads(data)
    if not isinstance(obj, dict):
        raise ValueError("not a message object")
    return obj

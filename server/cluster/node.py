"""One node of a cluster: the hub driver that reaches hubs on other nodes.

:class:`ClusterDriver` is the transport's :class:`~server.transport.driver.HubDriver` plus what
several hub processes need (design: ``docs/architecture.md``, "Scale-out"). It is a front
that composes one part per job and wires the bus to them:

* :mod:`~server.cluster.routing` — each command of a local connection runs in the hub that
  holds what it acts on;
* :mod:`~server.cluster.forwarding` — commands forwarded to another node, their replies and
  timeouts, and the frames that node's hub sends back;
* :mod:`~server.cluster.remote` — connections of other nodes attached to this hub;
* :mod:`~server.cluster.seeks` — the seek registry kept in step with the hub, ``sought``;
* :mod:`~server.cluster.ownership` — leases of the games this hub runs, takeover, fencing;
* :mod:`~server.cluster.liveness` — which nodes are live;
* :mod:`~server.cluster.presence` — the announcements of this node's players;
* :mod:`~server.cluster.resync` — degraded mode while Redis is unreachable, resynchronisation;
* :mod:`~server.cluster.delivery` — where the hub's effects go (home nodes, registry, bus);
* :mod:`~server.cluster.inbox` — what arrives on the bus, handed to the part it is for;
* :mod:`~server.cluster.outgoing` — the ordered queues of what the node sends on the bus.

The parts share :class:`~server.cluster.shared.Shared` and reach the node only through
:class:`~server.cluster.host.Host` (ownership through :class:`~server.cluster.ownership.Owner`),
which this class implements; none of them imports this module.

Everything runs on the event loop thread; hub calls stay synchronous.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypedDict, TypeVar

from server.bus import Bus, BusError, Cluster
from server.cluster.connections import EndedGames, LocalConnection, LocalConnections
from server.cluster.delivery import Delivery
from server.cluster.envelopes import attach_header, detach_header
from server.cluster.forwarding import Forwarder
from server.cluster.host import (
    GAMES_CHANNEL,
    INTERNAL_ACK,
    LOBBY_CHANNEL,
    NODES_CHANNEL,
    node_channel,
)
from server.cluster.inbox import Inbox
from server.cluster.liveness import Liveness
from server.cluster.outgoing import Sender
from server.cluster.ownership import FencedRecorder, Ownership
from server.cluster.presence import Announcer, PresenceKeeper
from server.cluster.remote import RemoteConnections
from server.cluster.restore import Resumable
from server.cluster.resync import Resync
from server.cluster.routing import Router
from server.cluster.seeks import ClusterSeeks
from server.cluster.shared import Shared
from server.cluster.wire import player_to_json
from server.config import Settings
from server.hub.commands import Command
from server.hub.effects import ConnId, Effect, GameId
from server.hub.hub import Hub
from server.hub.identity import PlayerInfo
from server.hub.messages import Message, MessageKind
from server.store import GameRecord, Store, StoreError, node_of
from server.transport.accounts import store_player_id
from server.transport.driver import HubDriver, monotonic_ms, wall_ms
from server.transport.driver_ports import ASK, AskStore, Peer, Recorder, StoredGames

__all__ = [
    "INTERNAL_ACK",
    "LOBBY_CHANNEL",
    "NODES_CHANNEL",
    "ClusterDriver",
    "ClusterReport",
    "PresenceReport",
    "node_channel",
]

logger = logging.getLogger(__name__)

MIN_CALL_TIMEOUT_S = 5.0
CLOSE_FLUSH_S = 1.0
REDIS_CONCURRENCY = 32
CONNECTS_AT_ONCE = 32
"""Logins whose lookups (the player's game on another node) run at once; the others wait their
turn before their first lookup. The public listener admits 32 connections opening at once, but
lets a slot go after a second, and in a reconnect storm onto a busy survivor a login's lookups
took seconds: hundreds ran at once and their steps, answered together, held turns of the loop
for 40–50 ms (docs/benchmarks.md, "The survivor's long turns taken apart"). Bounded, a turn holds at most this many."""
ID_BASE_BITS = 32
"""Each hub numbers seeks and challenges from a random multiple of 2**32 (ids stay < 2**53)."""

T = TypeVar("T")


class ClusterReport(TypedDict):
    """This node's cluster facts (``/healthz``'s ``cluster``)."""

    node: str
    degraded: bool
    live_nodes: list[str]
    owned_games: int
    fenced_games: int
    taken_over: int
    loaded_cold: int
    """Cold correspondence games this node loaded under their lease, for a command or a
    deadline (docs/correspondence.md "Memory")."""
    abandoned_games: int
    player_game_lookups: dict[str, int]
    """How a login's unfinished game was looked up: from the sweep's listing, or the store."""
    unfinished_listings: int
    """The sweep's listings of the unfinished stored games so far."""
    remote_connections: int
    dropped_publishes: int


class PlayerPresence(TypedDict):
    games: dict[str, str]
    """Game id -> the player's role in it."""


class PresenceReport(TypedDict):
    """Who is online through a live node, and the games each one plays or watches."""

    nodes: list[str]
    players: dict[str, PlayerPresence]


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
        wall: Callable[[], int] = wall_ms,
        rng: random.Random | None = None,
        remember: Callable[[GameRecord], None] | None = None,
    ) -> None:
        self.node_id = settings.node_id
        self.remember = remember
        self.bus = bus
        self.cluster = cluster
        self.store = store
        self.settings = settings
        self.ownership = Ownership(
            self,
            cluster.leases,
            store,
            settings.lease_ttl_ms,
            listing_fresh_s=settings.presence_ttl_ms / 2000,
        )
        super().__init__(hub, FencedRecorder(recorder, self.ownership), None, clock, wall)
        rng = rng or random.Random()
        # Unique seek and challenge ids across the cluster's hubs (see ID_BASE_BITS).
        hub.set_id_base(rng.randrange(1, 2**20) << ID_BASE_BITS)
        self._presence_ttl = settings.presence_ttl_ms
        self._redis_slots = asyncio.Semaphore(REDIS_CONCURRENCY)
        self._connect_slots = asyncio.Semaphore(CONNECTS_AT_ONCE)
        self._dropping: set[str] = set()
        """Dead nodes whose connections are leaving this hub (``RemoteConnections.drop_node``)."""
        self._background: set[asyncio.Task[Any]] = set()
        self._background_closed = False
        """Set by :meth:`close`: :meth:`spawn` runs nothing more."""
        self._loops: list[asyncio.Task[None]] = []
        self._remove_degraded_listener: Callable[[], None] | None = None
        self.on_lapsed: Callable[[], Awaitable[Any]] | None = None
        """Awaited when this node finds its presence had lapsed (the stored offers drop those
        other nodes claimed meanwhile)."""
        self.on_look: Callable[[set[str], set[str]], None] | None = None
        """Told the live nodes after each look, with those live before (the stored offers
        claim a gone node's rows: ``server.app.stored_offers``)."""

        self.locals = LocalConnections()
        self.sender = Sender(bus, self.node_id, self._publish_failed)
        self.liveness = Liveness(cluster.presence, self.node_id, self._looked)
        shared = Shared(
            self, cluster, self.locals, EndedGames(), self.ownership, self.liveness, self.sender
        )
        self.remotes = RemoteConnections(shared)
        self.forwarder = Forwarder(
            shared,
            locate=lambda *args: self.router.game_destination(*args),
            call_timeout_s=max(MIN_CALL_TIMEOUT_S, settings.lease_ttl_ms / 1000),
        )
        self.seeks = ClusterSeeks(shared, self.remotes, self.forwarder)
        self.router = Router(shared, self.forwarder, self.seeks)
        self.delivery = Delivery(shared, self.remotes, self.seeks)
        self.inbox = Inbox(shared, self.forwarder, self.remotes, self.router, self.rejoin)
        self.resync = Resync(shared, self.forwarder)
        announcer = Announcer(cluster.presence, self.node_id, self._presence_ttl, self._lapsed)
        self.presence = PresenceKeeper(shared, announcer)

    # ============================================================ lifecycle

    async def start(self) -> None:
        """Announce the node, subscribe its channels, start the background loops, and take over
        the unfinished games nobody owns (this is also restart recovery)."""
        await self.cluster.presence.heartbeat(self.node_id, self._presence_ttl)
        await self.bus.subscribe(node_channel(self.node_id), self.inbox.on_node_message)
        await self.bus.subscribe(NODES_CHANNEL, self.inbox.on_notice)
        await self.bus.subscribe(LOBBY_CHANNEL, self.seeks.on_lobby)
        await self.bus.subscribe(GAMES_CHANNEL, self.seeks.on_games)
        self._remove_degraded_listener = self.bus.add_degraded_listener(self.resync.on_degraded)
        self.presence.started = True
        await self.liveness.look()
        self._loops = [
            *self.sender.loops(),
            asyncio.create_task(self._presence_forever(), name="cluster-presence"),
            asyncio.create_task(self.ownership.renew_forever(), name="cluster-leases"),
            asyncio.create_task(self.ownership.sweep_forever(), name="cluster-sweep"),
        ]
        await self.ownership.sweep()

    async def close(self, timeout: float = 10.0) -> None:
        """Finish the writes in flight, give up the leases and leave the cluster."""
        # The last messages (detaches of the connections just closed) go out first.
        deadline = time.monotonic() + CLOSE_FLUSH_S
        while not self.sender.idle():
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
        self.forwarder.drop_all()
        await super().close(timeout)
        with contextlib.suppress(BusError):
            await self.ownership.release_all()
            await self.cluster.presence.node_down(self.node_id)
        self._background_closed = True
        for task in list(self._background):
            task.cancel()

    async def _presence_forever(self) -> None:
        interval = self._presence_ttl / 3000
        while True:
            await asyncio.sleep(interval)
            if self.degraded:
                continue
            try:
                # The heartbeat by itself, now: the announcements wait their turn in the state
                # queue behind the seek registry's updates, and a heartbeat that waited there
                # past the TTL got the node taken for dead (the cluster storm's start-up).
                if not await self.cluster.presence.heartbeat(self.node_id, self._presence_ttl):
                    self.mark_presence(reannounce=True)
                    self.sender.enqueue(self._lapsed, state=True)
                else:
                    self.mark_presence()
                await self.liveness.look()
            except BusError as error:
                logger.info("presence: cluster unavailable (%s)", error)

    async def _lapsed(self) -> None:
        """This node's heartbeat found it had lapsed: the other nodes may have taken it for
        dead meanwhile, dropped its seeks and the connections it had attached to them."""
        logger.warning("this node's heartbeat had lapsed: relisting its seeks, re-joining games")
        if self.on_lapsed is not None:  # first: the offers other nodes claimed are not relisted
            await self.on_lapsed()
        await self.seeks.relist()
        self.resync.rejoin_followed()

    def _looked(self, before: set[str], live: set[str]) -> None:
        """After a look at the live nodes: forget the dead ones, end the calls waiting for
        them, and drop their connections here; :attr:`on_look` is told too."""
        if self.on_look is not None:
            self.on_look(before, live)
        for node_id in before - live:
            self.ownership.forget_node(node_id)
        self.forwarder.fail_dead(live)
        # Right after an outage the other nodes may not have heartbeated yet: wait a TTL.
        if self.healthy_for(self._presence_ttl / 1000):
            for node_id in self.remotes.nodes() - live - self._dropping:
                logger.warning("node %s is gone: dropping its connections here", node_id)
                self._dropping.add(node_id)
                self.spawn(self._drop_node(node_id), "drop-node")

    async def _drop_node(self, node_id: str) -> None:
        try:
            await self.remotes.drop_node(node_id)
        finally:
            self._dropping.discard(node_id)

    # ============================================================ the parts' Host and Owner

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

        if self._background_closed:  # a timer that fired after close: nothing to run
            _discard(coroutine)
            return
        task = asyncio.get_running_loop().create_task(run(), name=name)
        self._background.add(task)

        def done(task: asyncio.Task[None]) -> None:
            self._background.discard(task)
            if task.cancelled():  # cancelled (at close) before its first step
                _discard(coroutine)

        task.add_done_callback(done)

    @property
    def degraded(self) -> bool:
        return self.bus.degraded

    def healthy_for(self, seconds: float) -> bool:
        """Whether the bus has been up (not degraded) for at least ``seconds``."""
        return self.resync.healthy_for(seconds)

    async def limited(self, call: Awaitable[T]) -> T:
        """Await a cluster-state call, at most :data:`REDIS_CONCURRENCY` at once: commands of
        many connections look things up at the same time, and Redis clients have a bounded
        connection pool."""
        async with self._redis_slots:
            return await call

    def is_live(self, node_id: str) -> bool:
        """Whether ``node_id`` was live at the last look (a new node may not be known yet)."""
        return self.liveness.is_live(node_id)

    async def alive(self, node_id: str) -> bool:
        """Whether ``node_id`` is live, looking again if it was not at the last look.

        :raises BusError: Redis is unreachable.
        """
        return await self.liveness.alive(node_id)

    def clock(self) -> int:
        """The hub's current time (ms)."""
        return self._clock()

    def peer(self, conn_id: ConnId) -> Peer | None:
        return self._peers.get(conn_id)

    def handle_here(self, conn_id: ConnId, command: Command, lag_ms: int = 0) -> None:
        HubDriver.handle(self, conn_id, command, lag_ms)

    def publish(self, channel: str, data: bytes) -> None:
        """Queue one bus message; sent in order by one task, dropped while degraded."""
        self.sender.publish(channel, data)

    def mark_presence(self, reannounce: bool = False) -> None:
        """Bring the presence announcements in step with this node soon."""
        self.presence.mark(reannounce)

    def rejoin(self, game_id: GameId, player_ids: Iterable[Any]) -> None:
        """Re-join a game that moved to another node (see :meth:`Resync.rejoin`)."""
        self.resync.rejoin(game_id, player_ids)

    def restore(self, game: Resumable, *, announce: bool = True) -> None:
        """Resume a stored game in this hub (takeover); its effects run at once.

        The resumed room's event versions go on from ``game.first_version`` (see
        :func:`~server.cluster.restore.resumable_game`). ``announce=False``: a cold
        correspondence game loaded quietly (no ``game_start``; whoever wants its events
        joins, as on one process).

        :raises ValueError: the hub refuses it (see :meth:`Hub.restore_game`).
        """
        self.call(
            lambda now: self.hub.restore_game(
                game.game_id,
                game.terms,
                game.players,
                game.start_fen,
                game.moves,
                now,
                first_version=game.first_version,
                turn_started_ms=self._turn_started(game, now),
                berserk=game.berserk,
                premoves=game.premoves,
                announce=announce,
            )
        )

    # ============================================================ cold correspondence games

    async def load_cold(self, game_id: str) -> bool:
        """Load a game with no room here under its lease (``ColdGames``' loader in a cluster,
        for a command naming it or its deadline falling due); True if its room is here
        afterwards. A game whose lease another node holds is that node's (in memory there,
        whose timer ends it; or its node died and the lease lapses soon): False.

        :raises BusError: Redis is unreachable.
        """
        if self.ownership.runs(game_id):
            return True
        owner = await self.limited(self.cluster.leases.owner(game_id))
        if owner is not None and owner != self.node_id:
            return False
        return await self.ownership.take_over(game_id) == "taken"

    def dropped_cold(self, game_id: str) -> None:
        """The hub dropped an idle cold room: give its lease up now (any node loads it again
        when it is used) and stop announcing its players as following it here."""
        self.spawn(self.ownership.release_dropped(game_id), "release-cold")
        self.mark_presence()

    def _turn_started(self, game: Resumable, now_ms: int) -> int | None:
        at = game.turn_started_at
        return None if at is None else self.hub_time_of(at, now_ms)

    # ============================================================ reports

    def report(self) -> ClusterReport:
        """Cluster facts for ``/healthz``."""
        return {
            "node": self.node_id,
            "degraded": self.degraded,
            "live_nodes": sorted(self.liveness.live),
            "owned_games": len(self.ownership.owned),
            "fenced_games": len(self.ownership.lost),
            "taken_over": self.ownership.taken_over,
            "loaded_cold": self.ownership.loaded_cold,
            "abandoned_games": self.ownership.abandoned,
            "player_game_lookups": dict(self.ownership.lookups),
            "unfinished_listings": self.ownership.listings,
            "remote_connections": len(self.remotes),
            "dropped_publishes": self.sender.dropped,
        }

    async def presence_report(self) -> PresenceReport:
        """Who is online through a live node, and the games each one plays or watches.

        :raises BusError: Redis is unreachable.
        """
        presence = self.cluster.presence
        players: dict[str, PlayerPresence] = {}
        for player_id in sorted(await presence.online_players()):
            games = await presence.games_of(player_id)
            players[player_id] = {"games": {g: role.value for g, role in sorted(games.items())}}
        return {"nodes": sorted(await presence.live_nodes()), "players": players}

    # ============================================================ local connections

    def connect(
        self,
        conn_id: ConnId,
        peer: Peer,
        player: PlayerInfo,
        stored: StoredGames = ASK,
    ) -> None:
        # ``stored``: the player's correspondence games as the store lists them (read by the
        # door, or by the hub driver when left out), whichever node holds them or none; the
        # hub's ``hello.correspondence`` and limit count them (docs/correspondence.md).
        local = LocalConnection(player, peer, pending=deque())
        self.locals.add(conn_id, local)
        self.spawn(self._connect(conn_id, local, stored), "connect")

    async def _connect(self, conn_id: ConnId, local: LocalConnection, stored: StoredGames) -> None:
        """Look up the player's running game elsewhere (for ``hello``), then join the hub."""
        game_id: GameId | None = None
        owner: str | None = None
        try:
            if isinstance(stored, AskStore):
                # Read here (the Bot API's link), so that the hub learns the connection below,
                # while ``hello_game`` is set.
                stored = await self.stored_of(local.player)
            async with self._connect_slots:
                if not self.degraded and not local.closed:
                    game_id = await self.router.running_game_elsewhere(local.player.id)
                    if game_id is not None:
                        owner = await self.limited(self.ownership.owner_of(game_id, take_over=True))
        except (BusError, StoreError):
            game_id = None
        finally:
            if not local.closed:
                if game_id is not None:
                    self.delivery.hello_game[conn_id] = game_id
                local.connected = True
                super().connect(conn_id, local.peer, local.player, stored)
                self.delivery.hello_game.pop(conn_id, None)
                if self.degraded:
                    self.send(conn_id, Message(MessageKind.DEGRADED, {"on": True}))
                self.mark_presence()
            self.router.drain_later(conn_id, local)
        if owner and owner != self.node_id and not local.closed:
            # End the player's absence on the owner: attach this connection there.
            local.attached.add(owner)
            player = player_to_json(local.player)
            self.sender.envelope(owner, attach_header(conn_id, player))
        await self._attach_to_offers(conn_id, local)

    async def _attach_to_offers(self, conn_id: ConnId, local: LocalConnection) -> None:
        """Attach a registered player's connection to the live nodes holding stored offers
        of theirs (one read of ``offers.node``): such a node tells it the challenges waiting
        there (``RemoteConnections.attach``), which it may then answer (routed there)."""
        store_id = store_player_id(local.player.id)
        if store_id is None or local.player.guest or self.degraded:
            return
        try:
            nodes = {node_of(holder) for holder in await self.store.offer_nodes(store_id)}
        except StoreError:
            return
        for node_id in sorted(nodes - {self.node_id} - local.attached):
            if not local.closed and self.is_live(node_id):
                local.attached.add(node_id)
                player = player_to_json(local.player)
                self.sender.envelope(node_id, attach_header(conn_id, player))

    def disconnect(self, conn_id: ConnId) -> None:
        local = self.locals.remove(conn_id)
        if local is None:
            super().disconnect(conn_id)
            return
        local.closed = True
        self.seeks.forget(conn_id)
        for node_id in local.attached:
            self.sender.envelope(node_id, detach_header(conn_id))
        self.forwarder.drop_of(conn_id)
        if local.connected:
            super().disconnect(conn_id)
        self.mark_presence()

    def handle(self, conn_id: ConnId, command: Command, lag_ms: int = 0) -> None:
        local = self.locals.get(conn_id)
        if local is None:
            super().handle(conn_id, command, lag_ms)
            return
        self.router.handle(conn_id, local, command, lag_ms)

    # ============================================================ effects

    def run(self, effects: list[Effect]) -> None:
        """Effects that leave this node go on the bus (see :mod:`server.cluster.delivery`);
        the rest run as usual."""
        here = self.delivery.sort(effects)
        if here:
            super().run(here)

    def _publish_failed(self, channel: str, data: bytes) -> None:
        # Lobby changes still reach this node's own watchers without the bus.
        if channel == LOBBY_CHANNEL:
            self.seeks.relay(data)


def _discard(awaitable: Awaitable[Any]) -> None:
    """Close a coroutine that will never run (no "never awaited" warning at its collection)."""
    if (
        inspect.iscoroutine(awaitable)
        and inspect.getcoroutinestate(awaitable) == inspect.CORO_CREATED
    ):
        awaitable.close()

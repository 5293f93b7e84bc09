"""The composition root: reads the settings, builds the store, bus, hub and transport, runs them.

``python -m server`` (or ``scripts/serve.sh``) calls :func:`server.app.main.main`. With no configuration the
server uses the embedded SQLite database ``data/hub.sqlite3`` (migrated at start) and the
in-process bus, and listens on ``127.0.0.1:8080``. Tests build an :class:`App` directly::

    async with App(Settings(port=0, database_url=url)) as app:
        ... connect to f"ws://127.0.0.1:{app.port}/ws" ...

The adapters it wires between the hub, the store and the bus live in
:mod:`server.app.adapters`; the garbage collector's policy for a long-running server in
:mod:`server.app.collector`; the command line and the process's run until a signal
(:func:`~server.app.main.main`, :func:`~server.app.main.serve`) in :mod:`server.app.main`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, NotRequired, Self, TypedDict

from argon2 import PasswordHasher

from server.app.adapters import StoreAccounts, StoreRecorder
from server.app.analysis import AnalysisDesk
from server.app.cold_games import ColdGames
from server.app.computer import ComputerSeat
from server.app.jobs import JobQueue
from server.app.stored_offers import StoredOffers
from server.app.tournament_cluster import TournamentLeases
from server.app.tournament_games import HubSeat
from server.app.tournament_live import TournamentRunner
from server.app.tournament_schedule import TournamentCalendar
from server.app.tournaments import TournamentDirector, wall_ms
from server.bus import create_bus, create_cluster
from server.cluster import ClusterDriver
from server.cluster.node import ClusterReport
from server.cluster.restore import Resumable, resumable_game
from server.config import Settings
from server.hub.effects import Effect
from server.hub.hub import Hub, HubConfig
from server.hub.room import RoomSettings
from server.hub.tournament.schedule import parse_schedule
from server.store import EndJournal, MoveWriter, Store, StoreUnavailableError
from server.store.migrate import upgrade_to_head
from server.transport.accounts import Accounts
from server.transport.addresses import TrustedProxies
from server.transport.admission import Admission, connection_cap
from server.transport.analysis_api import AnalysisPolicy
from server.transport.driver import HubDriver, monotonic_ms
from server.transport.http_api.context import ApiContext
from server.transport.http_api.paths import answers_request
from server.transport.http_api.runner import HttpApiServer
from server.transport.ics.server import IcsServer
from server.transport.login_guard import GuardLimits, LoginGuard
from server.transport.mail import MailConfig, Mailer
from server.transport.notify import Notices
from server.transport.public import ListenerLimits, ProtocolFactory, PublicListener
from server.transport.server import TransportServer

__all__ = ["App", "hub_config"]

logger = logging.getLogger("server")

HEALTH_DB_TIMEOUT_S = 2.0
HEALTH_CHECK_RESERVE = 64
"""Connections accepted over ``max_connections`` to answer ``/healthz`` only (others get 503)."""


def hub_config(settings: Settings) -> HubConfig:
    """The hub's limits from the settings: a player who dropped has at least
    ``reconnect_grace_s`` to come back before the opponent may claim the game; the computer's
    first move has ``computer_first_move_window_s``."""
    room = RoomSettings()
    grace_ms = int(settings.reconnect_grace_s * 1000)
    room = replace(
        room,
        abandon_min_ms=grace_ms,
        abandon_max_ms=max(grace_ms, room.abandon_max_ms),
        computer_first_move_window_ms=int(settings.computer_first_move_window_s * 1000),
    )
    return HubConfig(
        room=room,
        max_guest_computer_games=settings.max_guest_computer_games,
        max_correspondence_games=settings.max_correspondence_games,
        max_correspondence_seeks=settings.max_correspondence_seeks,
        max_correspondence_challenges=settings.max_correspondence_challenges,
        # The store lists an absent offer owner's games (HubDriver.stored_games).
        ask_owner_games=True,
    )


class HealthReport(TypedDict):
    """``GET /healthz``'s report (``cluster`` in a cluster only)."""

    status: str
    node: str
    db: bool
    bus: bool
    connections: int
    sockets: int
    cluster: NotRequired[ClusterReport]


class App:
    """Everything one hub process runs (see the module docstring)."""

    def __init__(
        self,
        settings: Settings,
        *,
        config: HubConfig | None = None,
        rng: random.Random | None = None,
        migrate: bool = True,
        ics_listen: int | None = None,
        tournament_clock: Callable[[], int] | None = None,
        clock: Callable[[], int] | None = None,
    ) -> None:
        """``ics_listen`` overrides ``settings.ics_port`` (where 0 means "off"): the ICS
        listener is started on that port, 0 being any free port (tests).

        ``clock`` (tests only): milliseconds since the epoch, used as the hub's time and as
        the wall clock of the stored instants, so that a test moves time for both (then
        ``driver.check_deadlines()`` serves what became due, ``cold.fire_due()`` and
        ``cold.drop_idle()`` the cold correspondence games' deadlines and idle rooms, which
        then have no timer of their own). By default the hub runs on the
        monotonic clock and stores wall-clock instants.
        ``tournament_clock`` (tests only): the tournaments' wall clock in epoch ms (default:
        ``clock``, else the wall clock)."""
        self.settings = settings
        self._config = config or hub_config(settings)
        self._rng = rng or random.Random()
        self._migrate = migrate
        self._injected_clock = clock is not None
        sqlite = settings.database_url.startswith("sqlite")
        # SQLite has one writer at a time, and writers that find the lock taken sleep in its
        # busy handler (up to 100 ms a try): with one pooled connection they queue in the
        # pool instead and the lock is never contended.
        self.store = Store.from_url(
            settings.database_url,
            pool_size=1 if sqlite else 10,
            sqlite_busy_timeout=settings.sqlite_busy_timeout_s,
        )
        # PostgreSQL: moves get connections of their own, so that a burst of game creations
        # or endings never makes them queue for the pool.
        self._move_store = (
            self.store if sqlite else Store.from_url(settings.database_url, pool_size=2)
        )
        self.writer = MoveWriter(self._move_store, flushers=1 if sqlite else 2)
        self.bus = create_bus(settings)
        self.hub = Hub(self._config, self._rng)
        self.journal = EndJournal(Path(settings.journal_dir))
        clocks: dict[str, Any] = {}
        if clock is not None:
            clocks = {"clock": clock, "wall": clock}
            self._recorder = StoreRecorder(
                self.store,
                self.writer,
                self.journal,
                wall=lambda: datetime.fromtimestamp(clock() / 1000, UTC),
            )
        else:
            self._recorder = StoreRecorder(self.store, self.writer, self.journal)
        # Several hub processes (a Redis URL is set): the cluster driver routes commands to the
        # node holding what they act on, owns games by lease and takes over orphaned ones.
        self.cluster = create_cluster(settings) if settings.uses_redis else None
        self.driver: HubDriver
        if self.cluster is not None:
            self.driver = ClusterDriver(
                self.hub,
                self._recorder,
                settings=settings,
                bus=self.bus,
                cluster=self.cluster,
                store=self.store,
                rng=self._rng,
                remember=self._recorder.remember,
                **clocks,
            )
        else:
            # One process: its room events have no other hub to reach, so they are not
            # published at all (the cluster driver delivers them between nodes itself).
            self.driver = HubDriver(self.hub, self._recorder, **clocks)
        # Correspondence games are loaded when used and dropped when idle
        # (docs/correspondence.md "Memory"); in a cluster under the game's lease.
        cluster_driver = self.driver if isinstance(self.driver, ClusterDriver) else None
        self.cold: ColdGames = ColdGames(
            self.store,
            self.driver,
            restore=lambda game: self.driver.call(partial(self._restore, game, announce=False)),
            remember=self._recorder.remember,
            forget=self._recorder.forget,
            idle_ms=round(settings.correspondence_idle_s * 1000),
            poll_s=settings.correspondence_poll_s,
            clock=clock or monotonic_ms,
            wall=clock or wall_ms,
            load_under=None if cluster_driver is None else cluster_driver.load_cold,
            dropped=None if cluster_driver is None else cluster_driver.dropped_cold,
        )
        # In a cluster the router loads a cold game (``owner_of`` takes its lease) before a
        # command runs here; a command forwarded to a node that dropped the room is answered
        # ``moved`` and routed again by its home node.
        self.driver.cold = self.cold if cluster_driver is None else None
        self.driver.stored_games = self.cold.stored_correspondence
        # Correspondence seeks and challenges are stored (docs/correspondence.md); in a cluster
        # each row names its node, and a dead node's are claimed by one live node.
        if isinstance(self.driver, ClusterDriver):
            cluster_driver = self.driver
            self.offers = StoredOffers(
                self.store,
                cluster_driver,
                node=settings.node_id,
                healthy=lambda: cluster_driver.healthy_for(settings.presence_ttl_ms / 1000),
                alive=cluster_driver.alive,
            )
            cluster_driver.on_look = self.offers.on_look
            cluster_driver.on_lapsed = self.offers.recheck
            self._recorder.offers_node = self.offers.holder  # a game answers only its own
        else:
            self.offers = StoredOffers(self.store, self.driver)
        hasher = PasswordHasher(
            time_cost=settings.argon2_time_cost,
            memory_cost=settings.argon2_memory_kib,
            parallelism=settings.argon2_parallelism,
        )
        # Tournaments (docs/tournaments.md): the director drives the pure core on the store,
        # creates the games in the hub and hears of their stored ends from the recorder.
        runner = TournamentRunner(
            self.store,
            HubSeat(self.driver),
            clock_ms=tournament_clock or clock or wall_ms,
            node=settings.node_id,
            inline_wave=settings.tournament_inline_wave,
        )
        # Several hubs: one runs each tournament (a lease), any stores changes and results.
        self.tournament_leases = (
            None
            if self.cluster is None
            else TournamentLeases(
                runner,
                self.cluster.leases,
                self.bus,
                self.store,
                node_id=settings.node_id,
                ttl_ms=settings.lease_ttl_ms,
            )
        )
        self.tournaments = TournamentDirector(
            self.store,
            runner,
            hash_password=hasher.hash,
            verify_password=partial(_password_matches, hasher),
            clock_ms=tournament_clock or clock or wall_ms,
            max_players=settings.tournament_max_players,
            created_per_day=settings.tournaments_per_day,
            entries_per_minute=settings.tournament_entries_per_minute,
            chat_per_minute=settings.tournament_chat_per_minute,
            chat_lines_per_s=settings.tournament_chat_lines_per_s,
        )
        if self.tournament_leases is not None:  # the chats' lines reach the other hubs' watchers
            self.tournament_leases.chats = self.tournaments.chats
            self.tournaments.chats.publish = self.tournament_leases.chat_line
        self._recorder.on_tournament_end = self.tournaments.game_ended
        # The server's own recurring tournaments ([tournaments] tournament_schedule).
        self.calendar = TournamentCalendar(
            self.tournaments,
            parse_schedule(settings.tournament_schedule),
            clock_ms=tournament_clock or clock or wall_ms,
            max_players=settings.tournament_max_players,
            check_s=settings.tournament_schedule_check_s,
        )
        self.accounts = Accounts(
            StoreAccounts(self.store),
            hasher,
            hash_concurrency=os.cpu_count() or 2,
            guard=LoginGuard(GuardLimits.from_settings(settings)),
            session_max_idle=timedelta(days=settings.session_max_idle_days),
        )
        presence = self.driver.presence_report if isinstance(self.driver, ClusterDriver) else None
        # The engine workers' job queue (docs/engines.md): jobs in the database, workers on
        # /fishnet/* of the HTTP API. Computer analyses: requested through any door, queued as
        # jobs, the workers' results stored (server/app/analysis.py).
        self.jobs = JobQueue(self.store, settings)
        self.analysis = AnalysisDesk(
            self.store,
            self.jobs,
            AnalysisPolicy(
                settings.analysis_daily_quota,
                settings.analysis_max_engine_s,
                settings.analysis_requests_per_min,
                settings.analysis_request_burst,
            ),
        )
        self.server = TransportServer(
            settings,
            self.driver,
            self.accounts,
            self.health,
            review_store=self.analysis,
            presence=presence,
            tournaments=self.tournaments,
        )
        # Notifications (server/transport/notify.py): the "your turn" list from the store, the
        # e-mail settings, and the mails the hub's TurnChanged calls for (a background task).
        self.mailer = (
            Mailer(MailConfig.from_settings(settings), self.store) if settings.mail_enabled else None
        )
        self.notices = Notices(self.store, self.mailer)
        self.server.notices = self.notices
        self.driver.on_turn = self.notices.turn
        # The computer as a player: a hub connection that queues move jobs (server/app/computer.py).
        self.computer = ComputerSeat(self.driver, self.jobs, poll_results=settings.uses_redis)
        # The HTTP API (the Bot API, docs/bots.md) on aiohttp: another door over the same hub,
        # on the same public address as the websockets (server/transport/public.py).
        self.api = HttpApiServer(
            ApiContext(
                settings,
                self.driver,
                self.accounts,
                self.store,
                self.server.routes,
                work=self.jobs,
                analysis=self.analysis,
                tournaments=self.tournaments,
            )
        )
        # Every door counts its connections per client address, and all of them together
        # below the open-file limit (server/transport/admission.py); a few more are accepted
        # over that cap for a health check only, so that HAProxy does not take a full hub for
        # a dead one.
        self.admission = Admission(
            connection_cap(settings.max_connections), reserve=HEALTH_CHECK_RESERVE
        )
        # A websocket holds its admission slot until it logs in (a reconnect storm opens only
        # so many at once: server/transport/public.py).
        self.listener = PublicListener(
            settings.host,
            settings.port,
            self._door_for,
            holds=lambda path: path == settings.ws_path,
            limits=ListenerLimits(
                per_address=settings.max_connections_per_address,
                header_timeout_s=settings.header_timeout_s,
                max_queued=settings.max_queued,
                max_queued_per_address=settings.max_queued_per_address,
                max_opening=settings.max_opening,
            ),
            admission=self.admission,
            trusted=TrustedProxies(settings.trusted_proxies),
        )
        self.server.on_opened = self.listener.admitted
        # The ICS text interface: a second transport over the same hub (docs/ics.md).
        ics_port = settings.ics_port if ics_listen is None else ics_listen
        self.ics = (
            # the analysis desk: the store's reads, and analysis requests that queue their job
            IcsServer(
                settings,
                self.driver,
                self.accounts,
                self.analysis,
                port=ics_port,
                admission=self.admission,
                reads=self.server.reads,
                tournaments=self.tournaments,
                notices=self.notices,
            )
            if settings.ics_port or ics_listen is not None
            else None
        )
        self._started = False

    @property
    def port(self) -> int:
        """The public port: websockets, the web client's pages and the HTTP API."""
        return self.listener.port

    def _door_for(self, method: str, path: str) -> ProtocolFactory:
        """Who answers a connection whose first request is ``method path``."""
        return self.api.protocol if answers_request(method, path) else self.server.protocol

    @property
    def ics_port(self) -> int:
        """The port of the ICS listener (``ics_port`` in the settings)."""
        if self.ics is None:
            raise RuntimeError("the ICS interface is off (ics_port = 0)")
        return self.ics.port

    @property
    def url(self) -> str:
        """The websocket URL clients connect to."""
        return f"ws://{self.settings.host}:{self.port}{self.settings.ws_path}"

    async def start(self) -> None:
        """Migrate the database, start the bus and listen (:meth:`prepare`, then :meth:`listen`)."""
        await self.prepare()
        await self.listen()

    async def prepare(self) -> None:
        """Everything but listening: migrate the database, start the bus, replay the journal,
        restore or take over the unfinished games. Whatever else must be done before clients
        are served (the collector's start-up work, :func:`serve`) goes between this and
        :meth:`listen`, so that the first client to connect finds the loop free."""
        if self._migrate:
            await upgrade_to_head(self.settings.database_url)
        await self.bus.start()
        if self.mailer is not None:
            self.mailer.start()
        replayed = await self._recorder.replay_journal()
        if replayed:
            logger.info("stored %d game end(s) kept in the journal", replayed)
        # Before the restored games: they find the computer online and give it their snapshots.
        self.computer.connect()
        if isinstance(self.driver, ClusterDriver):
            # Takes over the unfinished games no live node owns (restart recovery included).
            await self.driver.start()
        else:
            await self._recover()
        await self.offers.restore()
        if not self._injected_clock:
            self.cold.start()  # with an injected clock the test serves it (fire_due, drop_idle)
        # After the games: a tournament resumed finds its running games in the hub.
        if self.tournament_leases is not None:
            await self.tournament_leases.start()
        await self.tournaments.start()
        await self.calendar.start()

    async def listen(self) -> None:
        """Open the public listener (and the ICS one); then log that the hub is listening,
        the line a supervisor or test waits for: from then on clients are served at once."""
        await self.server.start(self.listener.share())
        await self.api.start()
        self.listener.start()
        if self.ics is not None:
            await self.ics.start()
        self._started = True
        logger.info(
            "hub %s listening on %s (database %s, bus %s)",
            self.settings.node_id,
            self.url,
            self.store.engine.dialect.name,
            type(self.bus).__name__,
        )

    async def _recover(self) -> None:
        """Restart recovery: every unfinished stored game gets its room back.

        Clocks resume from the stored moves; the side to move starts thinking now (the time no
        server ran the game is not charged). Nobody is connected yet, so both players' absence
        countdowns start; registered players come back with their session tokens. Guests'
        sessions lived in the old process, so a guest cannot return and the opponent may claim
        the game when the countdown ends. A game whose record does not replay is left alone.
        """
        # The correspondence games between registered players stay in the store (cold).
        unfinished = await self.store.load_unfinished_games(correspondence=False)
        for stored in unfinished:
            try:
                resumable = await resumable_game(self.store, stored)
                self._recorder.remember(stored)
                self.driver.call(partial(self._restore, resumable))
            except ValueError as error:
                logger.error("game %s cannot be restored: %s", stored.id, error)
        if unfinished:
            logger.info("restored %d unfinished game(s)", len(unfinished))

    def _restore(self, game: Resumable, now_ms: int, *, announce: bool = True) -> list[Effect]:
        return self.hub.restore_game(
            game.game_id,
            game.terms,
            game.players,
            game.start_fen,
            game.moves,
            now_ms,
            first_version=game.first_version,
            turn_started_ms=(
                None
                if game.turn_started_at is None
                else self.driver.hub_time_of(game.turn_started_at, now_ms)
            ),
            berserk=game.berserk,
            premoves=game.premoves,
            announce=announce,
        )

    async def stop(self) -> None:
        """Close connections, finish the writes in flight, release the database and bus."""
        self.driver.detach()
        await self.calendar.stop()
        await self.tournaments.stop()
        if self.tournament_leases is not None:
            await self.tournament_leases.stop()
        self.jobs.close()
        await self.cold.stop()
        await self.computer.stop()
        await self.listener.close()
        await self.api.close()
        await self.server.close()
        if self.ics is not None:
            await self.ics.close()
        await self.driver.close()
        await self.offers.settle()
        await self._recorder.settle()
        if self.mailer is not None:
            await self.mailer.close()
        await self.writer.close()
        await self.bus.close()
        if self.cluster is not None:
            await self.cluster.close()
        await self.store.close()
        if self._move_store is not self.store:
            await self._move_store.close()
        self._started = False

    async def health(self) -> tuple[bool, HealthReport]:
        """(healthy, report) for ``GET /healthz``: healthy while the database answers."""
        try:
            await asyncio.wait_for(self.store.ping(), HEALTH_DB_TIMEOUT_S)
            db_ok = True
        except (StoreUnavailableError, TimeoutError):
            db_ok = False
        report: HealthReport = {
            "status": "ok" if db_ok else "unavailable",
            "node": self.settings.node_id,
            "db": db_ok,
            "bus": not self.bus.degraded,
            "connections": self.driver.connections,
            "sockets": self.server.open_sockets,
        }
        if isinstance(self.driver, ClusterDriver):
            report["cluster"] = self.driver.report()
        return db_ok, report

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()


def _password_matches(hasher: PasswordHasher, password_hash: str, password: str) -> bool:
    try:
        return bool(hasher.verify(password_hash, password))
    except Exception:  # argon2's VerifyMismatchError, InvalidHash …
        return False

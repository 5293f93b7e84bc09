"""The composition root: reads the settings, builds the store, bus, hub and transport, runs them.

``python -m server`` (or ``scripts/serve.sh``) calls :func:`main`. With no configuration the
server uses the embedded SQLite database ``data/hub.sqlite3`` (migrated at start) and the
in-process bus, and listens on ``127.0.0.1:8080``. Tests build an :class:`App` directly::

    async with App(Settings(port=0, database_url=url)) as app:
        ... connect to f"ws://127.0.0.1:{app.port}/ws" ...

This module is also where the adapters meet: :class:`StoreRecorder` writes the hub's
persistence records through the store, :class:`StoreAccounts` gives the transport's accounts
their database, :class:`BusPublisher` forwards the hub's ``Publish`` effects to the bus (room
events on ``game:<id>``, lobby changes on ``lobby``, game starts and ends on ``games``), so a
later multi-node setup only has to subscribe to them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import os
import random
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from argon2 import PasswordHasher

from server.bus import Bus, BusError, create_bus, create_cluster
from server.cluster import ClusterDriver
from server.cluster.restore import Resumable, resumable_game
from server.config import ConfigError, Settings, load_settings
from server.hub.effects import (
    Effect,
    GameCreated,
    GameFinished,
    MoveAppended,
    MovesRetracted,
    PersistRecord,
)
from server.hub.hub import Hub, HubConfig
from server.hub.room import RoomSettings
from server.rules import VARIANTS
from server.store import (
    DuplicateMoveError,
    EndJournal,
    GameRecord,
    GameStateError,
    MoveWriter,
    NameTakenError,
    Player,
    PlayerRating,
    Store,
    StoreError,
    StoreUnavailableError,
    UnknownGameError,
)
from server.store.migrate import upgrade_to_head
from server.transport.accounts import (
    Accounts,
    AccountsUnavailable,
    NameTaken,
    store_player_id,
)
from server.transport.driver import HubDriver, PersistError, RatingChange
from server.transport.ics.server import IcsServer
from server.transport.server import TransportServer

__all__ = ["App", "BusPublisher", "StoreAccounts", "StoreRecorder", "hub_config", "main"]

logger = logging.getLogger("server")

HEALTH_DB_TIMEOUT_S = 2.0
PUBLISH_QUEUE_LIMIT = 10_000


# --- adapters between the hub's records and the store ----------------------------------------


class StoreRecorder:
    """Writes the hub's :data:`~server.hub.effects.PersistRecord` s through the store.

    Moves go through the :class:`MoveWriter` (group commit). A new game is created and marked
    started in the store. A finished game is stored with its result (rated games also update both
    ratings in the same transaction) or as aborted; storing it twice is harmless. An end the
    server decided (a flag fall …) is first kept in the :class:`EndJournal`, so that it survives
    a crash while the database is unreachable; :meth:`replay_journal` stores what is left there.
    """

    def __init__(self, store: Store, writer: MoveWriter, journal: EndJournal) -> None:
        self._store = store
        self._writer = writer
        self._journal = journal
        # game id -> speed (rating pool) of the running games this process knows
        self._speeds: dict[str, str] = {}

    async def write(self, record: PersistRecord) -> Sequence[RatingChange]:
        try:
            if isinstance(record, GameCreated):
                await self._create(record)
            elif isinstance(record, MoveAppended):
                await self._append(record)
            elif isinstance(record, MovesRetracted):
                await self._store.retract_moves(record.game_id, record.from_ply)
            elif isinstance(record, GameFinished):
                if not record.server_decided:
                    return await self._finish(record)
                await asyncio.to_thread(self._journal.keep, record.game_id, asdict(record))
                changes = await self._finish(record)
                await asyncio.to_thread(self._journal.forget, record.game_id)
                return changes
        except StoreUnavailableError:
            raise PersistError("the database is unavailable") from None
        except DuplicateMoveError:
            raise PersistError("another move was already stored for this turn") from None
        except UnknownGameError:
            raise PersistError("the game is not in the database") from None
        except (StoreError, ValueError) as error:
            logger.warning("store refused %s: %s", type(record).__name__, error)
            raise PersistError("the database refused it") from None
        except RuntimeError as error:  # the move writer is closed: shutting down
            raise PersistError(f"the server is shutting down ({error})") from None
        return ()

    async def _create(self, record: GameCreated) -> None:
        control = record.control.to_record()
        await self._store.create_game(
            game_id=record.game_id,
            variant=record.variant,
            start_fen=record.start_fen,
            time_control=control,
            first_name=record.first.name,
            second_name=record.second.name,
            first_player_id=None if record.first.guest else store_player_id(record.first.player_id),
            second_player_id=(
                None if record.second.guest else store_player_id(record.second.player_id)
            ),
            rated=record.rated,
            started=True,  # the hub creates a game when it starts: one commit
        )
        self._speeds[record.game_id] = record.control.speed()

    def remember(self, game: GameRecord) -> None:
        """Know a game this process did not create (restored after a restart)."""
        self._speeds[game.id] = game.speed

    async def _append(self, record: MoveAppended) -> None:
        await self._writer.append(record.game_id, record.move)

    async def keep_versions(self, versions: Mapping[str, int]) -> None:
        try:
            await self._store.save_room_versions(versions)
        except StoreError as error:
            logger.warning("room versions of %d games not kept: %s", len(versions), error)
        else:
            logger.info("kept the room versions of %d running games", len(versions))

    async def replay_journal(self) -> int:
        """Store the ends left in the journal by a process that died before the database had
        them (at start, before unfinished games are resumed); return how many were stored.

        An entry is dropped without effect when its game is already over, unknown, or has more
        moves than when the end was decided (another server ran it on meanwhile).

        :raises StoreUnavailableError: the database is unreachable.
        """
        stored = 0
        for game_id, entry in (await asyncio.to_thread(self._journal.entries)).items():
            try:
                record = GameFinished(**entry)
            except TypeError:
                logger.error("journal entry of game %s is not readable: %r", game_id, entry)
                continue
            game = await self._store.get_game(game_id)
            if game is not None and game.status in ("created", "started"):
                if len(game.moves) == record.plies:
                    await self._finish(record)
                    stored += 1
                else:
                    logger.warning("journal end of game %s is stale; dropped", game_id)
            await asyncio.to_thread(self._journal.forget, game_id)
        return stored

    async def _finish(self, record: GameFinished) -> list[RatingChange]:
        speed = self._speeds.get(record.game_id)
        try:
            if record.result is None:
                await self._store.abort_game(
                    record.game_id,
                    record.termination,
                    plies=record.plies,
                    final_fen=record.final_fen,
                )
                return []
            update = await self._store.finish_game(
                record.game_id,
                record.result,  # type: ignore[arg-type]  # checked by the store
                record.termination,
                plies=record.plies,
                final_fen=record.final_fen,
            )
        except GameStateError:
            return []  # already stored (a retry after a lost answer)
        finally:
            self._speeds.pop(record.game_id, None)
        if update is None:
            return []
        if speed is None:
            stored = await self._store.get_game(record.game_id)
            if stored is None:
                return []
            speed = stored.speed
        pool = (record.variant, speed)
        return [
            (record.first_id, pool, update.first_after),
            (record.second_id, pool, update.second_after),
        ]


class StoreAccounts:
    """The store as the transport's :class:`~server.transport.accounts.AccountStore`."""

    def __init__(self, store: Store) -> None:
        self._store = store

    async def create_player(self, name: str, password_hash: str) -> Player:
        try:
            return await self._store.create_player(name, password_hash)
        except NameTakenError:
            raise NameTaken(name) from None
        except StoreUnavailableError as error:
            raise AccountsUnavailable(str(error)) from None

    async def player_by_name(self, name: str) -> Player | None:
        return await self._guard(self._store.player_by_name(name))

    async def create_session(self, player_id: int) -> str:
        token: str = await self._guard(self._store.create_session(player_id))
        return token

    async def session_player(self, token: str) -> Player | None:
        return await self._guard(self._store.session_player(token))

    async def delete_session(self, token: str) -> bool:
        deleted: bool = await self._guard(self._store.delete_session(token))
        return deleted

    async def player_ratings(self, player_id: int) -> list[PlayerRating]:
        return await self._guard(self._store.player_ratings(player_id))

    @staticmethod
    async def _guard(call: Any) -> Any:
        try:
            return await call
        except StoreUnavailableError as error:
            raise AccountsUnavailable(str(error)) from None


class BusPublisher:
    """Forwards ``Publish`` effects to the bus in order, without ever blocking the hub.

    Messages queue (up to ``limit``) for one task that publishes them; while the bus is degraded
    or the queue is full they are dropped and counted (the bus is at-most-once anyway).
    """

    def __init__(self, bus: Bus, limit: int = PUBLISH_QUEUE_LIMIT) -> None:
        self._bus = bus
        self._queue: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue(limit)
        self._task: asyncio.Task[None] | None = None
        self.dropped = 0

    def __call__(self, channel: str, frame: bytes) -> None:
        if self._bus.degraded:
            self.dropped += 1
            return
        try:
            self._queue.put_nowait((channel, frame))
        except asyncio.QueueFull:
            self.dropped += 1
            return
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="bus-publisher")

    async def _run(self) -> None:
        while True:
            channel, frame = await self._queue.get()
            try:
                await self._bus.publish(channel, frame)
            except BusError:
                self.dropped += 1

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None


# --- the application ---------------------------------------------------------------------------


def hub_config(settings: Settings) -> HubConfig:
    """The hub's limits from the settings: a player who dropped has at least
    ``reconnect_grace_s`` to come back before the opponent may claim the game."""
    room = RoomSettings()
    grace_ms = int(settings.reconnect_grace_s * 1000)
    room = replace(room, abandon_min_ms=grace_ms, abandon_max_ms=max(grace_ms, room.abandon_max_ms))
    return HubConfig(room=room)


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
    ) -> None:
        """``ics_listen`` overrides ``settings.ics_port`` (where 0 means "off"): the ICS
        listener is started on that port, 0 being any free port (tests)."""
        self.settings = settings
        self._config = config or hub_config(settings)
        self._rng = rng or random.Random()
        self._migrate = migrate
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
        self.publisher = BusPublisher(self.bus)
        self.hub = Hub(self._config, self._rng)
        self.journal = EndJournal(Path(settings.journal_dir))
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
            )
        else:
            self.driver = HubDriver(self.hub, self._recorder, self.publisher)
        hasher = PasswordHasher(
            time_cost=settings.argon2_time_cost,
            memory_cost=settings.argon2_memory_kib,
            parallelism=settings.argon2_parallelism,
        )
        self.accounts = Accounts(
            StoreAccounts(self.store), hasher, hash_concurrency=os.cpu_count() or 2
        )
        presence = self.driver.presence_report if isinstance(self.driver, ClusterDriver) else None
        self.server = TransportServer(
            settings,
            self.driver,
            self.accounts,
            self.health,
            review_store=self.store,
            presence=presence,
        )
        # The ICS text interface: a second transport over the same hub (docs/ics.md).
        ics_port = settings.ics_port if ics_listen is None else ics_listen
        self.ics = (
            IcsServer(settings, self.driver, self.accounts, self.store, port=ics_port)
            if settings.ics_port or ics_listen is not None
            else None
        )
        self._started = False

    @property
    def port(self) -> int:
        return self.server.port

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
        """Migrate the database, start the bus and listen."""
        if self._migrate:
            await upgrade_to_head(self.settings.database_url)
        await self.bus.start()
        replayed = await self._recorder.replay_journal()
        if replayed:
            logger.info("stored %d game end(s) kept in the journal", replayed)
        if isinstance(self.driver, ClusterDriver):
            # Takes over the unfinished games no live node owns (restart recovery included).
            await self.driver.start()
        else:
            await self._recover()
        await self.server.start()
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
        unfinished = await self.store.load_unfinished_games()
        for stored in unfinished:
            try:
                resumable = await resumable_game(self.store, stored)
                self._recorder.remember(stored)
                self.driver.call(partial(self._restore, resumable))
            except ValueError as error:
                logger.error("game %s cannot be restored: %s", stored.id, error)
        if unfinished:
            logger.info("restored %d unfinished game(s)", len(unfinished))

    def _restore(self, game: Resumable, now_ms: int) -> list[Effect]:
        return self.hub.restore_game(
            game.game_id,
            game.terms,
            game.players,
            game.start_fen,
            game.moves,
            now_ms,
            first_version=game.first_version,
        )

    async def stop(self) -> None:
        """Close connections, finish the writes in flight, release the database and bus."""
        self.driver.detach()
        await self.server.close()
        if self.ics is not None:
            await self.ics.close()
        await self.driver.close()
        await self.writer.close()
        await self.publisher.close()
        await self.bus.close()
        if self.cluster is not None:
            await self.cluster.close()
        await self.store.close()
        if self._move_store is not self.store:
            await self._move_store.close()
        self._started = False

    async def health(self) -> tuple[bool, dict[str, Any]]:
        """(healthy, report) for ``GET /healthz``: healthy while the database answers."""
        try:
            await asyncio.wait_for(self.store.ping(), HEALTH_DB_TIMEOUT_S)
            db_ok = True
        except (StoreUnavailableError, TimeoutError):
            db_ok = False
        report: dict[str, Any] = {
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


SLOW_GC_S = 0.1


def _report_slow_collections() -> Callable[[str, dict[str, int]], None]:
    """A ``gc.callbacks`` hook that logs garbage collections pausing the loop for 100 ms or more."""
    started = 0.0

    def callback(phase: str, info: dict[str, int]) -> None:
        nonlocal started
        if phase == "start":
            started = time.perf_counter()
            return
        paused = time.perf_counter() - started
        if paused >= SLOW_GC_S:
            logger.warning(
                "garbage collection of generation %d paused the server for %.0f ms (%d collected)",
                info["generation"],
                paused * 1000,
                info["collected"],
            )

    return callback


GC_THRESHOLDS = (5_000, 20, 100)

#: With full collections on a timer: every second young collection also collects the middle
#: generation, so no collection scans more than two young collections' survivors (a move's
#: event, record and position live as long as the game, so nearly every object counted
#: survives: with thresholds 5,000 / 20 a middle collection scanned 110,000+ objects and paused
#: about 100 ms); the old-generation threshold is one no count reaches.
TIMED_GC_THRESHOLDS = (1_000, 1, 2**31 - 1)


def tune_garbage_collector(full_interval_s: float = 0.0) -> None:
    """Keep the cyclic garbage collector's pauses short and rare in a long-running server.

    Everything built at start (variant tables, modules, the store's metadata) lives as long as
    the process, so it is frozen out of the collector's scans (a full collection of it alone
    took about 200 ms). The thresholds are raised so that the short-lived objects of each move
    die before the collector ever promotes them: with the defaults, 1,000 games paused the
    server for 100–450 ms in full collections every few seconds (docs/benchmarks.md, "Load").

    A full collection scans every live object: with 1,000 games in play that is a pause of a
    few hundred milliseconds, and left to itself the collector runs one whenever the old
    generation has grown by a quarter, every 20–60 s at a few hundred moves per second. With
    ``full_interval_s`` > 0 it never starts one by itself; :func:`collect_fully_forever` runs
    one every ``full_interval_s`` seconds instead. Game state is freed by reference counting
    when a game ends (it holds no reference cycles), so what waits for the timer is only the
    cyclic garbage of closed connections and finished tasks.

    Collections that pause for 100 ms or more are logged.

    The rules engine's step tables are built first, for every variant, so that they are frozen
    with the rest: built on first use they would be scanned by every full collection (Dai
    Shogi's alone are over 300,000 objects; building all of them takes about a second).
    """
    for variant in VARIANTS.values():
        variant.t.build_steps()
    gc.collect()
    gc.freeze()
    if full_interval_s > 0:
        gc.set_threshold(*TIMED_GC_THRESHOLDS)
    else:
        gc.set_threshold(*GC_THRESHOLDS)
    gc.callbacks.append(_report_slow_collections())


async def collect_fully_forever(interval_s: float) -> None:
    """Run a full garbage collection every ``interval_s`` seconds (see tune_garbage_collector)."""
    while True:
        await asyncio.sleep(interval_s)
        gc.collect()


async def serve(settings: Settings) -> None:
    """Run until SIGINT or SIGTERM, then shut down gracefully."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signum, stop.set)
    app = App(settings)
    await app.start()
    tune_garbage_collector(settings.full_gc_interval_s)
    collector = None
    if settings.full_gc_interval_s > 0:
        collector = asyncio.create_task(
            collect_fully_forever(settings.full_gc_interval_s), name="full-gc"
        )
    try:
        await stop.wait()
        logger.info("shutting down")
    finally:
        if collector is not None:
            collector.cancel()
        await app.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m server [--config FILE]``: load the settings and serve."""
    parser = argparse.ArgumentParser(prog="python -m server", description="Run the game hub.")
    parser.add_argument("--config", help="TOML settings file (default: config/default.toml)")
    args = parser.parse_args(argv)
    try:
        settings = load_settings(args.config)
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        import uvloop
    except ImportError:
        asyncio.run(serve(settings))
    else:  # pragma: no cover - optional speed-up
        uvloop.run(serve(settings))
    return 0

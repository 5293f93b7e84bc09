"""Cold correspondence games: loaded from the store when used, dropped from memory when idle.

A correspondence game between two registered players that nobody is looking at has no room in
the hub (docs/correspondence.md "Memory"). Start-up does not load them
(``Store.load_unfinished_games(correspondence=False)``), so a hub's memory and start-up time do
not grow with their number. :class:`ColdGames` then

* **loads a game for a command** that names a game with no room here (the driver's
  :class:`~server.transport.driver_ports.ColdLoader`): the command waits while the game is
  read and restored through the restore path of a restart (moves replayed, the turn dated
  from its stored start, a deadline already past ending the game at once), then goes to the
  hub as usual. Commands arriving meanwhile for the same game wait for the same load (one read);
* **fires the deadlines of games not in memory**: every ``poll_s`` it asks the store for the
  games whose stored deadline (``games.deadline_ms``, one indexed read) is due and loads each;
  the restore finds the turn over and ends the game at its deadline, stored once (the store
  refuses a second end);
* **drops idle rooms**: a correspondence room with no connection in it, no write in flight and
  no new event for ``idle_ms`` is unloaded (``Hub.unload``).

The hub stays sans-I/O: it only gains ``restore_game(announce=False)`` and ``unload``.

In a cluster the same object runs on every node for the deadlines and the idle rooms, with the
loading done under the game's lease (``load_under``:
:meth:`server.cluster.node.ClusterDriver.load_cold`, which takes the free lease, reads the game
again and restores it; a game whose lease another node holds is not loaded here), and a
dropped room's lease given up (``dropped``). Commands do not come here: the cluster's router
loads a cold game under its lease (``Ownership.owner_of``) before the command runs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from server.bus import BusError
from server.cluster.restore import Resumable, resumable_game
from server.hub.commands import Command, LeaveCommand
from server.hub.effects import ConnId
from server.hub.errors import ErrorCode
from server.hub.identity import PlayerInfo
from server.hub.messages import error_message
from server.rules.record import UNFINISHED_STATUSES, GameRecord
from server.rules.time_control import Correspondence, is_correspondence
from server.store import Store, StoreError
from server.transport.accounts import store_player_id
from server.transport.driver import HubDriver

__all__ = ["ColdGames"]

logger = logging.getLogger(__name__)

DUE_BATCH = 100
"""How many due games one store read returns (read again while full)."""


class ColdGames:
    """See the module docstring."""

    def __init__(
        self,
        store: Store,
        driver: HubDriver,
        *,
        restore: Callable[[Resumable], None],
        remember: Callable[[GameRecord], None],
        forget: Callable[[str], None],
        idle_ms: int,
        poll_s: float,
        clock: Callable[[], int],
        wall: Callable[[], int],
        load_under: Callable[[str], Awaitable[bool]] | None = None,
        dropped: Callable[[str], None] | None = None,
    ) -> None:
        """``restore`` resumes a game in the hub without announcing it
        (``Hub.restore_game(announce=False)`` through the driver); ``remember``/``forget``
        tell the recorder of a loaded/dropped game; ``clock`` is the hub's time and ``wall``
        the wall clock in ms since the epoch (stored deadlines are on it).

        A cluster's node gives ``load_under`` (loads a game under its lease instead of
        reading and restoring it here; True if its room is here afterwards) and ``dropped``
        (told of each room dropped, after the recorder forgot it)."""
        self._store = store
        self._driver = driver
        self._restore = restore
        self._remember = remember
        self._forget = forget
        self._idle_ms = idle_ms
        self._poll_s = poll_s
        self._clock = clock
        self._wall = wall
        self._load_under = load_under
        self._dropped = dropped
        self._loads: dict[str, asyncio.Task[bool]] = {}
        self._waiting: dict[str, list[tuple[ConnId, Command, int]]] = {}
        self._quiet: dict[str, tuple[int, int]] = {}
        """Game id -> (room version, hub time it was first seen at that version)."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop_task: asyncio.Task[None] | None = None
        self.reads = 0
        """How many times a game was read from the store to be loaded (tests, the bench)."""

    async def stored_correspondence(self, player: PlayerInfo) -> list[str] | None:
        """A registered player's running correspondence games as the store lists them (one
        read, the "your turn" list's): given to the hub at the player's connection
        (``HubDriver.stored_games``), so that ``hello`` (and the Bot API's ``nowPlaying``
        and ICS's ``mygames`` built on it) and the limit count the cold games too.
        ``None`` for a player without an account."""
        store_id = store_player_id(player.id)
        if store_id is None:
            return None
        games = await self._store.running_games(store_id)
        return [game.id for game in games if is_correspondence(game.control)]

    # --- commands -----------------------------------------------------------------------------

    def intercept(self, conn_id: ConnId, command: Command, lag_ms: int) -> bool:
        """See :class:`~server.transport.driver_ports.ColdLoader`."""
        if isinstance(command, LeaveCommand):
            return False  # leaving a room that is not here needs nothing loaded
        game_id: str = getattr(command, "game_id")  # noqa: B009  (checked by the driver)
        waiting = self._waiting.get(game_id)
        if waiting is not None:
            waiting.append((conn_id, command, lag_ms))
            return True
        self._waiting[game_id] = [(conn_id, command, lag_ms)]
        task = asyncio.get_running_loop().create_task(self._serve(game_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    async def _serve(self, game_id: str) -> None:
        unavailable = False
        try:
            await self.load(game_id)
        except (StoreError, BusError) as error:
            logger.warning("cold game %s not loaded: %s", game_id, error)
            unavailable = True
        except Exception:
            logger.exception("cold game %s not loaded", game_id)
        finally:
            # Handed back in their order; a game not loaded gets the hub's usual answer, one
            # the database did not give gets "unavailable" (try again), nothing changed.
            for conn_id, command, lag_ms in self._waiting.pop(game_id, ()):
                if unavailable:
                    self._driver.send(
                        conn_id, error_message(ErrorCode.UNAVAILABLE, ack=command.ack)
                    )
                else:
                    self._driver.handle_now(conn_id, command, lag_ms)

    # --- loading ------------------------------------------------------------------------------

    async def load(self, game_id: str) -> bool:
        """Load ``game_id``'s room if it is a running correspondence game with no room here;
        True if its room is here afterwards (or the game ended on loading). Concurrent calls
        for one game share one load.

        :raises StoreUnavailableError: the database is unreachable.
        """
        if game_id in self._driver.hub.state.rooms:
            return True
        task = self._loads.get(game_id)
        if task is None:
            loading = self._load(game_id) if self._load_under is None else self._load_under(game_id)
            task = asyncio.get_running_loop().create_task(self._counted(loading))
            self._loads[game_id] = task
            task.add_done_callback(lambda _: self._loads.pop(game_id, None))
        return await asyncio.shield(task)

    async def _counted(self, loading: Awaitable[bool]) -> bool:
        self.reads += 1
        return await loading

    async def _load(self, game_id: str) -> bool:
        try:
            stored = await self._store.get_game(game_id)
        except ValueError:  # not a game id at all
            return False
        if (
            stored is None
            or stored.status not in UNFINISHED_STATUSES
            or not is_correspondence(stored.time_control)
        ):
            return False
        resumable = await resumable_game(self._store, stored)
        if game_id in self._driver.hub.state.rooms:
            return True  # loaded meanwhile by another path (a restore of the hub's own)
        self._remember(stored)
        try:
            self._restore(resumable)
        except ValueError as error:
            logger.error("cold game %s cannot be restored: %s", game_id, error)
            return False
        self._quiet.pop(game_id, None)
        return True

    # --- deadlines ----------------------------------------------------------------------------

    async def fire_due(self) -> int:
        """Load every game whose stored deadline is due (its restore ends it); return how many
        were loaded. A game found not due (its stored deadline was early: a deadline write
        lost) gets its true deadline stored."""
        loaded = 0
        while True:
            due = await self._store.due_correspondence(self._wall(), DUE_BATCH)
            fresh = [game_id for game_id in due if game_id not in self._driver.hub.state.rooms]
            loaded_now = 0
            for game_id in fresh:
                if await self.load(game_id):
                    loaded_now += 1
                    await self._store_true_deadline(game_id)
            loaded += loaded_now
            # Games due but running here are ended by the hub's own timer (in a cluster, those
            # another node holds by its own); stop when this read loaded nothing new (so that
            # those never make it spin).
            if len(due) < DUE_BATCH or not loaded_now:
                return loaded

    async def _store_true_deadline(self, game_id: str) -> None:
        room = self._driver.hub.state.rooms.get(game_id)
        if room is None or room.finished:
            return
        control = room.terms.control
        deadline = room.state.clock.deadline()
        if not isinstance(control, Correspondence) or deadline is None:
            return
        wall_deadline = self._wall() + (deadline - self._clock())
        await self._store.postpone_deadline(game_id, wall_deadline)

    # --- idle rooms ---------------------------------------------------------------------------

    def drop_idle(self) -> int:
        """Unload the correspondence rooms idle for ``idle_ms`` (no connection in the room, no
        write in flight, no new event); return how many. Called every ``poll_s``."""
        now = self._clock()
        hub, driver = self._driver.hub, self._driver
        quiet: dict[str, tuple[int, int]] = {}
        dropped = 0
        for game_id, room in list(hub.state.rooms.items()):
            if not room.state.correspondence or room.finished or room.members:
                continue
            version = room.log.version
            seen = self._quiet.get(game_id)
            since = seen[1] if seen is not None and seen[0] == version else now
            if now - since >= self._idle_ms and not driver.writing(game_id) and hub.unload(game_id):
                self._forget(game_id)
                if self._dropped is not None:
                    self._dropped(game_id)
                dropped += 1
                continue
            quiet[game_id] = (version, since)
        self._quiet = quiet
        return dropped

    # --- running ------------------------------------------------------------------------------

    def start(self) -> None:
        """Fire the due deadlines and drop idle rooms every ``poll_s``."""
        self._loop_task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            try:
                await self.fire_due()
            except (StoreError, BusError) as error:
                logger.warning("correspondence deadlines not read: %s", error)
            except Exception:
                logger.exception("correspondence deadlines failed")
            try:
                self.drop_idle()
            except Exception:
                logger.exception("dropping idle correspondence rooms failed")
            await asyncio.sleep(self._poll_s)

    async def stop(self) -> None:
        """Stop the timer and wait for the loads in flight."""
        if self._loop_task is not None:
            self._loop_task.cancel()
            await asyncio.gather(self._loop_task, return_exceptions=True)
            self._loop_task = None
        pending = set(self._tasks) | set(self._loads.values())
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)


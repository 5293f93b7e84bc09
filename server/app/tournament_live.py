"""The running side of the tournament director: each live tournament's state, its timer, and
what happens on its own (the start, pairing waves and rounds, the end, games' results).

:class:`TournamentRunner` keeps one :class:`Live` per tournament this hub runs (its settings,
the fold of its stored events, the number of events seen, a lock: one change at a time) and
does the core's loop under the lock (docs/tournaments.md, "How the adapter drives it"):

* :meth:`TournamentRunner.change`: a door's command (decide → append → apply → advance);
* :meth:`TournamentRunner.advance` after every change, timer and game end: start when due,
  pair (an arena's waiting players, a Swiss or round robin's next round when the last one is
  complete), end (an arena's time, the last round);
* :meth:`TournamentRunner.game_finished`: a tournament game's stored end → ``Finished``
  (idempotent: a result already folded in is not stored again).

Pairings are stored before their games are created (``Paired`` names a game id drawn here):
a hub stopped in between finds the ``Paired`` without a game at :meth:`TournamentRunner.start`
and creates the game then; a game that ended while no director ran has its result read from
its stored row. The arena's waves of more than ``inline_wave`` players and every Swiss round
are computed in a process pool, off the event loop (docs/tournaments.md says why).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from typing import Any, TypeVar

from server.app.live_tournament import GameSeat, Live, refused
from server.app.pairing_pool import pairing_pool
from server.hub import game_ids
from server.hub.errors import ErrorCode
from server.hub.identity import PlayerId
from server.hub.tournament.arena import ArenaPairing, Waiting, pair_wave
from server.hub.tournament.round_robin import round_count, round_robin_round
from server.hub.tournament.state import (
    Refusal,
    TournamentState,
    arena_ends_at,
    replay,
    should_start,
)
from server.hub.tournament.swiss import SwissRound, pair_round, pairing_numbers, round_complete
from server.hub.tournament.values import (
    Bye,
    Ended,
    Event,
    Finished,
    Paired,
    Started,
    TournamentGame,
    TournamentSettings,
)
from server.store import Store, TournamentConflictError, UnknownTournamentError
from server.store.tournaments import MAX_LIST, each_unfinished_id, ms_datetime

__all__ = ["TournamentRunner"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
MAX_RETRIES = 5
INLINE_WAVE = 50
"""Waves of fewer waiting players are paired on the event loop (a few ms); larger ones in the
process pool."""
LATE_START_MS = 3_600_000
"""A Swiss or round robin with fewer than two players at its start time may still start (at
the second join) this long after it; then it ends with no games."""
START_BATCH = 25
"""Games of a pairing created in one turn of the event loop (a few ms); the loop serves others
between two batches."""

RESUME_AT_ONCE = 8
"""Tournaments taken up side by side at start (each a few store round trips)."""

COALESCE_MS = 200
"""Games ending within this make one arena wave; changes within it one standings push."""


class TournamentRunner:
    """See the module docstring."""

    def __init__(
        self,
        store: Store,
        seat: GameSeat,
        *,
        clock_ms: Callable[[], int],
        node: str,
        rng: random.Random | None = None,
        inline_wave: int = INLINE_WAVE,
        coalesce_ms: int = COALESCE_MS,
    ) -> None:
        """``coalesce_ms``: the window in which games' ends make one arena wave and changes
        one standings push (0: each at once)."""
        self._store = store
        self._seat = seat
        self._clock = clock_ms
        self.node = node
        self._rng = rng or random.SystemRandom()
        self._inline_wave = inline_wave
        self._coalesce_s = coalesce_ms / 1000
        self._lives: dict[str, Live] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._pool: ProcessPoolExecutor | None = None
        self._stopping = False
        self.publish: Callable[[Live], None] = lambda live: None
        """Told after every change of a tournament (the director pushes the standings)."""
        self.owns: Callable[[str], bool] = lambda tournament_id: True
        """Whether this hub runs the tournament: its timers, pairings, start and end (in a
        cluster the holder of its lease, ``server.app.tournament_cluster``; alone: every one).
        Any hub may store a door's change or a game's result (the appends are optimistic)."""
        self.claim: Callable[[str], Awaitable[bool]] = _always
        """Take the tournament's ownership (a cluster's lease); True if this hub has it."""
        self.resume_page = MAX_LIST
        """Unfinished tournaments' ids read at a time at start (every one is taken up)."""
        self.changed: Callable[[str, int], None] = lambda tournament_id, seq: None
        """Told after each append (the tournament, its number of events): a cluster tells the
        other hubs, whose copies reload."""

    # --- life cycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Take up every unfinished tournament in the store whose ownership this hub gets
        (see the module docstring)."""
        places = asyncio.Semaphore(RESUME_AT_ONCE)

        async def take_up(tournament_id: str) -> None:
            async with places:
                if await self.claim(tournament_id):
                    await self.resume(tournament_id)

        ids = [tid async for tid in each_unfinished_id(self._store, page=self.resume_page)]
        await asyncio.gather(*(take_up(tournament_id) for tournament_id in ids))

    async def resume(self, tournament_id: str) -> None:
        """Run a tournament this hub now owns (at start, or taken over from a hub that died):
        its state reloaded from the store, its missing games created, the results stored
        meanwhile folded in, its timer armed."""
        try:
            known = self._lives.get(tournament_id)
            live = known if known is not None else await self._load(tournament_id)
            async with live.lock:
                if live is known:  # a copy kept while another hub ran it: read it again
                    await self._reload(live)
                await self._reconcile(live)
                await self.advance(live)
        except Exception:
            logger.exception("tournament %s could not be resumed", tournament_id)

    def drop(self, tournament_id: str) -> None:
        """This hub no longer owns the tournament (its lease was lost): stop its timer."""
        live = self._lives.get(tournament_id)
        if live is not None and live.timer is not None:
            live.timer.cancel()
            live.timer = None

    async def on_notice(self, tournament_id: str, seq: int) -> None:
        """Another hub appended to the tournament (it now has ``seq`` events): reload a copy
        that is behind, push it to the watchers here, and advance it if this hub owns it."""
        live = self._lives.get(tournament_id)
        if live is None or live.seq >= seq:
            return
        async with live.lock:
            if live.seq < seq:
                await self._reload(live)
                self._publish_soon(live)
            if self.owns(tournament_id):
                await self.advance(live)

    async def stop(self) -> None:
        self._stopping = True
        for live in self._lives.values():
            for handle in (live.timer, live.wave, live.push):
                if handle is not None:
                    handle.cancel()
            live.timer = live.wave = live.push = None
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=10)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` in a task the runner waits for at :meth:`stop`."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def adopt(self, tournament_id: str) -> None:
        """A tournament just created here: own it, load it and arm its timer."""
        await self.claim(tournament_id)
        live = await self._load(tournament_id)
        async with live.lock:
            await self.advance(live)

    # --- reads --------------------------------------------------------------------------------

    async def live(self, tournament_id: str) -> Live:
        """The live tournament (loaded from the store when not yet known).

        :raises TournamentRefused: ``NO_SUCH_TOURNAMENT``."""
        live = self._lives.get(tournament_id)
        return live if live is not None else await self._load(tournament_id)

    async def _load(self, tournament_id: str) -> Live:
        try:
            stored = await self._store.load_tournament(tournament_id)
        except (UnknownTournamentError, ValueError):
            raise refused(ErrorCode.NO_SUCH_TOURNAMENT) from None
        known = self._lives.get(tournament_id)
        if known is not None:  # loaded meanwhile by another task
            return known
        live = Live(
            tournament_id,
            stored.info.created_by,
            stored.settings,
            replay(stored.events),
            stored.next_seq,
        )
        self._lives[tournament_id] = live
        return live

    async def _reload(self, live: Live) -> None:
        stored = await self._store.load_tournament(live.id)
        live.reset(replay(stored.events), stored.next_seq)

    # --- changes ------------------------------------------------------------------------------

    async def change(
        self,
        tournament_id: str,
        decide: Callable[[Live, int], Event | Refusal],
    ) -> None:
        """Decide, append, apply, advance (see the module docstring).

        :raises TournamentRefused: the core's refusal, or ``NO_SUCH_TOURNAMENT``."""
        live = await self.live(tournament_id)
        async with live.lock:
            for _attempt in range(MAX_RETRIES):
                decision = decide(live, self._clock())
                if isinstance(decision, Refusal):
                    raise refused(decision.reason)
                if await self._append(live, [decision]):
                    break
            else:
                raise refused(ErrorCode.UNAVAILABLE)
            self._publish_soon(live)
            await self.advance(live)

    async def _append(self, live: Live, events: Sequence[Event]) -> bool:
        """Store ``events`` after the ones seen and fold them in; False (state reloaded) when
        another writer appended first."""
        try:
            live.seq = await self._store.append_tournament_events(live.id, live.seq, events)
        except TournamentConflictError:
            await self._reload(live)
            return False
        for event in events:
            live.apply(event)
        self.changed(live.id, live.seq)
        return True

    async def _append_now(self, live: Live, events: Sequence[Event]) -> None:
        """Append events the runner decided itself (retried after a reload; the caller decides
        again when the state moved, so only for events still valid after any reload)."""
        for _attempt in range(MAX_RETRIES):
            if await self._append(live, events):
                return
        raise refused(ErrorCode.UNAVAILABLE)

    async def game_finished(
        self, tournament_id: str, game_id: str, game: TournamentGame, at_ms: int
    ) -> None:
        """A tournament game's end is stored: fold its result in (once) and advance.

        Ends told together (an arena's games ending at once) are stored together: the ends told
        while a batch is stored and paired wait in ``live.finishes`` and form the next batch
        (one append, one push of the standings, one pairing wave per batch, not per game)."""
        try:
            live = await self.live(tournament_id)
        except Exception:
            logger.exception("tournament %s: result of game %s not stored", tournament_id, game_id)
            return
        live.finishes.append((game_id, game, at_ms))
        if live.finishing:
            return  # the task storing the batch before takes this one too
        live.finishing = True
        try:
            while live.finishes:
                async with live.lock:
                    batch, live.finishes = live.finishes, []
                    await self._finish(live, batch)
                    if live.settings.format != "arena" or self._coalesce_s == 0:
                        await self.advance(live)
                    elif live.wave is None and self.owns(live.id):
                        # Games ending together make one wave (and one standings computation).
                        live.wave = asyncio.get_running_loop().call_later(
                            self._coalesce_s, self._fire_wave, live
                        )
        except Exception:
            # Not lost: the game's row has its end, read again when the tournament is resumed.
            logger.exception("tournament %s: results of games not stored", tournament_id)
            live.finishes.clear()
        finally:
            live.finishing = False

    async def _finish(self, live: Live, batch: Sequence[tuple[str, TournamentGame, int]]) -> None:
        for _attempt in range(MAX_RETRIES):
            state = live.state
            events: list[Event] = []
            seen: set[str] = set()
            for game_id, game, at_ms in batch:
                # Idempotent: a result reported twice, or for a game this tournament did not
                # pair, or after the end (an arena's games still played when time ran out do
                # not count).
                paired = state.games.get(game_id)
                if (
                    paired is None
                    or game_id in state.results
                    or game_id in seen
                    or state.phase != "started"
                ):
                    continue
                seen.add(game_id)
                # The pairing's ids (a guest resumed by another hub has another hub id; white
                # is the player who moved first).
                game = replace(game, white=paired.white, black=paired.black)
                events.append(Finished(game_id, game, at_ms))
            if not events:
                return
            if await self._append(live, events):
                self._publish_soon(live)
                return

    # --- advancing ----------------------------------------------------------------------------

    async def advance(self, live: Live) -> None:
        """Do what is due now (under ``live.lock``), then arm the timer for the next deadline;
        only on the hub that owns the tournament."""
        if not self.owns(live.id) or self._stopping:
            return
        now = self._clock()
        settings, state = live.settings, live.state
        if state.phase == "created" and should_start(settings, state, now):
            await self._append_now(live, [Started(now)])
            self._publish_soon(live)
        elif state.phase == "created" and now >= (_given_up_at(settings) or now + 1):
            # Its time came and went with fewer than two players: over, nothing played (rather
            # than a scheduled tournament nobody joined listed as upcoming for ever).
            await self._append_now(live, [Ended(now)])
            self._publish_soon(live)
        if live.state.phase == "started":
            ends = arena_ends_at(settings, live.state)
            if ends is not None and now >= ends:
                await self._end(live, now)
            elif settings.format == "arena":
                await self._arena_wave(live)
            elif round_complete(live.state):
                await self._next_round(live)
        await self._arm(live)

    async def _end(self, live: Live, now: int) -> None:
        # Ends told before time was up but waiting for this lock (the batch before them being
        # stored) still count: only games that end after it do not (lichess's arena rule).
        told, live.finishes = live.finishes, []
        if told:
            await self._finish(live, told)
        await self._append_now(live, [Ended(now)])
        self._publish_soon(live)

    async def _arena_wave(self, live: Live) -> None:
        state = live.state
        waiting = [w for w in live.board.waiting(state) if not self._seat.busy(w.player)]
        if len(waiting) < 2:
            return
        others = bool(state.playing)
        if len(waiting) < self._inline_wave:
            pairings = pair_wave(waiting, others_playing=others)
        else:
            pairings = await self._off_loop(_pair_wave, waiting, others)
        if not pairings:
            return
        wave = state.rounds_paired + 1
        now = self._clock()
        events: list[Event] = [
            Paired(self._new_game_id(), wave, p.white, p.black, now) for p in pairings
        ]
        if await self._append(live, events):
            await self._start_games(live, events)
            self._publish_soon(live)

    async def _next_round(self, live: Live) -> None:
        settings, state = live.settings, live.state
        number = state.rounds_paired + 1
        pairing: SwissRound | None
        if settings.format == "swiss":
            assert settings.rounds is not None
            if number > settings.rounds:
                pairing = None
            else:
                pairing = await self._off_loop(pair_round, state, settings.rounds)
        else:
            order = _table_order(state)
            double = settings.format == "double_round_robin"
            if number > round_count(len(order), double):
                pairing = None
            else:
                pairing = round_robin_round(order, number, double=double)
        if pairing is None:
            await self._end(live, self._clock())
            return
        now = self._clock()
        events: list[Event] = []
        byes: list[Event] = []
        for white, black in pairing.games:
            out = [p for p in (white, black) if state.entries[p].status != "active"]
            if out:  # a round robin's withdrawn player: the opponent wins by forfeit
                for p in (white, black):
                    if p not in out:
                        byes.append(Bye(p, number, 1.0, now))
                continue
            events.append(Paired(self._new_game_id(), number, white, black, now))
        if pairing.bye is not None:
            byes.append(Bye(pairing.bye, number, 1.0, now))
        if await self._append(live, events + byes):
            await self._start_games(live, events)
            self._publish_soon(live)
            if not events:  # a round of forfeits only: go on
                await self._next_round(live)

    def _new_game_id(self) -> str:
        return game_ids.new_game_id(self._rng)

    async def _start_games(self, live: Live, events: Sequence[Event]) -> None:
        # A wave of 500 games would hold the loop for ~100 ms: batches, the loop free between.
        for index, event in enumerate(events):
            if index and index % START_BATCH == 0:
                await asyncio.sleep(0)
            if isinstance(event, Paired):
                self._start_game(live, event)

    def _start_game(self, live: Live, paired: Paired) -> None:
        entries = live.state.entries
        names = (entries[paired.white].name, entries[paired.black].name)
        try:
            self._seat.start_game(
                paired.game_id,
                paired.white,
                paired.black,
                names,
                live.settings,
                (live.id, paired.round),
            )
        except Exception:
            logger.exception("tournament %s: game %s not started", live.id, paired.game_id)

    async def _off_loop(self, function: Callable[..., T], *args: object) -> T:
        if self._pool is None:
            self._pool = pairing_pool()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, function, *args)

    # --- timers -------------------------------------------------------------------------------

    def _deadline(self, live: Live) -> int | None:
        """The next moment the tournament has something to do by itself: its start time (not
        once passed: a tournament that could not start then, with fewer than two entries,
        starts at the join that makes two), an arena's end."""
        state, settings = live.state, live.settings
        if state.phase == "created":
            start = settings.start_at_ms
            # Past its start time (fewer than two players then): a join may still start it,
            # until it is given up.
            return start if start is None or self._clock() < start else _given_up_at(settings)
        if state.phase == "started":
            return arena_ends_at(settings, state)
        return None

    async def _arm(self, live: Live) -> None:
        deadline = self._deadline(live)
        if live.timer is not None:
            live.timer.cancel()
            live.timer = None
        if deadline != live.stored_deadline:
            try:
                await self._store.set_tournament_deadline(
                    live.id, None if deadline is None else ms_datetime(deadline)
                )
                live.stored_deadline = deadline
            except Exception:
                logger.exception("tournament %s: deadline not stored", live.id)
        if deadline is None or self._stopping:
            return
        delay = max(0.0, (deadline - self._clock()) / 1000)
        live.timer = asyncio.get_running_loop().call_later(delay, self._fire, live)

    def _fire(self, live: Live) -> None:
        live.timer = None
        self.spawn(self._tick(live))

    def _fire_wave(self, live: Live) -> None:
        live.wave = None
        self.spawn(self._tick(live))

    def _publish_soon(self, live: Live) -> None:
        """Push the standings once for the changes of the next ``coalesce_ms`` (a thousand
        players' games ending together make one push, not one each)."""
        if self._coalesce_s == 0:
            self.publish(live)
        elif live.push is None:
            live.push = asyncio.get_running_loop().call_later(
                self._coalesce_s, self._push_now, live
            )

    def _push_now(self, live: Live) -> None:
        live.push = None
        try:
            self.publish(live)
        except Exception:
            logger.exception("tournament %s: standings not pushed", live.id)

    async def tick(self, tournament_id: str) -> None:
        """:meth:`advance` the tournament now, under its lock."""
        live = await self.live(tournament_id)
        async with live.lock:
            await self.advance(live)

    async def _tick(self, live: Live) -> None:
        try:
            async with live.lock:
                await self.advance(live)
        except Exception:
            logger.exception("tournament %s: timer failed", live.id)

    # --- restart ------------------------------------------------------------------------------

    async def _reconcile(self, live: Live) -> None:
        """After a restart: each pairing without a result gets its game (created now if the
        hub stopped before creating it), or its stored end."""
        for paired in list(live.state.games.values()):
            if paired.game_id in live.state.results:
                continue
            record = await self._store.get_game(paired.game_id)
            if record is None:
                if live.state.phase == "started":
                    self._start_game(live, paired)
                continue
            if record.status in ("created", "started"):
                continue  # restored by the hub; its end comes as usual
            from server.app.tournament_games import tournament_game_of_record

            game = tournament_game_of_record(record, paired.white, paired.black)
            ended = record.finished_at
            at_ms = self._clock() if ended is None else int(ended.timestamp() * 1000)
            await self._finish(live, [(paired.game_id, game, at_ms)])


def _given_up_at(settings: TournamentSettings) -> int | None:
    """When a tournament still waiting for its second player after its start time ends: an
    arena at the end of its duration, a Swiss or round robin :data:`LATE_START_MS` later."""
    if settings.start_at_ms is None:
        return None
    if settings.format == "arena" and settings.duration_ms is not None:
        return settings.start_at_ms + settings.duration_ms
    return settings.start_at_ms + LATE_START_MS


async def _always(tournament_id: str) -> bool:
    return True


def _table_order(state: TournamentState) -> list[PlayerId]:
    """A round robin's table: the entries by pairing number (rating, then name), fixed at the
    start (no entry joins a started round robin)."""
    numbers = pairing_numbers(state.entries)
    return sorted(numbers, key=numbers.__getitem__)


def _pair_wave(waiting: Sequence[Waiting], others: bool) -> list[ArenaPairing]:
    """:func:`pair_wave` with positional arguments (run in the process pool)."""
    return pair_wave(waiting, others_playing=others)

"""What the reads of stored games share in one process (the review-read limits of 4a2bfca,
2026-12-07): the cache of finished games, the gate their replays pass, and the rate limit per
requester.

A stored game is shown by replaying its moves through the rules (a 240-ply Dai Shogi game takes
65–200 ms of CPU). Replays used to run in worker threads, which still share the interpreter
lock: 27 such requests a second kept five threads busy and every running game's move
acknowledgement went from 4 ms to 690 ms — each time the loop wanted the lock back it waited for
a replay thread's switch interval (5 ms), several times per move. Four things keep that work
from competing with the move path:

* **The cache** (:class:`ReviewReads`): a *finished* game never changes (its moves, players and
  result are final; an analysis is not part of its view, and the exports that include one are
  cached under the analysis they include), so its replay (the rules' ``Game``, about 0.5 MB for
  such a game) is kept in a least-recently-used map of ``review_cache_games`` entries, and the
  encoded answers built from it (the review view of any ply, the exports) in one bounded by
  ``review_cache_bytes``. A hit costs no replay and no database query; it returns the very
  bytes of the first answer. Unfinished games are never cached.
* **Slices** (:func:`run_sliced`): a replay runs on the event loop itself, a move at a time,
  handing the loop back whenever it has used :data:`REPLAY_SLICE_S` (2 ms): a move frame
  waits for at most one slice, and no thread contends for the interpreter lock.
* **The gate** (:meth:`ReviewReads.turn`): at most ``review_replays_at_once`` replays run at
  once (default 1), so the loop's time is shared between the moves and one replay; the others
  queue, in order, at most ``review_replay_queue`` of them (further ones are refused like a
  read over its limit: the server is busy). A request that waited re-checks the cache first: a
  burst of requests for one game replays it once.
* **The rate limits** (:meth:`ReviewReads.admit`), per requester — the account of a logged-in
  registered player, else the address — across connections
  (:class:`~server.transport.ratelimit.KeyedBuckets`): every read, ``review_reads_per_s``
  sustained with bursts of ``review_reads_burst`` (a cached answer costs a dictionary look-up;
  the web client asks for one position per step through a game); and the reads that must
  replay (not cached: another game, an unfinished one), ``review_replays_per_s`` with bursts
  of ``review_replays_burst``. Over either, a read is refused before anything is done: HTTP
  ``429`` with ``Retry-After``, the websocket's ``error`` ``rate_limited``, an ICS line.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Generator, Hashable
from typing import Any, TypeVar

from server.config import Settings
from server.rules import Game
from server.rules.record import UNFINISHED_STATUSES, GameRecord
from server.transport.ratelimit import KeyedBuckets, Verdict

__all__ = [
    "REPLAY_SLICE_S",
    "ReplayQueueFull",
    "ReviewReads",
    "account_key",
    "address_key",
    "run_sliced",
]

T = TypeVar("T")

REPLAY_SLICE_S = 0.002
"""A replay hands the event loop back after this much time (:func:`run_sliced`)."""


class ReplayQueueFull(Exception):
    """More replays are waiting for their turn than ``review_replay_queue``."""


async def run_sliced(steps: Generator[None, None, T]) -> T:
    """Run ``steps`` (a generator that yields after each unit of work and returns the result)
    on the event loop, letting every other ready callback run whenever it has used
    :data:`REPLAY_SLICE_S`."""
    deadline = time.perf_counter() + REPLAY_SLICE_S
    while True:
        try:
            next(steps)
        except StopIteration as done:
            result: T = done.value
            return result
        if time.perf_counter() >= deadline:
            await asyncio.sleep(0)
            deadline = time.perf_counter() + REPLAY_SLICE_S


def address_key(address: str) -> str:
    """The rate-limit key of an anonymous requester."""
    return f"address:{address}"


def account_key(name: str) -> str:
    """The rate-limit key of a registered player's reads (over any connection or address)."""
    return f"account:{name.lower()}"


class _Lru:
    """A least-recently-used map bounded by entries and by the sum of the entries' sizes."""

    __slots__ = ("_items", "_max_entries", "_max_size", "size")

    def __init__(self, max_entries: int, max_size: int) -> None:
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._max_entries = max_entries
        self._max_size = max_size
        self.size = 0

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Hashable) -> Any:
        found = self._items.get(key)
        if found is None:
            return None
        self._items.move_to_end(key)
        return found[0]

    def put(self, key: Hashable, value: Any, size: int) -> None:
        if size > self._max_size or self._max_entries < 1:
            return  # larger than the whole cache: not kept
        old = self._items.pop(key, None)
        if old is not None:
            self.size -= old[1]
        self._items[key] = (value, size)
        self.size += size
        while len(self._items) > self._max_entries or self.size > self._max_size:
            _, (_, dropped) = self._items.popitem(last=False)
            self.size -= dropped


class ReviewReads:
    """The cache, the gate and the rate limit of stored-game reads (see the module docstring).
    One per process, shared by every door (websocket, HTTP, ICS)."""

    def __init__(
        self,
        *,
        cache_games: int = 32,
        cache_bytes: int = 16 * 1024 * 1024,
        replays_at_once: int = 1,
        replay_queue: int = 32,
        reads_per_s: float = 10.0,
        reads_burst: int = 60,
        replays_per_s: float = 2.0,
        replays_burst: int = 20,
        max_keys: int = 100_000,
    ) -> None:
        self._games = _Lru(cache_games, cache_games)
        self._answers = _Lru(1_000_000, cache_bytes)
        self._at_once = replays_at_once
        self._queue = replay_queue
        self._gate: asyncio.Semaphore | None = None
        self._waiting = 0
        self._reads = KeyedBuckets(reads_per_s, reads_burst, max_keys=max_keys)
        self._replays = KeyedBuckets(replays_per_s, replays_burst, max_keys=max_keys)
        self._waits = {
            "read": math.ceil(1.0 / reads_per_s),
            "replay": math.ceil(1.0 / replays_per_s),
        }
        self.retry_after_s = max(self._waits.values())
        """The ``Retry-After`` of a refused read, in whole seconds (the longer of the two)."""
        self.replays = 0
        """Replays run so far (tests and the bench read it)."""

    @classmethod
    def from_settings(cls, settings: Settings) -> ReviewReads:
        return cls(
            cache_games=settings.review_cache_games,
            cache_bytes=settings.review_cache_bytes,
            replays_at_once=settings.review_replays_at_once,
            replay_queue=settings.review_replay_queue,
            reads_per_s=settings.review_reads_per_s,
            reads_burst=settings.review_reads_burst,
            replays_per_s=settings.review_replays_per_s,
            replays_burst=settings.review_replays_burst,
        )

    # --- the rate limit -------------------------------------------------------------------

    def admit(self, key: str, now: float, kind: str = "read") -> int | None:
        """Account for one read (``kind`` ``"read"``) or one replay (``"replay"``) by ``key`` at
        ``now`` (seconds, monotonic): ``None`` if it may go on, else the whole seconds to wait
        before the next is admitted (``Retry-After``)."""
        buckets = self._reads if kind == "read" else self._replays
        if buckets.take(key, now) is Verdict.ACCEPT:
            return None
        return self._waits[kind]

    # --- the gate -------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Held while a replay runs (``async with reads.turn(): …``): at most
        ``review_replays_at_once`` at once, the others wait in order.

        :raises ReplayQueueFull: ``review_replay_queue`` replays are waiting already.
        """
        if self._gate is None:  # made on first use, inside the running loop
            self._gate = asyncio.Semaphore(self._at_once)
        gate = self._gate
        if gate.locked() and self._waiting >= self._queue:
            raise ReplayQueueFull
        self._waiting += 1
        try:
            await gate.acquire()
        finally:
            self._waiting -= 1
        try:
            yield
        finally:
            gate.release()

    # --- the cache ------------------------------------------------------------------------

    def game(self, game_id: str) -> tuple[GameRecord, Game] | None:
        """A finished game's record and replay, if kept."""
        found: tuple[GameRecord, Game] | None = self._games.get(game_id)
        return found

    def keep_game(self, record: GameRecord, game: Game) -> None:
        """Keep ``record`` and its replay if the game is finished."""
        if record.status not in UNFINISHED_STATUSES:
            self._games.put(record.id, (record, game), 1)

    def answer(self, key: Hashable) -> Any:
        """An answer built from a finished game, if kept (``key`` names the game first)."""
        return self._answers.get(key)

    def keep_answer(self, record: GameRecord, key: Hashable, answer: Any, size: int) -> None:
        """Keep ``answer`` (about ``size`` bytes) if ``record``'s game is finished."""
        if record.status not in UNFINISHED_STATUSES:
            self._answers.put(key, answer, size)

"""Group commit for moves.

Every move must be committed before its player is acknowledged, and commits
are the expensive part of a write (a WAL flush each). :class:`MoveWriter`
therefore lets many games share commits: while one batch is being committed,
new appends queue up; the next batch takes everything queued (up to
``max_batch``), inserts it with one executemany in one transaction, commits,
and only then resolves each append. There is no timer: a lone append is
written at once, and batches grow by themselves with load.

>>> async with MoveWriter(store) as writer:          # doctest: +SKIP
...     await writer.append(game_id, MoveRecord(1, "e2e4", "e4", 60_000, 1_200))
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Self

from server.rules import MoveRecord
from server.store.errors import StoreUnavailableError
from server.store.records import GameMove
from server.store.repository import Store

__all__ = ["MoveWriter", "MoveWritten", "WriterStats"]

logger = logging.getLogger(__name__)

MoveWritten = Callable[[BaseException | None], None]
"""Told, by :meth:`MoveWriter.submit`, that a move was committed (``None``) or why it was not."""

_Pending = tuple[GameMove, "asyncio.Future[None] | MoveWritten"]


@dataclass(slots=True)
class WriterStats:
    """Counters since the writer was created."""

    #: transactions committed with one or more moves
    commits: int = 0
    #: moves committed
    moves: int = 0
    #: batches that failed as a whole and were retried row by row
    fallbacks: int = 0
    #: size of the biggest batch so far
    largest_batch: int = 0


class MoveWriter:
    """Persists moves from many games with shared commits.

    :param store: where the moves go.
    :param max_batch: most moves per transaction.
    :param flushers: batches in flight at once. One suits SQLite (a single
        writer anyway); two let PostgreSQL build the next batch while the
        previous one commits.

    Cancelling an ``append`` does not withdraw the move: once queued it will be
    written, so a hub that gave up waiting must still expect it in the database.
    """

    def __init__(self, store: Store, *, max_batch: int = 1000, flushers: int = 1) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        if flushers < 1:
            raise ValueError("flushers must be at least 1")
        self._store = store
        self._max_batch = max_batch
        self._flusher_count = flushers
        self._pending: list[_Pending] = []
        self._wakeup: asyncio.Event | None = None
        self._flushers: list[asyncio.Task[None]] = []
        self._closing = False
        self.stats = WriterStats()

    async def __aenter__(self) -> Self:
        self._start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def append(self, game_id: str, move: MoveRecord) -> None:
        """Persist *move* of game *game_id*; returns only after the transaction holding it has
        committed. A move without ``played_at`` is stored as played when its batch is written.

        :raises ValueError: the move cannot be stored (see ``Store.append_move``); only this
            append fails (the store checks each move once, when its batch is written).
        :raises DuplicateMoveError: if the game already has a move at this ply
            (only this append fails; the rest of its batch is committed).
        :raises UnknownGameError: if the game does not exist.
        :raises StoreUnavailableError: if the database cannot be reached; the
            move is not stored.
        :raises RuntimeError: if the writer is closed.
        """
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue((game_id, move), future)
        await future

    def submit(self, game_id: str, move: MoveRecord, written: MoveWritten) -> None:
        """Queue *move* for the next batch and return at once; ``written`` is called by the
        flusher as soon as the transaction holding it has committed (with ``None``), or with
        the exception :meth:`append` would raise — synchronously, so a caller that waits this
        way needs no task and pays no extra turn of the event loop. ``written`` must not raise
        (what it raises is logged).

        :raises RuntimeError: if the writer is closed (nothing is queued).
        """
        self._queue((game_id, move), written)

    def _queue(self, move: GameMove, waiter: asyncio.Future[None] | MoveWritten) -> None:
        if self._closing:
            raise RuntimeError("the MoveWriter is closed")
        self._start()
        assert self._wakeup is not None
        self._pending.append((move, waiter))
        self._wakeup.set()

    async def close(self) -> None:
        """Write everything already queued, then stop. Further appends raise."""
        self._closing = True
        if self._wakeup is not None:
            self._wakeup.set()
        if self._flushers:
            await asyncio.gather(*self._flushers)
            self._flushers.clear()

    def _start(self) -> None:
        if self._flushers or self._closing:
            return
        self._wakeup = asyncio.Event()
        self._flushers = [
            asyncio.create_task(self._flush_forever(), name=f"move-writer-{index}")
            for index in range(self._flusher_count)
        ]

    async def _flush_forever(self) -> None:
        assert self._wakeup is not None
        while True:
            while not self._pending:
                if self._closing:
                    return
                self._wakeup.clear()
                await self._wakeup.wait()
            batch = self._pending[: self._max_batch]
            del self._pending[: self._max_batch]
            try:
                await self._flush(batch)
            except BaseException as error:
                # Cancelled (event loop shutting down) or a bug: fail the batch, never hang it.
                for _, future in batch:
                    _fail(future, error if isinstance(error, Exception) else _cancelled())
                if not isinstance(error, Exception):
                    self._fail_all_pending()
                    raise

    async def _flush(self, batch: list[_Pending]) -> None:
        try:
            await self._store.append_moves([move for move, _ in batch])
        except StoreUnavailableError as error:
            for _, future in batch:
                copy = StoreUnavailableError(str(error))
                copy.__cause__ = error.__cause__
                _fail(future, copy)
            return
        except Exception:
            # One bad row (a duplicate ply, an unknown game) sinks the whole
            # batch: retry row by row so only the offending appends fail.
            self.stats.fallbacks += 1
            for (game_id, move), future in batch:
                try:
                    await self._store.append_move(game_id, move)
                except Exception as row_error:
                    _fail(future, row_error)
                else:
                    self._count(1)
                    _succeed(future)
            return
        self._count(len(batch))
        for _, future in batch:
            _succeed(future)

    def _count(self, moves: int) -> None:
        self.stats.commits += 1
        self.stats.moves += moves
        self.stats.largest_batch = max(self.stats.largest_batch, moves)

    def _fail_all_pending(self) -> None:
        pending, self._pending = self._pending, []
        for _, future in pending:
            _fail(future, _cancelled())


def _cancelled() -> StoreUnavailableError:
    return StoreUnavailableError("the move writer stopped before this move was written")


def _succeed(waiter: asyncio.Future[None] | MoveWritten) -> None:
    if isinstance(waiter, asyncio.Future):
        if not waiter.done():
            waiter.set_result(None)
    else:
        _tell(waiter, None)


def _fail(waiter: asyncio.Future[None] | MoveWritten, error: BaseException) -> None:
    if isinstance(waiter, asyncio.Future):
        if not waiter.done():
            waiter.set_exception(error)
    else:
        _tell(waiter, error)


def _tell(written: MoveWritten, error: BaseException | None) -> None:
    try:
        written(error)
    except Exception:  # a bug of the caller: never let it stop the rest of the batch
        logger.exception("a move writer callback failed")

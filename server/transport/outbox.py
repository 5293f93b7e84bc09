"""The bounded outgoing queue of one websocket connection.

Messages put into an outbox during one turn of the event loop are written together at the end of
that turn (:class:`Flusher`): their websocket frames go into the transport with a single
``writelines`` — one system call however many messages one hub call (or several) addressed to the
connection, e.g. a move's ack and its broadcast. That happens while the connection's write buffer
is below the high-water mark and nothing waits in its queue (the common case: no task, no await).
The frames are then framed by the transport (:func:`~server.transport.ws_internals.write_now`: a
server's frames are unmasked and the hub never compresses nor fragments them) rather than by
websockets' ``Protocol.send_text``, whose frame objects cost a few microseconds per frame and
recipient on every move.

Otherwise messages wait in a queue that a short-lived writer task drains with
``await connection.send(...)``, which applies the socket's backpressure. When more than ``limit``
messages are queued the client is too slow: the outbox is closed, its queue dropped, and
``on_overflow`` is called once so the owner can drop the connection. Sending never blocks the
caller, so a slow client cannot stall a game room.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Protocol

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from server.transport.ws_internals import text_frame_header, write_now

logger = logging.getLogger(__name__)

__all__ = ["Flusher", "FrameSink", "Outbox", "fan_out", "text_frame_header"]


class FrameSink(Protocol):
    """Where a connection's outgoing messages go, as encoded JSON frames: a websocket's
    :class:`Outbox`, or another transport that re-renders them (the ICS text adapter)."""

    def put(self, frame: bytes) -> None: ...

    def close(self) -> None: ...


FLUSH_UNTIMED = 16
"""A flush of at most this many outboxes writes them all without reading the clock (a move's
messages: the players and a few spectators)."""
FLUSH_BUDGET_S = 0.004
"""How long one flush of more outboxes may write before the rest waits for the next turn."""
LARGE_BATCH = 16 * 1024
"""An outbox with more bytes than this to write is written after the others in a large flush."""


class Flusher:
    """Writes the messages of every outbox that received some during this loop turn, once per
    turn (one ``call_soon`` for all of them).

    A large flush (over :data:`FLUSH_UNTIMED` outboxes: a push or view to hundreds of watchers,
    a burst's answers) writes for :data:`FLUSH_BUDGET_S` at most, then leaves the remaining
    outboxes, in order and ahead of those marked since, to the next turn: the loop runs its
    timers and reads its sockets in between (hundreds of 1 MB frames written in one callback
    held it for 100 ms). Outboxes with small batches go first (a player's move or game start
    does not wait behind a 200 KB standings push to thousands of spectators), those with over
    :data:`LARGE_BATCH` bytes after, at least one per callback. An outbox left over keeps its
    frames in its batch, where later ones join them, so each connection's frames still go out
    in order."""

    __slots__ = ("_dirty", "_loop", "_scheduled")

    def __init__(self) -> None:
        self._dirty: list[Outbox] = []
        self._scheduled = False
        # Looked up once: on Python 3.11 every asyncio.get_running_loop() is a getpid() system
        # call, and marking happens for every message of every move.
        self._loop: asyncio.AbstractEventLoop | None = None

    def mark(self, outbox: Outbox) -> None:
        self._dirty.append(outbox)
        if not self._scheduled:
            self._scheduled = True
            loop = self._loop
            if loop is None or loop.is_closed():
                loop = self._loop = asyncio.get_running_loop()
            loop.call_soon(self.flush)

    def flush(self) -> None:
        self._scheduled = False
        dirty, self._dirty = self._dirty, []
        if len(dirty) <= FLUSH_UNTIMED:
            for outbox in dirty:
                try:
                    outbox.flush()
                except Exception:  # pragma: no cover - a bug: never let it stop the others
                    logger.exception("writing to a websocket connection failed")
            return
        # Small batches first (a move, a game's start or end: what a player waits for), then
        # the large ones (a push or a view to watchers), at least one per callback.
        clock = time.perf_counter
        deadline = clock() + FLUSH_BUDGET_S
        large: list[Outbox] = []
        left: list[Outbox] = []
        for outbox in dirty:
            if outbox.batch_bytes() > LARGE_BATCH:
                large.append(outbox)
            elif left or clock() > deadline:
                left.append(outbox)
            else:
                self._write(outbox)
        for index, outbox in enumerate(large):
            if index and clock() > deadline:
                left.extend(large[index:])
                break
            self._write(outbox)
        if left:
            self._dirty[:0] = left
            if not self._scheduled:
                self._scheduled = True
                assert self._loop is not None  # set by the mark that scheduled this flush
                self._loop.call_soon(self.flush)

    @staticmethod
    def _write(outbox: Outbox) -> None:
        try:
            outbox.flush()
        except Exception:  # pragma: no cover - a bug: never let it stop the others
            logger.exception("writing to a websocket connection failed")


class Outbox:
    """Outgoing text frames of one connection (UTF-8 JSON bytes), in order."""

    __slots__ = (
        "_batch",
        "_flusher",
        "_high_water",
        "_limit",
        "_on_overflow",
        "_queue",
        "_writer",
        "closed",
        "ws",
    )

    def __init__(
        self,
        ws: ServerConnection,
        limit: int,
        high_water: int,
        on_overflow: Callable[[Outbox], None],
        flusher: Flusher,
    ) -> None:
        self.ws = ws
        self._limit = limit
        self._high_water = high_water
        self._on_overflow = on_overflow
        self._flusher = flusher
        self._batch: list[bytes] = []
        self._queue: deque[bytes] = deque()
        self._writer: asyncio.Task[None] | None = None
        self.closed = False

    def batch_bytes(self) -> int:
        """The bytes of this turn's messages not written yet."""
        return sum(map(len, self._batch))

    @property
    def queued(self) -> int:
        """Messages waiting for the socket (not counting the transport's write buffer)."""
        return len(self._queue)

    def put(self, frame: bytes) -> None:
        """Send ``frame`` as a text frame at the end of this loop turn, or when the socket can
        take it."""
        if self.closed:
            return
        if self._queue:
            self._enqueue(frame)
            return
        if not self._batch:
            self._flusher.mark(self)
        self._batch.append(frame)

    def flush(self) -> None:
        """Write this turn's messages with one system call, or queue them (see the module
        docstring)."""
        frames, self._batch = self._batch, []
        if self.closed or not frames:
            return
        if not self._queue and write_now(self.ws, frames, self._high_water):
            return
        for frame in frames:
            self._enqueue(frame)
            if self.closed:
                return

    def _enqueue(self, frame: bytes) -> None:
        if len(self._queue) >= self._limit:
            on_overflow = self._on_overflow
            self.close()
            on_overflow(self)
            return
        self._queue.append(frame)
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(self._drain())

    def close(self) -> None:
        """Send nothing more; drop what is waiting.

        Also lets go of the owner's overflow callback: the owner holds its outbox, so the
        callback (a bound method of the owner) is a reference cycle, which would leave a closed
        connection to be freed by a full garbage collection instead of by reference counting."""
        self.closed = True
        self._on_overflow = _ignore_overflow
        self._batch.clear()
        self._queue.clear()
        writer, self._writer = self._writer, None
        if writer is not None and writer is not asyncio.current_task():
            writer.cancel()

    async def _drain(self) -> None:
        try:
            while self._queue and not self.closed:
                frame = self._queue.popleft()
                await self.ws.send(frame, text=True)
        except ConnectionClosed:
            self.close()
        except asyncio.CancelledError:
            raise
        except Exception:  # pragma: no cover - a bug: never let it pass silently
            logger.exception("writer of a websocket connection failed")
            self.close()
        finally:
            if self._writer is asyncio.current_task():
                self._writer = None


def _ignore_overflow(outbox: Outbox) -> None:
    """The overflow callback of a closed outbox."""


def fan_out(outboxes: Iterable[FrameSink], frame: bytes) -> None:
    """Send one encoded frame to several outboxes (the same bytes for all)."""
    for outbox in outboxes:
        outbox.put(frame)

"""The message bus interface shared by the in-process and the Redis implementation.

A bus carries opaque ``bytes`` messages on named channels between hub processes ("nodes").
Delivery is at most once: a message published while a subscriber is disconnected is lost,
so nodes resynchronise through versioned room events after :attr:`Bus.degraded` clears.
Messages of one channel reach each subscriber in publish order, one handler call at a time.
"""

import asyncio
import inspect
import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import ClassVar, Self

__all__ = [
    "Bus",
    "BusClosedError",
    "BusError",
    "BusUnavailableError",
    "DegradedListener",
    "MessageHandler",
]

logger = logging.getLogger(__name__)

MessageHandler = Callable[[str, bytes], Awaitable[None] | None]
"""Called with ``(channel, message)`` for each message; may be a plain or an async function."""

DegradedListener = Callable[[bool], Awaitable[None] | None]
"""Called with ``True`` when the bus becomes degraded and ``False`` when it has recovered."""


class BusError(Exception):
    """Base class of the bus errors."""


class BusUnavailableError(BusError):
    """The bus backend (Redis) cannot be reached; the operation was not performed."""


class BusClosedError(BusError):
    """The bus was closed, or used before :meth:`Bus.start`."""


def check_channel(channel: str) -> None:
    """Raise ``ValueError``/``TypeError`` unless ``channel`` is a usable channel name."""
    if not isinstance(channel, str):
        raise TypeError(f"channel must be a str, not {type(channel).__name__}")
    if not channel:
        raise ValueError("channel must not be empty")


def check_message(message: bytes) -> None:
    """Raise ``TypeError`` unless ``message`` is ``bytes``."""
    if not isinstance(message, bytes):
        raise TypeError(f"message must be bytes, not {type(message).__name__}")


def _run_callback(
    result: Awaitable[None] | None, what: str, tasks: set["asyncio.Task[None]"]
) -> None:
    """Let an awaitable returned by a callback run as a task that logs its failure."""
    if not inspect.isawaitable(result):
        return

    async def run() -> None:
        try:
            await result
        except Exception:
            logger.exception("%s failed", what)

    task = asyncio.create_task(run())
    tasks.add(task)
    task.add_done_callback(tasks.discard)


class Bus(ABC):
    """Publish/subscribe on named channels.

    Use it as an async context manager, or call :meth:`start` and :meth:`close`::

        async with InProcessBus() as bus:
            await bus.subscribe("room:1", handler)
            await bus.publish("room:1", b"hello")

    One handler per channel and bus: subscribing a channel twice raises ``ValueError``.
    A handler's exception is logged and does not stop delivery of later messages.
    """

    def __init__(self) -> None:
        self._degraded = False
        self._listeners: list[DegradedListener] = []
        self._callback_tasks: set[asyncio.Task[None]] = set()

    @abstractmethod
    async def start(self) -> None:
        """Connect to the backend.

        :raises BusUnavailableError: if the backend cannot be reached at all.
        """

    @abstractmethod
    async def publish(self, channel: str, message: bytes) -> None:
        """Send ``message`` to every current subscriber of ``channel`` on every node.

        :raises BusUnavailableError: while the bus is degraded or the backend fails.
        :raises BusClosedError: after :meth:`close`.
        """

    @abstractmethod
    async def subscribe(self, channel: str, handler: MessageHandler) -> None:
        """Deliver the messages of ``channel`` to ``handler``.

        Returns once the backend has confirmed the subscription, so every message published
        after this returns (by any node) reaches ``handler``.

        :raises ValueError: if this bus is already subscribed to ``channel``.
        :raises BusUnavailableError: if the backend cannot confirm; nothing stays subscribed.
        :raises BusClosedError: after :meth:`close`.
        """

    @abstractmethod
    async def unsubscribe(self, channel: str) -> None:
        """Stop delivering ``channel``; queued, undelivered messages are dropped.

        Unsubscribing a channel that is not subscribed does nothing.
        """

    @abstractmethod
    async def close(self) -> None:
        """Drop all subscriptions and release the backend; calling it again does nothing."""

    @property
    def degraded(self) -> bool:
        """True while the backend is unreachable: publishes fail and messages may be lost."""
        return self._degraded

    def add_degraded_listener(self, listener: DegradedListener) -> Callable[[], None]:
        """Call ``listener(True)`` when the bus becomes degraded, ``listener(False)`` on recovery.

        "Recovered" means every subscription is active again. Returns a function that
        removes the listener. An async listener runs as a task; its exception is logged.
        """
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    def _set_degraded(self, degraded: bool) -> None:
        if degraded == self._degraded:
            return
        self._degraded = degraded
        for listener in list(self._listeners):
            try:
                result = listener(degraded)
            except Exception:
                logger.exception("degraded listener failed")
                continue
            _run_callback(result, "degraded listener", self._callback_tasks)

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()


class ChannelWorker:
    """Delivers one channel's messages to its handler, one call at a time, in arrival order.

    Each subscription has its own queue and task, so a slow handler delays only its own
    channel. The queue is unbounded: the bus never drops a message to protect itself.
    """

    # Strong references to running tasks: the event loop keeps only weak ones, and a worker
    # that was unsubscribed is otherwise referenced by nothing while it finishes.
    _running: ClassVar[set["asyncio.Task[None]"]] = set()

    def __init__(self, channel: str, handler: MessageHandler) -> None:
        self.channel = channel
        self.handler = handler
        self.stopped = False
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._task = asyncio.create_task(self._run(), name=f"bus-worker:{channel}")
        self._running.add(self._task)
        self._task.add_done_callback(self._running.discard)

    def put(self, message: bytes) -> None:
        if not self.stopped:
            self._queue.put_nowait(message)

    def stop(self) -> None:
        """Deliver nothing more; a handler call in progress is allowed to finish."""
        self.stopped = True
        self._queue.put_nowait(None)  # wakes the task so that it ends

    async def wait_stopped(self, timeout: float) -> None:
        """Wait for the task to end after :meth:`stop`; cancel it after ``timeout`` seconds."""
        if self._task is asyncio.current_task():
            return  # stopped from inside its own handler: the task ends when the handler returns
        done, _ = await asyncio.wait([self._task], timeout=timeout)
        if not done:
            self._task.cancel()
            await asyncio.wait([self._task])

    async def _run(self) -> None:
        while True:
            message = await self._queue.get()
            if self.stopped or message is None:
                return
            try:
                result = self.handler(self.channel, message)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                logger.exception("bus handler for channel %r failed", self.channel)

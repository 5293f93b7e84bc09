"""The in-process bus: one process, no Redis, used by the embedded single-node run."""

import asyncio

from server.bus.base import (
    Bus,
    BusClosedError,
    ChannelWorker,
    MessageHandler,
    check_channel,
    check_message,
)

__all__ = ["InProcessBroker", "InProcessBus"]

_STOP_TIMEOUT_S = 5.0


class InProcessBroker:
    """Routes messages between the :class:`InProcessBus` instances attached to it.

    Each bus gets its own broker by default; tests share one broker between several buses
    to stand for several nodes in one process.
    """

    def __init__(self) -> None:
        self._workers: dict[str, list[ChannelWorker]] = {}

    def attach(self, worker: ChannelWorker) -> None:
        self._workers.setdefault(worker.channel, []).append(worker)

    def detach(self, worker: ChannelWorker) -> None:
        workers = self._workers.get(worker.channel, [])
        if worker in workers:
            workers.remove(worker)
        if not workers:
            self._workers.pop(worker.channel, None)

    def deliver(self, channel: str, message: bytes) -> None:
        """Queue ``message`` for every subscriber of ``channel`` (delivery is asynchronous)."""
        for worker in self._workers.get(channel, ()):
            worker.put(message)


class InProcessBus(Bus):
    """A :class:`Bus` whose messages never leave the process; it is never degraded."""

    def __init__(self, broker: InProcessBroker | None = None) -> None:
        super().__init__()
        self._broker = broker if broker is not None else InProcessBroker()
        self._workers: dict[str, ChannelWorker] = {}
        self._closed = False

    async def start(self) -> None:
        self._check_open()

    async def publish(self, channel: str, message: bytes) -> None:
        check_channel(channel)
        check_message(message)
        self._check_open()
        self._broker.deliver(channel, message)

    async def subscribe(self, channel: str, handler: MessageHandler) -> None:
        check_channel(channel)
        self._check_open()
        if channel in self._workers:
            raise ValueError(f"channel {channel!r} is already subscribed on this bus")
        worker = ChannelWorker(channel, handler)
        self._workers[channel] = worker
        self._broker.attach(worker)

    async def unsubscribe(self, channel: str) -> None:
        check_channel(channel)
        worker = self._workers.pop(channel, None)
        if worker is not None:
            self._broker.detach(worker)
            worker.stop()

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        workers = list(self._workers.values())
        self._workers.clear()
        for worker in workers:
            self._broker.detach(worker)
            worker.stop()
        await asyncio.gather(*(worker.wait_stopped(_STOP_TIMEOUT_S) for worker in workers))

    def _check_open(self) -> None:
        if self._closed:
            raise BusClosedError("the bus is closed")

"""What a node sends on the bus, in order, without holding up the event loop.

Two :class:`Sender` queues run side by side: messages (node channels, games), and the shared
state (the seek registry with the lobby channel, presence), whose slower scripts must not hold
up moves. Each queue is drained by one task, so the order of what one part queued is kept.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from server.bus import Bus, BusError
from server.cluster.envelopes import Header, pack
from server.cluster.host import NODE_CHANNEL_PREFIX, NODES_CHANNEL, node_channel

__all__ = ["Outgoing", "Sender"]

logger = logging.getLogger(__name__)

SEND_BATCH = 256
PUBLISH_CONCURRENCY = 16
OUTGOING_LIMIT = 100_000

Outgoing = tuple[str, bytes] | Callable[[], Awaitable[None]]
"""A bus message ``(channel, data)``, or a cluster-state update to await in turn."""


class Sender:
    """The node's two ordered outgoing queues (see the module docstring).

    :param on_failed: told of each ``(channel, data)`` message that could not be published.
    """

    def __init__(self, bus: Bus, node_id: str, on_failed: Callable[[str, bytes], None]) -> None:
        self._bus = bus
        self._node_id = node_id
        self._on_failed = on_failed
        self._messages: asyncio.Queue[Outgoing] = asyncio.Queue(OUTGOING_LIMIT)
        self._state_updates: asyncio.Queue[Outgoing] = asyncio.Queue(OUTGOING_LIMIT)
        self._publish_slots = asyncio.Semaphore(PUBLISH_CONCURRENCY)
        self.dropped = 0

    def loops(self) -> list[asyncio.Task[None]]:
        """Start the two sending tasks."""
        return [
            asyncio.create_task(self._send_forever(self._messages), name="cluster-sender"),
            asyncio.create_task(self._send_forever(self._state_updates), name="cluster-state"),
        ]

    def idle(self) -> bool:
        """Whether both queues are empty."""
        return self._messages.empty() and self._state_updates.empty()

    def publish(self, channel: str, data: bytes) -> None:
        """Queue one bus message; sent in order by one task, dropped while degraded."""
        self.enqueue((channel, data))

    def envelope(self, node_id: str, header: Header, body: bytes = b"") -> None:
        """Queue an envelope for ``node_id``'s channel (signed with this node's id)."""
        self.publish(node_channel(node_id), pack(header, self._node_id, body))

    def notice(self, header: Header) -> None:
        """Queue a notice for every node (the ``nodes`` channel; signed with this node's id)."""
        self.publish(NODES_CHANNEL, pack(header, self._node_id))

    def enqueue(self, item: Outgoing, state: bool = False) -> None:
        """Queue a message (or, with ``state``, a cluster-state update) for its sender."""
        try:
            (self._state_updates if state else self._messages).put_nowait(item)
        except asyncio.QueueFull:
            self.dropped += 1

    async def _send_forever(self, queue: asyncio.Queue[Outgoing]) -> None:
        """Send the queued items in order: each round takes what queued up meanwhile, merges
        the envelopes for one node channel into one bus message (a batch), and publishes the
        channels concurrently — the order within each channel is kept, a publish waiting for
        Redis does not hold up the others. Callables (state updates) run in turn."""
        while True:
            items = [await queue.get()]
            while len(items) < SEND_BATCH and not queue.empty():
                items.append(queue.get_nowait())
            channels: dict[str, list[bytes]] = {}
            for item in items:
                if isinstance(item, tuple):
                    channels.setdefault(item[0], []).append(item[1])
                    continue
                await self._send_channels(channels)  # what was queued before goes first
                await self._send_one(item)
            await self._send_channels(channels)
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                # A state update lost the close's cancellation: on Python 3.11 asyncio.wait_for
                # returns its result when the cancel lands as its inner future completes, and
                # redis-py sends each command through wait_for (socket timeout). Stop anyway, or
                # the close waits on this loop for ever (tests/cluster/test_cluster_sender.py).
                raise asyncio.CancelledError

    async def _send_channels(self, channels: dict[str, list[bytes]]) -> None:
        async def send(channel: str, messages: list[bytes]) -> None:
            async with self._publish_slots:
                if channel.startswith(NODE_CHANNEL_PREFIX):
                    await self._send_one((channel, b"\n".join(messages)))
                    return
                for message in messages:
                    await self._send_one((channel, message))

        if channels:
            await asyncio.gather(*(send(c, m) for c, m in channels.items()))
            channels.clear()

    async def _send_one(self, item: Outgoing) -> None:
        try:
            if isinstance(item, tuple):
                if self._bus.degraded:
                    self.dropped += 1
                    self._on_failed(*item)
                    return
                await self._bus.publish(*item)
            else:
                await item()
        except BusError as error:
            self.dropped += 1
            logger.info("bus message dropped: %s", error)
            if isinstance(item, tuple):
                self._on_failed(*item)
        except Exception:
            logger.exception("cluster sender failed on one message")

"""The cluster's sender stops when it is cancelled, even when a publish loses the cancellation.

On Python 3.11, ``asyncio.wait_for`` returns the inner result instead of raising when the
caller is cancelled in the same turn as the inner future completes; redis-py sends every
command through ``wait_for`` when a socket timeout is set (ours always is), so a node closing
while a cluster-state update completed had its sending task go on for ever and the close wait
on it. The bus below publishes through ``wait_for`` and lands the cancellation in that turn.
(Bus messages are published in tasks of their own under ``gather``, which re-raises a
cancellation its children lost, so only the updates awaited in the task itself are exposed.)
"""

from __future__ import annotations

import asyncio
import sys

from server.bus import InProcessBus
from server.cluster.outgoing import Sender


class CancelLandingBus(InProcessBus):
    """Publishes through ``wait_for``; the first publish cancels ``victim`` as it completes."""

    def __init__(self) -> None:
        super().__init__()
        self.victim: asyncio.Task[None] | None = None
        self.published: list[tuple[str, bytes]] = []

    async def publish(self, channel: str, message: bytes) -> None:
        async def send() -> None:
            self.published.append((channel, message))
            if self.victim is not None and len(self.published) == 1:
                self.victim.cancel()

        await asyncio.wait_for(send(), 5.0)


async def test_wait_for_loses_a_cancel_landing_as_its_inner_future_completes() -> None:
    """The premise: on this Python, the bus's publish returns although its caller was cancelled
    (if a later Python fixes ``wait_for``, the sender's guard is still harmless)."""
    bus = CancelLandingBus()
    await bus.start()

    async def caller() -> str:
        await bus.publish("lobby", b"x")
        return "returned"

    task = asyncio.create_task(caller())
    bus.victim = task  # type: ignore[assignment]
    try:
        outcome = await task
    except asyncio.CancelledError:
        outcome = "cancelled"
    assert outcome == ("returned" if sys.version_info < (3, 12) else "cancelled")


async def test_the_sender_stops_when_a_state_update_loses_its_cancellation() -> None:
    """A cluster-state update (a Redis script, awaited in the sending task itself) completes as
    the node's close cancels the task: the task stops all the same."""
    bus = CancelLandingBus()
    await bus.start()
    sender = Sender(bus, "node-a", on_failed=lambda channel, data: None)
    messages, state = sender.loops()
    bus.victim = state

    async def update_presence() -> None:
        await bus.publish("presence", b"node-a")

    sender.enqueue(update_presence, state=True)
    try:
        done, _ = await asyncio.wait({state}, timeout=5.0)
        assert state in done, "the sender went on after its cancellation was lost"
        assert state.cancelled()
        assert bus.published == [("presence", b"node-a")]
    finally:
        state.cancel()
        messages.cancel()
        await asyncio.gather(messages, state, return_exceptions=True)
        await bus.close()

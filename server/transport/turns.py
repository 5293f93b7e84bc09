"""A time budget per turn of the event loop, shared by the work that comes in bursts.

asyncio runs every callback that is ready in one turn: when a thousand sockets become
readable at once (a thousand logins, five hundred resigns told together), each one's
``data_received`` — and a frame handled at once from it
(:meth:`~server.transport.ws_internals.JitteredConnection.process_event`) — runs before the
loop looks at its timers or its sockets again; the tasks those frames started (a login, a
``tournament_watch``) then all take their first step in the next turn. At 0.1–0.2 ms each, a
burst held the loop for 50–150 ms (docs/tournaments.md, "Scale").

:class:`TurnBudget` lets such work go on for :data:`TURN_BUDGET_S` of a turn, then makes the
rest wait for later turns, in order of arrival (:meth:`TurnBudget.wait`): between two of them
the loop runs its timers (the clocks' deadlines, pings) and reads its sockets. On the hub's
loop a turn is timed from its start (:class:`~server.transport.loop.CappedEpollSelector` notes
it), so a quiet server pays one clock reading per frame.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable

from server.transport.loop import CappedEpollSelector, HubEventLoop

__all__ = ["TURN_BUDGET_S", "TurnBudget"]

TURN_BUDGET_S = 0.005
"""How long the bursty work of one turn may run before the rest waits for later turns."""

MAX_RELEASE = 256
"""The most waiters released for one turn (:meth:`TurnBudget._release`)."""


class TurnBudget:
    """A per-turn time budget, and the queue of what waits for a turn with budget left."""

    __slots__ = (
        "_again",
        "_budget_s",
        "_clock",
        "_loop",
        "_release_at",
        "_released",
        "_selector",
        "_started",
        "_waiters",
        "_woken",
    )

    def __init__(
        self, budget_s: float = TURN_BUDGET_S, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self._budget_s = budget_s
        self._clock = clock
        self._started: float | None = None
        """When this turn's clock started (None: not in this turn)."""
        self._waiters: deque[asyncio.Future[bool]] = deque()
        self._released = 8
        """How many waiters the next release lets go: halved when one of the last ones found
        the budget spent and queued again, doubled (to :data:`MAX_RELEASE`) when none did."""
        self._again: deque[asyncio.Future[bool]] = deque()
        """Released waiters that found the turn spent: first in line at the next release."""
        self._woken = 0
        """Waiters released that have not run yet (a newcomer waits for them too)."""
        self._release_at: asyncio.Handle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._selector: CappedEpollSelector | None = None
        """The hub's loop's selector, which tells when the turn began (None on another loop)."""

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        loop = self._loop
        if loop is None or loop.is_closed():
            loop = self._loop = asyncio.get_running_loop()
        return loop

    @property
    def waiting(self) -> int:
        """How many wait for a turn."""
        return len(self._waiters) + len(self._again) + self._woken

    def spent(self) -> bool:
        """Whether this turn's budget is used up. On the hub's loop (:class:`~server.transport.
        loop.HubEventLoop`) the turn is timed from its start; on another, from the first call
        of the turn, and a callback on the next turn resets it."""
        now = self._clock()
        selector = self._selector
        if selector is not None:
            return now - selector.turn_started > self._budget_s
        if self._loop is None:
            self._bind()
            if self._selector is not None:
                return self.spent()
        started = self._started
        if started is None:
            self._started = now
            self._running_loop().call_soon(self._new_turn)
            return False
        return now - started > self._budget_s

    def _bind(self) -> None:
        loop = self._running_loop()
        if isinstance(loop, HubEventLoop) and self._clock is time.perf_counter:
            self._selector = loop.turn_selector

    def busy(self) -> bool:
        """Whether work arriving now must wait: the budget is spent, or others already wait
        (a newcomer does not overtake them)."""
        if self._waiters or self._again or self._woken:
            return True
        selector = self._selector
        if selector is not None:  # spent(), inlined: once per frame on the move path
            return self._clock() - selector.turn_started > self._budget_s
        return self.spent()

    def _new_turn(self) -> None:
        self._started = None

    async def wait(self) -> None:
        """Return at once if this turn has budget left and nothing else waits; otherwise in a
        later turn that has, after those that waited before."""
        if not self.busy():
            return
        loop = self._running_loop()
        queue = self._waiters
        while True:
            waiter = loop.create_future()
            queue.append(waiter)
            if self._release_at is None:
                self._release_at = loop.call_soon(self._release)
            try:
                first = await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._woken -= 1  # released, then cancelled before it ran
                for waiting in (self._waiters, self._again):
                    if waiter in waiting:
                        waiting.remove(waiter)
                raise
            self._woken -= 1
            if first or not self.spent():
                return
            # Released, but the turn was spent already: wait again, ahead of those that came
            # later (released waiters wake in order, so their retries queue in order).
            queue = self._again

    def _release(self) -> None:
        """Let the next waiters go (they run on the next turn), and come back on the next turn
        while others wait."""
        self._release_at = None
        waiters, again = self._waiters, self._again
        if again:
            self._released = max(1, self._released // 2)
            waiters.extendleft(reversed(again))
            again.clear()
        else:
            self._released = min(MAX_RELEASE, self._released * 2)
        # The first one released goes even if its turn is spent by then (other work: reads,
        # timers): while every turn is that busy, one a turn still makes progress.
        first = True
        for _ in range(min(self._released, len(waiters))):
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(first)
                first = False
                self._woken += 1
        if waiters:
            self._release_at = self._running_loop().call_soon(self._release)

"""The hub's event loop: asyncio's, with at most :data:`MAX_EVENTS` sockets handled per turn.

asyncio's epoll selector asks the kernel for every ready socket at once and the loop runs each
one's callback in the same turn: when a thousand clients send together (a tournament's players
resigning at once, spectators' pongs after a stall), reading and parsing their frames alone
held the loop for 15–30 ms before it looked at its timers again (docs/tournaments.md,
"Scale"). :class:`CappedEpollSelector` asks for :data:`MAX_EVENTS` at most; epoll is
level-triggered here, so a socket not handed over in one turn is still ready at the next, and
the kernel hands ready sockets round-robin (one reported goes to the back of its ready list),
so none waits more than a few turns.
"""

from __future__ import annotations

import asyncio
import math
import select
import selectors
import time

__all__ = ["MAX_EVENTS", "CappedEpollSelector", "HubEventLoop", "new_event_loop"]

_clock = time.perf_counter

MAX_EVENTS = 128
"""The most ready sockets one turn of the loop handles (about 2–3 ms of reading frames)."""


class CappedEpollSelector(selectors.EpollSelector):
    """``selectors.EpollSelector`` asking the kernel for ``max_events`` ready sockets at most.

    Its ``select`` is the standard library's (Python 3.11–3.13) with ``maxevents`` capped; it
    also notes when it returned (:attr:`turn_started`): the loop calls it once per turn, before
    the turn's callbacks."""

    def __init__(self, max_events: int = MAX_EVENTS) -> None:
        super().__init__()
        self.max_events = max_events
        self.turn_started = 0.0
        """``time.perf_counter()`` when the current turn of the loop began."""

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None:
            timeout = -1
        elif timeout <= 0:
            timeout = 0
        else:
            # epoll_wait() has a resolution of 1 millisecond, round away from zero to wait
            # *at least* timeout seconds.
            timeout = math.ceil(timeout * 1e3) * 1e-3
        max_ev = len(self._fd_to_key) or 1  # type: ignore[attr-defined]
        if max_ev > self.max_events:
            max_ev = self.max_events
        ready: list[tuple[selectors.SelectorKey, int]] = []
        try:
            fd_event_list = self._selector.poll(timeout, max_ev)  # type: ignore[attr-defined]
        except InterruptedError:
            self.turn_started = _clock()
            return ready
        self.turn_started = _clock()
        for fd, event in fd_event_list:
            events = 0
            if event & ~select.EPOLLIN:
                events |= selectors.EVENT_WRITE
            if event & ~select.EPOLLOUT:
                events |= selectors.EVENT_READ
            key = self._key_from_fd(fd)  # type: ignore[attr-defined]
            if key:
                ready.append((key, events & key.events))
        return ready


class HubEventLoop(asyncio.SelectorEventLoop):
    """asyncio's loop on a :class:`CappedEpollSelector`, which tells when each turn began
    (:class:`~server.transport.turns.TurnBudget` reads it)."""

    def __init__(self, selector: CappedEpollSelector | None = None) -> None:
        self.turn_selector = selector or CappedEpollSelector()
        super().__init__(self.turn_selector)


def new_event_loop() -> asyncio.AbstractEventLoop:
    """The hub's loop (``asyncio.Runner(loop_factory=new_event_loop)``)."""
    return HubEventLoop()

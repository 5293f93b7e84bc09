"""Deadlines keyed by name, soonest first (a heap with lazy deletion).

A game's deadline moves with every move (its clock's flag time), and a replaced entry stays in
the heap until it reaches the top — with hour-long clocks, an hour later. So the heap is
rebuilt from the live deadlines whenever stale entries outnumber them: memory stays
proportional to the rooms, at an amortised O(1) per :meth:`Timers.set`.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable

_SLACK = 64
"""Stale entries always tolerated (no rebuild for a handful of timers)."""


class Timers:
    """At most one deadline per key; :meth:`set` replaces, :meth:`clear` removes."""

    def __init__(self) -> None:
        self._at: dict[Hashable, int] = {}
        self._heap: list[tuple[int, int, Hashable]] = []
        self._seq = 0

    def set(self, key: Hashable, at: int | None) -> None:
        """Schedule ``key`` at ``at`` (``None`` clears it)."""
        if at is None:
            self.clear(key)
            return
        if self._at.get(key) == at:
            return
        self._at[key] = at
        self._seq += 1
        heapq.heappush(self._heap, (at, self._seq, key))
        if len(self._heap) > 2 * len(self._at) + _SLACK:
            self._compact()

    def _compact(self) -> None:
        """Drop every stale entry (see the module docstring)."""
        live = self._at
        self._heap = [entry for entry in self._heap if live.get(entry[2]) == entry[0]]
        heapq.heapify(self._heap)

    def clear(self, key: Hashable) -> None:
        self._at.pop(key, None)

    def get(self, key: Hashable) -> int | None:
        return self._at.get(key)

    def _drop_stale(self) -> None:
        while self._heap:
            at, _, key = self._heap[0]
            if self._at.get(key) == at:
                return
            heapq.heappop(self._heap)

    def next_deadline(self) -> int | None:
        self._drop_stale()
        return self._heap[0][0] if self._heap else None

    def pop_due(self, now: int) -> list[Hashable]:
        """Remove and return every key whose deadline is ``<= now``, soonest first."""
        due: list[Hashable] = []
        while True:
            self._drop_stale()
            if not self._heap or self._heap[0][0] > now:
                return due
            _, _, key = heapq.heappop(self._heap)
            del self._at[key]
            due.append(key)

    def __len__(self) -> int:
        return len(self._at)

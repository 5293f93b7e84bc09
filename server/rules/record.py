"""The record of a played move, shared by every layer that keeps or shows one.

It lives here, in the lowest layer, because the lowest reader of a move record is the export
writers (``server.rules.export``); the hub builds records, the store keeps and returns them, the
review API and the exports read them, all as this one type. Plain values: no checks on
construction, so the hub's move path pays nothing for it; the store checks what it writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

__all__ = ["MoveRecord"]


@dataclass(frozen=True, slots=True)
class MoveRecord:
    """Move number ``ply`` (1 for the first move of a game) with the mover's clock after it.

    ``uci`` is the coordinate form the adjudicator plays (:meth:`server.rules.Game.play`),
    ``display`` the variant's human notation of the move. ``clock_ms`` is the main time the
    mover's clock shows after the move (a Fischer increment included), ``periods_left`` its
    byoyomi periods left (None under a Fischer clock), ``spent_ms`` the time charged for the
    move (0 for moves made before the clock started). ``played_at`` is when the move was
    played on the wall clock; the hub, which has only its injected monotonic time, leaves it
    None and the store writes the time of writing instead.
    """

    ply: int
    uci: str
    display: str
    clock_ms: int
    spent_ms: int
    periods_left: int | None = None
    played_at: datetime | None = None

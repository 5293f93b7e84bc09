"""The record of a game: its header, its moves with their clocks, its end.

Shared by every layer that keeps or shows a game: the hub builds :class:`MoveRecord` s as moves
are played, the store keeps them and returns :class:`GameInfo` (listings) and
:class:`GameRecord` (a game with its moves), the review API and the export writers
(``server.rules.export``) read them. They live here, in the lowest layer, because the lowest
reader is the export writers. Plain values: a :class:`MoveRecord` has no checks on
construction, so the hub's move path pays nothing for it (the store checks what it writes); a
:class:`TimeControl` refuses impossible clocks.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, get_args

from .game import Side

__all__ = [
    "CLOCK_KINDS",
    "GAME_STATUSES",
    "RESULT_CODES",
    "ClockKind",
    "GameInfo",
    "GamePage",
    "GameRecord",
    "GameStatus",
    "MoveRecord",
    "ResultCode",
    "TimeControl",
]

ClockKind = Literal["fischer", "byoyomi"]
GameStatus = Literal["created", "started", "finished", "aborted"]
#: First-player win, second-player win, draw.
ResultCode = Literal["1-0", "0-1", "1/2-1/2"]

CLOCK_KINDS: tuple[ClockKind, ...] = get_args(ClockKind)
GAME_STATUSES: tuple[GameStatus, ...] = get_args(GameStatus)
RESULT_CODES: tuple[ResultCode, ...] = get_args(ResultCode)


def _check_count(what: str, value: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{what} must be an integer >= 0, got {value!r}")


@dataclass(frozen=True, slots=True)
class TimeControl:
    """A game's clock as recorded: Fischer (base + increment) or byoyomi (base, then periods).

    >>> TimeControl("byoyomi", 600_000, byoyomi_ms=30_000, periods=1)
    TimeControl(kind='byoyomi', base_ms=600000, increment_ms=0, byoyomi_ms=30000, periods=1)

    :raises ValueError: an unknown kind, a negative or non-integer number, byoyomi fields on a
        Fischer clock, a byoyomi clock without periods, or no time at all.
    """

    kind: ClockKind
    base_ms: int
    increment_ms: int = 0
    byoyomi_ms: int = 0
    periods: int = 0

    def __post_init__(self) -> None:
        if self.kind not in CLOCK_KINDS:
            raise ValueError(f"clock kind must be 'fischer' or 'byoyomi', got {self.kind!r}")
        for name in ("base_ms", "increment_ms", "byoyomi_ms", "periods"):
            _check_count(name, getattr(self, name))
        if self.kind == "fischer" and (self.byoyomi_ms or self.periods):
            raise ValueError("a Fischer clock has no byoyomi periods")
        if self.kind == "byoyomi" and (self.byoyomi_ms == 0 or self.periods == 0):
            raise ValueError("a byoyomi clock needs byoyomi_ms > 0 and at least one period")
        if self.base_ms == 0 and self.increment_ms == 0 and self.byoyomi_ms == 0:
            raise ValueError("a clock needs some time: base, increment or byoyomi")


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


@dataclass(frozen=True, slots=True, kw_only=True)
class GameInfo:
    """A game without its moves (what listings return): its header and, once over, its end.

    Header: ``variant`` is the variant's name, ``start_fen`` the actual start position,
    ``speed`` the rating pool of the time control (``server.hub.glicko2.speed_class``), the
    players' names, store ids (None for a guest) and ratings before the game (None unless
    rated). End: ``status``; ``result`` is ``"1-0"`` (first player won), ``"0-1"``,
    ``"1/2-1/2"`` or None (not over, or aborted); ``termination`` an adjudicator termination
    (``"checkmate"``, ...) or a server one (``"resignation"``, ``"time"``, ``"agreement"``,
    ``"abort"``, ``"abandonment"``); ``plies`` and ``final_fen`` as the game ended; ratings
    after the game. Datetimes are aware (UTC).
    """

    id: str
    variant: str
    start_fen: str
    time_control: TimeControl
    speed: str
    rated: bool
    first_name: str
    second_name: str
    first_player_id: int | None = None
    second_player_id: int | None = None
    first_rating_before: int | None = None
    second_rating_before: int | None = None
    created_at: datetime
    started_at: datetime | None = None
    status: GameStatus
    result: ResultCode | None = None
    termination: str | None = None
    plies: int | None = None
    final_fen: str | None = None
    finished_at: datetime | None = None
    first_rating_after: int | None = None
    second_rating_after: int | None = None

    @property
    def winner(self) -> Side | None:
        if self.result == "1-0":
            return Side.FIRST
        if self.result == "0-1":
            return Side.SECOND
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class GameRecord(GameInfo):
    """A game with its moves in ply order."""

    moves: tuple[MoveRecord, ...] = ()


@dataclass(frozen=True, slots=True)
class GamePage:
    """One page of a listing, newest first; pass ``next_cursor`` back for the next (older) page."""

    games: list[GameInfo]
    next_cursor: str | None

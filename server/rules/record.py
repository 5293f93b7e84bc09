"""The record of a game: its header, its moves with their clocks, its end.

Shared by every layer that keeps or shows a game: the hub builds :class:`MoveRecord` s as moves
are played, the store keeps them and returns :class:`GameInfo` (listings) and
:class:`GameRecord` (a game with its moves), the review API and the export writers
(``server.rules.export``) read them. They live here, in the lowest layer, because the lowest
reader is the export writers. Plain values: a :class:`MoveRecord` has no checks on
construction, so the hub's move path pays nothing for it (the store checks what it writes). A
game's time control is the one :data:`~server.rules.time_control.TimeControl` the hub's clock runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, NamedTuple, get_args, overload

from .game import Side
from .time_control import TimeControl

__all__ = [
    "GAME_STATUSES",
    "RESULT_CODES",
    "UNFINISHED_STATUSES",
    "GameInfo",
    "GamePage",
    "GameRecord",
    "GameStatus",
    "MoveList",
    "MoveRecord",
    "ResultCode",
    "UnfinishedGame",
]

GameStatus = Literal["created", "started", "finished", "aborted"]
#: First-player win, second-player win, draw.
ResultCode = Literal["1-0", "0-1", "1/2-1/2"]

GAME_STATUSES: tuple[GameStatus, ...] = get_args(GameStatus)
RESULT_CODES: tuple[ResultCode, ...] = get_args(ResultCode)
UNFINISHED_STATUSES: tuple[GameStatus, ...] = ("created", "started")
"""The statuses of a game that has not ended: restart recovery resumes such a game, a takeover
takes it over, the store still accepts its moves and its end."""


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


_Row = tuple[int, str, str, int, int, int | None, datetime | None]


class MoveList(Sequence[MoveRecord]):
    """A game's moves, kept for as long as the game lives in a form the garbage collector
    does not track: one plain tuple of atoms per move (a :class:`MoveRecord`, like any
    dataclass instance, is tracked for life, and a full collection scans every tracked
    object: docs/benchmarks.md, "Garbage collection"). Reading gives
    :class:`MoveRecord` s, built again on each read.

    >>> moves = MoveList([MoveRecord(1, "e2e4", "e4", 60_000, 0)])
    >>> moves.append(MoveRecord(2, "e7e5", "e5", 60_000, 0))
    >>> [m.uci for m in moves], moves[-1].ply, len(moves[:1])
    (['e2e4', 'e7e5'], 2, 1)
    """

    __slots__ = ("_rows",)

    def __init__(self, records: Iterable[MoveRecord] = ()) -> None:
        self._rows: list[_Row] = [_row(r) for r in records]

    def append(self, record: MoveRecord) -> None:
        self._rows.append(_row(record))

    def pop(self) -> MoveRecord:
        return MoveRecord(*self._rows.pop())

    def clear(self) -> None:
        self._rows.clear()

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> MoveRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[MoveRecord]: ...

    def __getitem__(self, index: int | slice) -> MoveRecord | list[MoveRecord]:
        if isinstance(index, slice):
            return [MoveRecord(*row) for row in self._rows[index]]
        return MoveRecord(*self._rows[index])

    def __iter__(self) -> Iterator[MoveRecord]:
        for row in self._rows:
            yield MoveRecord(*row)

    def __eq__(self, other: object) -> bool:
        """Equal to a MoveList, list or tuple of the same records."""
        if isinstance(other, MoveList):
            return self._rows == other._rows
        if isinstance(other, list | tuple):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"MoveList({list(self)!r})"


def _row(r: MoveRecord) -> _Row:
    return (r.ply, r.uci, r.display, r.clock_ms, r.spent_ms, r.periods_left, r.played_at)


class UnfinishedGame(NamedTuple):
    """An unfinished game's id and its registered players' store ids (None for a guest): all
    the cluster's sweep needs of each unfinished game, read without the rest of its row
    (``Store.unfinished_games``)."""

    id: str
    first_player_id: int | None
    second_player_id: int | None
    correspondence: bool = False
    """A correspondence game (speed ``correspondence``): it does not take its players' one
    real-time slot."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GameInfo:
    """A game without its moves (what listings return): its header and, once over, its end.

    Header: ``variant`` is the variant's name, ``start_fen`` the actual start position,
    ``speed`` the rating pool of the time control (``server.hub.glicko2.speed_class``), the
    players' names, store ids (None for a guest) and ratings before the game (None unless
    rated). End: ``status``; ``result`` is ``"1-0"`` (first player won), ``"0-1"``,
    ``"1/2-1/2"`` or None (not over, or aborted); ``termination`` the value of a
    :class:`~server.rules.game.Termination` (an adjudicator's or a server's ending); ``plies`` and ``final_fen`` as the game ended; ratings
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
    first_bot: bool = False
    second_bot: bool = False
    """Whether a player's account is a bot account (docs/bots.md), as the listing found it."""
    tournament_id: str | None = None
    tournament_round: int | None = None
    """The tournament the game belongs to and its round (an arena's wave), if any."""
    first_berserk: bool = False
    second_berserk: bool = False
    """Whether a player berserked (halved their clock) in a tournament game."""

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

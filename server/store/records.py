"""Plain values passed into and returned by the store, and the checks of what it writes.

The game records themselves (:class:`~server.rules.record.GameRecord`, ``GameInfo``,
``MoveRecord``, ``TimeControl``, ``GamePage``) are shared by every layer and live in
``server.rules.record``. Malformed input raises :class:`ValueError` before any SQL runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from server.hub.glicko2 import Rating, Speed
from server.rules.record import RESULT_CODES, GameRecord, MoveRecord, ResultCode
from server.store.schema import DISPLAY_LENGTH, GAME_ID_MAX_LENGTH, UCI_LENGTH

__all__ = [
    "ClockState",
    "GameMove",
    "Player",
    "PlayerRating",
    "RatingUpdate",
    "clock_state",
]

#: The score of the first player for each result.
FIRST_PLAYER_SCORE: dict[ResultCode, float] = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}

_GAME_ID = re.compile(rf"[0-9A-Za-z_-]{{1,{GAME_ID_MAX_LENGTH}}}")


def utc_now() -> datetime:
    return datetime.now(UTC)


def check_text(what: str, value: str, max_length: int) -> None:
    """Refuse empty, over-long or whitespace-padded text."""
    if not isinstance(value, str) or not value or value != value.strip():
        raise ValueError(f"{what} must be non-empty text without surrounding spaces: {value!r}")
    if len(value) > max_length:
        raise ValueError(f"{what} is longer than {max_length} characters: {value!r}")


def check_game_id(game_id: str) -> None:
    if not isinstance(game_id, str) or not _GAME_ID.fullmatch(game_id):
        raise ValueError(
            f"game ids are 1 to {GAME_ID_MAX_LENGTH} letters, digits, '_' or '-', got {game_id!r}"
        )


def check_result(result: str) -> ResultCode:
    for code in RESULT_CODES:
        if result == code:
            return code
    raise ValueError(f"result must be one of {', '.join(RESULT_CODES)}, got {result!r}")


def _check_int(what: str, value: int, minimum: int = 0) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{what} must be an integer >= {minimum}, got {value!r}")


@dataclass(frozen=True, slots=True)
class Player:
    id: int
    name: str
    password_hash: str
    created_at: datetime
    bot: bool = False
    """Upgraded to a bot account (the Bot API)."""


@dataclass(frozen=True, slots=True)
class ApiToken:
    """A personal API token as listed (the token itself is shown once, when created)."""

    id: int
    description: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class PlayerRating:
    """A player's rating in one pool; ``games`` counts the rated games behind it."""

    player_id: int
    variant: str
    speed: Speed
    rating: Rating
    games: int


@dataclass(frozen=True, slots=True)
class RatingUpdate:
    """Ratings of both players before and after a rated game."""

    first_before: Rating
    first_after: Rating
    second_before: Rating
    second_after: Rating


GameMove = tuple[str, MoveRecord]
"""A move to store: ``(game id, move)``."""

#: The columns of a ``game_moves`` row, in the order of :func:`move_row`.
MOVE_COLUMNS = (
    "game_id",
    "ply",
    "uci",
    "display",
    "clock_ms",
    "periods_left",
    "spent_ms",
    "created_at",
)


def move_row(game_id: str, move: MoveRecord) -> tuple[object, ...]:
    """The ``game_moves`` row of a checked move; a move not yet stamped is played now."""
    played_at = move.played_at.astimezone(UTC) if move.played_at is not None else utc_now()
    return (
        game_id,
        move.ply,
        move.uci,
        move.display,
        move.clock_ms,
        move.periods_left,
        move.spent_ms,
        played_at,
    )


def check_move(game_id: str, move: MoveRecord) -> None:
    """Refuse a move the ``game_moves`` table cannot hold (see :class:`server.rules.MoveRecord`)."""
    check_game_id(game_id)
    _check_int("ply", move.ply, minimum=1)
    check_text("uci", move.uci, UCI_LENGTH)
    check_text("display", move.display, DISPLAY_LENGTH)
    _check_int("clock_ms", move.clock_ms)
    _check_int("spent_ms", move.spent_ms)
    if move.periods_left is not None:
        _check_int("periods_left", move.periods_left)
    if move.played_at is not None and move.played_at.tzinfo is None:
        raise ValueError("played_at must be timezone-aware")


@dataclass(frozen=True, slots=True)
class ClockState:
    """The clocks as the stored moves left them.

    The store does not know which colour moved first (a start position may
    hand the move to either side), but sides alternate, so the side to move
    last moved at ply ``ply - 1`` and the side waiting moved at ``ply``.
    A None clock means that side has not moved yet: its clock still shows the
    base time.
    """

    ply: int
    to_move_ms: int | None
    to_move_periods: int | None
    waiting_ms: int | None
    waiting_periods: int | None
    #: Since when the side to move has been thinking: the last move's time,
    #: else the game's start; None if the game never started.
    running_since: datetime | None


def clock_state(game: GameRecord) -> ClockState:
    """The clocks as ``game``'s stored moves left them (see :class:`ClockState`)."""
    last = game.moves[-1] if game.moves else None
    previous = game.moves[-2] if len(game.moves) >= 2 else None
    return ClockState(
        ply=len(game.moves),
        to_move_ms=previous.clock_ms if previous else None,
        to_move_periods=previous.periods_left if previous else None,
        waiting_ms=last.clock_ms if last else None,
        waiting_periods=last.periods_left if last else None,
        running_since=last.played_at if last else game.started_at,
    )

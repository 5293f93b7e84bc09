"""Plain values passed into and returned by the store, and the checks of what it writes.

The game records themselves (:class:`~server.rules.record.GameRecord`, ``GameInfo``,
``MoveRecord``, ``GamePage``) are shared by every layer and live in ``server.rules.record``, the
time control in ``server.rules.time_control`` (mapped to and from the ``games`` table's clock
columns here). Malformed input raises :class:`ValueError` before any SQL runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypedDict

from server.hub.game_ids import GAME_ID_MAX_LENGTH, GAME_ID_PATTERN
from server.hub.glicko2 import Rating, Speed
from server.rules.record import RESULT_CODES, MoveRecord, ResultCode
from server.rules.time_control import (
    DAY_MS,
    Byoyomi,
    Correspondence,
    Fischer,
    TimeControl,
    Unlimited,
)
from server.store.schema import DISPLAY_LENGTH, UCI_LENGTH

__all__ = [
    "GameMove",
    "Player",
    "PlayerRating",
    "RatingUpdate",
]

#: The score of the first player for each result.
FIRST_PLAYER_SCORE: dict[ResultCode, float] = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


class ClockColumns(TypedDict):
    """A time control as the ``games`` table keeps it (one row for every kind: a
    correspondence control's days per move as ``base_ms``, unlimited all 0)."""

    clock_kind: str
    base_ms: int
    increment_ms: int
    byoyomi_ms: int
    periods: int


def control_columns(control: TimeControl) -> ClockColumns:
    """The ``games`` columns of a time control (the inverse of :func:`control_of_columns`)."""
    if isinstance(control, Fischer):
        return {
            "clock_kind": "fischer",
            "base_ms": control.base_ms,
            "increment_ms": control.increment_ms,
            "byoyomi_ms": 0,
            "periods": 0,
        }
    if isinstance(control, Correspondence):
        return {
            "clock_kind": "correspondence",
            "base_ms": control.per_move_ms,
            "increment_ms": 0,
            "byoyomi_ms": 0,
            "periods": 0,
        }
    if isinstance(control, Unlimited):
        return {
            "clock_kind": "unlimited",
            "base_ms": 0,
            "increment_ms": 0,
            "byoyomi_ms": 0,
            "periods": 0,
        }
    return {
        "clock_kind": "byoyomi",
        "base_ms": control.base_ms,
        "increment_ms": 0,
        "byoyomi_ms": control.period_ms,
        "periods": control.periods,
    }


def control_of_columns(
    clock_kind: str, base_ms: int, increment_ms: int, byoyomi_ms: int, periods: int
) -> TimeControl:
    """The time control of a ``games`` row's clock columns.

    :raises ValueError: an unknown kind, the other kind's fields set, or an impossible clock.
    """
    if clock_kind == "fischer" and not (byoyomi_ms or periods):
        return Fischer(base_ms, increment_ms)
    if clock_kind == "byoyomi" and not increment_ms:
        return Byoyomi(base_ms, byoyomi_ms, periods)
    if clock_kind == "correspondence" and not (increment_ms or byoyomi_ms or periods):
        days, rest = divmod(base_ms, DAY_MS)
        if not rest:
            return Correspondence(days)
    if clock_kind == "unlimited" and not (base_ms or increment_ms or byoyomi_ms or periods):
        return Unlimited()
    raise ValueError(
        f"not a time control: {clock_kind!r} {base_ms}+{increment_ms}, {periods}x{byoyomi_ms}"
    )


def utc_now() -> datetime:
    return datetime.now(UTC)


def check_text(what: str, value: str, max_length: int) -> None:
    """Refuse empty, over-long or whitespace-padded text."""
    if not isinstance(value, str) or not value or value != value.strip():
        raise ValueError(f"{what} must be non-empty text without surrounding spaces: {value!r}")
    if len(value) > max_length:
        raise ValueError(f"{what} is longer than {max_length} characters: {value!r}")


def check_game_id(game_id: str) -> None:
    if not isinstance(game_id, str) or not GAME_ID_PATTERN.fullmatch(game_id):
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

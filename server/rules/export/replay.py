"""What every export writer needs: the replay of a record, its moves, clock and time texts."""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import RulesError
from ..game import Game
from ..position import Move, Position
from ..record import GameRecord
from ..time_control import Byoyomi, Correspondence, TimeControl, Unlimited
from ..variant import Variant
from ..variants import get_variant

__all__ = [
    "clock_text",
    "format_time_control",
    "is_standard_start",
    "moves_of",
    "record_variant",
    "replay",
    "replay_record",
    "seconds_text",
]


def record_variant(record: GameRecord) -> Variant:
    """The variant of ``record``; :class:`KeyError` for a name the adjudicator does not know."""
    return get_variant(record.variant)


def replay(variant: Variant, start_fen: str | None, moves: Iterable[str]) -> Game:
    """Play ``moves`` (coordinate form) from ``start_fen`` and return the game.

    Raise :class:`~server.rules.errors.InvalidFenError` for a bad start, and the move's
    :class:`~server.rules.errors.InvalidMoveError` / :class:`IllegalMoveError` with the ply
    number prefixed when a move does not replay.
    """
    game = Game(variant, start_fen)
    for ply, uci in enumerate(moves, 1):
        try:
            game.play(uci)
        except RulesError as exc:
            raise type(exc)(f"move {ply} ({uci}): {exc}") from exc
    return game


def replay_record(record: GameRecord, game: Game | None) -> Game:
    """``game`` if it is the replay of ``record`` (callers that replayed already pass it), else
    the replay; :class:`ValueError` if ``game`` is another game's."""
    if game is not None:
        if game.variant.name != record.variant or game.ply != len(record.moves):
            raise ValueError("the game passed in is not the replay of this record")
        return game
    return replay(record_variant(record), record.start_fen, (m.uci for m in record.moves))


def moves_of(game: Game) -> list[Move]:
    """The :class:`Move` objects of ``game`` (re-read from each position's cached legal moves)."""
    return [game.position_at(i).move_from_uci(uci) for i, uci in enumerate(game.moves)]


def is_standard_start(game: Game) -> bool:
    v = game.variant
    return game.position_at(0).fen() == Position.from_fen(v, v.start_fen).fen()


def format_time_control(control: TimeControl) -> str:
    """The PGN ``TimeControl`` value: ``"300+3"`` (Fischer: base and increment in seconds),
    ``"600+30x3"`` (byoyomi: main time, then 3 periods of 30 s), ``"-"`` (correspondence and
    unlimited: no clock the PGN standard can describe; lichess writes the same, and the days
    per move go in the ``DaysPerMove`` tag, see :mod:`.pgn`).

    >>> format_time_control(Byoyomi(600_000, 30_000, 3))
    '600+30x3'
    """
    if isinstance(control, Correspondence | Unlimited):
        return "-"
    base = seconds_text(control.base_ms)
    if isinstance(control, Byoyomi):
        return f"{base}+{seconds_text(control.period_ms)}x{control.periods}"
    return f"{base}+{seconds_text(control.increment_ms)}"


def seconds_text(ms: int) -> str:
    """Milliseconds as seconds, whole when they are: ``"30"``, ``"90.5"``."""
    whole, rest = divmod(ms, 1000)
    return str(whole) if not rest else f"{ms / 1000:g}"


def clock_text(ms: int) -> str:
    """``h:mm:ss`` as in PGN ``[%clk]`` comments; tenths appear when they are not zero.

    >>> clock_text(178_000), clock_text(3_725_400), clock_text(2_999)
    ('0:02:58', '1:02:05.4', '0:00:02.9')
    """
    tenths = max(0, ms) // 100
    seconds, tenth = divmod(tenths, 10)
    minutes, second = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    text = f"{hours}:{minute:02d}:{second:02d}"
    return f"{text}.{tenth}" if tenth else text

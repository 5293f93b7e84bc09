"""USI: ``position sfen <start> moves ...`` (shogi family)."""

from __future__ import annotations

from ..game import Game
from ..position import NULL_SQUARE, Move, Position
from ..record import GameRecord
from ..squares import shogi_square
from .replay import moves_of, record_variant, replay_record

__all__ = ["usi_move", "write_usi"]


def usi_move(pos: Position, move: Move) -> str:
    """``move`` (legal in ``pos``) in USI form: ``7g7f``, ``2b3c+``, ``P*5e``.

    Squares are the shogi coordinates (file number from the right, rank letter from the top):
    on 5×5 files 1–5 and ranks a–e, as Fairy-Stockfish writes Mini-Shogi in USI mode. Beyond
    9 files (Dai Shogi) the file takes two digits (``15a``): an extension, like the Lion's
    multi-leg moves, written leg by leg with commas (``8c7c,7c6c``), and its pass, ``pass``.
    """
    v = pos.variant
    t = v.t
    if move.from_sq == NULL_SQUARE:
        return f"{t.types[move.drop].symbol}*{shogi_square(pos, move.to_sq)}"
    if move.via and move.from_sq == move.to_sq and not pos.is_capture(move):
        return "pass"
    legs = [move.from_sq, *move.via, move.to_sq]
    text = ",".join(
        shogi_square(pos, legs[i]) + shogi_square(pos, legs[i + 1]) for i in range(len(legs) - 1)
    )
    return text + ("+" if move.promotion else "")


def write_usi(record: GameRecord, game: Game | None = None) -> str:
    """``position sfen <start sfen> moves <usi moves>`` (one line). Shogi family only."""
    v = record_variant(record)
    if v.family != "shogi":
        raise ValueError(f"USI is for shogi variants; {v.title} is a {v.family} variant")
    game = replay_record(record, game)
    start = game.position_at(0)
    text = f"position sfen {start.sfen()}"
    moves = [usi_move(game.position_at(i), m) for i, m in enumerate(moves_of(game))]
    if moves:
        text += " moves " + " ".join(moves)
    return text + "\n"

"""Display notation of moves: shogi-style (Hodges) for the shogi family.

Chess-family SAN and the Dai Shogi notation plug in here too, chosen by ``Variant.notation``.
"""

from __future__ import annotations

from collections.abc import Iterable

from .dai_notation import dai_move
from .errors import RulesError
from .position import NULL_SQUARE, Move, Position
from .san import san
from .squares import shogi_square

__all__ = ["display_line", "display_move"]


def display_move(pos: Position, move: Move) -> str:
    """The move as shown to players, in the variant's notation."""
    style = pos.variant.notation
    if style == "san":
        return san(pos, move)
    if style == "dai":
        return dai_move(pos, move)
    return hodges(pos, move)


def display_line(pos: Position, texts: Iterable[str], limit: int = 12) -> list[str]:
    """A line of moves in coordinate form from ``pos`` (an engine's best move or principal
    variation, in our move texts) in the variant's notation, as the move list shows moves:
    at most ``limit`` moves, cut at the first that is not legal. Each move is parsed and
    checked alone (no move list is generated), so a long line stays cheap on big boards."""
    shown: list[str] = []
    for text in texts:
        if len(shown) >= limit:
            break
        try:
            move = pos.move_from_uci(text)
        except RulesError:
            break
        shown.append(display_move(pos, move))
        pos = pos.play(move)
    return shown


def _has_rival(pos: Position, move: Move, mover: int) -> bool:
    """Whether another ``mover`` piece can legally make the same kind of move (promoting or
    not) to the same square. A rival must have the target on one of its rays, which is
    cheap to see, before its move is checked."""
    t = pos.variant.t
    to = move.to_sq
    kind = t.promote[abs(mover)] if move.promotion else 0
    rays = t.moves[pos.turn][abs(mover)]
    any_route = pos.variant.special_moves is not None  # hook moves are not on the rays
    board = pos.board
    s = -1
    for _ in range(board.count(mover)):
        s = board.index(mover, s + 1)
        if s == move.from_sq:
            continue
        if (any_route or any(to in ray[0] for ray in rays[s])) and pos.is_legal(Move(s, to, kind)):
            return True
    return False


def hodges(pos: Position, move: Move) -> str:
    """``<piece>[<origin>]<-|x|*><dest>[+|=]``, e.g. ``P*3c``, ``Gx4b``, ``S-4a+``, ``S-4a=``."""
    t = pos.variant.t
    if move.from_sq == NULL_SQUARE:
        return f"{t.types[move.drop].display}*{shogi_square(pos, move.to_sq)}"
    mover = pos.board[move.from_sq]
    code = abs(mover)
    piece = t.types[code].display
    origin = ""
    # As FSF: the origin is shown when another piece of the same type can legally make the
    # same kind of move (promoting or not) to the same square. Only those pieces are tried,
    # so no full move list is generated.
    if pos.board.count(mover) > 1 and _has_rival(pos, move, mover):
        origin = shogi_square(pos, move.from_sq)
    sep = "x" if pos.is_capture(move) else "-"
    suffix = ""
    if move.promotion:
        suffix = "+"
    elif t.promote[code] and pos.is_legal(
        Move(move.from_sq, move.to_sq, t.promote[code], 0, move.via)
    ):
        suffix = "="
    return f"{piece}{origin}{sep}{shogi_square(pos, move.to_sq)}{suffix}"

"""Dai Shogi display notation (Dai.rul system, spec §5.9).

``[+]<piece>[<origin>]<sep><dest>[<sep><dest2>][+|=]`` with Dai.rul squares (files 1–15 right
to left, ranks a–o top to bottom, as seen by the first player):

* ``P-7e``, ``Bx3c``; ``+`` / ``=`` suffix when the piece promotes / could but declines;
* igui (capture without moving): ``Lnx!9d``;
* double capture: ``Lnx3hx2i``; hit and run (capture, then step on): ``Lnx3h-2i``;
* pass: a move to the piece's own square, ``Ln-8m``;
* ``<origin>`` only when another piece of the same type could make the same move.
"""

from __future__ import annotations

from .position import NULL_SQUARE, Move, Position
from .squares import shogi_square

__all__ = ["dai_move"]


def _shape(pos: Position, move: Move) -> tuple[int, tuple[int, ...], bool]:
    """What the notation shows of a move apart from piece and origin: the final square
    (-1 for igui, whose text names only the victim), the captured via squares, and whether
    it is an igui."""
    sign = 1 if pos.turn == 0 else -1
    captured = tuple(s for s in move.via if pos.board[s] * sign < 0)
    igui = move.from_sq == move.to_sq and bool(captured)
    return (-1 if igui else move.to_sq), captured, igui


def dai_move(pos: Position, move: Move) -> str:
    """``move`` (legal in ``pos``) in Dai.rul notation."""
    t = pos.variant.t
    board = pos.board
    sign = 1 if pos.turn == 0 else -1
    fr, to, via = move.from_sq, move.to_sq, move.via
    code = abs(board[fr])
    piece = t.types[code]
    assert piece is not None and fr != NULL_SQUARE
    shape = _shape(pos, move)
    _, captured, igui = shape
    if igui:  # another piece of the type that could take the same victim without moving
        candidates = [m for m in pos.legal_moves() if m.via == via and m.from_sq == m.to_sq != fr]
    else:
        candidates = [m for m in pos.legal_moves() if m.to_sq == to and m.from_sq != fr]
    rivals = [
        m
        for m in candidates
        if m.from_sq != NULL_SQUARE and abs(board[m.from_sq]) == code and _shape(pos, m) == shape
    ]
    text: str = piece.display + (shogi_square(pos, fr) if rivals else "")
    if igui:
        return f"{text}x!{shogi_square(pos, captured[0])}"
    for s in captured:
        text += "x" + shogi_square(pos, s)
    text += "x" if board[to] * sign < 0 and to != fr else "-"
    text += shogi_square(pos, to)
    promote = t.promote[code]
    if move.promotion:
        text += "+"
    elif promote and Move(fr, to, promote, 0, via) in pos.legal_moves():
        text += "="
    return text

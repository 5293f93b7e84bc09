"""The move record shared by positions, the text forms and the notations."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["CASTLE_LETTERS", "NULL_SQUARE", "Move"]

NULL_SQUARE = -1
# Castling-rights bits as FEN letters. Bit 0: first player / h-rook, 1: first / a-rook,
# 2: second / h-rook, 3: second / a-rook.
CASTLE_LETTERS = "KQkq"


class Move(NamedTuple):
    """A move: ``from_sq`` → optional ``via`` squares → ``to_sq``.

    A drop has ``from_sq == -1`` and ``drop`` set to the dropped piece code. ``promotion`` is
    the code of the piece type the mover becomes (0: none). ``via`` lists the intermediate
    squares of a multi-leg (Lion) move; an enemy piece on one of them is captured.
    """

    from_sq: int
    to_sq: int
    promotion: int = 0
    drop: int = 0
    via: tuple[int, ...] = ()

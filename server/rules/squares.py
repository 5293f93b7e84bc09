"""Shogi-style square names, shared by the display notations and the exports.

A module of its own so that ``notation.py`` (which picks a variant's notation) and
``dai_notation.py`` (one of those notations) both import it without importing each other.
"""

from __future__ import annotations

from .geometry import Geometry
from .position import Position

__all__ = ["shogi_square"]

_HODGES_NAMES: dict[Geometry, list[str]] = {}


def shogi_square(pos: Position, square: int) -> str:
    """Hodges coordinates: file number counted from the right, rank letter from the top."""
    g = pos.variant.geometry
    names = _HODGES_NAMES.get(g)
    if names is None:
        names = [
            f"{g.files - g.file_of(s)}{chr(ord('a') + g.ranks - 1 - g.rank_of(s))}"
            for s in range(g.size)
        ]
        _HODGES_NAMES[g] = names
    return names[square]

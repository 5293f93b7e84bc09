"""Lion power (Dai/Chu Shogi, spec §5.4) as one :attr:`Variant.special_moves` hook.

A piece has Lion power in the directions listed in its :attr:`PieceType.lion` (first
player's orientation; ``None`` = none). Its single-leg Lion moves (the step to ``O+d`` and the
jumping leap to ``O+2d``, or for a full Lion every square of the 5×5 block) are ordinary Betza
atoms of the piece, so they also feed the attack tables. This hook adds only what one leg
cannot express:

* **capture, then one more step**: capture an enemy on ``a = O+d`` (``d`` a Lion direction),
  then step from ``a`` to a square ``s`` adjacent to ``a`` inside the piece's *Lion area* or
  back to ``O``. ``s = O`` is igui (capture without moving); an empty ``s`` is hit and run; an
  enemy on ``s`` is a double capture. The Lion area is the whole 5×5 block around ``O`` for a
  piece with Lion power in all 8 directions (the Lion), otherwise the squares ``O+d`` and
  ``O+2d`` of its Lion directions (Horned Falcon, Soaring Eagle): such a piece continues
  straight on or returns.
* **pass**: step onto an empty ``O+d`` and back. The position is unchanged, so a position has
  at most one pass move (written ``@@@@`` on the wire): it is listed for the Lion-power piece
  of the side to move that stands on the lowest square index among those able to pass.

A move is identified by (origin, ordered captured squares, final square). A route through an
empty first square is the same move as the single leap (generated from the Betza atoms), so
the hook only lists routes whose first leg captures. Moves are :class:`Move` records with the
first leg's square in ``via``: double capture ``Move(O, s, via=(a,))``, igui
``Move(O, O, via=(a,))``, pass ``Move(O, O, via=(e,))`` with ``e`` empty.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .position import Move

if TYPE_CHECKING:
    from .position import Position
    from .variant import Variant

__all__ = ["LionTables", "lion_area", "special_moves", "tables_for"]

KING_STEPS = ((1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1))
FULL_LION = frozenset(KING_STEPS)

# For one square O: the first-leg squares, each with its second-leg squares (O included).
Legs = tuple[tuple[int, tuple[int, ...]], ...]


def lion_area(directions: tuple[tuple[int, int], ...]) -> frozenset[tuple[int, int]]:
    """Offsets from ``O`` a piece reaches with Lion power in ``directions``.

    All 8 directions: the 5×5 block minus ``O`` (the Lion). Otherwise the first two squares
    along each direction (the "linear" Lion power of the Horned Falcon and Soaring Eagle).
    """
    if frozenset(directions) == FULL_LION:
        return frozenset((x, y) for x in range(-2, 3) for y in range(-2, 3) if (x, y) != (0, 0))
    return frozenset((k * dx, k * dy) for dx, dy in directions for k in (1, 2))


@dataclass(frozen=True, slots=True)
class LionTables:
    """Per-variant geometry of Lion moves, indexed ``[side][code][square]``.

    ``legs[side][code]`` is None for a piece without Lion power. ``pass_squares`` lists the
    adjacent squares in the piece's Lion directions (a pass needs one of them empty).
    ``codes`` are the catalogue codes of the pieces with Lion power.
    """

    legs: tuple[tuple[tuple[Legs, ...] | None, ...], tuple[tuple[Legs, ...] | None, ...]]
    pass_squares: tuple[tuple[tuple[tuple[int, ...], ...] | None, ...], ...]
    codes: tuple[int, ...]


def _build(variant: Variant) -> LionTables:
    g = variant.geometry
    codes = tuple(code for code, p in enumerate(variant.t.types) if p is not None and p.lion)
    legs_by_side = []
    pass_by_side = []
    for side in (0, 1):
        orient = 1 if side == 0 else -1
        legs: list[tuple[Legs, ...] | None] = [None] * (variant.t.n + 1)
        passes: list[tuple[tuple[int, ...], ...] | None] = [None] * (variant.t.n + 1)
        for code in codes:
            piece = variant.t.types[code]
            assert piece is not None and piece.lion is not None
            dirs = tuple((orient * dx, orient * dy) for dx, dy in piece.lion)
            area = lion_area(dirs) | {(0, 0)}
            per_square: list[Legs] = []
            pass_per_square: list[tuple[int, ...]] = []
            for sq in range(g.size):
                f, r = g.file_of(sq), g.rank_of(sq)
                firsts = []
                for dx, dy in dirs:
                    if not g.on_board(f + dx, r + dy):
                        continue
                    seconds = tuple(
                        g.square(f + dx + ex, r + dy + ey)
                        for ex, ey in KING_STEPS
                        if (dx + ex, dy + ey) in area and g.on_board(f + dx + ex, r + dy + ey)
                    )
                    firsts.append((g.square(f + dx, r + dy), seconds))
                per_square.append(tuple(firsts))
                pass_per_square.append(tuple(a for a, _ in firsts))
            legs[code] = tuple(per_square)
            passes[code] = tuple(pass_per_square)
        legs_by_side.append(tuple(legs))
        pass_by_side.append(tuple(passes))
    return LionTables((legs_by_side[0], legs_by_side[1]), tuple(pass_by_side), codes)


_TABLES: dict[Variant, LionTables] = {}


def tables_for(variant: Variant) -> LionTables:
    """The (cached) Lion tables of ``variant``."""
    tables = _TABLES.get(variant)
    if tables is None:
        tables = _TABLES[variant] = _build(variant)
    return tables


def _pass_square(board: tuple[int, ...], squares: tuple[int, ...]) -> int:
    """The first empty square of ``squares``, or -1."""
    for a in squares:
        if board[a] == 0:
            return a
    return -1


# The pass owner of the last position asked about: (tables, board, turn, square). The owner
# is a function of those; the hook is called for every piece of one position in a row, so
# one entry saves rescanning the board for each Lion-power piece.
_last_owner: tuple[LionTables | None, tuple[int, ...], int, int] = (None, (), -1, -1)


def _pass_owner(pos: Position, tables: LionTables) -> int:
    """The lowest square holding a Lion-power piece of the side to move that can pass, or -1."""
    global _last_owner
    board = pos.board
    last_tables, last_board, last_turn, owner = _last_owner
    if last_board is board and last_turn == pos.turn and last_tables is tables:
        return owner
    sign = 1 if pos.turn == 0 else -1
    passes = tables.pass_squares[pos.turn]
    owner = -1
    for code in tables.codes:
        own = code * sign
        squares = passes[code]
        assert squares is not None
        sq = -1
        for _ in range(board.count(own)):
            sq = board.index(own, sq + 1)
            if 0 <= owner < sq:
                break
            if _pass_square(board, squares[sq]) >= 0:
                owner = sq
                break
    _last_owner = (tables, board, pos.turn, owner)
    return owner


def special_moves(pos: Position, fr: int, code: int) -> list[Move]:
    """The multi-leg Lion moves and the pass of the side-to-move piece ``code`` on ``fr``."""
    tables = _TABLES.get(pos.variant) or tables_for(pos.variant)
    legs = tables.legs[pos.turn][code]
    if legs is None:
        return []
    board = pos.board
    sign = 1 if pos.turn == 0 else -1
    out: list[Move] = []
    for a, seconds in legs[fr]:
        if board[a] * sign >= 0:
            continue  # the first leg must capture; an empty route is the plain leap
        via = (a,)
        for s in seconds:
            if s == fr or board[s] * sign <= 0:
                out.append(Move(fr, s, 0, 0, via))
    squares = tables.pass_squares[pos.turn][code]
    assert squares is not None
    empty = _pass_square(board, squares[fr])
    if empty >= 0 and _pass_owner(pos, tables) == fr:
        out.append(Move(fr, fr, 0, 0, (empty,)))
    return out

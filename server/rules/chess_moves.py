"""Castling and en passant: the chess family's moves that touch a second piece.

Every rule is read from the variant record (``Variant.castling``, the ``ep_codes`` of its
tables); :class:`~server.rules.position.Position` calls these while generating, testing and
playing moves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .geometry import Geometry
from .move import NULL_SQUARE, Move

if TYPE_CHECKING:
    from .position import Position

__all__ = [
    "add_castlings",
    "castle_rook",
    "ep_capture_legal",
    "ep_target",
    "ep_victim",
    "is_castling",
    "is_ep",
]


def add_castlings(pos: Position, out: list[Move]) -> None:
    """Append the side to move's legal castlings (king two squares towards a rook; neither its
    square, the crossed one nor the destination attacked).

    The cheap conditions (rights, rook in its corner, empty squares between) come first: most
    positions that still hold a right cannot castle yet, and only those that can pay for the
    check and attack tests.
    """
    v = pos.variant
    side = pos.turn
    rights = (pos.castling >> (2 * side)) & 3
    if not rights or v.castling is None or side not in v.castling.sides:
        return
    t = v.t
    board = pos.board
    sign = 1 if side == 0 else -1
    king = -1
    for s in pos.royals[side]:
        if board[s] == sign * t.castle_king:
            king = s
            break
    if king < 0:
        return
    rook = sign * t.castle_rook
    ready = []
    for bit in (1, 2):
        if not rights & bit:
            continue
        path = t.castle_paths.get((side, king, bit), False)
        if path is False:
            path = _castle_path(pos, king, bit)
        if path is None or board[path[0]] != rook or any(board[s] for s in path[1]):
            continue
        ready.append(path)
    if not ready or pos.is_check():
        return
    enemy = 1 - side
    without_king = list(board)
    without_king[king] = 0
    for _, _, crossed, dest, move in ready:
        if pos.attacked(crossed, enemy, without_king) or pos.attacked(dest, enemy, without_king):
            continue
        out.append(move)


def _castle_path(
    pos: Position, king: int, bit: int
) -> tuple[int, tuple[int, ...], int, int, Move] | None:
    """For the side to move's castling king on ``king`` and the castling right ``bit`` (1
    towards the last file, 2 towards the first): the rook's corner, the squares between that
    must be empty, the square the king crosses, its destination and the castling move; None
    when the king is off its back rank or too near the corner (kept in
    ``Tables.castle_paths``)."""
    g = pos.variant.geometry
    t = pos.variant.t
    side = pos.turn
    back = 0 if side == 0 else g.ranks - 1
    kf = g.file_of(king)
    rook_file = g.files - 1 if bit == 1 else 0
    path = None
    if g.rank_of(king) == back and abs(rook_file - kf) >= 2:
        step = 1 if rook_file > kf else -1
        between = tuple(
            g.square(f, back) for f in range(min(kf, rook_file) + 1, max(kf, rook_file))
        )
        dest = g.square(kf + 2 * step, back)
        path = (
            g.square(rook_file, back),
            between,
            g.square(kf + step, back),
            dest,
            t.shared(Move(king, dest)),
        )
    t.castle_paths[(side, king, bit)] = path
    return path


def is_castling(pos: Position, m: Move) -> bool:
    """Whether ``m`` is a castling: the castling king moving two files along its rank."""
    g = pos.variant.geometry
    return (
        m.from_sq >= 0
        and abs(pos.board[m.from_sq]) == pos.variant.t.castle_king
        and g.rank_of(m.from_sq) == g.rank_of(m.to_sq)
        and abs(g.file_of(m.from_sq) - g.file_of(m.to_sq)) == 2
    )


def castle_rook(g: Geometry, m: Move) -> tuple[int, int]:
    """The castling ``m``'s rook: its corner square and the square it lands on."""
    step = 1 if m.to_sq > m.from_sq else -1
    rank = g.rank_of(m.from_sq)
    corner = g.square(g.files - 1 if step > 0 else 0, rank)
    return corner, m.from_sq + step


def is_ep(pos: Position, m: Move) -> bool:
    """Whether ``m`` is an en-passant capture in ``pos``."""
    return (
        m.to_sq == pos.ep
        and m.from_sq >= 0
        and abs(pos.board[m.from_sq]) in pos.variant.t.ep_codes
        and pos.board[m.to_sq] == 0
        and pos.variant.geometry.file_of(m.from_sq) != pos.variant.geometry.file_of(m.to_sq)
    )


def ep_victim(g: Geometry, m: Move) -> int:
    """The square of the pawn an en-passant capture ``m`` takes."""
    return g.square(g.file_of(m.to_sq), g.rank_of(m.from_sq))


def ep_target(pos: Position, board: list[int], fr: int, to: int) -> int:
    """The crossed square of the mover's double step ``fr``→``to`` (``board``: after it), if an
    enemy pawn stands ready to take it; otherwise NULL_SQUARE."""
    g = pos.variant.geometry
    t = pos.variant.t
    enemy_sign = -1 if pos.turn == 0 else 1
    f, r = g.file_of(to), g.rank_of(to)
    for df in (-1, 1):
        if g.on_board(f + df, r):
            q = board[g.square(f + df, r)]
            if q * enemy_sign > 0 and q * enemy_sign in t.ep_codes:
                return (fr + to) // 2
    return NULL_SQUARE


def ep_capture_legal(pos: Position) -> bool:
    """Whether some en-passant capture onto ``pos.ep`` is legal."""
    codes = pos.variant.t.ep_codes
    sign = 1 if pos.turn == 0 else -1
    return any(
        m.to_sq == pos.ep and is_ep(pos, m)
        for s, p in enumerate(pos.board)
        if p * sign > 0 and p * sign in codes
        for m in pos.legal_moves_from(s)
    )

"""Drops: putting a piece from the hand on the board (shogi family), and their rules —
where a piece may land, one pawn per file, no checkmate by a dropped pawn (spec §0.3)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .move import NULL_SQUARE, Move

if TYPE_CHECKING:
    from .position import Position

__all__ = ["add_drops", "drop_mates", "is_pseudo_legal_drop"]


def add_drops(pos: Position, out: list[Move]) -> None:
    """Append every drop the side to move may make, ignoring royal safety and uchifuzume."""
    t = pos.variant.t
    side = pos.turn
    board = pos.board
    built = t.drop_moves
    for code, count in enumerate(pos.hands[side]):
        if not count:
            continue
        targets = built.get((side, code)) or drop_targets(pos, code)
        if code in t.one_per_file:
            own = code if side == 0 else -code
            files = pos.variant.geometry.files
            blocked = set()
            s = -1
            for _ in range(board.count(own)):
                s = board.index(own, s + 1)
                blocked.add(s % files)
            out += [m for s, f, m in targets if not board[s] and f not in blocked]
        else:
            out += [m for s, _, m in targets if not board[s]]


def drop_targets(pos: Position, code: int) -> tuple[tuple[int, int, Move], ...]:
    """The squares the side to move may drop piece ``code`` on if empty, as (square, file,
    the drop) with the tables' shared moves (``Tables.drop_moves``, built on first use)."""
    t = pos.variant.t
    g = pos.variant.geometry
    side = pos.turn
    mobile = t.mobile[side][code]
    targets = tuple(
        (s, g.file_of(s), t.shared(Move(NULL_SQUARE, s, 0, code)))
        for s in range(g.size)
        if s in mobile
    )
    t.drop_moves[(side, code)] = targets
    return targets


def is_pseudo_legal_drop(pos: Position, m: Move) -> bool:
    """Whether the drop ``m`` (``from_sq`` NULL_SQUARE, on the board) is one of
    :func:`add_drops`'s."""
    v = pos.variant
    t = v.t
    side = pos.turn
    code = m.drop
    if v.drops is None or m.promotion or m.via or not 0 < code <= t.n or not pos.hands[side][code]:
        return False
    if pos.board[m.to_sq] or m.to_sq not in t.mobile[side][code]:
        return False
    if code in t.one_per_file:
        g = v.geometry
        own = code if side == 0 else -code
        file = g.file_of(m.to_sq)
        if any(pos.board[g.square(file, r)] == own for r in range(g.ranks)):
            return False
    return True


def drop_mates(pos: Position, m: Move) -> bool:
    """Whether the drop ``m`` checkmates (uchifuzume test)."""
    enemy_royals = pos.royals[1 - pos.turn]
    if not enemy_royals:
        return False
    # A drop can only give check with the dropped piece, so it must at least reach a royal
    # (blockers aside) before it is worth playing out.
    reach = pos.variant.t.capture_reach(pos.turn, m.drop, m.to_sq)
    if not any(r in reach for r in enemy_royals):
        return False
    after = pos.play(m)
    return after.is_check() and not after.has_legal_move()

"""Legal moves: royal safety on top of a position's pseudo-legal moves (spec §0.4).

:class:`~server.rules.position.Position` binds the public functions as its methods
(``legal_moves``, ``has_legal_move``, ``is_legal``, ``legal_moves_from``) and keeps their
caches (``_legal``, ``_guard``, ``_pins``); these functions fill them.

A move is legal when the mover's royals stand as its royal model allows afterwards (M1 never
attacked, M2 an unprotected pair, M3 not all attacked, M4 anything goes). Testing every move
on a scratch board is the general way; the common cases take shortcuts with the same answer:
with a sole royal not in check only the royal's moves, pinned pieces, en-passant and
multi-leg moves are tested; in check, only moves that take the single checker or block its
line can help.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .chess_moves import add_castlings, castle_rook, ep_victim, is_castling, is_ep
from .drops import add_drops, drop_mates
from .move import NULL_SQUARE, Move
from .variant import RoyalModel

if TYPE_CHECKING:
    from .position import Position

__all__ = [
    "GUARD_ALL",
    "GUARD_NONE",
    "GUARD_SOLE",
    "GUARD_UNKNOWN",
    "has_legal_move",
    "is_legal",
    "legal_after",
    "legal_moves",
    "legal_moves_from",
]

# Position._guard values: how much royal-safety testing moves need (see guard_mode).
GUARD_UNKNOWN, GUARD_NONE, GUARD_ALL, GUARD_SOLE = -1, 0, 1, 2


def legal_after(pos: Position, m: Move, scratch: list[int]) -> bool:
    """Whether the mover's royals stand legally after ``m`` (scratch is restored)."""
    side = pos.turn
    if pos.variant.royalty[side] is RoyalModel.ROYAL_CAPTURE:
        return True
    t = pos.variant.t
    fr, to = m.from_sq, m.to_sq
    royals = list(pos.royals[side])
    if fr == NULL_SQUARE:
        scratch[to] = m.drop if side == 0 else -m.drop
        ok = pos._safe(scratch, side, royals)
        scratch[to] = 0
        return ok
    saved = [(fr, scratch[fr]), (to, scratch[to])]
    for s in m.via:
        saved.append((s, scratch[s]))
        scratch[s] = 0
    piece = scratch[fr]
    scratch[fr] = 0
    scratch[to] = piece
    if is_ep(pos, m):
        cap = ep_victim(pos.variant.geometry, m)
        saved.append((cap, scratch[cap]))
        scratch[cap] = 0
    elif abs(piece) == t.castle_king and t.castle_king and is_castling(pos, m):
        rook_from, rook_to = castle_rook(pos.variant.geometry, m)
        saved.append((rook_from, scratch[rook_from]))
        saved.append((rook_to, scratch[rook_to]))
        scratch[rook_to] = scratch[rook_from]
        scratch[rook_from] = 0
    if fr in royals:
        royals[royals.index(fr)] = to
    elif m.promotion and t.royal[m.promotion]:
        royals.append(to)
    ok = pos._safe(scratch, side, royals)
    for s, p in reversed(saved):
        scratch[s] = p
    return ok


def guard_mode(pos: Position) -> int:
    """How the side to move's moves must be tested for royal safety (cached).

    ``GUARD_NONE``: never (no royal to protect, royal capture, or two pseudo-royals);
    ``GUARD_ALL``: every move (in check, or several royals to watch);
    ``GUARD_SOLE``: a sole royal that is not in check. A move of another piece can then
    expose it only by leaving a line from it, so only the royal's own moves, moves of
    pieces pinned to it, and en-passant and multi-leg moves are tested.
    """
    if pos._guard == GUARD_UNKNOWN:
        side = pos.turn
        model = pos.variant.royalty[side]
        royals = pos.royals[side]
        if model is RoyalModel.ROYAL_CAPTURE or not royals:
            pos._guard = GUARD_NONE
        elif len(royals) > 1:
            pos._guard = GUARD_NONE if model is RoyalModel.PSEUDO_ROYAL else GUARD_ALL
        else:
            pos._guard = GUARD_ALL if pos.is_check() else GUARD_SOLE
    return pos._guard


def pinned(pos: Position, fr: int) -> bool:
    """Whether the mover's piece on ``fr`` is pinned to its sole royal (see pin_set)."""
    pins = pos._pins
    if pins is None:
        pins = pos._pins = pin_set(pos)
    return fr in pins


def pin_set(pos: Position) -> frozenset[int]:
    """The mover's pieces that are the first piece on a line from its sole royal with an
    enemy behind them that attacks along that line from there: one walk per line."""
    side = pos.turn
    king = pos.royals[side][0]
    board = pos.board
    sign = 1 if side == 0 else -1
    found = []
    for squares, sets in pos.variant.t.attack_rays[1 - side][king]:
        first = -1
        for s, codes in zip(squares, sets):
            q = board[s]
            if q:
                if first >= 0:
                    if q in codes:  # codes hold enemy pieces only
                        found.append(first)
                    break
                if q * sign < 0:
                    break
                first = s
    return frozenset(found)


def needs_test(pos: Position, m: Move) -> bool:
    """Whether the pseudo-legal ``m`` needs the full royal-safety test (see guard_mode)."""
    mode = pos._guard if pos._guard != GUARD_UNKNOWN else guard_mode(pos)
    if mode == GUARD_SOLE:
        fr = m.from_sq
        return fr != NULL_SQUARE and (
            fr == pos.royals[pos.turn][0] or bool(m.via) or m.to_sq == pos.ep or pinned(pos, fr)
        )
    return mode == GUARD_ALL


def passes_safety(pos: Position, m: Move, scratch: list[int] | None = None) -> bool:
    """Whether the pseudo-legal move ``m`` is legal (``scratch``: a copy of the board)."""
    if needs_test(pos, m) and not legal_after(pos, m, list(pos.board) if scratch is None else scratch):
        return False
    return not (m.drop and m.drop in pos.variant.t.no_drop_mate and drop_mates(pos, m))


def legal_moves(pos: Position) -> list[Move]:
    """All legal moves of the side to move (cached)."""
    if pos._legal is None:
        mode = guard_mode(pos)
        if mode == GUARD_SOLE:
            pos._legal = _legal_sole(pos)
        elif mode == GUARD_ALL and len(pos.royals[pos.turn]) == 1:
            pos._legal = _legal_evasions(pos)
        elif mode == GUARD_NONE and not pos.variant.t.no_drop_mate:
            pos._legal = pos.pseudo_legal_moves()
        else:
            scratch = list(pos.board)
            pos._legal = [m for m in pos.pseudo_legal_moves() if passes_safety(pos, m, scratch)]
    return pos._legal


def _legal_sole(pos: Position) -> list[Move]:
    """:func:`legal_moves` when the mover has a sole royal, not in check (GUARD_SOLE).

    Only the royal's moves, the moves of pinned pieces, en-passant and multi-leg moves
    need the safety test, so the other pieces' moves go straight into the list. The
    royal's plain steps are tested with one attack look-up on the board without it.
    """
    board = pos.board
    side = pos.turn
    sign = 1 if side == 0 else -1
    king = pos.royals[side][0]
    pins = pos._pins
    if pins is None:
        pins = pos._pins = pin_set(pos)
    ep = pos.ep
    v = pos.variant
    special = v.special_moves is not None
    legal: list[Move] = []
    tested: list[Move] = []
    own = [fr for fr in range(len(board)) if board[fr] * sign > 0]
    if pins:
        pos._generate([fr for fr in own if fr != king and fr not in pins], legal)
        pos._generate([king, *pins], tested)
    else:
        own.remove(king)
        pos._generate(own, legal)
        pos._generate((king,), tested)
    if special or ep != NULL_SQUARE:
        plain = []
        for m in legal:
            if m.via or m.to_sq == ep:
                tested.append(m)
            else:
                plain.append(m)
        legal = plain
    if pos.castling and v.t.castle_king:
        add_castlings(pos, tested)
    if tested:
        scratch = list(board)
        without_king = list(board)
        without_king[king] = 0
        attacked = pos.attacked
        enemy = 1 - side
        for m in tested:
            fr = m.from_sq
            if fr == king and not (m.via or m.promotion or m.to_sq == ep or abs(m.to_sq - fr) == 2):
                if not attacked(m.to_sq, enemy, without_king):
                    legal.append(m)
            elif legal_after(pos, m, scratch):
                legal.append(m)
    if v.drops is not None:
        drops: list[Move] = []
        add_drops(pos, drops)
        no_mate = v.t.no_drop_mate
        if no_mate:
            legal += [m for m in drops if not (m.drop in no_mate and drop_mates(pos, m))]
        else:
            legal += drops
    return legal


def _check_lines(pos: Position) -> tuple[set[int], set[int]] | None:
    """The pieces giving check to the mover's sole royal, and the squares between a
    checking rider and the royal; None when one checker is seen along two lines (some
    boards have overlapping rays: the general test is then used)."""
    side = pos.turn
    king = pos.royals[side][0]
    t = pos.variant.t
    board = pos.board
    checkers: set[int] = set()
    between: set[int] = set()
    for src, codes in t.attack_leaps[1 - side][king]:
        q = board[src]
        if q and q in codes:
            checkers.add(src)
    for squares, sets in t.attack_rays[1 - side][king]:
        for i, (s, codes) in enumerate(zip(squares, sets)):
            q = board[s]
            if q:
                if q in codes:
                    if s in checkers:
                        return None
                    checkers.add(s)
                    between.update(squares[:i])
                break
    return checkers, between


def _legal_evasions(pos: Position) -> list[Move]:
    """:func:`legal_moves` when the mover's sole royal is in check (GUARD_ALL, one royal).

    A move of another piece can only be legal if it captures the single checker or
    lands between a checking rider and the royal, so the safety test runs only on those
    (and on royal moves, promotions to a royal piece, en-passant and multi-leg moves).
    """
    lines = _check_lines(pos)
    if lines is None:
        scratch = list(pos.board)
        return [m for m in pos.pseudo_legal_moves() if legal_after(pos, m, scratch)]
    checkers, between = lines
    single = len(checkers) == 1
    targets = checkers | between if single else set()
    t = pos.variant.t
    royal = t.royal
    no_mate = t.no_drop_mate
    king = pos.royals[pos.turn][0]
    ep = pos.ep
    pins = pos._pins
    if pins is None:
        pins = pos._pins = pin_set(pos)
    scratch = list(pos.board)
    legal = []
    for m in pos.pseudo_legal_moves():
        fr = m.from_sq
        if fr == NULL_SQUARE:  # a drop can only block
            if single and m.to_sq in between and not (m.drop in no_mate and drop_mates(pos, m)):
                legal.append(m)
        elif fr == king or m.via or m.to_sq == ep or royal[m.promotion]:
            if legal_after(pos, m, scratch):
                legal.append(m)
        elif m.to_sq in targets and (fr not in pins or legal_after(pos, m, scratch)):
            legal.append(m)
    return legal


def has_legal_move(pos: Position) -> bool:
    """Whether the side to move can move at all.

    Generates piece by piece and stops at the first legal move. In check the royals are
    tried first (a step out of check is the likeliest answer), otherwise last (the other
    pieces' moves need no safety test unless pinned).
    """
    if pos._legal is not None:
        return bool(pos._legal)
    v = pos.variant
    board = pos.board
    sign = 1 if pos.turn == 0 else -1
    scratch = list(board)
    royals = pos.royals[pos.turn]
    # A side's pieces mostly stand near its own back rank: look there first.
    squares = range(len(board)) if sign > 0 else range(len(board) - 1, -1, -1)
    others = (s for s in squares if board[s] * sign > 0 and s not in royals)
    in_check = guard_mode(pos) == GUARD_ALL
    order: Iterable[int] = itertools.chain(royals, others) if in_check else itertools.chain(others, royals)
    for fr in order:
        for m in pos._pseudo_moves_from(fr):
            if passes_safety(pos, m, scratch):
                return True
    if v.drops is None:
        return False
    drops: list[Move] = []  # castling came with the king's moves
    add_drops(pos, drops)
    return any(passes_safety(pos, m, scratch) for m in drops)


def is_legal(pos: Position, m: Move) -> bool:
    """Whether ``m`` is legal here. Generates only the moving piece's moves (or checks the
    drop rules), so it is much cheaper than :func:`legal_moves` when that is not cached."""
    if pos._legal is not None:
        return m in pos._legal
    return pos._is_pseudo_legal(m) and passes_safety(pos, m)


def legal_moves_from(pos: Position, square: int) -> list[Move]:
    """The legal moves of the mover's piece on ``square`` (castling included for the king)."""
    if pos._legal is not None:
        return [m for m in pos._legal if m.from_sq == square]
    scratch = list(pos.board)
    return [m for m in pos._pseudo_moves_from(square) if passes_safety(pos, m, scratch)]

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
GUARD_UNKNOWN, GUARD_NONE, GUARD_ALL, GUARD_SOLE, GUARD_MULTI = -1, 0, 1, 2, 3

# _legal_one maps the enemy's attacks once (attack_set) instead of one reverse look-up per
# royal step (and one for the check test) when the enemy has at most this many pieces per
# square the royal could step to.
MAP_PIECES_PER_STEP = 2


def attack_set(pos: Position, by: int, board: list[int] | tuple[int, ...]) -> set[int]:
    """The squares ``by``'s pieces on ``board`` attack: those where
    ``pos.attacked(square, by, board)`` is true, found by walking forward from each piece
    (``Tables.attacks_from``) instead of backward from each square."""
    t = pos.variant.t
    built = t.reach_by_piece
    covered: set[int] = set()
    pieces = enumerate(board)
    for sq, p in (
        ((s, p) for s, p in pieces if p > 0) if by == 0 else ((s, p) for s, p in pieces if p < 0)
    ):
        near, rays = (built.get(p) or t.attacks_from(p))[sq]
        covered.update(near)
        for squares, flags in rays:
            if flags is None:
                for s in squares:
                    covered.add(s)
                    if board[s]:
                        break
            else:
                for s, hit in zip(squares, flags):
                    if hit:
                        covered.add(s)
                    if board[s]:
                        break
    return covered


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
    ``GUARD_ALL``: every move (in check);
    ``GUARD_SOLE``: a sole royal that is not in check. A move of another piece can then
    expose it only by leaving a line from it, so only the royal's own moves, moves of
    pieces pinned to it (``pos._pins``: pinned square -> the squares it may go to), and
    en-passant and multi-leg moves are tested;
    ``GUARD_MULTI``: several royals, not in check: as ``GUARD_SOLE`` but with the pieces
    that could expose the royals that matter (``pos._pins``, see :func:`multi_risky`).
    """
    if pos._guard == GUARD_UNKNOWN:
        side = pos.turn
        model = pos.variant.royalty[side]
        royals = pos.royals[side]
        if model is RoyalModel.ROYAL_CAPTURE or not royals:
            pos._guard = GUARD_NONE
        elif len(royals) > 1:
            if model is RoyalModel.PSEUDO_ROYAL:
                pos._guard = GUARD_NONE
            else:
                risky = multi_risky(pos)
                pos._guard = GUARD_ALL if risky is None else GUARD_MULTI
                pos._pins = risky
        else:
            pos._guard = GUARD_ALL if pos.is_check() else GUARD_SOLE
    return pos._guard


def pin_lines(pos: Position, king: int) -> dict[int, frozenset[int]]:
    """The mover's pieces pinned to its royal on ``king``: each first piece on a line from
    the royal with an enemy behind it that attacks along that line from there, mapped to the
    squares of that line it may move to and still shield the royal (up to the attacker,
    taking it included). One walk per line."""
    side = pos.turn
    board = pos.board
    sign = 1 if side == 0 else -1
    found: dict[int, frozenset[int]] = {}
    for squares, sets in pos.variant.t.attack_rays[1 - side][king]:
        first = -1
        for s, codes in zip(squares, sets):
            q = board[s]
            if q:
                if first >= 0:
                    if q in codes:  # codes hold enemy pieces only
                        line = frozenset(squares[: squares.index(s) + 1])
                        found[first] = found[first] & line if first in found else line
                    break
                if q * sign < 0:
                    break
                first = s
    return found


def multi_risky(pos: Position) -> dict[int, frozenset[int]] | None:
    """For several royals (models M1 and M3): the squares whose pieces' moves need the full
    safety test, or None when the side is in check (every move is then tested).

    A move of a piece that is neither a royal nor pinned to one leaves every royal as
    attacked as it was (it can only block lines). Under M3 (not all royals may be left
    attacked) a move is therefore safe when some royal that is not attacked now is neither
    the moving piece nor pinned by it; under M1 (none may be attacked) when no royal is
    attacked and the piece is none of them nor pinned to any. Values are unused (empty).
    """
    side = pos.turn
    royals = pos.royals[side]
    enemy = 1 - side
    free = [r for r in royals if not pos.attacked(r, enemy)]
    duple = pos.variant.royalty[side] is RoyalModel.DUPLE_CHECK
    if not free if duple else len(free) < len(royals):
        pos._check = True
        return None
    pos._check = False
    sets = [{r, *pin_lines(pos, r)} for r in free]
    risky = set.intersection(*sets) if duple else set.union(*sets)
    return dict.fromkeys(risky, frozenset())


def guarded(pos: Position) -> dict[int, frozenset[int]]:
    """``pos._pins`` (see guard_mode), computed when missing; GUARD_SOLE or GUARD_MULTI only."""
    pins = pos._pins
    if pins is None:
        if pos._guard == GUARD_SOLE:
            pins = pin_lines(pos, pos.royals[pos.turn][0])
        else:
            pins = multi_risky(pos) or {}
        pos._pins = pins
    return pins


def needs_test(pos: Position, m: Move) -> bool:
    """Whether the pseudo-legal ``m`` needs the full royal-safety test (see guard_mode)."""
    mode = pos._guard if pos._guard != GUARD_UNKNOWN else guard_mode(pos)
    if mode == GUARD_SOLE:
        fr = m.from_sq
        return fr != NULL_SQUARE and (
            fr == pos.royals[pos.turn][0] or bool(m.via) or m.to_sq == pos.ep or fr in guarded(pos)
        )
    if mode == GUARD_MULTI:
        fr = m.from_sq
        if fr == NULL_SQUARE:
            return False
        t = pos.variant.t
        return (
            fr in guarded(pos)
            or bool(m.via)
            or m.to_sq == pos.ep
            or t.royal[m.promotion]
            or (t.castle_king != 0 and abs(pos.board[fr]) == t.castle_king)
        )
    return mode == GUARD_ALL


def passes_safety(pos: Position, m: Move, scratch: list[int] | None = None) -> bool:
    """Whether the pseudo-legal move ``m`` is legal (``scratch``: a copy of the board)."""
    if needs_test(pos, m) and not legal_after(
        pos, m, list(pos.board) if scratch is None else scratch
    ):
        return False
    return not (m.drop and m.drop in pos.variant.t.no_drop_mate and drop_mates(pos, m))


def legal_moves(pos: Position) -> list[Move]:
    """All legal moves of the side to move (cached)."""
    if pos._legal is None:
        side = pos.turn
        if len(pos.royals[side]) == 1 and pos.variant.royalty[side] is not RoyalModel.ROYAL_CAPTURE:
            pos._legal = _legal_one(pos)
            return pos._legal
        mode = guard_mode(pos)
        if mode == GUARD_MULTI:
            pos._legal = _legal_quiet(pos, _own(pos), None)
        elif mode == GUARD_NONE and not pos.variant.t.no_drop_mate:
            pos._legal = pos.pseudo_legal_moves()
        else:
            scratch = list(pos.board)
            pos._legal = [m for m in pos.pseudo_legal_moves() if passes_safety(pos, m, scratch)]
    return pos._legal


def _own(pos: Position) -> list[int]:
    """The squares of the side to move's pieces."""
    if pos.turn == 0:
        return [s for s, p in enumerate(pos.board) if p > 0]
    return [s for s, p in enumerate(pos.board) if p < 0]


def _legal_one(pos: Position) -> list[Move]:
    """:func:`legal_moves` for a sole royal (models M1 and M3).

    When the enemy has few pieces for the squares the royal could step to, what they attack
    is mapped once (:func:`attack_set`, on the board without the royal): that answers the
    check test and every plain royal step.
    """
    board = pos.board
    side = pos.turn
    sign = 1 if side == 0 else -1
    king = pos.royals[side][0]
    own = (
        [s for s, p in enumerate(board) if p > 0]
        if side == 0
        else [s for s, p in enumerate(board) if p < 0]
    )
    covered = None
    enemies = len(board) - board.count(0) - len(own)
    if enemies <= 4 * MAP_PIECES_PER_STEP:
        t = pos.variant.t
        near = (t.reach_by_piece.get(board[king]) or t.attacks_from(board[king]))[king][0]
        steps = len([s for s in near if board[s] * sign <= 0])
        if steps >= 2 and enemies <= MAP_PIECES_PER_STEP * steps:
            without_king = list(board)
            without_king[king] = 0
            covered = attack_set(pos, 1 - side, without_king)
            if pos._check is None:
                pos._check = king in covered
    if (pos._guard if pos._guard != GUARD_UNKNOWN else guard_mode(pos)) == GUARD_ALL:
        return _legal_evasions(pos, covered)
    return _legal_quiet(pos, own, covered)


def _legal_quiet(pos: Position, own: list[int], covered: set[int] | None) -> list[Move]:
    """:func:`legal_moves` when not in check, with a sole royal (GUARD_SOLE) or several
    (GUARD_MULTI); ``own``: the mover's squares; ``covered``: the enemy's attack map on
    the board without the sole royal, or None.

    Only the moves of the pieces in ``pos._pins`` (and a sole royal's), en-passant and
    multi-leg moves (and under GUARD_MULTI, promotions to a royal and the castling king's
    moves) need the safety test, so the other pieces' moves go straight into the list. A
    sole royal's plain steps are tested with one attack look-up on the board without it
    (or in ``covered``), and a pinned piece's moves by whether they stay on its line.
    """
    board = pos.board
    side = pos.turn
    sign = 1 if side == 0 else -1
    sole = pos._guard == GUARD_SOLE
    pins = pos._pins
    if pins is None:
        pins = guarded(pos)
    ep = pos.ep
    v = pos.variant
    t = v.t
    legal: list[Move] = []
    tested: list[Move] = []
    if sole:
        king = pos.royals[side][0]
        own.remove(king)
        steps = _royal_steps(pos, king)
        if steps is None:
            pos._generate((king,), tested)
    else:
        king = NULL_SQUARE
    if pins:
        pos._generate([fr for fr in own if fr not in pins], legal)
        pos._generate(list(pins), tested)
    else:
        pos._generate(own, legal)
    if v.special_moves is not None or ep != NULL_SQUARE or not sole:
        plain = []
        royal = t.royal
        castler = t.castle_king if not sole else 0
        for m in legal:
            if (
                m.via
                or m.to_sq == ep
                or (not sole and (royal[m.promotion] or abs(board[m.from_sq]) == castler))
            ):
                tested.append(m)
            else:
                plain.append(m)
        legal = plain
    if pos.castling and t.castle_king:
        add_castlings(pos, tested)
    enemy = 1 - side
    without_king: tuple[int, ...] | list[int] = board
    if sole:
        if steps is not None:
            if covered is not None:
                for to, landing in steps:
                    if board[to] * sign <= 0 and to not in covered:
                        legal += landing
            else:
                free = [(to, landing) for to, landing in steps if board[to] * sign <= 0]
                if free:
                    attacked = pos.attacked
                    without_king = _without(board, king)
                    for to, landing in free:
                        if not attacked(to, enemy, without_king):
                            legal += landing
        else:
            without_king = _without(board, king)
    if tested:
        scratch = list(board)
        if sole:
            attacked = pos.attacked
            royal = t.royal
            for m in tested:
                fr = m.from_sq
                if fr == king:
                    if m.via or m.promotion or m.to_sq == ep or abs(m.to_sq - fr) == 2:
                        ok = legal_after(pos, m, scratch)
                    elif covered is not None:
                        ok = m.to_sq not in covered
                    else:
                        ok = not attacked(m.to_sq, enemy, without_king)
                elif fr in pins and not (m.via or m.to_sq == ep or royal[m.promotion]):
                    ok = m.to_sq in pins[fr]
                else:
                    ok = legal_after(pos, m, scratch)
                if ok:
                    legal.append(m)
        else:
            legal += [m for m in tested if legal_after(pos, m, scratch)]
    if v.drops is not None:
        drops: list[Move] = []
        add_drops(pos, drops)
        no_mate = v.t.no_drop_mate
        if no_mate:
            legal += [m for m in drops if not (m.drop in no_mate and drop_mates(pos, m))]
        else:
            legal += drops
    return legal


def _without(board: tuple[int, ...], square: int) -> list[int]:
    """A copy of ``board`` with ``square`` emptied."""
    out = list(board)
    out[square] = 0
    return out


def _royal_steps(pos: Position, king: int) -> tuple[tuple[int, tuple[Move, ...]], ...] | None:
    """The sole royal's moves from ``king`` as (square, moves) pairs when they are all plain
    single steps (no ride, promotion, castling-like or en-passant move, special move): each
    is then legal exactly when its square is not attacked on the board without the royal.
    None otherwise (the royal's moves then get the general treatment)."""
    t = pos.variant.t
    side = pos.turn
    code = pos.board[king] * (1 if side == 0 else -1)
    key = (side, code, king)
    steps = t.royal_steps.get(key, False)
    if steps is False:
        leaps, slides, hits, others = (t.steps_by_code[side][code] or t.steps(side, code))[king]
        plain = (
            not (slides or hits or others)
            and pos.variant.special_moves is None
            and code not in t.limited
            and code not in t.ep_codes
            and all(len(landing) == 1 and not landing[0].promotion for _, landing in leaps)
            and not (code == t.castle_king and any(abs(to - king) == 2 for to, _ in leaps))
        )
        steps = leaps if plain else None
        t.royal_steps[key] = steps
    found: tuple[tuple[int, tuple[Move, ...]], ...] | None = steps
    return found


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


def _legal_evasions(pos: Position, covered: set[int] | None = None) -> list[Move]:
    """:func:`legal_moves` when the mover's sole royal is in check (GUARD_ALL, one royal).

    A move of another piece can only be legal if it captures the single checker or
    lands between a checking rider and the royal, so only those are looked at: a pinned
    piece's by whether it stays on its pin line, the others are legal. The royal's plain
    steps are tested on the board without it (in ``covered``, the enemy's attack map on
    that board, when given); promotions to a royal piece, en-passant and multi-leg moves
    get the full test.
    """
    lines = _check_lines(pos)
    if lines is None:
        return [m for m in pos.pseudo_legal_moves() if passes_safety(pos, m)]
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
        pins = pos._pins = pin_lines(pos, king)
    scratch = list(pos.board)
    legal = []
    without_king: list[int] | None = None
    attacked = pos.attacked
    enemy = 1 - pos.turn
    for m in pos.pseudo_legal_moves():
        fr = m.from_sq
        if fr == NULL_SQUARE:  # a drop can only block
            if single and m.to_sq in between and not (m.drop in no_mate and drop_mates(pos, m)):
                legal.append(m)
        elif m.via or m.to_sq == ep or royal[m.promotion]:
            if legal_after(pos, m, scratch):
                legal.append(m)
        elif fr == king:
            to = m.to_sq
            if m.promotion or abs(to - fr) == 2:
                ok = legal_after(pos, m, scratch)
            elif covered is not None:
                ok = to not in covered
            else:
                if without_king is None:
                    without_king = _without(pos.board, king)
                ok = not attacked(to, enemy, without_king)
            if ok:
                legal.append(m)
        elif m.to_sq in targets and (fr not in pins or m.to_sq in pins[fr]):
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
    order: Iterable[int] = (
        itertools.chain(royals, others) if in_check else itertools.chain(others, royals)
    )
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

"""Immutable positions of any variant described by a :class:`~server.rules.variant.Variant`.

The board is a tuple of ints, one per square: 0 empty, ``+code`` a first-player piece,
``-code`` a second-player piece, where ``code`` indexes the variant's piece catalogue
(1-based). Hands hold counts per code. Nothing here is named after a variant: every rule is
read from the variant record.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from typing import NamedTuple

from .errors import IllegalMoveError, InvalidFenError, InvalidMoveError
from .geometry import FILE_LETTERS
from .variant import RoyalModel, Variant

__all__ = ["NULL_SQUARE", "Move", "Position"]

NULL_SQUARE = -1
FIRST, SECOND = 0, 1
# Position._guard_mode values: how much royal-safety testing moves need.
GUARD_UNKNOWN, GUARD_NONE, GUARD_ALL, GUARD_SOLE = -1, 0, 1, 2
CASTLE_LETTERS = "KQkq"  # bit 0: first/h-rook, 1: first/a-rook, 2: second/h, 3: second/a


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


_UCI = re.compile(r"^([a-o])(\d{1,2})([a-o])(\d{1,2})(\+|[a-z][!']?)?$")
_DROP = re.compile(r"^(\+?[A-Z][!']?)@([a-o])(\d{1,2})$")
_PIECE = re.compile(r"\+?[A-Za-z][!']?")


class Position:
    """One position. Treat every attribute as read-only; :meth:`play` returns a new one."""

    __slots__ = (
        "_base_key",
        "_check",
        "_from",
        "_guard",
        "_key",
        "_legal",
        "_pins",
        "board",
        "castling",
        "ep",
        "fullmove",
        "halfmove",
        "hands",
        "royals",
        "turn",
        "variant",
    )

    variant: Variant
    board: tuple[int, ...]
    hands: tuple[tuple[int, ...], tuple[int, ...]]
    turn: int
    castling: int
    ep: int
    halfmove: int
    fullmove: int
    royals: tuple[tuple[int, ...], tuple[int, ...]]

    def __init__(
        self,
        variant: Variant,
        board: tuple[int, ...],
        hands: tuple[tuple[int, ...], tuple[int, ...]],
        turn: int,
        castling: int = 0,
        ep: int = NULL_SQUARE,
        halfmove: int = 0,
        fullmove: int = 1,
        base_key: int | None = None,
        royals: tuple[tuple[int, ...], tuple[int, ...]] | None = None,
    ) -> None:
        self.variant = variant
        self.board = board
        self.hands = hands
        self.turn = turn
        self.castling = castling
        self.ep = ep
        self.halfmove = halfmove
        self.fullmove = fullmove
        if royals is None:  # play() passes them on; only a position read from text scans
            royal = variant.t.royal
            r0 = tuple(s for s, p in enumerate(board) if p > 0 and royal[p])
            r1 = tuple(s for s, p in enumerate(board) if p < 0 and royal[-p])
            royals = (r0, r1)
        self.royals = royals
        self._base_key = self._compute_key() if base_key is None else base_key
        self._key: int | None = None
        self._legal: list[Move] | None = None
        self._check: bool | None = None
        self._guard = GUARD_UNKNOWN
        self._pins: dict[int, bool] | None = None
        self._from: dict[int, list[Move]] | None = None

    def forget_move_lists(self) -> None:
        """Drop the memoized move lists (legal moves, per-square moves, pins); the position
        itself is unchanged and recomputes them when asked again.

        A game keeps every position it passed through; without their move lists those cost a
        tenth of the garbage collector's tracked objects, which keeps full collections of a
        server holding thousands of games short.
        """
        self._legal = None
        self._from = None
        self._pins = None

    # ------------------------------------------------------------------ keys

    def _compute_key(self) -> int:
        t = self.variant.t
        key = 0
        for sq, p in enumerate(self.board):
            if p:
                key ^= t.z_piece[2 * p if p > 0 else -2 * p + 1][sq]
        for side in (0, 1):
            for code, n in enumerate(self.hands[side]):
                if n:
                    key ^= t.z_hand[side][code][n]
        if self.turn:
            key ^= t.z_side
        return key ^ t.z_castle[self.castling]

    @property
    def key(self) -> int:
        """Hash of the position for repetition (spec §0.5): pieces, hands, side, castling
        rights, and the en-passant square only when an en-passant capture is legal."""
        if self._key is None:
            key = self._base_key
            if self.ep != NULL_SQUARE and self._ep_capture_legal():
                key ^= self.variant.t.z_ep[self.ep]
            self._key = key
        return self._key

    # ----------------------------------------------------------------- attacks

    def attacked(self, square: int, by: int, board: tuple[int, ...] | list[int] | None = None) -> bool:
        """Whether a piece of side ``by`` could capture on ``square`` (spec §0.4)."""
        b = self.board if board is None else board
        t = self.variant.t
        for src, codes in t.attack_leaps[by][square]:
            if b[src] in codes:
                return True
        for squares, sets in t.attack_rays[by][square]:
            for s, codes in zip(squares, sets):
                q = b[s]
                if q:
                    if q in codes:
                        return True
                    break
        return False

    def _safe(self, board: tuple[int, ...] | list[int], side: int, royals: list[int] | tuple[int, ...]) -> bool:
        """Whether ``side``'s royals are allowed to stand as they do (its royal model)."""
        model = self.variant.royalty[side]
        if model is RoyalModel.ROYAL_CAPTURE or not royals:
            return True
        enemy = 1 - side
        if len(royals) == 1:
            return not self.attacked(royals[0], enemy, board)
        if model is RoyalModel.PSEUDO_ROYAL:
            return True
        if model is RoyalModel.DUPLE_CHECK:
            return not all(self.attacked(r, enemy, board) for r in royals)
        return not any(self.attacked(r, enemy, board) for r in royals)

    def checked(self, side: int) -> bool:
        """Whether ``side`` is "in check" under its royal model (spec §0.4)."""
        royals = self.royals[side]
        enemy = 1 - side
        if len(royals) == 1:
            return self.attacked(royals[0], enemy)
        if not royals:
            return False
        if self.variant.royalty[side] is RoyalModel.DUPLE_CHECK:
            return all(self.attacked(r, enemy) for r in royals)
        if self.variant.royalty[side] is RoyalModel.CHECKMATE:
            return any(self.attacked(r, enemy) for r in royals)
        return False

    def is_check(self) -> bool:
        """Whether the side to move is in check."""
        if self._check is None:
            self._check = self.checked(self.turn)
        return self._check

    # -------------------------------------------------------------- generation

    def _is_ep(self, move: Move) -> bool:
        return (
            move.to_sq == self.ep
            and move.from_sq >= 0
            and abs(self.board[move.from_sq]) in self.variant.t.ep_codes
            and self.board[move.to_sq] == 0
            and self.variant.geometry.file_of(move.from_sq) != self.variant.geometry.file_of(move.to_sq)
        )

    def _add(self, out: list[Move], code: int, fr: int, to: int) -> None:
        """Append the move(s) of piece ``code`` from ``fr`` to ``to`` with promotion choices."""
        t = self.variant.t
        side = self.turn
        choices = t.choices.get(code)
        if choices is not None and to in t.last_rank[side]:
            for c in choices:
                limit = t.limits.get(c)
                if limit is not None:
                    own = c if side == 0 else -c
                    if sum(1 for p in self.board if p == own) >= limit:
                        continue
                out.append(Move(fr, to, c))
            return
        promo = t.promote[code]
        if promo and (fr in t.zone[side] or to in t.zone[side]):
            out.append(Move(fr, to, promo))
        if to in t.mobile[side][code]:
            out.append(Move(fr, to))

    def pseudo_legal_moves(self) -> list[Move]:
        """Every move that obeys piece movement, ignoring royal safety."""
        v = self.variant
        out: list[Move] = []
        self._generate(range(len(self.board)), out)
        if v.drops is not None:
            self._drops(out)
        if self.castling and v.t.castle_king:
            self._castlings(out)
        return out

    def _piece_moves(self, fr: int, code: int, out: list[Move]) -> None:
        """Append the pseudo-legal moves of the mover's piece ``code`` on ``fr`` (not castling)."""
        self._generate((fr,), out)

    def _generate(self, origins: Iterable[int], out: list[Move]) -> None:
        """Append the pseudo-legal board moves (not castling) of the mover's pieces standing on
        ``origins``; empty squares and enemy pieces are skipped."""
        v = self.variant
        t = v.t
        board = self.board
        side = self.turn
        sign = 1 if side == 0 else -1
        rays_of = t.moves[side]
        ep = self.ep
        ep_codes = t.ep_codes
        promote = t.promote
        choices = t.choices
        special = v.special_moves
        add = self._add
        append = out.append
        for fr in origins:
            code = board[fr] * sign
            if code <= 0:
                continue
            plain = not promote[code] and code not in choices
            for squares, min_range, can_move, can_capture in rays_of[code][fr]:
                n = 0
                for to in squares:
                    n += 1
                    q = board[to]
                    if q == 0:
                        if n >= min_range:
                            if can_move:
                                if plain:
                                    append(Move(fr, to))
                                else:
                                    add(out, code, fr, to)
                            elif to == ep and can_capture and code in ep_codes:
                                add(out, code, fr, to)
                    else:
                        if q * sign < 0 and can_capture and n >= min_range:
                            if plain:
                                append(Move(fr, to))
                            else:
                                add(out, code, fr, to)
                        break
            if special is not None:
                out.extend(special(self, fr, code))

    def _drops(self, out: list[Move]) -> None:
        t = self.variant.t
        g = self.variant.geometry
        side = self.turn
        sign = 1 if side == 0 else -1
        empty = [s for s, p in enumerate(self.board) if p == 0]
        for code, count in enumerate(self.hands[side]):
            if not count:
                continue
            mobile = t.mobile[side][code]
            blocked_files: set[int] = set()
            if code in t.one_per_file:
                own = code * sign
                blocked_files = {g.file_of(s) for s, p in enumerate(self.board) if p == own}
            for s in empty:
                if s in mobile and g.file_of(s) not in blocked_files:
                    out.append(Move(NULL_SQUARE, s, 0, code))

    def _castlings(self, out: list[Move]) -> None:
        v = self.variant
        t = v.t
        g = v.geometry
        side = self.turn
        if v.castling is None or side not in v.castling.sides:
            return
        sign = 1 if side == 0 else -1
        back = 0 if side == 0 else g.ranks - 1
        king = next((s for s in self.royals[side] if self.board[s] == sign * t.castle_king), None)
        if king is None or g.rank_of(king) != back or self.is_check():
            return
        enemy = 1 - side
        board = list(self.board)
        board[king] = 0
        kf = g.file_of(king)
        for bit, rook_file in ((1, g.files - 1), (2, 0)):
            if not self.castling & (bit << (2 * side)):
                continue
            rook = g.square(rook_file, back)
            if self.board[rook] != sign * t.castle_rook:
                continue
            step = 1 if rook_file > kf else -1
            if abs(rook_file - kf) < 2:
                continue
            between = range(min(kf, rook_file) + 1, max(kf, rook_file))
            if any(self.board[g.square(f, back)] for f in between):
                continue
            crossed, dest = g.square(kf + step, back), g.square(kf + 2 * step, back)
            if self.attacked(crossed, enemy, board) or self.attacked(dest, enemy, board):
                continue
            out.append(Move(king, dest))

    def _legal_after(self, m: Move, scratch: list[int]) -> bool:
        """Whether the mover's royals stand legally after ``m`` (scratch is restored)."""
        side = self.turn
        if self.variant.royalty[side] is RoyalModel.ROYAL_CAPTURE:
            return True
        t = self.variant.t
        fr, to = m.from_sq, m.to_sq
        royals = list(self.royals[side])
        if fr == NULL_SQUARE:
            scratch[to] = m.drop if side == 0 else -m.drop
            ok = self._safe(scratch, side, royals)
            scratch[to] = 0
            return ok
        saved = [(fr, scratch[fr]), (to, scratch[to])]
        for s in m.via:
            saved.append((s, scratch[s]))
            scratch[s] = 0
        piece = scratch[fr]
        scratch[fr] = 0
        scratch[to] = piece
        if self._is_ep(m):
            cap = self._ep_victim(m)
            saved.append((cap, scratch[cap]))
            scratch[cap] = 0
        elif abs(piece) == t.castle_king and t.castle_king and self._is_castling(m):
            rook_from, rook_to = self._castle_rook(m)
            saved.append((rook_from, scratch[rook_from]))
            saved.append((rook_to, scratch[rook_to]))
            scratch[rook_to] = scratch[rook_from]
            scratch[rook_from] = 0
        if fr in royals:
            royals[royals.index(fr)] = to
        elif m.promotion and t.royal[m.promotion]:
            royals.append(to)
        ok = self._safe(scratch, side, royals)
        for s, p in reversed(saved):
            scratch[s] = p
        return ok

    def _guard_mode(self) -> int:
        """How the side to move's moves must be tested for royal safety (cached).

        ``GUARD_NONE``: never (no royal to protect, royal capture, or two pseudo-royals);
        ``GUARD_ALL``: every move (in check, or several royals to watch);
        ``GUARD_SOLE``: a sole royal that is not in check. A move of another piece can then
        expose it only by leaving a line from it, so only the royal's own moves, moves of
        pieces pinned to it, and en-passant and multi-leg moves are tested.
        """
        if self._guard == GUARD_UNKNOWN:
            side = self.turn
            model = self.variant.royalty[side]
            royals = self.royals[side]
            if model is RoyalModel.ROYAL_CAPTURE or not royals:
                self._guard = GUARD_NONE
            elif len(royals) > 1:
                self._guard = GUARD_NONE if model is RoyalModel.PSEUDO_ROYAL else GUARD_ALL
            else:
                self._guard = GUARD_ALL if self.is_check() else GUARD_SOLE
        return self._guard

    def _pinned(self, fr: int) -> bool:
        """Whether the mover's piece on ``fr`` is the first piece on a line from its sole
        royal with an enemy behind it that attacks along that line from there (cached)."""
        if self._pins is None:
            self._pins = {}
        pinned = self._pins.get(fr)
        if pinned is None:
            pinned = False
            side = self.turn
            king = self.royals[side][0]
            t = self.variant.t
            rays = t.attack_rays[1 - side][king]
            board = self.board
            for i in t.rays_through(1 - side, king, fr):
                squares, sets = rays[i]
                behind = False
                for s, codes in zip(squares, sets):
                    if s == fr:
                        behind = True
                        continue
                    q = board[s]
                    if q:
                        pinned = behind and q in codes  # codes hold enemy pieces only
                        break
                if pinned:
                    break
            self._pins[fr] = pinned
        return pinned

    def _needs_test(self, m: Move) -> bool:
        """Whether the pseudo-legal ``m`` needs the full royal-safety test (see _guard_mode)."""
        mode = self._guard if self._guard != GUARD_UNKNOWN else self._guard_mode()
        if mode == GUARD_SOLE:
            fr = m.from_sq
            return fr != NULL_SQUARE and (
                fr == self.royals[self.turn][0] or bool(m.via) or m.to_sq == self.ep or self._pinned(fr)
            )
        return mode == GUARD_ALL

    def _is_legal(self, m: Move, scratch: list[int] | None = None) -> bool:
        """Whether the pseudo-legal move ``m`` is legal (``scratch``: a copy of the board)."""
        if self._needs_test(m) and not self._legal_after(m, list(self.board) if scratch is None else scratch):
            return False
        return not (m.drop and m.drop in self.variant.t.no_drop_mate and self._drop_mates(m))

    def legal_moves(self) -> list[Move]:
        """All legal moves of the side to move (cached)."""
        if self._legal is None:
            pseudo = self.pseudo_legal_moves()
            mode = self._guard_mode()
            no_mate = self.variant.t.no_drop_mate
            scratch = list(self.board)
            if mode == GUARD_NONE and not no_mate:
                self._legal = pseudo
            elif mode == GUARD_SOLE:  # _is_legal, inlined for the common case
                king = self.royals[self.turn][0]
                ep = self.ep
                pinned = self._pinned
                legal_after = self._legal_after
                legal = []
                for m in pseudo:
                    fr = m.from_sq
                    if fr == NULL_SQUARE:
                        if m.drop in no_mate and self._drop_mates(m):
                            continue
                    elif (fr == king or m.via or m.to_sq == ep or pinned(fr)) and not legal_after(m, scratch):
                        continue
                    legal.append(m)
                self._legal = legal
            else:
                is_legal = self._is_legal
                self._legal = [m for m in pseudo if is_legal(m, scratch)]
        return self._legal

    def has_legal_move(self) -> bool:
        """Whether the side to move can move at all.

        Generates piece by piece and stops at the first legal move. In check the royals are
        tried first (a step out of check is the likeliest answer), otherwise last (the other
        pieces' moves need no safety test unless pinned).
        """
        if self._legal is not None:
            return bool(self._legal)
        v = self.variant
        board = self.board
        sign = 1 if self.turn == 0 else -1
        scratch = list(board)
        royals = self.royals[self.turn]
        # A side's pieces mostly stand near its own back rank: look there first.
        squares = range(len(board)) if sign > 0 else range(len(board) - 1, -1, -1)
        others = (s for s in squares if board[s] * sign > 0 and s not in royals)
        in_check = self._guard_mode() == GUARD_ALL
        order: Iterable[int] = itertools.chain(royals, others) if in_check else itertools.chain(others, royals)
        for fr in order:
            for m in self._pseudo_moves_from(fr):
                if self._is_legal(m, scratch):
                    return True
        if v.drops is None:
            return False
        drops: list[Move] = []  # castling came with the king's moves
        self._drops(drops)
        return any(self._is_legal(m, scratch) for m in drops)

    def is_legal(self, m: Move) -> bool:
        """Whether ``m`` is legal here. Generates only the moving piece's moves (or checks the
        drop rules), so it is much cheaper than :meth:`legal_moves` when that is not cached."""
        if self._legal is not None:
            return m in self._legal
        return self._is_pseudo_legal(m) and self._is_legal(m)

    def legal_moves_from(self, square: int) -> list[Move]:
        """The legal moves of the mover's piece on ``square`` (castling included for the king)."""
        if self._legal is not None:
            return [m for m in self._legal if m.from_sq == square]
        scratch = list(self.board)
        return [m for m in self._pseudo_moves_from(square) if self._is_legal(m, scratch)]

    def _pseudo_moves_from(self, square: int) -> list[Move]:
        """The pseudo-legal moves of the mover's piece on ``square``, castling included (cached:
        a move check, its notation and the has-a-move test often ask about the same piece)."""
        if self._from is None:
            self._from = {}
        moves = self._from.get(square)
        if moves is None:
            moves = []
            code = self.board[square] * (1 if self.turn == 0 else -1) if 0 <= square < len(self.board) else 0
            if code > 0:
                self._piece_moves(square, code, moves)
                if code == self.variant.t.castle_king and self.castling:
                    castlings: list[Move] = []
                    self._castlings(castlings)
                    moves.extend(m for m in castlings if m.from_sq == square)
            self._from[square] = moves
        return moves

    def _is_pseudo_legal(self, m: Move) -> bool:
        """Whether ``m`` is one of :meth:`pseudo_legal_moves`, generating only what it needs."""
        v = self.variant
        t = v.t
        side = self.turn
        size = len(self.board)
        if not 0 <= m.to_sq < size:
            return False
        if m.from_sq == NULL_SQUARE:
            code = m.drop
            if v.drops is None or m.promotion or m.via or not 0 < code <= t.n or not self.hands[side][code]:
                return False
            if self.board[m.to_sq] or m.to_sq not in t.mobile[side][code]:
                return False
            if code in t.one_per_file:
                g = v.geometry
                own = code if side == 0 else -code
                file = g.file_of(m.to_sq)
                if any(self.board[g.square(file, r)] == own for r in range(g.ranks)):
                    return False
            return True
        if not 0 <= m.from_sq < size or m.drop:
            return False
        return m in self._pseudo_moves_from(m.from_sq)

    def _ep_capture_legal(self) -> bool:
        """Whether some en-passant capture onto ``self.ep`` is legal."""
        codes = self.variant.t.ep_codes
        sign = 1 if self.turn == 0 else -1
        return any(
            m.to_sq == self.ep and self._is_ep(m)
            for s, p in enumerate(self.board)
            if p * sign > 0 and p * sign in codes
            for m in self.legal_moves_from(s)
        )

    def _drop_mates(self, m: Move) -> bool:
        """Whether the drop ``m`` checkmates (uchifuzume test)."""
        enemy_royals = self.royals[1 - self.turn]
        if not enemy_royals:
            return False
        # A drop can only give check with the dropped piece, so it must at least reach a royal
        # (blockers aside) before it is worth playing out.
        reach = self.variant.t.capture_reach(self.turn, m.drop, m.to_sq)
        if not any(r in reach for r in enemy_royals):
            return False
        after = self.play(m)
        return after.is_check() and not after.has_legal_move()

    # ----------------------------------------------------------- special moves

    def _is_castling(self, m: Move) -> bool:
        g = self.variant.geometry
        return (
            m.from_sq >= 0
            and abs(self.board[m.from_sq]) == self.variant.t.castle_king
            and g.rank_of(m.from_sq) == g.rank_of(m.to_sq)
            and abs(g.file_of(m.from_sq) - g.file_of(m.to_sq)) == 2
        )

    def _castle_rook(self, m: Move) -> tuple[int, int]:
        g = self.variant.geometry
        step = 1 if m.to_sq > m.from_sq else -1
        rank = g.rank_of(m.from_sq)
        corner = g.square(g.files - 1 if step > 0 else 0, rank)
        return corner, m.from_sq + step

    def _ep_victim(self, m: Move) -> int:
        g = self.variant.geometry
        return g.square(g.file_of(m.to_sq), g.rank_of(m.from_sq))

    def is_capture(self, m: Move) -> bool:
        if m.from_sq == NULL_SQUARE:
            return False
        sign = 1 if self.turn == 0 else -1
        return (
            self.board[m.to_sq] * sign < 0
            or any(self.board[s] * sign < 0 for s in m.via)
            or self._is_ep(m)
        )

    # -------------------------------------------------------------------- play

    def play(self, m: Move) -> Position:
        """The position after ``m`` (which must be pseudo-legal; see :meth:`legal_moves`)."""
        v = self.variant
        t = v.t
        g = v.geometry
        side = self.turn
        sign = 1 if side == 0 else -1
        board = list(self.board)
        hands = [list(self.hands[0]), list(self.hands[1])]
        zp = t.z_piece
        key = self._base_key ^ t.z_side ^ t.z_castle[self.castling]
        castling = self.castling
        ep = NULL_SQUARE
        halfmove = self.halfmove + 1
        to = m.to_sq

        def take(sq: int) -> None:
            nonlocal key, halfmove
            victim = board[sq]
            if not victim:
                return
            key ^= zp[2 * victim if victim > 0 else -2 * victim + 1][sq]
            board[sq] = 0
            halfmove = 0
            if v.drops is not None:
                base = t.demote[abs(victim)]
                if not t.royal[base]:
                    n = hands[side][base]
                    key ^= t.z_hand[side][base][n] ^ t.z_hand[side][base][n + 1]
                    hands[side][base] = n + 1

        if m.from_sq == NULL_SQUARE:
            code = m.drop
            n = hands[side][code]
            key ^= t.z_hand[side][code][n] ^ t.z_hand[side][code][n - 1]
            hands[side][code] = n - 1
            piece = sign * code
            board[to] = piece
            key ^= zp[2 * piece if piece > 0 else -2 * piece + 1][to]
        else:
            fr = m.from_sq
            piece = board[fr]
            code = piece * sign
            board[fr] = 0
            key ^= zp[2 * piece if piece > 0 else -2 * piece + 1][fr]
            for s in m.via:
                if board[s] * sign < 0:
                    take(s)
            if code in t.ep_codes and to == self.ep and board[to] == 0 and g.file_of(fr) != g.file_of(to):
                take(self._ep_victim(m))
            elif board[to] and board[to] * sign < 0:
                take(to)
            if code in t.reset_codes:
                halfmove = 0
            if code == t.castle_king and t.castle_king:
                if self._is_castling(m):
                    rook_from, rook_to = self._castle_rook(m)
                    rook = board[rook_from]
                    board[rook_from] = 0
                    board[rook_to] = rook
                    zi = 2 * rook if rook > 0 else -2 * rook + 1
                    key ^= zp[zi][rook_from] ^ zp[zi][rook_to]
                castling &= ~(3 << (2 * side))
            castling &= t.castle_keep[fr] & t.castle_keep[to]
            if m.promotion:
                piece = sign * m.promotion
            board[to] = piece
            key ^= zp[2 * piece if piece > 0 else -2 * piece + 1][to]
            if code in t.ep_codes and abs(g.rank_of(to) - g.rank_of(fr)) == 2 and g.file_of(fr) == g.file_of(to):
                ep = self._ep_target(board, fr, to)
        key ^= t.z_castle[castling]
        # Royals follow the move: no board scan in the new position.
        mine = self.royals[side]
        lands_royal = t.royal[board[to] * sign]
        if m.from_sq in mine or lands_royal:
            kept = [s for s in mine if s != m.from_sq]
            mine = tuple(sorted([*kept, to])) if lands_royal else tuple(kept)
        theirs = tuple(s for s in self.royals[1 - side] if board[s] * sign < 0)
        return Position(
            v,
            tuple(board),
            (tuple(hands[0]), tuple(hands[1])),
            1 - side,
            castling,
            ep,
            halfmove,
            self.fullmove + side,
            key,
            (mine, theirs) if side == 0 else (theirs, mine),
        )

    def _ep_target(self, board: list[int], fr: int, to: int) -> int:
        """The crossed square of a double step, if an enemy pawn stands ready to take it."""
        g = self.variant.geometry
        t = self.variant.t
        enemy_sign = -1 if self.turn == 0 else 1
        f, r = g.file_of(to), g.rank_of(to)
        for df in (-1, 1):
            if g.on_board(f + df, r):
                q = board[g.square(f + df, r)]
                if q * enemy_sign > 0 and q * enemy_sign in t.ep_codes:
                    return (fr + to) // 2
        return NULL_SQUARE

    # --------------------------------------------------------------- notation

    def uci(self, m: Move) -> str:
        """The move in Fairy-Stockfish's coordinate form (``a2a3``, ``c4c5+``, ``P@c3``, ``e7e8q``)."""
        g = self.variant.geometry
        t = self.variant.t
        if m.from_sq == NULL_SQUARE:
            return f"{t.types[m.drop].symbol}@{t.names[m.to_sq]}"
        if m.via and m.from_sq == m.to_sq and not self.is_capture(m):
            return "@@@@"  # a pass (out and back through an empty square), HaChu's null move
        if m.via:
            legs = [m.from_sq, *m.via, m.to_sq]
            text = ",".join(g.name(a) + g.name(b) for a, b in itertools.pairwise(legs))
        else:
            names = t.names
            text = names[m.from_sq] + names[m.to_sq]
        if m.promotion:
            if t.promote[abs(self.board[m.from_sq])] == m.promotion:
                text += "+"
            else:
                text += t.types[m.promotion].symbol.lower()
        return text

    def parse_uci(self, text: str) -> Move:
        """Parse a move in coordinate form without checking legality; raise InvalidMoveError."""
        g = self.variant.geometry
        t = self.variant.t
        text = text.strip()
        try:
            drop = _DROP.match(text)
            if drop:
                sym, f, r = drop.groups()
                if sym not in t.code:
                    raise InvalidMoveError(f"{text!r}: there is no piece {sym!r} in {self.variant.title}")
                return Move(NULL_SQUARE, g.parse(f + r), 0, t.code[sym])
            if "," in text:
                legs = text.split(",")
                squares = [self._leg(leg, g) for leg in legs]
                for (_, b), (c, _) in itertools.pairwise(squares):
                    if b != c:
                        raise InvalidMoveError(f"{text!r}: each leg must start where the previous one ended")
                via = tuple(a for a, _ in squares[1:])
                return Move(squares[0][0], squares[-1][1], 0, 0, via)
            m = _UCI.match(text)
            if not m:
                raise InvalidMoveError(f"{text!r} is not a move in coordinate form (like e2e4, c4c5+, P@c3)")
            f1, r1, f2, r2, suffix = m.groups()
            names = t.square_names
            fr = names.get(f1 + r1)
            to = names.get(f2 + r2)
            if fr is None or to is None:  # g.parse says why
                fr, to = g.parse(f1 + r1), g.parse(f2 + r2)
        except ValueError as exc:
            if isinstance(exc, InvalidMoveError):
                raise
            raise InvalidMoveError(f"{text!r}: {exc}") from None
        promotion = 0
        if suffix == "+":
            piece = self.board[fr]
            promotion = t.promote[abs(piece)] if piece else 0
            if not promotion:
                raise IllegalMoveError(f"{text}: that piece cannot promote")
        elif suffix:
            sym = suffix.upper()
            if sym not in t.code:
                raise InvalidMoveError(f"{text!r}: unknown promotion piece {suffix!r}")
            promotion = t.code[sym]
        return Move(fr, to, promotion)

    @staticmethod
    def _leg(leg: str, g: object) -> tuple[int, int]:
        from .geometry import Geometry

        assert isinstance(g, Geometry)
        m = _UCI.match(leg)
        if not m or m.group(5):
            raise InvalidMoveError(f"{leg!r} is not a leg like h3i4")
        f1, r1, f2, r2, _ = m.groups()
        return g.parse(f1 + r1), g.parse(f2 + r2)

    def move_from_uci(self, text: str) -> Move:
        """Parse and check a move; raise InvalidMoveError / IllegalMoveError with a reason."""
        special = self.variant.special_moves is not None and text.strip() == "@@@@"
        if special:
            passes = [
                m for m in self.legal_moves() if m.from_sq == m.to_sq and m.via and not self.is_capture(m)
            ]
            if not passes:
                raise IllegalMoveError("no piece can pass here")
            return passes[0]
        m = self.parse_uci(text)
        if self.is_legal(m):
            return m
        raise IllegalMoveError(f"{text}: {self.explain_illegal(m)}")

    def explain_illegal(self, m: Move) -> str:
        """A player-readable reason why ``m`` is not legal here."""
        v = self.variant
        t = v.t
        g = v.geometry
        side = self.turn
        sign = 1 if side == 0 else -1
        if m.from_sq == NULL_SQUARE:
            name = t.types[m.drop].name.lower()
            if v.drops is None:
                return f"there are no drops in {v.title}"
            if not self.hands[side][m.drop]:
                return f"you have no {name} in hand"
            if self.board[m.to_sq]:
                return "you can only drop on an empty square"
            if m.to_sq not in t.mobile[side][m.drop]:
                return f"a {name} dropped on {g.name(m.to_sq)} could never move"
            if m.drop in t.one_per_file and any(
                self.board[g.square(g.file_of(m.to_sq), r)] == sign * m.drop for r in range(g.ranks)
            ):
                return f"two {name}s on file {g.name(m.to_sq)[0]}"
            pseudo = m in self.pseudo_legal_moves()
            if pseudo and m.drop in t.no_drop_mate and self._legal_after(m, list(self.board)):
                return f"{name} drop would give mate"
            return "your king would be in check" if pseudo else "that drop is not possible"
        piece = self.board[m.from_sq]
        if not piece:
            return f"there is no piece on {g.name(m.from_sq)}"
        if piece * sign < 0:
            return f"the piece on {g.name(m.from_sq)} is not yours"
        code = abs(piece)
        name = t.types[code].name.lower()
        same_route = [p for p in self.pseudo_legal_moves() if p[:2] == m[:2] and p.via == m.via]
        if not same_route:
            if m.via and not any(self.board[s] * sign < 0 for s in m.via):
                single = "@@@@" if m.from_sq == m.to_sq else g.name(m.from_sq) + g.name(m.to_sq)
                return f"a multi-leg move must capture on its first leg; send {single} instead"
            return f"the {name} on {g.name(m.from_sq)} cannot move to {g.name(m.to_sq)}"
        if m not in same_route:
            if m.promotion and not any(p.promotion == m.promotion for p in same_route):
                if m.promotion in t.limits.values() or m.promotion in t.limits:
                    return "that promotion is not allowed now"
                return f"the {name} cannot promote on this move"
            if not m.promotion:
                return f"the {name} must promote on {g.name(m.to_sq)}"
            return "that promotion is not allowed"
        return "your king would be in check" if len(self.royals[side]) <= 1 else "your royal pieces would all be attacked"

    # --------------------------------------------------------------------- FEN

    @classmethod
    def from_fen(cls, variant: Variant, fen: str) -> Position:
        """Read a Fairy-Stockfish FEN (hands in ``[...]``; ``w`` = first player)."""
        fields = fen.strip().split()
        if not fields:
            raise InvalidFenError("empty FEN")
        board_text = fields[0]
        hand_text = ""
        if "[" in board_text:
            if not board_text.endswith("]"):
                raise InvalidFenError(f"hand field of {fen!r} must end with ']'")
            board_text, hand_text = board_text[:-1].split("[", 1)
        board = cls._read_board(variant, board_text)
        hands = cls._read_hand(variant, hand_text)
        rest = fields[1:]
        turn_text = rest[0] if rest else "w"
        if turn_text not in ("w", "b"):
            raise InvalidFenError(f"side to move must be 'w' or 'b', not {turn_text!r}")
        turn = 0 if turn_text == "w" else 1
        rest = rest[1:]
        castling, ep = 0, NULL_SQUARE
        numbers = [x for x in rest if x.isdigit()]
        others = [x for x in rest if not x.isdigit()]
        if others:
            castling = cls._read_castling(variant, others[0], board)
        if len(others) > 1 and others[1] != "-":
            try:
                ep = variant.geometry.parse(others[1])
            except ValueError as exc:
                raise InvalidFenError(f"bad en-passant square: {exc}") from None
        halfmove = int(numbers[0]) if len(numbers) > 1 else 0
        fullmove = int(numbers[-1]) if numbers else 1
        pos = cls(variant, board, hands, turn, castling, ep, halfmove, max(1, fullmove))
        pos._validate()
        return pos

    @staticmethod
    def _read_board(variant: Variant, text: str) -> tuple[int, ...]:
        g = variant.geometry
        t = variant.t
        rows = text.split("/")
        if len(rows) != g.ranks:
            raise InvalidFenError(f"{len(rows)} ranks in the board, expected {g.ranks}")
        board = [0] * g.size
        for i, row in enumerate(rows):
            rank = g.ranks - 1 - i
            file = 0
            pos = 0
            while pos < len(row):
                if row[pos].isdigit():
                    j = pos
                    while j < len(row) and row[j].isdigit():
                        j += 1
                    file += int(row[pos:j])
                    pos = j
                    continue
                m = _PIECE.match(row, pos)
                if not m:
                    raise InvalidFenError(f"unexpected {row[pos]!r} in rank {rank + 1}")
                token = m.group(0)
                pos = m.end()
                sym = token.upper()
                if sym not in t.code:
                    raise InvalidFenError(f"unknown piece {token!r} in {variant.title}")
                if file >= g.files:
                    raise InvalidFenError(f"rank {rank + 1} has more than {g.files} squares")
                letter = token.lstrip("+")[0]
                board[g.square(file, rank)] = t.code[sym] if letter.isupper() else -t.code[sym]
                file += 1
            if file != g.files:
                raise InvalidFenError(f"rank {rank + 1} has {file} squares, expected {g.files}")
        return tuple(board)

    @staticmethod
    def _read_hand(variant: Variant, text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
        t = variant.t
        hands = [[0] * (t.n + 1), [0] * (t.n + 1)]
        text = text.strip()
        if text in ("", "-"):
            return (tuple(hands[0]), tuple(hands[1]))
        if variant.drops is None:
            raise InvalidFenError(f"{variant.title} has no pieces in hand")
        for count, token in re.findall(r"(\d*)(\+?[A-Za-z][!']?)", text):
            sym = token.upper()
            if sym not in t.code or t.demote[t.code[sym]] != t.code[sym] or t.royal[t.code[sym]]:
                raise InvalidFenError(f"{token!r} cannot be in hand")
            side = 0 if token[0].isupper() else 1
            hands[side][t.code[sym]] += int(count or 1)
        return (tuple(hands[0]), tuple(hands[1]))

    @staticmethod
    def _read_castling(variant: Variant, text: str, board: tuple[int, ...]) -> int:
        if text == "-":
            return 0
        if variant.castling is None or any(c not in CASTLE_LETTERS for c in text):
            raise InvalidFenError(f"bad castling field {text!r}")
        mask = 0
        for c in text:
            bit = CASTLE_LETTERS.index(c)
            if bit // 2 in variant.castling.sides:
                mask |= 1 << bit
        return mask

    def _validate(self) -> None:
        v = self.variant
        t = v.t
        for side in (0, 1):
            royals = self.royals[side]
            if not royals and v.royalty[side] is not RoyalModel.ROYAL_CAPTURE:
                raise InvalidFenError(f"the {'first' if side == 0 else 'second'} player has no king")
            if v.royalty[side] is RoyalModel.CHECKMATE and len(royals) > 1:
                raise InvalidFenError(f"the {'first' if side == 0 else 'second'} player has more than one king")
        for sq, p in enumerate(self.board):
            if p and sq not in t.mobile[0 if p > 0 else 1][abs(p)]:
                raise InvalidFenError(f"the piece on {v.geometry.name(sq)} could never move")
        if self.checked(1 - self.turn) and v.royalty[1 - self.turn] is not RoyalModel.ROYAL_CAPTURE:
            raise InvalidFenError("the side not to move is in check")
        # Castling rights need the king on a castling file of its back rank and the rook on its corner.
        g = v.geometry
        for bit in range(4):
            if self.castling & (1 << bit):
                side = bit // 2
                back = 0 if side == 0 else g.ranks - 1
                sign = 1 if side == 0 else -1
                corner = g.square(g.files - 1 if bit % 2 == 0 else 0, back)
                king_ok = any(
                    g.rank_of(r) == back
                    and self.board[r] == sign * t.castle_king
                    and FILE_LETTERS[g.file_of(r)] in v.castling.king_files
                    for r in self.royals[side]
                ) if v.castling is not None else False
                if not king_ok or self.board[corner] != sign * t.castle_rook:
                    self.castling &= ~(1 << bit)
        self._base_key = self._compute_key()

    def board_fen(self) -> str:
        g = self.variant.geometry
        t = self.variant.t
        rows = []
        for rank in range(g.ranks - 1, -1, -1):
            row = ""
            empty = 0
            for file in range(g.files):
                p = self.board[g.square(file, rank)]
                if not p:
                    empty += 1
                    continue
                if empty:
                    row += str(empty)
                    empty = 0
                sym = t.types[abs(p)].symbol
                row += sym if p > 0 else sym.lower()
            if empty:
                row += str(empty)
            rows.append(row)
        return "/".join(rows)

    def hand_text(self, counts: bool = False) -> str:
        """Pieces in hand: first player's (upper case) then second's, catalogue order."""
        t = self.variant.t
        out = ""
        for side in (0, 1):
            for code, n in enumerate(self.hands[side]):
                if n:
                    sym = t.types[code].symbol
                    sym = sym if side == 0 else sym.lower()
                    out += (str(n) + sym if n > 1 else sym) if counts else sym * n
        return out

    def fen(self) -> str:
        """The position as Fairy-Stockfish writes it."""
        v = self.variant
        board = self.board_fen()
        if v.hand_in_fen:
            board += f"[{self.hand_text()}]"
        castling = "".join(c for i, c in enumerate(CASTLE_LETTERS) if self.castling & (1 << i)) or "-"
        ep = v.geometry.name(self.ep) if self.ep != NULL_SQUARE else "-"
        return f"{board} {'wb'[self.turn]} {castling} {ep} {self.halfmove} {self.fullmove}"

    def sfen(self, ply: int | None = None) -> str:
        """USI SFEN (shogi family): ``b`` = first player (sente); move number counts plies."""
        number = ply + 1 if ply is not None else 2 * (self.fullmove - 1) + self.turn + 1
        hand = self.hand_text(counts=True) or "-"
        return f"{self.board_fen()} {'bw'[self.turn]} {hand} {number}"

    @classmethod
    def from_sfen(cls, variant: Variant, sfen: str) -> Position:
        fields = sfen.strip().split()
        if len(fields) < 2 or fields[1] not in ("b", "w"):
            raise InvalidFenError(f"{sfen!r} is not an SFEN (board side hand number)")
        hand = fields[2] if len(fields) > 2 else "-"
        number = int(fields[3]) if len(fields) > 3 and fields[3].isdigit() else 1
        turn = "w" if fields[1] == "b" else "b"
        board = fields[0] + (f"[{'' if hand == '-' else hand}]" if hand != "-" else "")
        fen = f"{board} {turn} - - 0 {max(1, (number + 1) // 2)}"
        return cls.from_fen(variant, fen)

    def __repr__(self) -> str:
        return f"<Position {self.variant.name} {self.fen()!r}>"

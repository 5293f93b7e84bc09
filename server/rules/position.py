"""Immutable positions of any variant described by a :class:`~server.rules.variant.Variant`.

The board is a tuple of ints, one per square: 0 empty, ``+code`` a first-player piece,
``-code`` a second-player piece, where ``code`` indexes the variant's piece catalogue
(1-based). Hands hold counts per code. Nothing here is named after a variant: every rule is
read from the variant record.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from .chess_moves import (
    add_castlings,
    castle_rook,
    ep_capture_legal,
    ep_target,
    ep_victim,
    is_castling,
    is_ep,
)
from .drops import add_drops, drop_mates, is_pseudo_legal_drop
from .fen import board_fen, read_fen, read_sfen, write_fen, write_sfen
from .move import NULL_SQUARE, Move
from .uci import move_from_uci, move_uci, parse_uci
from .variant import RoyalModel, Variant

__all__ = ["NULL_SQUARE", "Move", "Position"]

# Position._guard_mode values: how much royal-safety testing moves need.
GUARD_UNKNOWN, GUARD_NONE, GUARD_ALL, GUARD_SOLE = -1, 0, 1, 2


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
            if self.ep != NULL_SQUARE and ep_capture_legal(self):
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
            add_drops(self, out)
        if self.castling and v.t.castle_king:
            add_castlings(self, out)
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
        if is_ep(self, m):
            cap = ep_victim(self.variant.geometry, m)
            saved.append((cap, scratch[cap]))
            scratch[cap] = 0
        elif abs(piece) == t.castle_king and t.castle_king and is_castling(self, m):
            rook_from, rook_to = castle_rook(self.variant.geometry, m)
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
        return not (m.drop and m.drop in self.variant.t.no_drop_mate and drop_mates(self, m))

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
                        if m.drop in no_mate and drop_mates(self, m):
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
        add_drops(self, drops)
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
                    add_castlings(self, castlings)
                    moves.extend(m for m in castlings if m.from_sq == square)
            self._from[square] = moves
        return moves

    def _is_pseudo_legal(self, m: Move) -> bool:
        """Whether ``m`` is one of :meth:`pseudo_legal_moves`, generating only what it needs."""
        size = len(self.board)
        if not 0 <= m.to_sq < size:
            return False
        if m.from_sq == NULL_SQUARE:
            return is_pseudo_legal_drop(self, m)
        if not 0 <= m.from_sq < size or m.drop:
            return False
        return m in self._pseudo_moves_from(m.from_sq)

    def is_capture(self, m: Move) -> bool:
        if m.from_sq == NULL_SQUARE:
            return False
        sign = 1 if self.turn == 0 else -1
        return (
            self.board[m.to_sq] * sign < 0
            or any(self.board[s] * sign < 0 for s in m.via)
            or is_ep(self, m)
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
                take(ep_victim(g, m))
            elif board[to] and board[to] * sign < 0:
                take(to)
            if code in t.reset_codes:
                halfmove = 0
            if code == t.castle_king and t.castle_king:
                if is_castling(self, m):
                    rook_from, rook_to = castle_rook(g, m)
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
                ep = ep_target(self, board, fr, to)
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

    # ------------------------------------------------------------------- text
    # The text forms live in fen.py and uci.py; bound here as methods, their usual entry points.

    from_fen = classmethod(read_fen)
    from_sfen = classmethod(read_sfen)
    fen = write_fen
    sfen = write_sfen
    board_fen = board_fen
    uci = move_uci
    parse_uci = parse_uci
    move_from_uci = move_from_uci

    def __repr__(self) -> str:
        return f"<Position {self.variant.name} {self.fen()!r}>"

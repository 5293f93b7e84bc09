"""Immutable positions of any variant described by a :class:`~server.rules.variant.Variant`:
their state, keys, attacks, pseudo-legal moves and ``play`` (legal moves: legality.py).

The board is a tuple of ints, one per square: 0 empty, ``+code`` a first-player piece,
``-code`` a second-player piece, where ``code`` indexes the variant's piece catalogue
(1-based). Hands hold counts per code. Nothing here is named after a variant: every rule is
read from the variant record.
"""

from __future__ import annotations

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
from .drops import add_drops, is_pseudo_legal_drop
from .fen import board_fen, read_fen, read_sfen, write_fen, write_sfen
from .legality import GUARD_UNKNOWN, has_legal_move, is_legal, legal_moves, legal_moves_from
from .move import NULL_SQUARE, Move
from .uci import legal_by_text, move_from_uci, move_uci, parse_uci
from .variant import RoyalModel, Variant

__all__ = ["NULL_SQUARE", "Move", "Position", "PositionSnapshot"]

# Position.snapshot(): board, hands, turn, castling, ep, halfmove, fullmove, base key, royals.
PositionSnapshot = tuple[
    tuple[int, ...],
    tuple[tuple[int, ...], tuple[int, ...]],
    int,
    int,
    int,
    int,
    int,
    int,
    tuple[tuple[int, ...], tuple[int, ...]],
]


class Position:
    """One position. Treat every attribute as read-only; :meth:`play` returns a new one."""

    __slots__ = (
        "_base_key",
        "_by_text",
        "_check",
        "_from",
        "_guard",
        "_key",
        "_legal",
        "_next",
        "_pins",
        "_present",
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
        self._by_text: dict[str, Move] | None = None  # see uci.legal_by_text
        self._check: bool | None = None
        self._guard = GUARD_UNKNOWN
        self._pins: dict[int, frozenset[int]] | None = None  # see legality.guard_mode
        self._present: frozenset[int] | None = None  # the signed codes on the board
        self._from: dict[int, list[Move]] | None = None
        # The last move played from here and its result: a move's notation, its check and
        # the game record all ask for the same successor.
        self._next: tuple[Move, Position] | None = None

    def forget_move_lists(self) -> None:
        """Drop the memoized move lists (legal moves, per-square moves, pins, the last
        successor); the position itself is unchanged and recomputes them when asked again.

        A game keeps every position it passed through; without their move lists those cost a
        tenth of the garbage collector's tracked objects, which keeps full collections of a
        server holding thousands of games short.
        """
        self._legal = None
        self._by_text = None
        self._from = None
        self._pins = None
        self._present = None
        self._next = None

    def snapshot(self) -> PositionSnapshot:
        """The position as a plain tuple of ints and tuples (no caches): what a game keeps of
        its older positions, since the garbage collector stops tracking such tuples."""
        return (
            self.board,
            self.hands,
            self.turn,
            self.castling,
            self.ep,
            self.halfmove,
            self.fullmove,
            self._base_key,
            self.royals,
        )

    @classmethod
    def from_snapshot(cls, variant: Variant, snap: PositionSnapshot) -> Position:
        """The position :meth:`snapshot` took (of a position of ``variant``)."""
        board, hands, turn, castling, ep, halfmove, fullmove, base_key, royals = snap
        return cls(variant, board, hands, turn, castling, ep, halfmove, fullmove, base_key, royals)

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
        castling: int = t.z_castle[self.castling]
        return key ^ castling

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

    def attacked(
        self, square: int, by: int, board: tuple[int, ...] | list[int] | None = None
    ) -> bool:
        """Whether a piece of side ``by`` could capture on ``square`` (spec §0.4).

        ``board`` (default: this position's) must be this board or one reached from it by a
        move of the side to move when ``by`` is the other side: rays on which no rider of
        this board could attack are then cut to their first square.
        """
        b = self.board if board is None else board
        t = self.variant.t
        for src, codes in t.attack_leaps[by][square]:
            q = b[src]
            if q and q in codes:
                return True
        rays = t.attack_rays[by][square]
        if board is None or by != self.turn:
            present = self._present
            if present is None:
                present = self._present = frozenset(self.board)
            for (squares, sets), far in zip(rays, t.attack_far[by][square]):
                q = b[squares[0]]
                if q:
                    if q in sets[0]:
                        return True
                    continue
                if far.isdisjoint(present):
                    continue
                for s, codes in zip(squares, sets):
                    q = b[s]
                    if q:
                        if q in codes:
                            return True
                        break
            return False
        for squares, sets in rays:
            for s, codes in zip(squares, sets):
                q = b[s]
                if q:
                    if q in codes:
                        return True
                    break
        return False

    def _safe(
        self, board: tuple[int, ...] | list[int], side: int, royals: list[int] | tuple[int, ...]
    ) -> bool:
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
        ``origins``; empty squares and enemy pieces are skipped.

        The engine's hot loop: rays come from :meth:`Tables.steps` with the moves landing on
        each square already made, so a step costs a board look-up and a list extension.
        """
        v = self.variant
        t = v.t
        board = self.board
        side = self.turn
        sign = 1 if side == 0 else -1
        steps_of = t.steps_by_code[side]
        limited = t.limited
        special = v.special_moves
        ep = self.ep
        ep_codes = t.ep_codes
        for fr in origins:
            code = board[fr] * sign
            if code <= 0:
                continue
            if code in limited:
                self._generate_limited(fr, code, out)
                continue
            leaps, slides, hits, others = (steps_of[code] or t.steps(side, code))[fr]
            for to, landing in leaps:
                if board[to] * sign <= 0:
                    out += landing
            if slides:
                for squares, landings in slides:
                    for to, landing in zip(squares, landings):
                        q = board[to] * sign
                        if q:
                            if q < 0:
                                out += landing
                            break
                        out += landing
            if hits:
                for to, landing in hits:
                    q = board[to] * sign
                    if q < 0 or (q == 0 and to == ep and code in ep_codes):
                        out += landing
            if others:
                for squares, landings, min_range, can_move, can_capture in others:
                    n = 0
                    for to, landing in zip(squares, landings):
                        n += 1
                        q = board[to] * sign
                        if q == 0:
                            if n >= min_range and (
                                can_move or (to == ep and can_capture and code in ep_codes)
                            ):
                                out += landing
                        else:
                            if q < 0 and can_capture and n >= min_range:
                                out += landing
                            break
            if special is not None:
                out.extend(special(self, fr, code))

    def _generate_limited(self, fr: int, code: int, out: list[Move]) -> None:
        """:meth:`_generate` for a piece whose promotion choices are limited by a count of
        pieces on the board (its moves are made here by :meth:`_add`, not taken from the
        tables)."""
        board = self.board
        sign = 1 if self.turn == 0 else -1
        ep = self.ep
        can_ep = code in self.variant.t.ep_codes
        add = self._add
        for squares, min_range, can_move, can_capture in self.variant.t.moves[self.turn][code][fr]:
            n = 0
            for to in squares:
                n += 1
                q = board[to] * sign
                if q == 0:
                    if n >= min_range and (can_move or (to == ep and can_capture and can_ep)):
                        add(out, code, fr, to)
                else:
                    if q < 0 and can_capture and n >= min_range:
                        add(out, code, fr, to)
                    break
        if self.variant.special_moves is not None:
            out.extend(self.variant.special_moves(self, fr, code))

    legal_moves = legal_moves
    has_legal_move = has_legal_move
    is_legal = is_legal
    legal_moves_from = legal_moves_from

    def _pseudo_moves_from(self, square: int) -> list[Move]:
        """The pseudo-legal moves of the mover's piece on ``square``, castling included (cached:
        a move check, its notation and the has-a-move test often ask about the same piece)."""
        if self._from is None:
            self._from = {}
        moves = self._from.get(square)
        if moves is None:
            moves = []
            code = (
                self.board[square] * (1 if self.turn == 0 else -1)
                if 0 <= square < len(self.board)
                else 0
            )
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
        """Whether ``m`` takes a piece (on its destination, a multi-leg square, en passant)."""
        if m.from_sq == NULL_SQUARE:
            return False
        sign = 1 if self.turn == 0 else -1
        if self.board[m.to_sq] * sign < 0:
            return True
        if m.via and any(self.board[s] * sign < 0 for s in m.via):
            return True
        return m.to_sq == self.ep and is_ep(self, m)

    # -------------------------------------------------------------------- play

    def play(self, m: Move) -> Position:
        """The position after ``m`` (which must be pseudo-legal; see :meth:`legal_moves`)."""
        last = self._next
        if last is not None and last[0] == m:
            return last[1]
        after = self._play(m)
        self._next = (m, after)
        return after

    def _play(self, m: Move) -> Position:
        """:meth:`play` without the memo."""
        v = self.variant
        t = v.t
        side = self.turn
        sign = 1 if side == 0 else -1
        board = list(self.board)
        # Hands change only by drops and by captures in a variant with drops.
        hand = list(self.hands[side]) if v.drops is not None else None
        zp = t.z_piece
        key = self._base_key ^ t.z_side ^ t.z_castle[self.castling]
        castling = self.castling
        ep = NULL_SQUARE
        halfmove = self.halfmove + 1
        fr = m.from_sq
        to = m.to_sq
        if fr == NULL_SQUARE:
            assert hand is not None
            code = m.drop
            n = hand[code]
            key ^= t.z_hand[side][code][n] ^ t.z_hand[side][code][n - 1]
            hand[code] = n - 1
            piece = sign * code
            board[to] = piece
            key ^= zp[2 * piece if piece > 0 else -2 * piece + 1][to]
        else:
            piece = board[fr]
            code = piece * sign
            board[fr] = 0
            key ^= zp[2 * piece if piece > 0 else -2 * piece + 1][fr]
            victims = [s for s in m.via if board[s] * sign < 0] if m.via else []
            if board[to] * sign < 0:
                victims.append(to)
            elif (
                code in t.ep_codes
                and to == self.ep
                and board[to] == 0
                and (to - fr) % v.geometry.files
            ):
                victims.append(ep_victim(v.geometry, m))
            for sq in victims:
                victim = board[sq]
                if not victim:  # an en-passant square read from a FEN with no pawn to take
                    continue
                key ^= zp[2 * victim if victim > 0 else -2 * victim + 1][sq]
                board[sq] = 0
                halfmove = 0
                if hand is not None:
                    base = t.demote[abs(victim)]
                    if not t.royal[base]:
                        n = hand[base]
                        key ^= t.z_hand[side][base][n] ^ t.z_hand[side][base][n + 1]
                        hand[base] = n + 1
            if code in t.reset_codes:
                halfmove = 0
            if code == t.castle_king and t.castle_king:
                if abs(to - fr) == 2 and is_castling(self, m):
                    rook_from, rook_to = castle_rook(v.geometry, m)
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
            if code in t.ep_codes and abs(to - fr) == 2 * v.geometry.files:
                ep = ep_target(self, board, fr, to)
        key ^= t.z_castle[castling]
        # Royals follow the move: no board scan in the new position.
        mine = self.royals[side]
        lands_royal = t.royal[board[to] * sign]
        if fr in mine or lands_royal:
            kept = [s for s in mine if s != fr]
            mine = tuple(sorted([*kept, to])) if lands_royal else tuple(kept)
        theirs = self.royals[1 - side]
        for s in theirs:
            if board[s] * sign >= 0:  # a royal was taken
                theirs = tuple(s for s in theirs if board[s] * sign < 0)
                break
        if hand is None:
            hands = self.hands
        elif side == 0:
            hands = (tuple(hand), self.hands[1])
        else:
            hands = (self.hands[0], tuple(hand))
        return Position(
            v,
            tuple(board),
            hands,
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
    legal_by_text = legal_by_text

    def __repr__(self) -> str:
        return f"<Position {self.variant.name} {self.fen()!r}>"

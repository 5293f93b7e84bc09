"""A variant is a frozen record of data: geometry, a piece catalogue and small rule records.

The engine reads only these records; no code path is named after a variant. Per-variant
tables (move rays, reverse attack rays, Zobrist keys) are computed once when the record is
built.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from .betza import Atom, parse
from .geometry import Geometry
from .move import Move

if TYPE_CHECKING:
    from .position import Position

__all__ = [
    "Castling",
    "Drops",
    "MoveRule",
    "PieceType",
    "Promotion",
    "Repetition",
    "RoyalModel",
    "Variant",
]


class RoyalModel(Enum):
    """How a side's royal pieces constrain its moves (spec §0.4)."""

    CHECKMATE = "checkmate"  # M1: one king, never left attacked
    PSEUDO_ROYAL = "pseudo_royal"  # M2: with two royals neither is protected
    DUPLE_CHECK = "duple_check"  # M3: with two kings, not both may be left attacked
    ROYAL_CAPTURE = "royal_capture"  # M4: every pseudo-legal move is legal


@dataclass(frozen=True, slots=True)
class PieceType:
    """One entry of a piece catalogue.

    ``symbol`` is the FEN token in upper case (``"P"``, ``"+P"``, ``"L!"``); a promoted
    form is written ``"+"`` followed by its unpromoted symbol.
    """

    symbol: str
    name: str
    betza: str
    promotes_to: str | None = None
    royal: bool = False
    abbrev: str | None = None  # display abbreviation, defaults to the symbol
    lion: tuple[tuple[int, int], ...] | None = None  # Lion-power directions (hook), None = none

    @property
    def display(self) -> str:
        return self.abbrev or self.symbol

    @property
    def is_promoted(self) -> bool:
        return self.symbol.startswith("+")

    @property
    def base_symbol(self) -> str:
        """The symbol of the unpromoted form (what goes to the captor's hand)."""
        return self.symbol[1:] if self.is_promoted else self.symbol


@dataclass(frozen=True, slots=True)
class Drops:
    """Captured pieces go to the captor's hand and may be dropped on any empty square."""

    one_per_file: tuple[str, ...] = ()  # nifu: no second unpromoted piece of these on a file
    no_drop_mate: tuple[str, ...] = ()  # uchifuzume: these may not be dropped to give mate


@dataclass(frozen=True, slots=True)
class Promotion:
    """``style="shogi"``: optional ``+`` when the move starts or ends in the zone, forced when the
    unpromoted piece could never move again. ``style="chess"``: pieces in ``choices`` must
    become one of their choices on reaching the last rank; ``limits`` caps how many of a
    symbol a side may own after promoting."""

    zone: int
    style: str = "shogi"
    choices: tuple[tuple[str, tuple[str, ...]], ...] = ()
    limits: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Castling:
    """King two squares toward an unmoved corner rook; the rook lands on the square crossed."""

    king: str = "K"
    rook: str = "R"
    sides: tuple[int, ...] = (0, 1)
    king_files: str = "e"  # files a castling king may start from (Wild Castle: "de")


@dataclass(frozen=True, slots=True)
class Repetition:
    """``automatic``-fold repetition ends the game; ``claim`` lets the player to move claim."""

    automatic: int
    claim: int | None = None
    perpetual_check_loses: bool = False
    first_player_loses: bool = False  # otherwise a plain repetition is a draw


@dataclass(frozen=True, slots=True)
class MoveRule:
    """N-move rule in full moves: ``claim`` (e.g. 50) and ``automatic`` (e.g. 75)."""

    claim: int
    automatic: int
    reset_by: tuple[str, ...] = ("P",)


Ray = tuple[tuple[int, ...], int, bool, bool]  # squares, min range, can move, can capture
# The generator's view of one piece on one square (Tables.steps): leaps (one-square rays
# that move or capture: (square, moves landing there)), slides (longer such rays: squares and
# the moves landing on each), hits (one-square capture-only rays, a pawn's), and the other
# rays (min range, move-only) with their flags. "Moves landing there" are made once,
# promotion choices included.
Landing = tuple[Move, ...]
# Tables.attacks_from: squares a piece attacks whatever stands between (leaps and one-step
# rays), and its longer rays as (squares, per square whether it attacks there, or None for
# every square).
Reach = tuple[tuple[int, ...], tuple[tuple[tuple[int, ...], tuple[bool, ...] | None], ...]]
Steps = tuple[
    tuple[tuple[int, Landing], ...],
    tuple[tuple[tuple[int, ...], tuple[Landing, ...]], ...],
    tuple[tuple[int, Landing], ...],
    tuple[tuple[tuple[int, ...], tuple[Landing, ...], int, bool, bool], ...],
]


@dataclass(frozen=True, eq=False)
class Variant:
    """Everything the engine knows about one variant."""

    name: str
    title: str
    family: str  # "shogi" | "chess"
    geometry: Geometry
    pieces: tuple[PieceType, ...]
    start_fen: str
    royalty: tuple[RoyalModel, RoyalModel]
    stalemate_loses: bool
    repetition: Repetition
    promotion: Promotion | None = None
    drops: Drops | None = None
    castling: Castling | None = None
    en_passant: tuple[str, ...] = ()
    move_rule: MoveRule | None = None
    draw_offers: bool = False
    notation: str = "shogi"  # "shogi" | "san" | "dai"
    hand_in_fen: bool = False
    dead_position: Callable[[Position], bool] | None = None
    start_fen_generator: Callable[[random.Random], str] | None = None
    special_moves: Callable[[Position, int, int], list[Move]] | None = None
    t: Any = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "t", Tables(self))

    def random_start_fen(self, rng: random.Random) -> str:
        """A start position: drawn by the variant's generator, else the standard one."""
        if self.start_fen_generator is None:
            return self.start_fen
        return self.start_fen_generator(rng)

    def piece(self, symbol: str) -> PieceType:
        piece: PieceType = self.pieces[self.t.code[symbol] - 1]
        return piece


class Tables:
    """Precomputed per-variant data: codes, rays, reverse attack rays, zones, Zobrist keys."""

    def __init__(self, v: Variant) -> None:
        g = v.geometry
        self.n = len(v.pieces)
        self.code: dict[str, int] = {p.symbol: i + 1 for i, p in enumerate(v.pieces)}
        if len(self.code) != self.n:
            raise ValueError(f"{v.name}: duplicate piece symbols")
        types: list[PieceType | None] = [None, *v.pieces]
        self.types = types
        self.royal = [False] + [p.royal for p in v.pieces]
        self.promote = [0] * (self.n + 1)
        self.demote = list(range(self.n + 1))
        for i, p in enumerate(v.pieces, 1):
            if p.promotes_to:
                self.promote[i] = self.code[p.promotes_to]
            if p.is_promoted and p.base_symbol in self.code:
                self.demote[i] = self.code[p.base_symbol]
        self.atoms = [[] if p is None else parse(p.betza) for p in types]
        self.zone = [self._zone(v, side) for side in (0, 1)]
        self.last_rank = [
            frozenset(s for s in range(g.size) if g.relative_rank(s, side) == g.ranks - 1)
            for side in (0, 1)
        ]
        self.moves = [[self._move_rays(g, atoms, side) for atoms in self.atoms] for side in (0, 1)]
        self.mobile = [
            [frozenset(s for s in range(g.size) if rays and rays[s]) for rays in self.moves[side]]
            for side in (0, 1)
        ]
        self._geometry = g
        self._leap_dirs: list[dict[tuple[int, int], set[int]]] = []
        self._ray_dirs: list[dict[tuple[int, int], dict[int, set[int]]]] = []
        self.attack_leaps, self.attack_rays = self._attack_tables(g)
        self.reach_by_piece: dict[int, list[Reach]] = {}
        # drops.drop_targets: (side, code) -> (square, file, drop move) for every square
        # the piece may be dropped on.
        self.drop_moves: dict[tuple[int, int], tuple[tuple[int, int, Move], ...]] = {}
        # uci.legal_uci: the coordinate text of moves without legs, by move, shared by every
        # legal list (a promotion's text depends on the moving piece when the variant has both
        # promotion styles: then only plain moves are kept).
        self.uci_texts: dict[Move, str] = {}
        self.uci_by_move = not (
            any(self.promote) and v.promotion is not None and v.promotion.choices
        )
        # fen.board_fen: the FEN text of one rank, by its squares' contents (most ranks are
        # unchanged from one position to the next). Emptied when it reaches FEN_RANKS_KEPT.
        self.fen_ranks: dict[tuple[int, ...], str] = {}
        # chess_moves._castle_path: (side, king square, right) -> castling path or None.
        self.castle_paths: dict[
            tuple[int, int, int], tuple[int, tuple[int, ...], int, int, Move] | None
        ] = {}
        # legality._royal_steps: (side, code, square) -> a royal's plain steps, or None.
        self.royal_steps: dict[tuple[int, int, int], tuple[tuple[int, Landing], ...] | None] = {}
        # Per ray of attack_rays, the codes that attack along it from beyond the first square:
        # a ray none of whose riders is on the board needs only its first square looked at.
        self.attack_far = [
            [tuple(frozenset().union(*sets[1:]) for _, sets in rays) for rays in per_square]
            for per_square in self.attack_rays
        ]
        self._reach: dict[tuple[int, int, int], frozenset[int]] = {}
        self.names = [g.name(s) for s in range(g.size)]
        # FEN letters by signed code (a negative index reads the second player's from the
        # end); " " marks an empty square until runs of them become digits.
        self.fen_letters = [" "] * (2 * self.n + 1)
        for code in range(1, self.n + 1):
            symbol = v.pieces[code - 1].symbol
            self.fen_letters[code] = symbol
            self.fen_letters[-code] = symbol.lower()
        self.square_names = {name: s for s, name in enumerate(self.names)}
        promo = v.promotion
        self.choices: dict[int, tuple[int, ...]] = {}
        self.limits: dict[int, int] = {}
        if promo is not None:
            self.choices = {
                self.code[s]: tuple(self.code[c] for c in cs) for s, cs in promo.choices
            }
            self.limits = {self.code[s]: n for s, n in promo.limits}
        self.one_per_file = frozenset(
            self.code[s] for s in (v.drops.one_per_file if v.drops else ())
        )
        self.no_drop_mate = frozenset(
            self.code[s] for s in (v.drops.no_drop_mate if v.drops else ())
        )
        self.ep_codes = frozenset(self.code[s] for s in v.en_passant)
        self.reset_codes = frozenset(
            self.code[s] for s in (v.move_rule.reset_by if v.move_rule else ())
        )
        self.castle_king = self.code[v.castling.king] if v.castling else 0
        self.castle_rook = self.code[v.castling.rook] if v.castling else 0
        self.castle_keep = [0b1111] * g.size
        if v.castling:
            for side in v.castling.sides:
                back = 0 if side == 0 else g.ranks - 1
                self.castle_keep[g.square(g.files - 1, back)] &= ~(1 << (2 * side))
                self.castle_keep[g.square(0, back)] &= ~(2 << (2 * side))
        rng = random.Random(zlib.crc32(v.name.encode()))  # stable across processes
        bits = 64
        self.z_piece = [
            [rng.getrandbits(bits) for _ in range(g.size)] for _ in range(2 * (self.n + 1))
        ]
        self.z_side = rng.getrandbits(bits)
        self.z_hand = [
            [[rng.getrandbits(bits) for _ in range(40)] for _ in range(self.n + 1)] for _ in (0, 1)
        ]
        for per_code in self.z_hand:
            for keys in per_code:
                keys[0] = 0  # an empty hand adds nothing: Position.play's n -> n±1 updates then
                # agree with the from-scratch key, which skips zero counts
        self.z_castle = [rng.getrandbits(bits) for _ in range(16)]
        self.z_ep = [rng.getrandbits(bits) for _ in range(g.size)]
        # Codes whose promotion choices have a limit (counted on the board at run time): the
        # generator cannot use ready-made landings for them.
        self.limited = frozenset(
            c for c, cs in self.choices.items() if any(x in self.limits for x in cs)
        )
        self.steps_by_code: list[list[list[Steps] | None]] = [[None] * (self.n + 1) for _ in (0, 1)]
        self._shared: dict[Move, Move] = {}
        self._landings: dict[Landing, Landing] = {}

    def steps(self, side: int, code: int) -> list[Steps]:
        """Per square, the rays of ``side``'s piece ``code`` as the generator walks them, each
        step with the moves that land there already made (built on first use per piece: a Dai
        Shogi position holds a fraction of its 55 piece types)."""
        per_square = self.steps_by_code[side][code]
        if per_square is None:
            per_square = [
                self._square_steps(side, code, fr, rays)
                for fr, rays in enumerate(self.moves[side][code])
            ]
            self.steps_by_code[side][code] = per_square
        return per_square

    def _square_steps(self, side: int, code: int, fr: int, rays: tuple[Ray, ...]) -> Steps:
        leaps = []
        slides = []
        hits = []
        others = []
        for squares, min_range, can_move, can_capture in rays:
            landings = tuple(self._landing(side, code, fr, to) for to in squares)
            if min_range <= 1 and can_move and can_capture:
                if len(squares) == 1:
                    leaps.append((squares[0], landings[0]))
                else:
                    slides.append((squares, landings))
            elif min_range <= 1 and can_capture and len(squares) == 1:
                hits.append((squares[0], landings[0]))
            else:
                others.append((squares, landings, min_range, can_move, can_capture))
        return tuple(leaps), tuple(slides), tuple(hits), tuple(others)

    def _landing(self, side: int, code: int, fr: int, to: int) -> Landing:
        """The moves of piece ``code`` from ``fr`` to ``to``, promotion choices included, in
        the order Position._add makes them (which it still does for ``limited`` codes). Equal
        landings are one shared tuple, as are equal moves (see :meth:`shared`)."""
        choices = self.choices.get(code)
        promo = self.promote[code]
        if choices is None and not promo:
            landing: Landing = (self.shared(Move(fr, to)),)
        elif choices is not None and to in self.last_rank[side]:
            landing = tuple(self.shared(Move(fr, to, c)) for c in choices)
        else:
            out = []
            if promo and (fr in self.zone[side] or to in self.zone[side]):
                out.append(self.shared(Move(fr, to, promo)))
            if to in self.mobile[side][code]:
                out.append(self.shared(Move(fr, to)))
            landing = tuple(out)
        return self._landings.setdefault(landing, landing)

    def shared(self, move: Move) -> Move:
        """The one instance of ``move`` the tables hold (``move`` itself the first time). A
        game that keeps these instead of parsed copies adds no Move objects per ply for the
        garbage collector to scan."""
        return self._shared.setdefault(move, move)

    def build_steps(self) -> None:
        """Build every piece's step tables now (a server does this before freezing its
        start-up heap out of the garbage collector: built later, on first use, they would be
        scanned by every full collection; Dai Shogi's are several hundred thousand objects)."""
        for side in (0, 1):
            for code in range(1, self.n + 1):
                self.steps(side, code)

    def capture_reach(self, side: int, code: int, square: int) -> frozenset[int]:
        """The squares ``side``'s piece ``code`` on ``square`` could capture on if nothing were
        in the way (built on first use: the drop-mate test asks it)."""
        key = (side, code, square)
        reach = self._reach.get(key)
        if reach is None:
            reach = frozenset(
                s
                for squares, _, _, can_capture in self.moves[side][code][square]
                if can_capture
                for s in squares
            )
            self._reach[key] = reach
        return reach

    def attacks_from(self, piece: int) -> list[Reach]:
        """Per square, what the signed ``piece`` standing there attacks: the forward form of
        ``attack_leaps``/``attack_rays`` (built from the same directions, so a square is in a
        piece's reach exactly when the reverse walk from that square finds the piece; built
        on first use per piece)."""
        per_square = self.reach_by_piece.get(piece)
        if per_square is None:
            by = 0 if piece > 0 else 1
            g = self._geometry
            leap_dirs = [d for d, codes in self._leap_dirs[by].items() if piece in codes]
            ray_dirs = []
            for d, per in self._ray_dirs[by].items():
                at = [k for k, codes in per.items() if piece in codes]
                if at:
                    ray_dirs.append((d, max(at), frozenset(at)))
            per_square = []
            for sq in range(g.size):
                f, r = g.file_of(sq), g.rank_of(sq)
                near = {
                    g.square(f + dx, r + dy) for dx, dy in leap_dirs if g.on_board(f + dx, r + dy)
                }
                rays = []
                for (dx, dy), top, hits in ray_dirs:
                    squares = []
                    k = 1
                    while k <= top and g.on_board(f + k * dx, r + k * dy):
                        squares.append(g.square(f + k * dx, r + k * dy))
                        k += 1
                    if len(squares) == 1:
                        if 1 in hits:  # a single step is never blocked
                            near.add(squares[0])
                    elif squares:
                        flags = tuple(k in hits for k in range(1, len(squares) + 1))
                        rays.append((tuple(squares), None if all(flags) else flags))
                per_square.append((tuple(sorted(near)), tuple(rays)))
            self.reach_by_piece[piece] = per_square
        return per_square

    @staticmethod
    def _zone(v: Variant, side: int) -> frozenset[int]:
        g = v.geometry
        depth = v.promotion.zone if v.promotion else 0
        return frozenset(s for s in range(g.size) if g.relative_rank(s, side) >= g.ranks - depth)

    @staticmethod
    def _orient(atom: Atom, side: int) -> tuple[int, int]:
        return (atom.dx, atom.dy) if side == 0 else (-atom.dx, -atom.dy)

    def _move_rays(self, g: Geometry, atoms: list[Atom], side: int) -> list[tuple[Ray, ...]]:
        """For each square, the rays a piece with ``atoms`` of ``side`` follows from it."""
        out: list[tuple[Ray, ...]] = []
        for sq in range(g.size):
            f, r = g.file_of(sq), g.rank_of(sq)
            rays: list[Ray] = []
            for a in atoms:
                if a.initial and g.relative_rank(sq, side) != 1:
                    continue
                dx, dy = self._orient(a, side)
                squares = []
                k = 1
                while a.max_range == 0 or k <= a.max_range:
                    if not g.on_board(f + k * dx, r + k * dy):
                        break
                    squares.append(g.square(f + k * dx, r + k * dy))
                    k += 1
                if len(squares) >= a.min_range:
                    rays.append((tuple(squares), a.min_range, a.can_move, a.can_capture))
            out.append(tuple(rays))
        return out

    def _attack_tables(
        self, g: Geometry
    ) -> tuple[
        list[list[tuple[tuple[int, frozenset[int]], ...]]],
        list[list[tuple[tuple[tuple[int, ...], tuple[frozenset[int], ...]], ...]]],
    ]:
        """Reverse tables: who, standing where, attacks a square.

        ``leaps[by][sq]`` lists (source square, signed codes that leap from there onto sq);
        ``rays[by][sq]`` lists (squares walking away from sq, signed codes attacking from
        each distance) so one walk per direction answers for every rider at once.
        """
        leaps_out = []
        rays_out = []
        for by in (0, 1):
            sign = 1 if by == 0 else -1
            leap_dirs: dict[tuple[int, int], set[int]] = {}
            ray_dirs: dict[tuple[int, int], dict[int, set[int]]] = {}
            self._leap_dirs.append(leap_dirs)
            self._ray_dirs.append(ray_dirs)
            for code in range(1, self.n + 1):
                for a in self.atoms[code]:
                    if not a.can_capture or a.initial:
                        continue
                    d = self._orient(a, by)
                    if a.jump:
                        leap_dirs.setdefault(d, set()).add(sign * code)
                        continue
                    hi = a.max_range or max(g.files, g.ranks)
                    per = ray_dirs.setdefault(d, {})
                    for k in range(a.min_range, hi + 1):
                        per.setdefault(k, set()).add(sign * code)
            leaps_by: list[tuple[tuple[int, frozenset[int]], ...]] = []
            rays_by: list[tuple[tuple[tuple[int, ...], tuple[frozenset[int], ...]], ...]] = []
            for sq in range(g.size):
                f, r = g.file_of(sq), g.rank_of(sq)
                lp: dict[int, set[int]] = {}
                for (dx, dy), codes in leap_dirs.items():
                    if g.on_board(f - dx, r - dy):
                        lp.setdefault(g.square(f - dx, r - dy), set()).update(codes)
                rs = []
                for (dx, dy), per in ray_dirs.items():
                    squares = []
                    sets = []
                    k = 1
                    top = max(per)
                    while k <= top and g.on_board(f - k * dx, r - k * dy):
                        squares.append(g.square(f - k * dx, r - k * dy))
                        sets.append(frozenset(per.get(k, ())))
                        k += 1
                    if squares:
                        rs.append((tuple(squares), tuple(sets)))
                leaps_by.append(tuple((s, frozenset(c)) for s, c in lp.items()))
                rays_by.append(tuple(rs))
            leaps_out.append(leaps_by)
            rays_out.append(rays_by)
        return leaps_out, rays_out

"""Chess-family helpers: Wild Castle start-position generators, dead positions, mating material.

The variant records (``variants/wildcastle.py``, ``variants/spartan.py``) plug these in as
data: a generator as ``start_fen_generator`` and a dead-position test as ``dead_position``.
Pieces are recognised by their Betza moves (``"B"`` bishop, ``"N"`` knight, ``"Q"`` queen),
never by a variant's name.

>>> SEED_SETUPS.count, ICS_SETUPS.count
(36, 64)
>>> SEED_SETUPS.setup_fen(0)
'rbbknnqr/pppppppp/8/8/8/8/PPPPPPPP/RBBKNNQR w KQkq - 0 1'
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Sequence

from .position import Position

__all__ = [
    "ICS_SETUPS",
    "SEED_SETUPS",
    "WILDCASTLE_GENERATORS",
    "SetupGenerator",
    "has_mating_material",
    "spartan_dead_position",
    "wildcastle_dead_position",
]

_PAWN_RANKS = "pppppppp/8/8/8/8/PPPPPPPP"


class SetupGenerator:
    """A finite, ordered list of start positions; calling it draws one uniformly.

    ``setup_fen(i)`` is the ``i``-th setup (0-based), so a number names a setup the way a
    Chess960 start-position number does.
    """

    def __init__(self, name: str, fens: Sequence[str]) -> None:
        if not fens or len(set(fens)) != len(fens):
            raise ValueError(f"setup list {name!r} must be non-empty and without duplicates")
        self.name = name
        self.fens: tuple[str, ...] = tuple(fens)

    @property
    def count(self) -> int:
        """How many distinct setups the generator can produce."""
        return len(self.fens)

    def setup_fen(self, index: int) -> str:
        """The ``index``-th setup (0 ≤ index < count); raise ValueError otherwise."""
        if not 0 <= index < len(self.fens):
            raise ValueError(f"setup number must be 0..{len(self.fens) - 1}, not {index}")
        return self.fens[index]

    def index_of(self, fen: str) -> int:
        """The number of the setup ``fen`` (as :meth:`setup_fen` writes it); raise ValueError."""
        try:
            return self.fens.index(fen.strip())
        except ValueError:
            raise ValueError(f"{fen!r} is not a {self.name} setup") from None

    def __call__(self, rng: random.Random) -> str:
        """Draw a setup uniformly with ``rng``."""
        return self.fens[rng.randrange(len(self.fens))]

    def __repr__(self) -> str:
        return f"<SetupGenerator {self.name} ({len(self.fens)} setups)>"


def _light(file: int, rank: int) -> bool:
    """a1 is dark: a square is light when file + rank (0-based) is odd."""
    return (file + rank) % 2 == 1


def _fen(white: str, black: str) -> str:
    return f"{black.lower()}/{_PAWN_RANKS}/{white} w KQkq - 0 1"


def _seed_back_ranks() -> list[str]:
    """Rooks on a and h, King on d or e, Q B B N N on the rest, bishops on opposite colours.

    Ordered by king file (d first), then alphabetically: indices 0..17 have the King on d.
    """
    out: list[str] = []
    for king in (3, 4):
        free = [f for f in range(1, 7) if f != king]
        ranks = set()
        for order in set(itertools.permutations("QBBNN")):
            bishops = [f for f, p in zip(free, order) if p == "B"]
            if _light(bishops[0], 0) == _light(bishops[1], 0):
                continue
            row = ["R"] + [""] * 6 + ["R"]
            row[king] = "K"
            for f, p in zip(free, order):
                row[f] = p
            ranks.add("".join(row))
        out.extend(sorted(ranks))
    return out


def _ics_back_ranks(rank: int) -> list[str]:
    """FICS wild/1 for one colour: K/Q on d/e, one bishop per colour among b c f g, knights."""
    out = []
    for king, queen in ((3, 4), (4, 3)):
        light = [f for f in (1, 2, 5, 6) if _light(f, rank)]
        dark = [f for f in (1, 2, 5, 6) if not _light(f, rank)]
        for lb, db in itertools.product(light, dark):
            row = ["R", "N", "N", "", "", "N", "N", "R"]
            row[king], row[queen], row[lb], row[db] = "K", "Q", "B", "B"
            out.append("".join(row))
    return out


SEED_SETUPS = SetupGenerator("seed", [_fen(r, r) for r in _seed_back_ranks()])
"""The spec's default Wild Castle generator (§3.2): 36 setups, Black mirrors White."""

ICS_SETUPS = SetupGenerator(
    "ics", [_fen(w, b) for w in _ics_back_ranks(0) for b in _ics_back_ranks(7)]
)
"""FICS wild/1 (§3.2 option ``ics``): 8 White × 8 Black setups; index = 8 × white + black."""

WILDCASTLE_GENERATORS: dict[str, SetupGenerator] = {"seed": SEED_SETUPS, "ics": ICS_SETUPS}
"""Wild Castle start-position generators by option name; ``seed`` is the variant's default."""


# ------------------------------------------------------------------ material


def _pieces(pos: Position, side: int) -> list[tuple[str, int]]:
    """``(betza, square)`` of every non-royal piece of ``side``."""
    t = pos.variant.t
    sign = 1 if side == 0 else -1
    out = []
    for sq, p in enumerate(pos.board):
        code = p * sign
        if code > 0 and not t.royal[code]:
            out.append((t.types[code].betza, sq))
    return out


def _colours(pos: Position, squares: Iterable[int]) -> set[bool]:
    g = pos.variant.geometry
    return {_light(g.file_of(s), g.rank_of(s)) for s in squares}


_NOT_MINOR: dict[str, frozenset[int]] = {}


def _not_minor(pos: Position) -> frozenset[int]:
    """Signed codes of the pieces that are neither royal nor a bishop or a knight."""
    v = pos.variant
    codes = _NOT_MINOR.get(v.name)
    if codes is None:
        t = v.t
        plain = [
            c for c in range(1, t.n + 1) if not t.royal[c] and t.types[c].betza not in ("B", "N")
        ]
        codes = _NOT_MINOR[v.name] = frozenset(plain + [-c for c in plain])
    return codes


def wildcastle_dead_position(pos: Position) -> bool:
    """FIDE dead positions of spec §3.6.4: K v K; K+B v K; K+N v K; K+B(s) v K+B(s) with every
    bishop on the same square colour."""
    if not _not_minor(pos).isdisjoint(pos.board):  # asked after every move: the usual answer
        return False
    minors = _pieces(pos, 0) + _pieces(pos, 1)
    if any(betza not in ("B", "N") for betza, _ in minors):
        return False
    if len(minors) <= 1:
        return True
    if any(betza != "B" for betza, _ in minors):
        return False
    return len(_colours(pos, (sq for _, sq in minors))) == 1


def spartan_dead_position(pos: Position) -> bool:
    """The minimal set of spec §4.7.4: one bare Spartan King against a bare Persian King, K+B
    or K+N. Nothing else (two Spartan Kings can mate)."""
    if len(pos.royals[1]) != 1 or _pieces(pos, 1):
        return False
    persian = _pieces(pos, 0)
    return len(persian) == 0 or (len(persian) == 1 and persian[0][0] in ("B", "N"))


def has_mating_material(pos: Position, side: int) -> bool:
    """Whether ``side`` could still mate by some series of legal moves, judged from material.

    For the time-out rule (spec §3.6.5): when the player who ran out of time faces an opponent
    without mating material, the game is a draw. ``False`` is only returned when no mate is
    possible: a lone King; a King and one Knight against a King and Queens at most; a King and
    Bishops against a King, Queens, Rooks and Bishops, with every Bishop on the board on one
    square colour (a pawn, a knight or any other piece of the opponent could block its own
    King). A second King (Spartan) counts as material, on either side. Anything else is
    enough. This is python-chess's ``has_insufficient_material``, negated, for the FIDE army.
    """
    if len(pos.royals[side]) > 1:
        return True
    own = _pieces(pos, side)
    enemy = _pieces(pos, 1 - side)
    if not own:
        return False
    kinds = {betza for betza, _ in own}
    if kinds == {"N"}:
        lone_knight = len(own) == 1
        harmless = len(pos.royals[1 - side]) <= 1 and all(b == "Q" for b, _ in enemy)
        return not (lone_knight and harmless)
    if kinds == {"B"}:
        if len(pos.royals[1 - side]) > 1 or any(b not in ("B", "Q", "R") for b, _ in enemy):
            return True
        bishops = [sq for b, sq in own + enemy if b == "B"]
        return len(_colours(pos, bishops)) > 1
    return True

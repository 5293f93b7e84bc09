"""A parser for the subset of Betza's funny notation that the five variants use.

A piece's moves are a list of :class:`Atom` records: a unit step repeated between
``min_range`` and ``max_range`` times (``max_range = 0``: unlimited), either as a
blockable ride or as a jumping leap. Directions are given for the first player
(forward = +y); the second player's moves are the 180° rotation.

Supported: atoms W F D A N H (and K Q R B as shorthands), a digit range (``W2``),
a doubled atom as rider (``WW`` = R), modifiers ``f b l r s v`` (directions),
``m`` (move only), ``c`` (capture only), ``i`` (only from the piece's initial rank),
``n`` (non-jumping: ``nD`` is blocked by a piece on the square it crosses).

>>> [(a.dx, a.dy) for a in parse("fW")]
[(0, 1)]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Atom", "BetzaError", "parse"]


class BetzaError(ValueError):
    """The Betza string uses notation this parser does not understand."""


@dataclass(frozen=True, slots=True)
class Atom:
    """One direction of movement: repeat ``(dx, dy)`` from ``min_range`` to ``max_range`` times."""

    dx: int
    dy: int
    min_range: int = 1
    max_range: int = 1  # 0 = unlimited
    jump: bool = False  # True: squares crossed are not looked at (a leap)
    can_move: bool = True
    can_capture: bool = True
    initial: bool = False  # only from the piece's initial rank


_BASE = {
    "W": (1, 0),
    "F": (1, 1),
    "D": (2, 0),
    "A": (2, 2),
    "N": (1, 2),
    "H": (3, 0),
}
_SHORTHAND = {"K": "WF", "Q": "WF", "R": "W", "B": "F"}  # Q, R, B ride
_TOKEN = re.compile(r"([a-z]*)([A-Z])(\d*)")


def _symmetries(dx: int, dy: int) -> set[tuple[int, int]]:
    out = set()
    for sx in (1, -1):
        for sy in (1, -1):
            out.add((sx * dx, sy * dy))
            out.add((sx * dy, sy * dx))
    return out


def _select(vectors: set[tuple[int, int]], dirs: str) -> set[tuple[int, int]]:
    """Keep the vectors that the directional modifiers ``dirs`` name (all if empty)."""
    if not dirs:
        return vectors
    sample = next(iter(vectors))
    oblique = abs(sample[0]) != abs(sample[1]) and 0 not in sample
    diagonal = abs(sample[0]) == abs(sample[1])
    chosen: set[tuple[int, int]] = set()
    i = 0
    while i < len(dirs):
        a = dirs[i]
        b = dirs[i + 1] if i + 1 < len(dirs) else ""
        if oblique and b == a:  # ff = narrow forward, ss = wide sideways ...
            chosen |= {v for v in vectors if _one(v, a) and _narrow(v, a)}
            i += 2
        elif (diagonal or oblique) and a in "fbv" and b in ("l", "r", "s"):
            chosen |= {v for v in vectors if _one(v, a) and _one(v, b)}
            i += 2
        else:
            chosen |= {v for v in vectors if _one(v, a)}
            i += 1
    return chosen


def _one(v: tuple[int, int], letter: str) -> bool:
    dx, dy = v
    tests = {
        "f": dy > 0,
        "b": dy < 0,
        "l": dx < 0,
        "r": dx > 0,
        "v": dy != 0 and (dx == 0 or abs(dy) >= abs(dx)),
        "s": dx != 0 and (dy == 0 or abs(dx) >= abs(dy)),
    }
    if letter not in tests:
        raise BetzaError(f"unknown direction modifier {letter!r}")
    return tests[letter]


def _narrow(v: tuple[int, int], letter: str) -> bool:
    dx, dy = v
    return abs(dy) > abs(dx) if letter in "fbv" else abs(dx) > abs(dy)


def parse(betza: str) -> list[Atom]:
    """Parse ``betza`` into atoms (first player's orientation)."""
    atoms: list[Atom] = []
    pos = 0
    text = betza
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise BetzaError(f"cannot read Betza string {betza!r} at {text[pos:]!r}")
        mods, letter, digits = m.groups()
        pos = m.end()
        rider = False
        if pos < len(text) and text[pos] == letter and letter in _BASE:
            rider = True
            pos += 1
        for base in _SHORTHAND.get(letter, letter):
            for atom in _atoms_for(base, mods, digits, rider or letter in "QRB", betza):
                if atom not in atoms:
                    atoms.append(atom)
    return atoms


def _atoms_for(base: str, mods: str, digits: str, rider: bool, betza: str) -> list[Atom]:
    if base not in _BASE:
        raise BetzaError(f"unknown atom {base!r} in {betza!r}")
    unknown = sorted(set(mods) - set("fblrsvmcin"))
    if unknown:  # e.g. XBoard's "a", "p", "j": silently dropping them would change the piece
        raise BetzaError(f"unknown modifier {''.join(unknown)!r} in {betza!r}")
    dirs = "".join(c for c in mods if c in "fblrsv")
    can_move = "c" not in mods or "m" in mods
    can_capture = "m" not in mods or "c" in mods
    initial = "i" in mods
    lame = "n" in mods
    bx, by = _BASE[base]
    out = []
    for dx, dy in sorted(_select(_symmetries(bx, by), dirs)):
        if lame:
            # nD / nA: a two-step ride that must stop on the second square.
            g = max(abs(dx), abs(dy))
            unit = (dx // g, dy // g)
            out.append(Atom(unit[0], unit[1], g, g, False, can_move, can_capture, initial))
            continue
        max_range = 0 if rider and not digits else int(digits or 1)
        jump = max_range == 1 and (abs(dx) > 1 or abs(dy) > 1)
        out.append(Atom(dx, dy, 1, max_range, jump, can_move, can_capture, initial))
    return out

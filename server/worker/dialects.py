"""Which engine plays which variant, and how our positions and moves read in its dialect.

One table (:data:`DIALECTS`, our variant → :class:`Dialect`) and the translation both ways:

* positions: our FEN is Fairy-Stockfish's, which Sjaak II reads as is too; HaChu cannot read
  our Dai Shogi FEN (``setboard`` fails on its own piece names), so it gets ``new`` +
  ``variant dai`` and the moves from its start, and a game from another start is refused;
* moves to the engine: our wire format *is* FSF's UCI dialect, and for Dai Shogi HaChu's
  (multi-leg ``h3i4,i4i5``, pass ``@@@@``), so they go as they are;
* moves from the engine: a coordinate text is checked against our legal moves; Sjaak II's
  principal variations are in its SAN-like form (``1. Pc4 Pg6 2. Bxh8+``, ``Ee6-d7+``), which
  :func:`resolve_token` reads against our legal moves. An engine text that names no legal
  move of ours translates to None: our adjudicator, not the engine, decides. HaChu writes a
  Lion-power piece's plain step with a trailing comma (``i9j9,``): read as ``i9j9``.

Wild Castle is played by Fairy-Stockfish: ``chess`` when the side to move's king is on e (or
cannot castle), else ``wildcastled`` (``castlingKingFile = d``, loaded from the
``VariantPath`` file :func:`variants_ini` writes), always from the current FEN, since FSF's
castling options are global.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from server.rules import Game, Move, Position, RulesError
from server.rules.geometry import FILE_LETTERS
from server.rules.move import NULL_SQUARE
from server.rules.san import parse_san

from .search import EnginePosition

__all__ = [
    "DIALECTS",
    "PROGRAMS",
    "Dialect",
    "EngineProgram",
    "UnsupportedPosition",
    "dialect_for",
    "resolve_token",
    "translate_line",
    "variants_ini",
]


class UnsupportedPosition(Exception):
    """The engine cannot be given this game (e.g. HaChu and a Dai Shogi game from another start)."""


@dataclass(frozen=True, slots=True)
class EngineProgram:
    """An engine binary and its protocol (``cecp`` or ``uci``)."""

    key: str
    path: str
    protocol: str
    mate_score: int | None = None  # CECP: the engine's score for "mate now", if not XBoard's


PROGRAMS: dict[str, EngineProgram] = {
    "sjaakii": EngineProgram("sjaakii", "/usr/games/sjaakii", "cecp", mate_score=16000),
    "hachu": EngineProgram("hachu", "/usr/games/hachu", "cecp"),
    "fairy-stockfish": EngineProgram("fairy-stockfish", "/usr/games/fairy-stockfish", "uci"),
    "fairymax": EngineProgram("fairymax", "/usr/games/fairymax", "cecp"),
}

WILD_D_KING = "wildcastled"
_VARIANTS_INI = f"[{WILD_D_KING}:chess]\ncastlingKingFile = d\ncastlingKingsideFile = f\ncastlingQueensideFile = b\n"


@cache
def variants_ini() -> str:
    """The path of Fairy-Stockfish's extra variant file, written once per process and removed
    when the process exits (a worker stopped by SIGTERM or SIGINT exits normally; only a
    SIGKILL leaves it behind). Fairy-Stockfish reads it again whenever an engine is started
    with its ``VariantPath``, so it lives as long as the process."""
    fd, path = tempfile.mkstemp(prefix="hub-fsf-", suffix=".ini")
    with os.fdopen(fd, "w") as f:
        f.write(_VARIANTS_INI)
    atexit.register(_remove, path)
    return path


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _wild_variant(pos: Position) -> str:
    """FSF's variant for a Wild Castle position: its castling rules follow the mover's king."""
    side = pos.turn
    rights = pos.castling >> (2 * side) & 3
    if rights:
        for sq in pos.royals[side]:
            if FILE_LETTERS[pos.variant.geometry.file_of(sq)] == "d":
                return WILD_D_KING
    return "chess"


@dataclass(frozen=True, slots=True)
class Dialect:
    """How ``engine`` is given our ``variant``.

    ``send``: ``"start"`` (start FEN + moves), ``"fen"`` (the current FEN, no moves) or
    ``"moves"`` (the engine's own start + moves; only games from the standard start)."""

    variant: str
    engine: str
    engine_variant: str | None
    send: str = "start"
    options: tuple[tuple[str, str], ...] = ()
    variant_for: Callable[[Position], str] | None = None

    @property
    def program(self) -> EngineProgram:
        return PROGRAMS[self.engine]

    def position(self, game: Game, ply: int | None = None) -> EnginePosition:
        """``game`` after ``ply`` moves (default: all) as this engine is given it."""
        ply = game.ply if ply is None else ply
        moves = tuple(game.moves[:ply])
        pos = game.position_at(ply)
        engine_variant = self.variant_for(pos) if self.variant_for else self.engine_variant
        if self.send == "fen":
            return EnginePosition(engine_variant, pos.fen(), ())
        if self.send == "moves":
            if game.start_fen.split()[:2] != game.variant.start_fen.split()[:2]:
                raise UnsupportedPosition(
                    f"{self.engine} plays {self.variant} only from its standard start"
                )
            return EnginePosition(engine_variant, None, moves)
        return EnginePosition(engine_variant, game.start_fen, moves)

    def from_engine(self, pos: Position, text: str | None) -> str | None:
        """The engine's move ``text`` as our legal move text in ``pos``, or None."""
        return None if text is None else resolve_token(pos, text)


DIALECTS: dict[tuple[str, str], Dialect] = {
    (d.variant, d.engine): d
    for d in (
        Dialect("minishogi", "fairy-stockfish", "minishogi"),
        Dialect("minishogi", "sjaakii", "minishogi"),
        Dialect("shoshogi", "sjaakii", "shoshogi"),
        Dialect(
            "wildcastle",
            "fairy-stockfish",
            "chess",
            send="fen",
            options=(("VariantPath", "<variants.ini>"),),
            variant_for=_wild_variant,
        ),
        Dialect("wildcastle", "sjaakii", "wildcastle"),
        Dialect("spartan", "sjaakii", "spartan"),
        Dialect("spartan", "fairymax", "spartan", send="moves"),
        Dialect("daishogi", "hachu", "dai", send="moves"),
    )
}

CHOSEN: dict[str, str] = {
    "minishogi": "fairy-stockfish",
    "shoshogi": "sjaakii",
    "wildcastle": "fairy-stockfish",
    "spartan": "sjaakii",
    "daishogi": "hachu",
}
"""The engine that serves each variant (docs/engines.md says why)."""


def dialect_for(variant: str, engine: str | None = None) -> Dialect:
    try:
        return DIALECTS[variant, engine or CHOSEN[variant]]
    except KeyError:
        raise KeyError(f"no engine dialect for {variant!r} with {engine!r}") from None


# ---------------------------------------------------------------------- moves back

_TOKEN = re.compile(
    r"^(?P<piece>\+?[A-Z][!']?)?(?P<file>[a-o])?(?P<rank>\d{1,2})?(?P<sep>[-x@])?"
    r"(?P<to>[a-o]\d{1,2})(?P<suffix>[=+#!?a-zA-Z]*)$"
)
_PAWN_LIKE = ("P", "H")


def resolve_token(pos: Position, text: str) -> str | None:
    """Our legal move text for an engine's move ``text`` (coordinates, a Lion's legs, a pass,
    or a SAN-like token) in ``pos``; None when it names no legal move or is ambiguous."""
    text = text.strip()
    if text.endswith(",") and "@" not in text:
        text = text[:-1]  # HaChu: "i9j9," a Lion-power piece's single step (no second leg)
    by_text = pos.legal_by_text()
    if text in by_text:
        return text
    try:
        return pos.uci(pos.move_from_uci(text))
    except (RulesError, ValueError):
        pass
    if pos.variant.family == "chess":
        try:
            return pos.uci(parse_san(pos, text))
        except (RulesError, ValueError):
            pass
    return _loose(pos, text, by_text)


def _loose(pos: Position, text: str, by_text: dict[str, Move]) -> str | None:
    m = _TOKEN.match(text)
    if not m:
        return None
    t = pos.variant.t
    names = t.names
    piece, file, rank, sep, to, suffix = m.group("piece", "file", "rank", "sep", "to", "suffix")
    shogi = pos.variant.family == "shogi"
    promote: bool | str | None
    if shogi:
        promote = "+" in suffix
    else:
        letters = [c for c in suffix if c.isalpha()]
        promote = letters[0].upper() if letters else False
    found = []
    for move_text, move in by_text.items():
        if move.via or names[move.to_sq] != to:
            continue
        if sep == "@" or move.from_sq == NULL_SQUARE:
            if sep != "@" or move.from_sq != NULL_SQUARE or t.types[move.drop].symbol != piece:
                continue
        else:
            origin = names[move.from_sq]
            symbol = t.types[abs(pos.board[move.from_sq])].symbol
            if piece and symbol != piece:
                continue
            if not piece and not (file and rank) and not shogi and symbol not in _PAWN_LIKE:
                continue
            if (file and origin[0] != file) or (rank and origin[1:] != rank):
                continue
        if shogi and bool(move.promotion) != promote:
            continue
        if not shogi and (t.types[move.promotion].symbol if move.promotion else False) != promote:
            continue
        found.append(move_text)
    return found[0] if len(found) == 1 else None


def translate_line(game: Game, ply: int, dialect: Dialect, tokens: list[str]) -> list[str]:
    """An engine's principal variation from ``game`` after ``ply`` moves, in our move texts,
    cut at the first token that is not a legal move."""
    line = Game(game.variant, game.position_at(ply).fen())
    out = []
    for token in tokens:
        ours = dialect.from_engine(line.position, token)
        if ours is None:
            break
        try:
            line.play(ours)
        except RulesError:
            break
        out.append(ours)
        if line.outcome() is not None:
            break
    return out

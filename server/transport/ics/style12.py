"""FICS board lines: style 12 (``<12> …``) and the holdings line (``<b1> …``).

A style-12 line, as ICS clients (XBoard's ``ParseBoard12``) read it::

    <12> rnbqkbnr pppppppp -------- -------- ----P--- -------- PPPP-PPP RNBQKBNR B 4 1 1 1 1 0 7 alice bob -1 5 0 39 39 300000 300000 1 P/e2-e4 (0:00.000) e4 0 1 0

the board rank by rank from the top (the second player's back rank), one character per square
(``-`` empty, upper case = first player); side to move (``W``/``B``); the file of a double pawn
push (``-1`` none); four castling flags; the reversible-move count; game number; the names
(first player = white); the viewer's relation (1 my move, -1 opponent's move, 0 observing,
2 examining, -2 observing an examined game, -3 an isolated board, -4 a move list's start
position); initial time in minutes and increment in seconds; material; both clocks (seconds,
or milliseconds after ``iset ms 1``); the number of the move about to be made; the last move
verbose (``P/e2-e4``, ``o-o``, ``P/@@-c3``, ``none``), its time, the last move in the variant's
notation; the flip flag; whether the clock is ticking; lag (always 0). Boards of any size up
to 15×15 use the same form, one word per rank, but boards wider than 12 files are sent as text
diagrams unless asked for (:mod:`server.transport.ics.boards`).
"""

from __future__ import annotations

from dataclasses import dataclass

from server.rules import Position
from server.transport.ics.variants import IcsVariant

__all__ = ["Board12", "elapsed_text", "holdings_line", "style12_line", "verbose_move"]

_VALUES = {"P": 1, "H": 1, "N": 3, "B": 3, "S": 3, "L": 3, "C": 3, "G": 5, "R": 5, "Q": 9, "W": 9}


@dataclass(frozen=True)
class Board12:
    """Everything one style-12 line says besides the position itself."""

    game: int
    white: str
    black: str
    relation: int
    initial_min: int
    increment_s: int
    white_ms: int
    black_ms: int
    verbose: str = "none"
    elapsed_ms: int = 0
    pretty: str = "none"
    flip: bool = False
    ticking: bool = False
    ms: bool = False
    double_push: int | None = None
    """File (0 = a) of a pawn's two-square advance just played; None: from the position's
    en-passant square (which the engine sets only when a capture is possible)."""


def elapsed_text(ms: int, with_ms: bool) -> str:
    """A move's time as FICS shows it: ``(0:06)`` or, with ``iset ms``, ``(0:06.123)``."""
    ms = max(0, ms)
    minutes, rest = divmod(ms, 60_000)
    if with_ms:
        return f"({minutes}:{rest // 1000:02d}.{rest % 1000:03d})"
    return f"({minutes}:{rest // 1000:02d})"


def _strength(position: Position, ics: IcsVariant, side: int) -> int:
    t = position.variant.t
    total = 0
    for piece in position.board:
        if piece and (piece > 0) == (side == 0) and not t.royal[abs(piece)]:
            total += _VALUES.get(ics.letter(t.types[abs(piece)].symbol), 3)
    for code, count in enumerate(position.hands[side]):
        if count:
            total += count * _VALUES.get(ics.letter(t.types[code].symbol), 3)
    return total


def board_words(position: Position, ics: IcsVariant) -> list[str]:
    """The board as style 12 writes it: one word per rank, from the top."""
    g = position.variant.geometry
    t = position.variant.t
    words = []
    for rank in range(g.ranks - 1, -1, -1):
        word = []
        for file in range(g.files):
            piece = position.board[g.square(file, rank)]
            if not piece:
                word.append("-")
                continue
            letter = ics.letter(t.types[abs(piece)].symbol)
            word.append(letter if piece > 0 else letter.lower())
        words.append("".join(word))
    return words


def style12_line(position: Position, ics: IcsVariant, info: Board12) -> str:
    """One ``<12>`` line (without a line end)."""
    g = position.variant.geometry
    double_push = info.double_push
    if double_push is None:
        double_push = g.file_of(position.ep) if position.ep >= 0 else -1
    castling = " ".join(str(int(bool(position.castling & (1 << bit)))) for bit in (0, 1, 2, 3))
    scale = 1 if info.ms else 1000
    fields = [
        "<12>",
        *board_words(position, ics),
        "WB"[position.turn],
        str(double_push),
        castling,
        str(position.halfmove),
        str(info.game),
        info.white,
        info.black,
        str(info.relation),
        str(info.initial_min),
        str(info.increment_s),
        str(_strength(position, ics, 0)),
        str(_strength(position, ics, 1)),
        str(info.white_ms // scale),
        str(info.black_ms // scale),
        str(position.fullmove),
        info.verbose,
        elapsed_text(info.elapsed_ms, info.ms),
        info.pretty,
        str(int(info.flip)),
        str(int(info.ticking)),
        "0",
    ]
    return " ".join(fields)


def holdings_line(position: Position, ics: IcsVariant, game: int) -> str:
    """The ``<b1>`` line of the pieces in hand: ``<b1> game 7 white [PG] black [S]``."""
    t = position.variant.t

    def hand(side: int) -> str:
        return "".join(
            ics.letter(t.types[code].symbol) * count
            for code, count in enumerate(position.hands[side])
            if count
        )

    return f"<b1> game {game} white [{hand(0)}] black [{hand(1)}]"


def verbose_move(before: Position, uci: str, ics: IcsVariant) -> tuple[str, str]:
    """(verbose, pretty) forms of move ``uci`` played in ``before``, as style 12 writes them.

    Verbose: ``P/e2-e4``, ``P/e7-e8=Q``, ``o-o`` / ``o-o-o`` (o-o is the short side, so with a
    d-file king it is the castling towards a1, as in FICS wild/1), ``P/@@-c3`` for a drop,
    ``S/c4-c5=+`` for a shogi promotion. Pretty: the long algebraic form (``Pe2-e4``,
    ``Sc4-c5+``, ``P@c3``, ``O-O``); callers with SAN use that instead.
    """
    v = before.variant
    g = v.geometry
    t = v.t
    if "@" in uci and not uci.startswith("@@"):
        letter = ics.letter(uci.split("@")[0])
        square = uci.split("@")[1]
        return f"{letter}/@@-{square}", f"{letter}@{square}"
    if uci == "@@@@":
        return "none", "pass"
    move = before.parse_uci(uci)
    origin = g.name(move.from_sq)
    target = g.name(move.to_sq)
    piece = before.board[move.from_sq]
    letter = ics.letter(t.types[abs(piece)].symbol) if piece else "?"
    if (
        v.castling is not None
        and piece
        and abs(piece) == t.castle_king
        and g.rank_of(move.from_sq) == g.rank_of(move.to_sq)
        and abs(g.file_of(move.to_sq) - g.file_of(move.from_sq)) >= 2
    ):
        from_file = g.file_of(move.from_sq)
        towards_h = g.file_of(move.to_sq) > from_file
        corner = g.files - 1 - from_file if towards_h else from_file
        other = from_file if towards_h else g.files - 1 - from_file
        text = "o-o" if corner < other else "o-o-o"
        return text, text.upper()
    suffix = ""
    if move.promotion:
        promoted = t.types[move.promotion].symbol
        suffix = "=+" if promoted.startswith("+") else "=" + ics.letter(promoted)
    verbose = f"{letter}/{origin}-{target}{suffix}"
    return verbose, f"{letter}{origin}-{target}{suffix.replace('=+', '+')}"

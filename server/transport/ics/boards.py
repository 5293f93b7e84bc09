"""The board lines of one position for one viewer: style 12, or a text diagram for boards
wider than style-12 readers take.

XBoard 4.9.1 reads a style-12 line into a buffer of 199 characters; a 15×15 board alone is 239
(Dai Shogi), so every such board raised "Failed to parse board string". Boards wider than
:data:`MAX_STYLE12_FILES` files are therefore sent as a readable diagram (coordinates on all
sides, the pieces by their abbreviations, upper case for the first player, seen from the
viewer's side), unless the client asked for style 12 anyway with ``iset wide12 1``.
"""

from __future__ import annotations

from server.rules import Position
from server.transport.ics.style12 import Board12, holdings_line, style12_line
from server.transport.ics.variants import IcsVariant

__all__ = ["MAX_STYLE12_FILES", "board_lines", "text_diagram"]

MAX_STYLE12_FILES = 12
"""Widest board sent as style 12 by default (a 12×12 board's line stays under 199 characters)."""
CELL = 4


def board_lines(position: Position, ics: IcsVariant, info: Board12, wide: bool) -> list[str]:
    """Style 12 (and ``<b1>`` for variants with hands), or the diagram of a wide board."""
    if position.variant.geometry.files > MAX_STYLE12_FILES and not wide:
        return text_diagram(position, ics, info)
    lines = [style12_line(position, ics, info)]
    if ics.variant.drops is not None:
        lines.append(holdings_line(position, ics, info.game))
    return lines


def _sides(ics: IcsVariant) -> tuple[str, str]:
    return ("sente", "gote") if ics.variant.family == "shogi" else ("White", "Black")


def _clock(ms: int) -> str:
    seconds = max(0, ms) // 1000
    return f"{seconds // 60}:{seconds % 60:02d}"


def text_diagram(position: Position, ics: IcsVariant, info: Board12) -> list[str]:
    """A board as text: a heading, the ranks between file letters, the clocks.

    ::

        Game 3 (alice vs. bob) daishogi, move 1: sente (alice) to move; last move none
              a   b   c …
         15   l   n  sg …   15
        …
    """
    g = position.variant.geometry
    t = position.variant.t
    first, second = _sides(ics)
    files = list(range(g.files))
    ranks = list(range(g.ranks - 1, -1, -1))
    if info.flip:
        files.reverse()
        ranks.reverse()
    letters = "".join(f"{chr(ord('a') + f):>{CELL}}" for f in files)
    mover = (first, info.white) if position.turn == 0 else (second, info.black)
    last = "none" if info.pretty == "none" else info.pretty
    lines = [
        f"Game {info.game} ({info.white} vs. {info.black}) {ics.kind}, move {position.fullmove}: "
        f"{mover[0]} ({mover[1]}) to move; last move {last}",
        f"    {letters}",
    ]
    for rank in ranks:
        cells = []
        for file in files:
            piece = position.board[g.square(file, rank)]
            if not piece:
                cells.append(f"{'.':>{CELL}}")
                continue
            text = t.types[abs(piece)].display
            cells.append(f"{text if piece > 0 else text.lower():>{CELL}}")
        lines.append(f"{rank + 1:>3} {''.join(cells)}  {rank + 1}")
    lines.append(f"    {letters}")
    lines.append(
        f"{first} {info.white} (upper case) {_clock(info.white_ms)}, "
        f"{second} {info.black} (lower case) {_clock(info.black_ms)}"
    )
    return lines

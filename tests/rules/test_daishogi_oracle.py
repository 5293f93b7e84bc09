"""An independent Dai Shogi move generator, written from the spec's plain-words move
descriptions (§5.3, §5.4, §5.5), used as the oracle for the engine's Dai Shogi tests.

It shares no code with ``server.rules``: its own FEN reader, its own piece table (no Betza),
its own Lion rules. Moves are keys ``(from, captured squares in order, to, promotes)`` on
``(file, rank)`` pairs (0-based, sente's view), or ``PASS``.

The tests in this file check the oracle itself against hand counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest

SIZE = 15
ZONE = 5
PASS = ("pass",)

Square = tuple[int, int]
Key = tuple[Square, tuple[Square, ...], Square, bool] | tuple[str]

ORTH = ((1, 0), (-1, 0), (0, 1), (0, -1))
DIAG = ((1, 1), (-1, 1), (1, -1), (-1, -1))
ALL8 = ORTH + DIAG
FWD, BACK = (0, 1), (0, -1)
SIDE = ((1, 0), (-1, 0))
FDIAG = ((1, 1), (-1, 1))
BDIAG = ((1, -1), (-1, -1))


@dataclass(frozen=True)
class Moves:
    """One piece's moves for sente: single steps, unlimited slides, non-jumping 2-square
    slides, jumping leaps, and Lion power (``"full"`` or a tuple of directions)."""

    step: tuple[Square, ...] = ()
    slide: tuple[Square, ...] = ()
    range2: tuple[Square, ...] = ()
    leap: tuple[Square, ...] = ()
    lion: str | tuple[Square, ...] | None = None


def minus(dirs: tuple[Square, ...], *drop: Square) -> tuple[Square, ...]:
    return tuple(d for d in dirs if d not in drop)


GOLD = Moves(step=(*ORTH, *FDIAG))
DRUNK_ELEPHANT = Moves(step=minus(ALL8, BACK))
KING = Moves(step=ALL8)
QUEEN = Moves(slide=ALL8)
DRAGON_KING = Moves(slide=ORTH, step=DIAG)
DRAGON_HORSE = Moves(slide=DIAG, step=ORTH)
ROOK = Moves(slide=ORTH)
BISHOP = Moves(slide=DIAG)
VERTICAL_MOVER = Moves(slide=(FWD, BACK), step=SIDE)
SIDE_MOVER = Moves(slide=SIDE, step=(FWD, BACK))
LION = Moves(lion="full")

# §5.3, by HaChu FEN letter (spec §5.2 legend).
PIECES: dict[str, Moves] = {
    "K": KING,
    "E": DRUNK_ELEPHANT,
    "Q": QUEEN,
    "L!": LION,
    "D": DRAGON_KING,
    "H": DRAGON_HORSE,
    "R": ROOK,
    "B": BISHOP,
    "V": VERTICAL_MOVER,
    "M": SIDE_MOVER,
    "A": Moves(slide=(FWD, BACK)),
    "L": Moves(slide=(FWD,)),
    "T": Moves(step=minus(ALL8, FWD)),
    "F": Moves(step=minus(ALL8, *SIDE)),
    "G": GOLD,
    "S": Moves(step=(*DIAG, FWD)),
    "C": Moves(step=(FWD, *FDIAG, BACK)),
    "I": Moves(step=(FWD, *FDIAG)),
    "U": Moves(step=FDIAG),
    "N": Moves(leap=((1, 2), (-1, 2))),
    "O": Moves(step=DIAG, leap=((0, 2), (0, -2), (2, 0), (-2, 0))),
    "X": Moves(step=ORTH, leap=((2, 2), (-2, 2), (2, -2), (-2, -2))),
    "X'": Moves(range2=ORTH),
    "F'": Moves(range2=DIAG),
    "W": Moves(step=(FWD, *FDIAG, *SIDE)),
    "A'": Moves(step=ORTH),
    "C'": Moves(step=DIAG),
    "P'": Moves(step=(FWD, BACK)),
    "P": Moves(step=(FWD,)),
    "+E": KING,
    "+D": Moves(slide=(*ORTH, *BDIAG), lion=FDIAG),
    "+H": Moves(slide=(*DIAG, *SIDE, BACK), lion=(FWD,)),
    "+R": DRAGON_KING,
    "+B": DRAGON_HORSE,
    "+V": Moves(slide=(*DIAG, FWD, BACK)),
    "+M": Moves(slide=(*DIAG, *SIDE)),
    "+A": Moves(slide=(FWD, BACK, *BDIAG)),
    "+L": Moves(slide=(FWD, BACK, *FDIAG)),
    "+T": Moves(slide=(FWD, BACK), step=(*DIAG, *SIDE)),
    "+F": BISHOP,
    "+G": ROOK,
    "+S": VERTICAL_MOVER,
    "+C": SIDE_MOVER,
    "+I": GOLD,
    "+U": GOLD,
    "+N": GOLD,
    "+O": LION,
    "+X": QUEEN,
    "+X'": GOLD,
    "+F'": GOLD,
    "+W": GOLD,
    "+A'": GOLD,
    "+C'": GOLD,
    "+P'": DRUNK_ELEPHANT,
    "+P": GOLD,
}
NEVER_PROMOTE = {"K", "Q", "L!"}
ROYAL = {"K", "+E"}
# §5.5: must promote on the last rank (relative rank 15), the Knight on either of the last two.
FORCED_FROM_RANK = {"P": 14, "L": 14, "I": 14, "U": 14, "N": 13}

TOKEN = re.compile(r"\d+|\+?[A-Za-z][!']?")


@dataclass
class Board:
    """Pieces as ``{(file, rank): (side, symbol)}``; ``turn`` 0 = sente."""

    pieces: dict[Square, tuple[int, str]] = field(default_factory=dict)
    turn: int = 0

    @classmethod
    def from_fen(cls, fen: str) -> Board:
        rows, turn = fen.split()[:2]
        board = cls(turn=0 if turn == "w" else 1)
        for i, row in enumerate(rows.split("/")):
            rank = SIZE - 1 - i
            file = 0
            for token in TOKEN.findall(row):
                if token.isdigit():
                    file += int(token)
                    continue
                upper = token.lstrip("+")[0].isupper()
                board.pieces[(file, rank)] = (0 if upper else 1, token.upper())
                file += 1
            assert file == SIZE, row
        return board

    def fen(self) -> str:
        rows = []
        for rank in range(SIZE - 1, -1, -1):
            row, empty = "", 0
            for file in range(SIZE):
                piece = self.pieces.get((file, rank))
                if piece is None:
                    empty += 1
                    continue
                row += (str(empty) if empty else "") + (
                    piece[1] if piece[0] == 0 else piece[1].lower()
                )
                empty = 0
            rows.append(row + (str(empty) if empty else ""))
        return "/".join(rows) + f" {'wb'[self.turn]} - - 0 1"

    def play(self, key: Key) -> Board:
        after = Board(dict(self.pieces), 1 - self.turn)
        if key == PASS:
            return after
        fr, captured, to, promotes = key  # type: ignore[misc]
        side, symbol = after.pieces.pop(fr)
        for s in captured:
            del after.pieces[s]
        after.pieces[to] = (side, "+" + symbol if promotes else symbol)
        return after


def on_board(s: Square) -> bool:
    return 0 <= s[0] < SIZE and 0 <= s[1] < SIZE


def relative_rank(s: Square, side: int) -> int:
    return s[1] if side == 0 else SIZE - 1 - s[1]


def with_promotion(board: Board, fr: Square, to: Square) -> list[Key]:
    """The move fr→to with its promotion options (§5.5)."""
    side, symbol = board.pieces[fr]
    promotable = not symbol.startswith("+") and symbol not in NEVER_PROMOTE
    in_zone = relative_rank(fr, side) >= SIZE - ZONE or relative_rank(to, side) >= SIZE - ZONE
    keys: list[Key] = []
    if promotable and in_zone:
        keys.append((fr, (), to, True))
    forced = symbol in FORCED_FROM_RANK and relative_rank(to, side) >= FORCED_FROM_RANK[symbol]
    if not forced:
        keys.append((fr, (), to, False))
    return keys


def piece_moves(board: Board, fr: Square) -> list[Key]:
    """Every move of the piece on ``fr`` except the pass."""
    side, symbol = board.pieces[fr]
    spec = PIECES[symbol]
    sign = 1 if side == 0 else -1
    targets: list[Square] = []

    def free_or_enemy(s: Square) -> bool:
        return on_board(s) and (s not in board.pieces or board.pieces[s][0] != side)

    for dx, dy in spec.step + spec.leap:
        s = (fr[0] + sign * dx, fr[1] + sign * dy)
        if free_or_enemy(s):
            targets.append(s)
    for dx, dy in spec.slide + spec.range2:
        limit = 2 if (dx, dy) in spec.range2 else SIZE
        for k in range(1, limit + 1):
            s = (fr[0] + sign * k * dx, fr[1] + sign * k * dy)
            if not on_board(s):
                break
            if s in board.pieces:
                if board.pieces[s][0] != side:
                    targets.append(s)
                break
            targets.append(s)
    keys: list[Key] = []
    lion_moves: list[Key] = []
    if spec.lion == "full":
        # 1. jump to any square within two; 2. capture adjacent, then one more king step.
        for x in range(-2, 3):
            for y in range(-2, 3):
                s = (fr[0] + x, fr[1] + y)
                if (x, y) != (0, 0) and free_or_enemy(s):
                    targets.append(s)
        for dx, dy in ALL8:
            a = (fr[0] + dx, fr[1] + dy)
            if a in board.pieces and board.pieces[a][0] != side:
                for ex, ey in ALL8:
                    s = (a[0] + ex, a[1] + ey)
                    if s == fr:
                        lion_moves.append((fr, (a,), fr, False))
                    elif free_or_enemy(s):
                        lion_moves.append((fr, (a,), s, False))
    elif spec.lion is not None:
        for dx, dy in spec.lion:
            a1 = (fr[0] + sign * dx, fr[1] + sign * dy)
            a2 = (fr[0] + 2 * sign * dx, fr[1] + 2 * sign * dy)
            for s in (a1, a2):
                if free_or_enemy(s):
                    targets.append(s)
            if a1 in board.pieces and board.pieces[a1][0] != side:
                lion_moves.append((fr, (a1,), fr, False))
                if free_or_enemy(a2):
                    lion_moves.append((fr, (a1,), a2, False))
    for s in dict.fromkeys(targets):
        keys.extend(with_promotion(board, fr, s))
    return keys + lion_moves


def can_pass(board: Board, fr: Square) -> bool:
    """§5.4 pass: a Lion-power piece with an empty adjacent square in a Lion direction."""
    side, symbol = board.pieces[fr]
    spec = PIECES[symbol]
    sign = 1 if side == 0 else -1
    if spec.lion is None:
        return False
    dirs = ALL8 if spec.lion == "full" else spec.lion
    return any(
        on_board(a) and a not in board.pieces
        for a in ((fr[0] + sign * dx, fr[1] + sign * dy) for dx, dy in dirs)
    )


def legal_moves(board: Board) -> list[Key]:
    """All moves of the side to move (M4: every pseudo-legal move is legal); one pass at most."""
    keys: list[Key] = []
    passing = False
    for fr, (side, _) in board.pieces.items():
        if side == board.turn:
            keys.extend(piece_moves(board, fr))
            passing = passing or can_pass(board, fr)
    if passing:
        keys.append(PASS)
    return keys


def perft(board: Board, depth: int) -> int:
    if depth == 0:
        return 1
    moves = legal_moves(board)
    if depth == 1:
        return len(moves)
    return sum(perft(board.play(k), depth - 1) for k in moves)


def name(s: Square) -> str:
    return "abcdefghijklmno"[s[0]] + str(s[1] + 1)


def square(text: str) -> Square:
    return ("abcdefghijklmno".index(text[0]), int(text[1:]) - 1)


def fen_of(pieces: dict[str, str], turn: str = "w") -> str:
    """A FEN from ``{"h8": "L!", "h9": "p", ...}`` (upper case = sente)."""
    board = Board(turn=0 if turn == "w" else 1)
    for sq, token in pieces.items():
        board.pieces[square(sq)] = (0 if token.lstrip("+")[0].isupper() else 1, token.upper())
    return board.fen()


# Hand counts of distinct destinations from h8 on an empty board (sente), passes aside.
CENTER_DESTINATIONS = {
    "K": 8, "E": 7, "Q": 56, "L!": 24, "D": 32, "H": 32, "R": 28, "B": 28, "V": 16, "M": 16,
    "A": 14, "L": 7, "T": 7, "F": 6, "G": 6, "S": 5, "C": 4, "I": 3, "U": 2, "N": 2, "O": 8,
    "X": 8, "X'": 8, "F'": 8, "W": 5, "A'": 4, "C'": 4, "P'": 2, "P": 1, "+E": 8, "+D": 46,
    "+H": 51, "+R": 32, "+B": 32, "+V": 42, "+M": 42, "+A": 28, "+L": 28, "+T": 20, "+F": 28,
    "+G": 28, "+S": 16, "+C": 16, "+I": 6, "+U": 6, "+N": 6, "+O": 24, "+X": 56, "+X'": 6,
    "+F'": 6, "+W": 6, "+A'": 6, "+C'": 6, "+P'": 7, "+P": 6,
}  # fmt: skip


@pytest.mark.parametrize("symbol", sorted(PIECES))
def test_oracle_center_destinations_match_hand_counts(symbol: str) -> None:
    board = Board.from_fen(fen_of({"h8": symbol}))
    destinations = {k[2] for k in legal_moves(board) if k != PASS}
    assert len(destinations) == CENTER_DESTINATIONS[symbol]


def test_oracle_start_position_has_65_pieces_per_side() -> None:
    from server.rules.variants.daishogi import DAI_START_FEN

    board = Board.from_fen(DAI_START_FEN)
    assert sum(1 for side, _ in board.pieces.values() if side == 0) == 65
    assert sum(1 for side, _ in board.pieces.values() if side == 1) == 65
    assert board.fen().split()[0] == DAI_START_FEN.split()[0]

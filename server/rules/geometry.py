"""Board geometry as a runtime value: any rectangle up to 15×15.

Squares are ints ``rank * files + file`` with file 0 = ``a`` and rank 0 = ``1``,
both seen from the first player (the FSF/UCI convention on every board size).
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_SIDE = 15
FILE_LETTERS = "abcdefghijklmno"


@dataclass(frozen=True, slots=True)
class Geometry:
    """A board of ``files`` × ``ranks`` squares.

    >>> g = Geometry(5, 5)
    >>> g.name(g.parse("c4"))
    'c4'
    """

    files: int
    ranks: int

    def __post_init__(self) -> None:
        if not (1 <= self.files <= MAX_SIDE and 1 <= self.ranks <= MAX_SIDE):
            raise ValueError(f"board size {self.files}x{self.ranks} is outside 1..{MAX_SIDE}")

    @property
    def size(self) -> int:
        return self.files * self.ranks

    def square(self, file: int, rank: int) -> int:
        return rank * self.files + file

    def file_of(self, square: int) -> int:
        return square % self.files

    def rank_of(self, square: int) -> int:
        return square // self.files

    def on_board(self, file: int, rank: int) -> bool:
        return 0 <= file < self.files and 0 <= rank < self.ranks

    def relative_rank(self, square: int, side: int) -> int:
        """Rank counted from ``side``'s own back rank (0 = its back rank)."""
        rank = square // self.files
        return rank if side == 0 else self.ranks - 1 - rank

    def name(self, square: int) -> str:
        return f"{FILE_LETTERS[square % self.files]}{square // self.files + 1}"

    def parse(self, text: str) -> int:
        """Parse ``"c4"``/``"o15"``; raise ``ValueError`` for anything else."""
        if (
            len(text) < 2
            or text[0] not in FILE_LETTERS
            or not (text[1:].isascii() and text[1:].isdigit())
        ):
            raise ValueError(f"{text!r} is not a square")
        file = FILE_LETTERS.index(text[0])
        rank = int(text[1:]) - 1
        if text[1] == "0" or not self.on_board(file, rank):
            raise ValueError(f"{text!r} is not a square of a {self.files}x{self.ranks} board")
        return self.square(file, rank)

"""Positions as text: Fairy-Stockfish FEN and USI SFEN, read and written.

:class:`~server.rules.position.Position` exposes these as ``from_fen``/``fen`` and
``from_sfen``/``sfen``; they live here so that the position module keeps only the move
generator and ``play``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .errors import InvalidFenError
from .geometry import FILE_LETTERS
from .move import CASTLE_LETTERS, NULL_SQUARE
from .variant import RoyalModel, Variant

if TYPE_CHECKING:
    from .position import Position

__all__ = [
    "board_fen",
    "empty_hand_spelled",
    "hand_text",
    "read_fen",
    "read_sfen",
    "write_fen",
    "write_sfen",
]

_PIECE = re.compile(r"\+?[A-Za-z][!']?")
_HAND_ITEM = re.compile(r"(\d*)(\+?[A-Za-z][!']?)")


def read_fen(cls: type[Position], variant: Variant, fen: str) -> Position:
    """Read a Fairy-Stockfish FEN (hands in ``[...]``; ``w`` = first player) into a ``cls``.

    ``cls`` is passed in (it is always :class:`Position`) so that this module need not import
    the position module, which imports this one.
    """
    fields = fen.strip().split()
    if not fields:
        raise InvalidFenError("empty FEN")
    board_text = fields[0]
    hand_field = ""
    if "[" in board_text:
        if not board_text.endswith("]"):
            raise InvalidFenError(f"hand field of {fen!r} must end with ']'")
        board_text, hand_field = board_text[:-1].split("[", 1)
    board = _read_board(variant, board_text)
    hands = _read_hand(variant, hand_field)
    rest = fields[1:]
    turn_text = rest[0] if rest else "w"
    if turn_text not in ("w", "b"):
        raise InvalidFenError(f"side to move must be 'w' or 'b', not {turn_text!r}")
    turn = 0 if turn_text == "w" else 1
    rest = rest[1:]
    castling, ep = 0, NULL_SQUARE
    numbers = [x for x in rest if _number(x)]
    others = [x for x in rest if not _number(x)]
    if others:
        castling = _read_castling(variant, others[0])
    if len(others) > 1 and others[1] != "-":
        try:
            ep = variant.geometry.parse(others[1])
        except ValueError as exc:
            raise InvalidFenError(f"bad en-passant square: {exc}") from None
    halfmove = int(numbers[0]) if len(numbers) > 1 else 0
    fullmove = int(numbers[-1]) if numbers else 1
    pos = cls(variant, board, hands, turn, castling, ep, halfmove, max(1, fullmove))
    kept = _validate(pos)
    if kept != castling:
        pos = cls(variant, board, hands, turn, kept, ep, halfmove, max(1, fullmove))
    return pos


def read_sfen(cls: type[Position], variant: Variant, sfen: str) -> Position:
    """Read a USI SFEN (``b`` = first player; the move number counts plies)."""
    fields = sfen.strip().split()
    if len(fields) < 2 or fields[1] not in ("b", "w"):
        raise InvalidFenError(f"{sfen!r} is not an SFEN (board side hand number)")
    hand = fields[2] if len(fields) > 2 else "-"
    number = int(fields[3]) if len(fields) > 3 and _number(fields[3]) else 1
    turn = "w" if fields[1] == "b" else "b"
    board = fields[0] + (f"[{'' if hand == '-' else hand}]" if hand != "-" else "")
    return read_fen(cls, variant, f"{board} {turn} - - 0 {max(1, (number + 1) // 2)}")


def _read_board(variant: Variant, text: str) -> tuple[int, ...]:
    g = variant.geometry
    t = variant.t
    rows = text.split("/")
    if len(rows) != g.ranks:
        raise InvalidFenError(f"{len(rows)} ranks in the board, expected {g.ranks}")
    board = [0] * g.size
    for i, row in enumerate(rows):
        rank = g.ranks - 1 - i
        file = 0
        pos = 0
        while pos < len(row):
            if _number(row[pos]):
                j = pos
                while j < len(row) and _number(row[j]):
                    j += 1
                file += int(row[pos:j])
                pos = j
                continue
            m = _PIECE.match(row, pos)
            if not m:
                raise InvalidFenError(f"unexpected {row[pos]!r} in rank {rank + 1}")
            token = m.group(0)
            pos = m.end()
            sym = token.upper()
            if sym not in t.code:
                raise InvalidFenError(f"unknown piece {token!r} in {variant.title}")
            if file >= g.files:
                raise InvalidFenError(f"rank {rank + 1} has more than {g.files} squares")
            letter = token.lstrip("+")[0]
            board[g.square(file, rank)] = t.code[sym] if letter.isupper() else -t.code[sym]
            file += 1
        if file != g.files:
            raise InvalidFenError(f"rank {rank + 1} has {file} squares, expected {g.files}")
    return tuple(board)


def _read_hand(variant: Variant, text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    t = variant.t
    hands = [[0] * (t.n + 1), [0] * (t.n + 1)]
    text = text.strip()
    if text in ("", "-"):
        return (tuple(hands[0]), tuple(hands[1]))
    if variant.drops is None:
        raise InvalidFenError(f"{variant.title} has no pieces in hand")
    for count, token in _HAND_ITEM.findall(text):
        sym = token.upper()
        if sym not in t.code or t.demote[t.code[sym]] != t.code[sym] or t.royal[t.code[sym]]:
            raise InvalidFenError(f"{token!r} cannot be in hand")
        side = 0 if token[0].isupper() else 1
        hands[side][t.code[sym]] += int(count or 1)
    return (tuple(hands[0]), tuple(hands[1]))


def _read_castling(variant: Variant, text: str) -> int:
    if text == "-":
        return 0
    if variant.castling is None or any(c not in CASTLE_LETTERS for c in text):
        raise InvalidFenError(f"bad castling field {text!r}")
    mask = 0
    for c in text:
        bit = CASTLE_LETTERS.index(c)
        if bit // 2 in variant.castling.sides:
            mask |= 1 << bit
    return mask


def _validate(pos: Position) -> int:
    """Reject positions the rules cannot reach; return the castling rights that stand (a
    right whose king or rook is not in place is dropped)."""
    v = pos.variant
    t = v.t
    for side in (0, 1):
        royals = pos.royals[side]
        if not royals and v.royalty[side] is not RoyalModel.ROYAL_CAPTURE:
            raise InvalidFenError(f"the {'first' if side == 0 else 'second'} player has no king")
        if v.royalty[side] is RoyalModel.CHECKMATE and len(royals) > 1:
            raise InvalidFenError(
                f"the {'first' if side == 0 else 'second'} player has more than one king"
            )
    for sq, p in enumerate(pos.board):
        if p and sq not in t.mobile[0 if p > 0 else 1][abs(p)]:
            raise InvalidFenError(f"the piece on {v.geometry.name(sq)} could never move")
    if pos.checked(1 - pos.turn) and v.royalty[1 - pos.turn] is not RoyalModel.ROYAL_CAPTURE:
        raise InvalidFenError("the side not to move is in check")
    # Castling rights need the king on a castling file of its back rank and the rook on its corner.
    g = v.geometry
    castling = pos.castling
    for bit in range(4):
        if castling & (1 << bit):
            side = bit // 2
            back = 0 if side == 0 else g.ranks - 1
            sign = 1 if side == 0 else -1
            corner = g.square(g.files - 1 if bit % 2 == 0 else 0, back)
            king_ok = (
                any(
                    g.rank_of(r) == back
                    and pos.board[r] == sign * t.castle_king
                    and FILE_LETTERS[g.file_of(r)] in v.castling.king_files
                    for r in pos.royals[side]
                )
                if v.castling is not None
                else False
            )
            if not king_ok or pos.board[corner] != sign * t.castle_rook:
                castling &= ~(1 << bit)
    return castling


def board_fen(pos: Position) -> str:
    """The board field of a FEN (the same in an SFEN)."""
    t = pos.variant.t
    files = pos.variant.geometry.files
    board = pos.board
    ranks = t.fen_ranks
    texts = []
    for start in range(len(board) - files, -1, -files):
        rank = board[start : start + files]
        text = ranks.get(rank)
        if text is None:
            if len(ranks) >= FEN_RANKS_KEPT:
                ranks.clear()
            text = ranks[rank] = _rank_text(rank, t.fen_letters)
        texts.append(text)
    return "/".join(texts)


FEN_RANKS_KEPT = 20_000
"""Rank texts kept per variant (``Tables.fen_ranks``): a few MB at most."""


def _rank_text(rank: tuple[int, ...], letters: list[str]) -> str:
    """One rank of a FEN board: letters, and digits for runs of empty squares."""
    text = ""
    empty = 0
    for piece in rank:
        if piece:
            if empty:
                text += str(empty)
                empty = 0
            text += letters[piece]
        else:
            empty += 1
    return text + str(empty) if empty else text


def hand_text(pos: Position, counts: bool = False) -> str:
    """Pieces in hand: first player's (upper case) then second's, catalogue order; with
    ``counts`` a count prefixes each type held more than once (``2P``), as SFEN writes it."""
    t = pos.variant.t
    out = ""
    for side in (0, 1):
        for code, n in enumerate(pos.hands[side]):
            if n:
                sym = t.types[code].symbol
                sym = sym if side == 0 else sym.lower()
                out += (str(n) + sym if n > 1 else sym) if counts else sym * n
    return out


def write_fen(pos: Position) -> str:
    """The position as Fairy-Stockfish writes it."""
    v = pos.variant
    board = board_fen(pos)
    if v.hand_in_fen:
        board += f"[{hand_text(pos)}]"
    castling = "".join(c for i, c in enumerate(CASTLE_LETTERS) if pos.castling & (1 << i)) or "-"
    ep = v.geometry.name(pos.ep) if pos.ep != NULL_SQUARE else "-"
    return f"{board} {'wb'[pos.turn]} {castling} {ep} {pos.halfmove} {pos.fullmove}"


def empty_hand_spelled(fen: str) -> str:
    """``fen`` with an empty hand written ``[]``, as :func:`write_fen` (and Fairy-Stockfish's
    own FEN output) writes it: games stored before 2026-12 began from Mini-Shogi's start FEN
    declared with ``[-]`` (FSF's start-FEN spelling, still read: :func:`read_fen`)."""
    board, bracket, rest = fen.partition("[-]")
    return board + "[]" + rest if bracket and " " not in board else fen


def write_sfen(pos: Position, ply: int | None = None) -> str:
    """USI SFEN (shogi family): ``b`` = first player (sente); the move number counts plies
    (``ply``, when given, overrides the one derived from the full-move number)."""
    number = ply + 1 if ply is not None else 2 * (pos.fullmove - 1) + pos.turn + 1
    hand = hand_text(pos, counts=True) or "-"
    return f"{board_fen(pos)} {'bw'[pos.turn]} {hand} {number}"


def _number(text: str) -> bool:
    """Whether ``text`` is a number of ASCII digits: ``str.isdigit`` also takes digits
    ``int`` refuses (``²``), which made a FEN with one raise a bare ``ValueError``."""
    return text.isascii() and text.isdigit()

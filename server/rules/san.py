"""Standard Algebraic Notation for the chess family (spec §3.7, §4.8): written and read.

Pawns (the piece whose symbol is ``P``) move without a letter; every other piece carries its
letter, so Spartan hoplites are written ``He5``, ``Hxc6``, ``Hc1=K``. Castling is ``O-O`` for
the short castle, with the rook *nearer* the king, and ``O-O-O`` for the long one: with the
king on d, ``O-O`` is d1→b1 (XBoard/ICS), not Fairy-Stockfish's by-side labels.

>>> from server.rules import get_variant, Position
>>> pos = Position.from_fen(get_variant("wildcastle"), "r2k3r/8/8/8/8/8/8/R2K3R w KQkq - 0 1")
>>> san(pos, parse_san(pos, "d1b1"))
'O-O'
>>> pos.uci(parse_san(pos, "O-O-O"))
'd1f1'
"""

from __future__ import annotations

import re

from .errors import IllegalMoveError, InvalidMoveError
from .position import NULL_SQUARE, Move, Position

__all__ = ["parse_san", "san"]

PAWN = "P"
_ANNOTATION = re.compile(r"(\s*e\.p\.)?[+#!?]*$")
_CASTLE = re.compile(r"^([O0o])-\1(-\1)?$")
_COORDINATES = re.compile(r"^([a-o]\d{1,2})-?([a-o]\d{1,2})([a-z]?)$")
_SAN = re.compile(
    r"^(?P<piece>[A-Z])?(?P<file>[a-o])?(?P<rank>\d{1,2})?(?P<sep>[-x:])?"
    r"(?P<to>[a-o]\d{1,2})(?:=?(?P<promo>[A-Za-z])|\((?P<promo2>[A-Za-z])\))?$"
)


def _letter(pos: Position, code: int) -> str:
    """The SAN letter of piece ``code``: empty for the pawn."""
    piece = pos.variant.t.types[code]
    return "" if piece.symbol == PAWN else piece.display


def _castle_kind(pos: Position, move: Move) -> str | None:
    """``"O-O"`` / ``"O-O-O"`` when ``move`` is a castling move, else None.

    Short castling is the one with the nearer rook; a king standing in the middle (equal
    distances) castles short toward the h side.
    """
    v = pos.variant
    if v.castling is None or move.from_sq == NULL_SQUARE:
        return None
    g = v.geometry
    piece = abs(pos.board[move.from_sq])
    fr, to = move.from_sq, move.to_sq
    if piece != v.t.castle_king or g.rank_of(fr) != g.rank_of(to):
        return None
    king_file = g.file_of(fr)
    shift = g.file_of(to) - king_file
    if abs(shift) != 2:
        return None
    toward_h = g.files - 1 - king_file
    toward_a = king_file
    near, far = (toward_h, toward_a) if shift > 0 else (toward_a, toward_h)
    short = near < far or (near == far and shift > 0)
    return "O-O" if short else "O-O-O"


def _check_suffix(pos: Position, move: Move) -> str:
    after = pos.play(move)
    if not after.is_check():
        return ""
    return "+" if after.has_legal_move() else "#"


def san(pos: Position, move: Move) -> str:
    """``move`` (legal in ``pos``) in SAN: ``Nf3``, ``exd5``, ``e8=Q+``, ``Hc1=K``, ``O-O#``."""
    castle = _castle_kind(pos, move)
    if castle is not None:
        return castle + _check_suffix(pos, move)
    g = pos.variant.geometry
    t = pos.variant.t
    code = abs(pos.board[move.from_sq])
    letter = _letter(pos, code)
    capture = pos.is_capture(move)
    if letter:
        text = letter + _disambiguation(pos, move, code)
    else:
        text = g.name(move.from_sq)[0] if capture else ""
    text += ("x" if capture else "") + g.name(move.to_sq)
    if move.promotion:
        text += "=" + t.types[move.promotion].display
    return text + _check_suffix(pos, move)


def _disambiguation(pos: Position, move: Move, code: int) -> str:
    """The origin file, rank or square needed to tell ``move`` from same-piece rivals."""
    g = pos.variant.geometry
    mover = pos.board[move.from_sq]
    to = move.to_sq
    rays = pos.variant.t.moves[pos.turn][code]
    any_route = pos.variant.special_moves is not None  # hook moves are not on the rays
    # Only the other pieces of the same type are asked for their moves (no full move list),
    # and only those with the destination on one of their rays.
    rivals = [
        s
        for s, p in enumerate(pos.board)
        if p == mover
        and s != move.from_sq
        and (any_route or any(to in ray[0] for ray in rays[s]))
        and any(m.to_sq == to for m in pos.legal_moves_from(s))
    ]
    if not rivals:
        return ""
    origin = g.name(move.from_sq)
    if all(g.file_of(s) != g.file_of(move.from_sq) for s in rivals):
        return origin[0]
    if all(g.rank_of(s) != g.rank_of(move.from_sq) for s in rivals):
        return origin[1:]
    return origin


def parse_san(pos: Position, text: str) -> Move:
    """Read a move in SAN (or in coordinates) and return the legal :class:`Move` it names.

    Accepted besides strict SAN: ``0-0``/``o-o``; a missing or extra ``x``; ``-`` between origin
    and destination; ``e8Q`` / ``e8(Q)`` for ``e8=Q``; trailing ``e.p.`` and ``+ # ! ?``; the piece letter
    ``P``; a pawn-like piece (one that promotes chess-style, e.g. the Spartan hoplite) without
    its letter when no pawn move matches and the move is unambiguous; and coordinate moves
    (``e2e4``, ``e7e8q``, castling as the king's two-square move ``e1g1`` / ``d1b1``).

    Raise :class:`InvalidMoveError` when the text is not a move or names several legal moves,
    :class:`IllegalMoveError` when it names none.
    """
    raw = text.strip()
    body = _ANNOTATION.sub("", raw)
    if not body:
        raise InvalidMoveError(f"{text!r} is not a move")
    coordinates = _COORDINATES.match(body)
    if coordinates:
        return pos.move_from_uci(body.replace("-", ""))
    if _CASTLE.match(body):
        return _parse_castle(pos, raw, "O-O-O" if body.count("-") == 2 else "O-O")
    m = _SAN.match(body)
    if not m:
        raise InvalidMoveError(f"{text!r} is not a move in SAN (like Nf3, exd5, e8=Q, O-O)")
    g = pos.variant.geometry
    t = pos.variant.t
    try:
        to = g.parse(m["to"])
    except ValueError as exc:
        raise InvalidMoveError(f"{text!r}: {exc}") from None
    promo_text = m["promo"] or m["promo2"]
    promotion = 0
    if promo_text:
        symbol = promo_text.upper()
        if symbol not in t.code:
            raise InvalidMoveError(f"{text!r}: there is no piece {symbol!r} to promote to")
        promotion = t.code[symbol]
    file = m["file"]
    rank = int(m["rank"]) - 1 if m["rank"] else None

    def matches(move: Move, pawn_like: bool) -> bool:
        if move.to_sq != to or move.from_sq == NULL_SQUARE or move.promotion != promotion:
            return False
        code = abs(pos.board[move.from_sq])
        if m["piece"] is not None:
            piece = t.types[code]
            if m["piece"] not in (piece.symbol, piece.display):
                return False
        elif pawn_like:
            if code not in t.choices:
                return False
        elif _letter(pos, code):
            return False
        name = g.name(move.from_sq)
        if file is not None and name[0] != file:
            return False
        return rank is None or g.rank_of(move.from_sq) == rank

    legal = pos.legal_moves()
    found = [mv for mv in legal if matches(mv, pawn_like=False)]
    if not found and m["piece"] is None:
        found = [mv for mv in legal if matches(mv, pawn_like=True)]
    if len(found) == 1:
        return found[0]
    if found:
        options = ", ".join(sorted(san(pos, mv) for mv in found))
        raise InvalidMoveError(f"{raw}: ambiguous, it could be {options}")
    raise IllegalMoveError(f"{raw}: {_why_no_match(pos, to, promotion, m['piece'])}")


def _why_no_match(pos: Position, to: int, promotion: int, letter: str | None) -> str:
    g = pos.variant.geometry
    t = pos.variant.t
    same_square = [mv for mv in pos.legal_moves() if mv.to_sq == to and mv.from_sq != NULL_SQUARE]
    if promotion and any(mv.promotion for mv in same_square):
        return f"that promotion is not allowed on {g.name(to)}"
    if not promotion and same_square and all(mv.promotion for mv in same_square):
        return f"a move to {g.name(to)} must name the piece it promotes to (like {g.name(to)}=Q)"
    if promotion and not any(mv.promotion for mv in same_square):
        return f"no promotion is possible on {g.name(to)}"
    if letter is not None and letter not in t.code:
        return f"there is no piece {letter!r} in {pos.variant.title}"
    return f"no legal move goes to {g.name(to)} like that"


def _parse_castle(pos: Position, text: str, kind: str) -> Move:
    moves = [mv for mv in pos.legal_moves() if _castle_kind(pos, mv) == kind]
    if moves:
        return moves[0]
    side = "short" if kind == "O-O" else "long"
    raise IllegalMoveError(f"{text}: {side} castling ({kind}) is not possible now")

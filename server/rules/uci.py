"""Moves in coordinate form (Fairy-Stockfish's UCI dialect): written, parsed, checked, and
the player-readable reason when a move is refused.

:class:`~server.rules.position.Position` exposes these as ``uci``, ``parse_uci``,
``move_from_uci`` and ``explain_illegal``.
"""

from __future__ import annotations

import itertools
import re
from typing import TYPE_CHECKING

from .errors import IllegalMoveError, InvalidMoveError
from .geometry import Geometry
from .legality import legal_after
from .move import NULL_SQUARE, Move

if TYPE_CHECKING:
    from .position import Position

__all__ = [
    "explain_illegal",
    "legal_by_text",
    "legal_uci",
    "move_from_uci",
    "move_uci",
    "parse_uci",
]

_UCI = re.compile(r"^([a-o])(\d{1,2})([a-o])(\d{1,2})(\+|[a-z][!']?)?$")
_DROP = re.compile(r"^(\+?[A-Z][!']?)@([a-o])(\d{1,2})$")
PASS = "@@@@"  # a Lion's pass (out and back through an empty square), HaChu's null move


def move_uci(pos: Position, m: Move) -> str:
    """``m`` (played from ``pos``) in coordinate form: ``a2a3``, ``c4c5+``, ``P@c3``, ``e7e8q``."""
    t = pos.variant.t
    if m.from_sq == NULL_SQUARE:
        return f"{t.types[m.drop].symbol}@{t.names[m.to_sq]}"
    names = t.names
    if m.via:
        if m.from_sq == m.to_sq and not pos.is_capture(m):
            return PASS
        legs = [m.from_sq, *m.via, m.to_sq]
        text = ",".join(names[a] + names[b] for a, b in itertools.pairwise(legs))
    else:
        text = names[m.from_sq] + names[m.to_sq]
    if m.promotion:
        if t.promote[abs(pos.board[m.from_sq])] == m.promotion:
            text += "+"
        else:
            text += t.types[m.promotion].symbol.lower()
    return text


def legal_uci(pos: Position) -> list[str]:
    """The legal moves in coordinate form, sorted: the ``legal`` list sent with each move (it
    also fills :func:`legal_by_text` from the same texts).

    The text of a move without legs is kept in ``Tables.uci_texts`` and shared: a room keeps
    the legal list of each of its events for the game's life, and fresh strings there cost
    about 2 KB per move event (docs/benchmarks.md, "Garbage collection")."""
    moves = pos.legal_moves()
    texts = _texts(pos, moves)
    by_text = dict(zip(texts, moves, strict=True))
    by_text.pop(PASS, None)  # several passes may share it: move_from_uci picks one
    pos._by_text = by_text
    return sorted(texts)


def _texts(pos: Position, moves: list[Move]) -> list[str]:
    texts = pos.variant.t.uci_texts
    if pos.variant.t.uci_by_move:
        return [move_uci(pos, m) if m.via else (texts.get(m) or _remember(pos, m)) for m in moves]
    # A promotion's text depends on the moving piece here: only plain moves are shared.
    return [
        move_uci(pos, m) if m.promotion or m.drop or m.via else (texts.get(m) or _remember(pos, m))
        for m in moves
    ]


def legal_by_text(pos: Position) -> dict[str, Move]:
    """The legal moves by their coordinate text, a pass (``@@@@``) excepted (cached): a move
    played as text is found here, with its legality, in one look-up (the ``legal`` list was
    generated anyway). A text that is not here (not legal, not canonical, a pass) goes
    through :func:`move_from_uci`, which says why it is refused."""
    if pos._by_text is None:
        legal_uci(pos)
    assert pos._by_text is not None
    return pos._by_text


def _remember(pos: Position, m: Move) -> str:
    """``move_uci`` of a move without legs, kept in ``Tables.uci_texts``."""
    text = move_uci(pos, m)
    pos.variant.t.uci_texts[m] = text
    return text


def parse_uci(pos: Position, text: str) -> Move:
    """Parse a move in coordinate form without checking legality; raise InvalidMoveError
    (IllegalMoveError for a ``+`` on a piece that cannot promote)."""
    g = pos.variant.geometry
    t = pos.variant.t
    text = text.strip()
    try:
        drop = _DROP.match(text)
        if drop:
            sym, f, r = drop.groups()
            if sym not in t.code:
                raise InvalidMoveError(
                    f"{text!r}: there is no piece {sym!r} in {pos.variant.title}"
                )
            return Move(NULL_SQUARE, g.parse(f + r), 0, t.code[sym])
        if "," in text:
            squares = [_leg(leg, g) for leg in text.split(",")]
            for (_, b), (c, _) in itertools.pairwise(squares):
                if b != c:
                    raise InvalidMoveError(
                        f"{text!r}: each leg must start where the previous one ended"
                    )
            via = tuple(a for a, _ in squares[1:])
            return Move(squares[0][0], squares[-1][1], 0, 0, via)
        m = _UCI.match(text)
        if not m:
            raise InvalidMoveError(
                f"{text!r} is not a move in coordinate form (like e2e4, c4c5+, P@c3)"
            )
        f1, r1, f2, r2, suffix = m.groups()
        names = t.square_names
        fr = names.get(f1 + r1)
        to = names.get(f2 + r2)
        if fr is None or to is None:  # g.parse says why
            fr, to = g.parse(f1 + r1), g.parse(f2 + r2)
    except ValueError as exc:
        if isinstance(exc, InvalidMoveError):
            raise
        raise InvalidMoveError(f"{text!r}: {exc}") from None
    promotion = 0
    if suffix == "+":
        piece = pos.board[fr]
        promotion = t.promote[abs(piece)] if piece else 0
        if not promotion:
            raise IllegalMoveError(f"{text}: that piece cannot promote")
    elif suffix:
        sym = suffix.upper()
        if sym not in t.code:
            raise InvalidMoveError(f"{text!r}: unknown promotion piece {suffix!r}")
        promotion = t.code[sym]
    return Move(fr, to, promotion)


def _leg(leg: str, g: Geometry) -> tuple[int, int]:
    m = _UCI.match(leg)
    if not m or m.group(5):
        raise InvalidMoveError(f"{leg!r} is not a leg like h3i4")
    f1, r1, f2, r2, _ = m.groups()
    return g.parse(f1 + r1), g.parse(f2 + r2)


def move_from_uci(pos: Position, text: str) -> Move:
    """Parse and check a move; raise InvalidMoveError / IllegalMoveError with a reason."""
    if pos.variant.special_moves is not None and text.strip() == PASS:
        passes = [
            m for m in pos.legal_moves() if m.from_sq == m.to_sq and m.via and not pos.is_capture(m)
        ]
        if not passes:
            raise IllegalMoveError("no piece can pass here")
        return passes[0]
    m = parse_uci(pos, text)
    if pos.is_legal(m):
        return m
    raise IllegalMoveError(f"{text}: {explain_illegal(pos, m)}")


def explain_illegal(pos: Position, m: Move) -> str:
    """A player-readable reason why ``m`` is not legal in ``pos``."""
    v = pos.variant
    t = v.t
    g = v.geometry
    side = pos.turn
    sign = 1 if side == 0 else -1
    board = pos.board
    if m.from_sq == NULL_SQUARE:
        name = t.types[m.drop].name.lower()
        if v.drops is None:
            return f"there are no drops in {v.title}"
        if not pos.hands[side][m.drop]:
            return f"you have no {name} in hand"
        if board[m.to_sq]:
            return "you can only drop on an empty square"
        if m.to_sq not in t.mobile[side][m.drop]:
            return f"a {name} dropped on {g.name(m.to_sq)} could never move"
        if m.drop in t.one_per_file and any(
            board[g.square(g.file_of(m.to_sq), r)] == sign * m.drop for r in range(g.ranks)
        ):
            return f"two {name}s on file {g.name(m.to_sq)[0]}"
        pseudo = m in pos.pseudo_legal_moves()
        if pseudo and m.drop in t.no_drop_mate and legal_after(pos, m, list(board)):
            return f"{name} drop would give mate"
        return "your king would be in check" if pseudo else "that drop is not possible"
    piece = board[m.from_sq]
    if not piece:
        return f"there is no piece on {g.name(m.from_sq)}"
    if piece * sign < 0:
        return f"the piece on {g.name(m.from_sq)} is not yours"
    code = abs(piece)
    name = t.types[code].name.lower()
    same_route = [p for p in pos.pseudo_legal_moves() if p[:2] == m[:2] and p.via == m.via]
    if not same_route:
        if m.via and not any(board[s] * sign < 0 for s in m.via):
            single = PASS if m.from_sq == m.to_sq else g.name(m.from_sq) + g.name(m.to_sq)
            return f"a multi-leg move must capture on its first leg; send {single} instead"
        return f"the {name} on {g.name(m.from_sq)} cannot move to {g.name(m.to_sq)}"
    if m not in same_route:
        if m.promotion and not any(p.promotion == m.promotion for p in same_route):
            if m.promotion in t.limits.values() or m.promotion in t.limits:
                return "that promotion is not allowed now"
            return f"the {name} cannot promote on this move"
        if not m.promotion:
            return f"the {name} must promote on {g.name(m.to_sq)}"
        return "that promotion is not allowed"
    if len(pos.royals[side]) <= 1:
        return "your king would be in check"
    return "your royal pieces would all be attacked"

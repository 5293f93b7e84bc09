"""Dai Shogi piece moves (spec §5.3): every piece type, both sides, from a central square on an
empty board, near edges and corners, and among blockers, checked against hand counts and the
independent oracle in test_daishogi_oracle.py."""

from __future__ import annotations

from collections import Counter

import pytest
from test_daishogi_oracle import CENTER_DESTINATIONS, PASS, PIECES, Board, Key, fen_of, legal_moves

from server.rules import InvalidFenError, Position, get_variant

DAI = get_variant("daishogi")
SYMBOLS = sorted(PIECES)


def engine_keys(pos: Position) -> list[Key]:
    """The engine's legal moves as oracle keys."""
    g = DAI.geometry
    sign = 1 if pos.turn == 0 else -1

    def sq(s: int) -> tuple[int, int]:
        return (g.file_of(s), g.rank_of(s))

    keys: list[Key] = []
    for m in pos.legal_moves():
        if pos.uci(m) == "@@@@":
            keys.append(PASS)
            continue
        captured = tuple(sq(s) for s in m.via if pos.board[s] * sign < 0)
        keys.append((sq(m.from_sq), captured, sq(m.to_sq), bool(m.promotion)))
    return keys


def assert_same_moves(fen: str) -> list[Key]:
    """The engine lists exactly the oracle's moves in ``fen``, each once."""
    pos = Position.from_fen(DAI, fen)
    engine = engine_keys(pos)
    assert len(engine) == len(set(engine)), "a move is listed twice"
    assert Counter(engine) == Counter(legal_moves(Board.from_fen(fen)))
    return engine


def case(symbol: str, side: int) -> str:
    return symbol if side == 0 else symbol.lower()


@pytest.mark.parametrize("side", [0, 1], ids=["sente", "gote"])
@pytest.mark.parametrize("symbol", SYMBOLS)
def test_piece_moves_from_center_of_empty_board(symbol: str, side: int) -> None:
    fen = fen_of({"h8": case(symbol, side)}, "wb"[side])
    moves = assert_same_moves(fen)
    destinations = {k[2] for k in moves if k != PASS}
    assert len(destinations) == CENTER_DESTINATIONS[symbol]
    assert (PASS in moves) == (PIECES[symbol].lion is not None)


EDGE_SQUARES = ["a1", "o1", "a15", "o15", "h1", "h15", "a8", "o8", "b2", "n14", "h14", "h2", "b13"]


@pytest.mark.parametrize("side", [0, 1], ids=["sente", "gote"])
@pytest.mark.parametrize("symbol", SYMBOLS)
def test_piece_moves_near_edges_and_corners(symbol: str, side: int) -> None:
    for where in EDGE_SQUARES:
        fen = fen_of({where: case(symbol, side)}, "wb"[side])
        if not legal_moves(Board.from_fen(fen)):
            # A piece that could never move from there must not stand there (§5.5).
            with pytest.raises(InvalidFenError):
                Position.from_fen(DAI, fen)
            continue
        assert_same_moves(fen)


# Friendly (upper case for sente) and enemy pieces around h8 at distances 1 and 2 and beyond.
BLOCKERS = {
    "h9": "G", "g7": "p", "j8": "p", "f10": "G", "h11": "p", "i9": "p", "g8": "G", "h6": "p",
    "j6": "G", "f8": "p", "i7": "G", "e5": "p", "l12": "p", "h4": "G",
}  # fmt: skip


def _swap(token: str) -> str:
    return token.lower() if token.lstrip("+")[0].isupper() else token.upper()


@pytest.mark.parametrize("side", [0, 1], ids=["sente", "gote"])
@pytest.mark.parametrize("symbol", SYMBOLS)
def test_piece_moves_among_blockers(symbol: str, side: int) -> None:
    pieces = {sq: (t if side == 0 else _swap(t)) for sq, t in BLOCKERS.items()}
    pieces["h8"] = case(symbol, side)
    assert_same_moves(fen_of(pieces, "wb"[side]))
    # The same with every blocker's side flipped (friends become enemies).
    flipped = {sq: _swap(t) for sq, t in pieces.items() if sq != "h8"}
    flipped["h8"] = case(symbol, side)
    assert_same_moves(fen_of(flipped, "wb"[side]))


def destinations(fen: str, origin: str) -> set[str]:
    pos = Position.from_fen(DAI, fen)
    g = DAI.geometry
    start = g.parse(origin)
    return {g.name(m.to_sq) for m in pos.legal_moves() if m.from_sq == start and not m.via}


def test_violent_ox_cannot_jump_its_second_square() -> None:
    fen = fen_of({"h8": "X'", "h9": "G", "g8": "p", "i8": "P"})
    assert destinations(fen, "h8") == {"h7", "h6", "g8"}  # h10 blocked by h9, f8 by g8's capture


def test_flying_dragon_cannot_jump_its_second_square() -> None:
    fen = fen_of({"h8": "F'", "i9": "G", "g9": "p", "g7": "P"})
    assert destinations(fen, "h8") == {"g9", "i7", "j6"}


def test_kirin_leaps_over_blockers() -> None:
    fen = fen_of({"h8": "O", "h9": "G", "h7": "p", "g8": "G", "i8": "p", "h10": "p", "f8": "G"})
    assert destinations(fen, "h8") == {"h10", "h6", "j8", "g9", "i9", "g7", "i7"}


def test_phoenix_leaps_over_blockers() -> None:
    fen = fen_of({"h8": "X", "i9": "G", "g9": "p", "j10": "p", "f10": "G", "g7": "G"})
    assert destinations(fen, "h8") == {"j10", "f6", "j6", "h9", "h7", "g8", "i8"}


def test_knight_leaps_forward_only() -> None:
    fen = fen_of({"h8": "N", "h9": "G", "g9": "G", "i9": "G", "g10": "p"})
    assert destinations(fen, "h8") == {"g10", "i10"}
    gote = fen_of({"h8": "n", "h7": "g", "g6": "P"}, "b")
    assert destinations(gote, "h8") == {"g6", "i6"}


def test_start_position_has_the_spec_setup() -> None:
    pos = Position.from_fen(DAI, DAI.start_fen)
    g = DAI.geometry
    t = DAI.t
    names = {g.name(s): t.types[abs(p)].display for s, p in enumerate(pos.board) if p}
    assert names["g3"] == "Kr" and names["i3"] == "Ph" and names["h3"] == "Ln"
    assert names["g13"] == "Ph" and names["i13"] == "Kr" and names["h13"] == "Ln"
    assert names["h1"] == "K" and names["h2"] == "DE" and names["e6"] == "GB"
    assert sum(1 for p in pos.board if p > 0) == 65 and sum(1 for p in pos.board if p < 0) == 65
    assert len({t.types[abs(p)].symbol for p in pos.board if p}) == 29
    assert pos.fen() == DAI.start_fen

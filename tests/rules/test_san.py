"""SAN for the chess family (spec §3.7, §4.8): writing with san(), reading with parse_san()."""

from __future__ import annotations

import random

import pytest

from server.rules import Game, IllegalMoveError, InvalidMoveError, Position, get_variant
from server.rules.chess_family import ICS_SETUPS, SEED_SETUPS
from server.rules.san import parse_san, san

WILD = get_variant("wildcastle")
SPARTAN = get_variant("spartan")


def written(variant_name: str, fen: str, uci: str) -> str:
    pos = Position.from_fen(get_variant(variant_name), fen)
    return san(pos, pos.move_from_uci(uci))


def read(variant_name: str, fen: str, text: str) -> str:
    pos = Position.from_fen(get_variant(variant_name), fen)
    return pos.uci(parse_san(pos, text))


# ------------------------------------------------------------------- writing


@pytest.mark.parametrize(
    ("fen", "uci", "expected"),
    [
        (WILD.start_fen, "g1f3", "Nf3"),
        (WILD.start_fen, "e2e4", "e4"),
        ("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1", "e4d5", "exd5"),
        ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6", "exd6"),
        ("1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7b8q", "axb8=Q+"),
        ("1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7a8n", "a8=N"),
        ("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", "a1a8", "Ra8#"),
        ("k7/8/8/8/8/8/8/KN3N2 w - - 0 1", "b1d2", "Nbd2"),
        ("k7/8/8/8/8/5N2/8/K4N2 w - - 0 1", "f1d2", "N1d2"),
        ("8/8/1k6/8/4Q2Q/8/8/K6Q w - - 0 1", "h4e1", "Qh4e1"),
        ("8/8/1k6/8/4Q2Q/8/8/K6Q w - - 0 1", "e4e1", "Qee1"),
        ("8/8/1k6/8/4Q2Q/8/8/K6Q w - - 0 1", "h1e1", "Q1e1"),
    ],
)
def test_san_writes_fide_notation(fen: str, uci: str, expected: str) -> None:
    assert written("wildcastle", fen, uci) == expected


def test_san_disambiguation_ignores_pinned_rivals() -> None:
    # The c3 knight is pinned against the king: Ne2 is not ambiguous.
    assert written("wildcastle", "4k3/8/8/8/1b6/2N5/8/4K1N1 w - - 0 1", "g1e2") == "Ne2"


@pytest.mark.parametrize(
    ("fen", "uci", "expected"),
    [
        ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1g1", "O-O"),
        ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1c1", "O-O-O"),
        ("r2k3r/8/8/8/8/8/8/R2K3R w KQkq - 0 1", "d1b1", "O-O"),
        ("r2k3r/8/8/8/8/8/8/R2K3R w KQkq - 0 1", "d1f1", "O-O-O"),
        ("r2k3r/8/8/8/8/8/8/R2K3R b KQkq - 0 1", "d8b8", "O-O"),
        ("r2k3r/8/8/8/8/8/8/R2K3R b KQkq - 0 1", "d8f8", "O-O-O"),
        ("5k2/8/8/8/8/8/8/4K2R w K - 0 1", "e1g1", "O-O+"),
        ("4k3/8/8/8/8/8/8/R2K4 w Q - 0 1", "d1b1", "O-O"),
        ("2k5/8/8/8/8/8/8/R2K4 w Q - 0 1", "d1b1", "O-O+"),
    ],
)
def test_san_castling_short_is_the_nearer_rook(fen: str, uci: str, expected: str) -> None:
    assert written("wildcastle", fen, uci) == expected


@pytest.mark.parametrize(
    ("fen", "uci", "expected"),
    [
        ("lgkcckwl/hhhhhhhh/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQ - 0 1", "c7e5", "Hce5"),
        ("lgkcckwl/hhhhhhhh/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQ - 0 1", "b7a6", "Ha6"),
        ("4k3/8/3h4/3P4/8/8/8/4K3 b - - 0 1", "d6d5", "Hxd5"),
        ("4k3/8/8/8/8/8/3h4/7K b - - 0 1", "d2c1k", "Hc1=K"),
        ("2k1k3/8/8/8/8/8/8/4K3 b - - 0 1", "c8d7", "Kcd7"),
        ("k6k/8/8/8/8/8/8/1R2K2R w - - 0 1", "b1a1", "Ra1+"),  # duple check
        ("k6k/8/8/8/8/8/8/4K1R1 w - - 0 1", "g1h1", "Rh1"),  # one of two kings attacked
        ("k6k/8/8/8/8/8/8/RR1QK1R1 w - - 0 1", "d1h5", "Qh5#"),  # duple checkmate
        ("4k3/8/8/8/8/8/8/3QK3 w - - 0 1", "d1d7", "Qd7+"),
        ("4k3/8/8/8/8/8/8/2K5 b - - 0 1", "e8e7", "Ke7"),
    ],
)
def test_san_spartan(fen: str, uci: str, expected: str) -> None:
    assert written("spartan", fen, uci) == expected


# ------------------------------------------------------------------- reading


@pytest.mark.parametrize(
    ("text", "uci"),
    [
        ("Nf3", "g1f3"),
        ("Nf3+", "g1f3"),
        ("Nf3!?", "g1f3"),
        ("Ng1f3", "g1f3"),
        ("Ng1-f3", "g1f3"),
        ("Ngf3", "g1f3"),
        ("N1f3", "g1f3"),
        ("e4", "e2e4"),
        ("Pe4", "e2e4"),
        ("e2e4", "e2e4"),
        ("e2-e4", "e2e4"),
    ],
)
def test_parse_san_accepts_common_forms(text: str, uci: str) -> None:
    assert read("wildcastle", WILD.start_fen, text) == uci


def test_parse_san_en_passant_suffix() -> None:
    fen = "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1"
    assert read("wildcastle", fen, "exd6 e.p.") == read("wildcastle", fen, "exd6") == "e5d6"


@pytest.mark.parametrize("text", ["e8=Q", "e8Q", "e8(Q)", "e8=q", "e7e8q"])
def test_parse_san_promotion_forms(text: str) -> None:
    assert read("wildcastle", "8/4P3/8/8/8/8/k7/4K3 w - - 0 1", text) == "e7e8q"


@pytest.mark.parametrize(
    ("fen", "text", "uci"),
    [
        ("r2k3r/8/8/8/8/8/8/R2K3R w KQkq - 0 1", "O-O", "d1b1"),
        ("r2k3r/8/8/8/8/8/8/R2K3R w KQkq - 0 1", "0-0", "d1b1"),
        ("r2k3r/8/8/8/8/8/8/R2K3R w KQkq - 0 1", "o-o-o", "d1f1"),
        ("r2k3r/8/8/8/8/8/8/R2K3R w KQkq - 0 1", "O-O-O+", "d1f1"),
        ("r2k3r/8/8/8/8/8/8/R2K3R w KQkq - 0 1", "d1b1", "d1b1"),
        ("r2k3r/8/8/8/8/8/8/R2K3R w KQkq - 0 1", "d1f1", "d1f1"),
        ("r2k3r/8/8/8/8/8/8/R2K3R w KQkq - 0 1", "Kd1b1", "d1b1"),
        ("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "O-O", "e8g8"),
        ("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "O-O-O", "e8c8"),
        ("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "e8g8", "e8g8"),
    ],
)
def test_parse_san_castling_by_name_or_by_king_move(fen: str, text: str, uci: str) -> None:
    assert read("wildcastle", fen, text) == uci


def test_parse_san_hoplite_without_letter_when_unambiguous() -> None:
    fen = "lgkcckwl/hhhhhhhh/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQ - 0 1"
    assert read("spartan", fen, "Ha6") == "b7a6"
    assert read("spartan", fen, "a6") == "b7a6"
    assert read("spartan", fen, "ce5") == "c7e5"
    assert read("spartan", "4k3/8/3h4/3P4/8/8/8/4K3 b - - 0 1", "xd5") == "d6d5"
    assert read("spartan", "4k3/8/8/8/8/8/3h4/7K b - - 0 1", "c1=K") == "d2c1k"
    with pytest.raises(InvalidMoveError, match="ambiguous"):
        read("spartan", fen, "e5")
    with pytest.raises(InvalidMoveError, match="ambiguous"):
        read("spartan", fen, "Hc6")


def test_parse_san_two_spartan_kings() -> None:
    fen = "2k1k3/8/8/8/8/8/8/4K3 b - - 0 1"
    assert read("spartan", fen, "Kcd7") == "c8d7"
    assert read("spartan", fen, "Ked7") == "e8d7"
    with pytest.raises(InvalidMoveError, match="Kcd7, Ked7"):
        read("spartan", fen, "Kd7")


@pytest.mark.parametrize(
    ("fen", "text", "error", "reason"),
    [
        (WILD.start_fen, "hello", InvalidMoveError, "not a move"),
        (WILD.start_fen, "", InvalidMoveError, "not a move"),
        (WILD.start_fen, "e9", InvalidMoveError, "not a square"),
        (WILD.start_fen, "Nf6", IllegalMoveError, "no legal move"),
        (WILD.start_fen, "Ke2", IllegalMoveError, "no legal move"),
        (WILD.start_fen, "O-O", IllegalMoveError, "short castling"),
        (WILD.start_fen, "e5", IllegalMoveError, "no legal move"),
        (WILD.start_fen, "e2e5", IllegalMoveError, "cannot move"),
        ("8/4P3/8/8/8/8/k7/4K3 w - - 0 1", "e8", IllegalMoveError, "must name the piece"),
        ("8/4P3/8/8/8/8/k7/4K3 w - - 0 1", "e8=K", IllegalMoveError, "not allowed"),
        ("8/4P3/8/8/8/8/k7/4K3 w - - 0 1", "e8=Z", InvalidMoveError, "no piece"),
        ("8/4P3/8/8/8/8/k7/4K3 w - - 0 1", "Ke2=Q", IllegalMoveError, "no promotion"),
    ],
)
def test_parse_san_errors_say_why(fen: str, text: str, error: type[Exception], reason: str) -> None:
    with pytest.raises(error, match=reason):
        read("wildcastle", fen, text)


def test_parse_san_errors_change_nothing() -> None:
    pos = Position.from_fen(WILD, WILD.start_fen)
    with pytest.raises(IllegalMoveError):
        parse_san(pos, "Nf6")
    assert pos.fen() == WILD.start_fen


@pytest.mark.parametrize("variant_name", ["wildcastle", "spartan"])
def test_san_round_trips_for_every_legal_move(variant_name: str) -> None:
    """Over seeded random playouts, every legal move's SAN reads back as that move and no two
    legal moves share a SAN."""
    variant = get_variant(variant_name)
    rng = random.Random(99)
    checked = 0
    for game_number in range(6):
        fen = variant.start_fen
        if variant_name == "wildcastle":
            fen = (SEED_SETUPS if game_number % 2 else ICS_SETUPS)(rng)
        game = Game(variant, fen)
        while game.outcome() is None and game.ply < 100:
            pos = game.position
            texts = {}
            for move in pos.legal_moves():
                text = san(pos, move)
                assert text not in texts, f"{text} written for two moves in {pos.fen()}"
                texts[text] = move
                assert parse_san(pos, text) == move, (pos.fen(), text)
                checked += 1
            game.push(rng.choice(pos.legal_moves()))
    assert checked > 8000

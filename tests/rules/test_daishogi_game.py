"""Dai Shogi rules beyond piece moves: promotion (§5.5), no drops (§5.6), royal capture (§5.7,
§5.8), repetition and perpetual check (§5.8), stalemate, Dai.rul notation (§5.9), FEN."""

from __future__ import annotations

import pytest
from test_daishogi_oracle import fen_of

from server.rules import (
    Game,
    IllegalMoveError,
    InvalidFenError,
    Outcome,
    Position,
    Side,
    Termination,
    get_variant,
)

DAI = get_variant("daishogi")
G = DAI.geometry
KINGS = {"a1": "K", "o15": "k"}


def game(pieces: dict[str, str], turn: str = "w") -> Game:
    return Game(DAI, fen_of({**KINGS, **pieces}, turn))


def moves_from(g: Game, origin: str) -> set[str]:
    pos = g.position
    start = G.parse(origin)
    return {pos.uci(m) for m in pos.legal_moves() if m.from_sq == start}


# ----------------------------------------------------------------------------- promotion


def test_promotion_is_optional_on_entering_the_zone() -> None:
    g = game({"h10": "S"})
    assert {"h10h11", "h10h11+"} <= moves_from(g, "h10")
    assert g.play("h10h11+").display == "S-8e+"
    assert g.position.board[G.parse("h11")] == DAI.t.code["+S"]


def test_declining_promotion_is_written_with_equals() -> None:
    g = game({"h10": "S"})
    assert g.play("h10h11").display == "S-8e="


def test_promotion_is_optional_when_moving_within_or_leaving_the_zone() -> None:
    g = game({"h12": "S", "c11": "G"})
    assert {"h12h13", "h12h13+", "h12g11", "h12g11+"} <= moves_from(g, "h12")
    assert {"c11c10", "c11c10+", "c11c12", "c11c12+"} <= moves_from(g, "c11")


def test_no_promotion_outside_the_zone() -> None:
    g = game({"h8": "S", "d9": "R"})
    assert moves_from(g, "h8") == {"h8h9", "h8g9", "h8i9", "h8g7", "h8i7"}
    assert "d9d10+" not in moves_from(g, "d9") and "d9d11+" in moves_from(g, "d9")


def test_promotion_with_capture() -> None:
    g = game({"h10": "G", "h11": "p"})
    assert g.play("h10h11+").display == "Gx8e+"


@pytest.mark.parametrize(
    ("piece", "origin", "target"),
    [("P", "h14", "h15"), ("L", "h9", "h15"), ("I", "h14", "i15"), ("U", "h14", "g15")],
)
def test_pawn_lance_iron_stone_must_promote_on_the_last_rank(
    piece: str, origin: str, target: str
) -> None:
    g = game({origin: piece})
    moves = moves_from(g, origin)
    assert f"{origin}{target}+" in moves and f"{origin}{target}" not in moves
    with pytest.raises(IllegalMoveError, match="must promote"):
        g.play(f"{origin}{target}")


def test_pawn_lance_iron_stone_may_stay_unpromoted_before_the_last_rank() -> None:
    g = game({"h13": "P", "b9": "L", "d13": "I", "f13": "U"})
    assert {"h13h14", "h13h14+"} <= moves_from(g, "h13")
    assert {"b9b14", "b9b14+", "b9b10"} <= moves_from(g, "b9") and "b9b10+" not in moves_from(
        g, "b9"
    )
    assert {"d13d14", "d13e14", "f13g14"} <= moves_from(g, "d13") | moves_from(g, "f13")


def test_knight_must_promote_on_either_of_the_last_two_ranks() -> None:
    g = game({"h12": "N", "c13": "N", "l11": "N"})
    assert moves_from(g, "h12") == {"h12g14+", "h12i14+"}
    assert moves_from(g, "c13") == {"c13b15+", "c13d15+"}
    assert moves_from(g, "l11") == {"l11k13", "l11k13+", "l11m13", "l11m13+"}


def test_gote_must_promote_on_its_last_ranks() -> None:
    g = game({"h2": "p", "c3": "n", "l6": "p"}, "b")
    assert moves_from(g, "h2") == {"h2h1+"}
    assert moves_from(g, "c3") == {"c3b1+", "c3d1+"}
    assert moves_from(g, "l6") == {"l6l5", "l6l5+"}


def test_unpromotable_and_promoted_pieces_never_promote() -> None:
    g = game({"h12": "L!", "c12": "Q", "e12": "+G", "k12": "+H", "m12": "+O"})
    g2 = Game(DAI, fen_of({"h14": "K", "o1": "k", "c12": "Q"}))
    for origin in ("h12", "c12", "e12", "k12", "m12"):
        assert not {m for m in moves_from(g, origin) if m.endswith("+")}
    assert not {m for m in moves_from(g2, "h14") if m.endswith("+")}


def test_a_declined_promotion_may_be_taken_later_in_the_zone() -> None:
    g = game({"h10": "S"})
    g.play("h10h11")
    g.play("o15o14")
    assert "h11h12+" in g.legal_moves()


PROMOTIONS = {
    "DE": "Crown Prince", "DK": "Soaring Eagle", "DH": "Horned Falcon", "R": "Dragon King",
    "B": "Dragon Horse", "VM": "Flying Ox", "SM": "Free Boar", "RC": "Whale", "L": "White Horse",
    "BT": "Flying Stag", "FL": "Bishop", "G": "Rook", "S": "Vertical Mover", "C": "Side Mover",
    "I": "Gold General", "SG": "Gold General", "N": "Gold General", "Kr": "Lion",
    "Ph": "Free King", "VO": "Gold General", "FD": "Gold General", "EW": "Gold General",
    "AB": "Gold General", "CS": "Gold General", "GB": "Drunk Elephant", "P": "Gold General",
}  # fmt: skip


def test_promotion_table_matches_the_spec() -> None:
    t = DAI.t
    found = {}
    for code in range(1, t.n + 1):
        piece = t.types[code]
        if t.promote[code]:
            promoted = t.types[t.promote[code]]
            found[piece.display] = promoted.name
            assert promoted.display == "+" + piece.display
    assert found == PROMOTIONS
    assert {
        t.types[c].display
        for c in range(1, t.n + 1)
        if not t.promote[c] and not t.types[c].is_promoted
    } == {
        "K",
        "FK",
        "Ln",
    }


def test_drunk_elephant_promotes_to_a_royal_crown_prince() -> None:
    g = game({"h10": "E"})
    g.play("h10h11+")
    assert len(g.position.royals[0]) == 2


def test_promoted_go_between_is_not_royal_and_never_promotes_again() -> None:
    g = game({"h10": "P'"})
    g.play("h10h11+")
    assert len(g.position.royals[0]) == 1
    g.play("o15o14")
    assert not {m for m in moves_from(g, "h11") if m.endswith("+")}
    assert moves_from(g, "h11") == {
        "h11g12",
        "h11h12",
        "h11i12",
        "h11g11",
        "h11i11",
        "h11g10",
        "h11i10",
    }


def test_there_are_no_drops() -> None:
    g = game({"h8": "R", "h12": "p"})
    g.play("h8h12")
    assert all(n == 0 for n in g.position.hands[0]) and "[" not in g.fen()
    g.play("o15o14")
    with pytest.raises(IllegalMoveError, match="no drops"):
        g.play("P@h9")


# ------------------------------------------------------------------------ royal capture


def test_moving_into_check_is_legal() -> None:
    g = Game(DAI, fen_of({"h8": "K", "a9": "r", "o15": "k"}))
    g.play("h8h9")
    assert g.outcome() is None
    record = g.play("a9h9")
    assert g.outcome() == Outcome(Termination.ROYAL_CAPTURE, Side.SECOND)
    assert record.display == "Rx8g"


def test_king_captured_while_crown_prince_survives_the_game_goes_on() -> None:
    g = Game(DAI, fen_of({"a1": "K", "h3": "+E", "a15": "r", "o15": "k"}, "b"))
    assert not g.position.is_check()  # two royals: never "in check"
    g.play("a15a1")
    assert g.outcome() is None
    assert g.position.royals[0] == (G.parse("h3"),)
    assert g.position.is_check() is False
    g.play("h3h4")
    g.play("a1a4")
    assert g.position.is_check()  # the Crown Prince, now the only royal, is attacked
    g.play("h4h5")
    g.play("a4a5")
    g.play("h5g6")
    g.play("a5a6")
    assert g.outcome() is None
    g.play("g6g7")
    g.play("a6g6")
    assert g.outcome() is None
    g.play("g7h8")
    g.play("g6g8")
    assert g.outcome() is None and g.position.is_check()
    g.play("h8i9")
    record = g.play("g8g9")
    assert record.gives_check
    g.play("i9h9")  # the prince steps next to the rook
    g.play("g9h9")
    assert g.outcome() == Outcome(Termination.ROYAL_CAPTURE, Side.SECOND)
    outcome = g.outcome()
    assert outcome is not None and outcome.result() == "0-1"
    assert g.legal_moves() == []
    with pytest.raises(IllegalMoveError, match="over"):
        g.play("a2a3")


def test_crown_prince_captured_while_king_survives_the_game_goes_on() -> None:
    g = Game(DAI, fen_of({"a1": "K", "h3": "+E", "h15": "r", "o15": "k"}, "b"))
    g.play("h15h3")
    assert g.outcome() is None and g.position.royals[0] == (G.parse("a1"),)


def test_capturing_the_last_royal_with_a_lion_igui_wins() -> None:
    g = Game(DAI, fen_of({"a1": "K", "h8": "L!", "h9": "k"}))
    record = g.play("h8h9,h9h8")
    assert record.display == "Lnx!8g"
    assert g.outcome() == Outcome(Termination.ROYAL_CAPTURE, Side.FIRST)


def test_no_move_at_all_loses() -> None:
    # Sente's board is full of its own pieces that cannot move: it loses (spec §5.8.2).
    pieces = {f"{f}{r}": "G" for f in "abcdefghijklmno" for r in range(1, 16)}
    pieces.update({"a1": "K", "o15": "k", "n15": "C'", "o14": "C'", "n14": "A'"})
    g = Game(DAI, fen_of(pieces))
    assert g.outcome() == Outcome(Termination.STALEMATE, Side.SECOND)
    assert g.legal_moves() == []


# ------------------------------------------------------------------------------ repetition


def test_perpetual_check_loses() -> None:
    g = Game(DAI, fen_of({"h1": "K", "a13": "R", "n15": "k"}))
    cycle = ["a13a15", "n15n14", "a15a14", "n14n15", "a14a15", "n15n14", "a15a14", "n14n15"]
    cycle += ["a14a15", "n15n14", "a15a14", "n14n15", "a14a15"]
    for text in cycle[:-1]:
        g.play(text)
        assert g.outcome() is None
    assert g.play(cycle[-1]).gives_check
    assert g.outcome() == Outcome(Termination.PERPETUAL_CHECK, Side.SECOND)


def test_perpetual_check_by_passing_lion_loses() -> None:
    # A pass that leaves the enemy king attacked is a checking move.
    g = Game(DAI, fen_of({"a1": "K", "h8": "L!", "j10": "k", "c13": "l!"}))
    for ply in range(5):
        record = g.play("@@@@")
        assert record.gives_check == (ply % 2 == 0)
        assert g.outcome() is None
    g.play("@@@@")
    assert g.outcome() == Outcome(Termination.PERPETUAL_CHECK, Side.SECOND)


def test_repetition_without_perpetual_check_is_a_draw() -> None:
    g = Game(DAI, fen_of({"h1": "K", "o15": "k"}))
    cycle = ["h1h2", "o15o14", "h2h1", "o14o15"] * 3
    for text in cycle[:-1]:
        g.play(text)
        assert g.outcome() is None
    g.play(cycle[-1])
    assert g.repetitions() == 4
    assert g.outcome() == Outcome(Termination.REPETITION, None)


# -------------------------------------------------------------------------------- notation


def test_origin_is_given_when_two_pieces_of_a_type_can_make_the_move() -> None:
    g = game({"g8": "G", "i8": "G", "c8": "G"})
    assert g.play("g8h9").display == "G9h-8g"
    g2 = game({"g8": "G", "c8": "G"})
    assert g2.play("g8h9").display == "G-8g"


def test_origin_is_given_for_an_igui_two_lions_could_make() -> None:
    g = game({"g8": "L!", "i8": "L!", "h9": "p"})
    assert g.play("g8h9,h9g8").display == "Ln9hx!8g"


def test_notation_of_gote_moves_uses_the_same_coordinates() -> None:
    g = Game(DAI)
    g.play("h5h6")
    assert g.play("h11h10").display == "P-8f"
    assert g.displays == ["P-8j", "P-8f"]


def test_promoted_piece_is_written_with_plus_and_its_original_abbreviation() -> None:
    g = game({"h8": "+H", "c3": "+P'", "e5": "+E"})
    assert g.play("h8h6").display == "+DH-8j"
    g.play("o15o14")
    assert g.play("c3c4").display == "+GB-13l"
    g.play("o14o15")
    assert g.play("e5e6").display == "+DE-11j"


# ------------------------------------------------------------------------------------ FEN


def test_start_fen_round_trips_and_first_moves() -> None:
    g = Game(DAI)
    assert g.fen() == DAI.start_fen
    assert len(g.legal_moves()) == 71
    g.play("h3f2")  # Ln jumps over its own pieces
    assert Position.from_fen(DAI, g.fen()).fen() == g.fen()


@pytest.mark.parametrize(
    "fen",
    [
        "15/15/15/15/15/15/15/15/15/15/15/15/15/15/15/15 w - - 0 1",  # 16 ranks
        "z14/15/15/15/15/15/15/15/15/15/15/15/15/15/14K w - - 0 1",  # unknown piece
        "7P7/15/15/15/15/15/15/15/15/15/15/15/15/15/14K w - - 0 1",  # pawn that can never move
        "k15/15/15/15/15/15/15/15/15/15/15/15/15/15/14K w - - 0 1",  # 16 files
    ],
)
def test_invalid_fens_are_rejected(fen: str) -> None:
    with pytest.raises(InvalidFenError):
        Position.from_fen(DAI, fen)

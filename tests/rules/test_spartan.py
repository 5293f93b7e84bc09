"""Spartan Chess (spec §4): one named test per rule, on hand-built positions.

Differential tests against Fairy-Stockfish live in test_spartan_diff.py.
"""

from __future__ import annotations

import io

import pytest

from server.rules import (
    Game,
    IllegalMoveError,
    Position,
    Side,
    Termination,
    get_variant,
    has_mating_material,
)

SPARTAN = get_variant("spartan")


def moves(fen: str, origin: str = "") -> set[str]:
    """Legal moves of the position (also in positions where the game would be over)."""
    pos = Position.from_fen(SPARTAN, fen)
    return {u for u in map(pos.uci, pos.legal_moves()) if u.startswith(origin)}


def from_square(fen: str, origin: str) -> set[str]:
    return {m[2:4] for m in moves(fen, origin)}


# ------------------------------------------------------------ §4.1–4.2 board, start


def test_start_position_is_fairy_stockfish_start() -> None:
    game = Game(SPARTAN)
    assert game.fen() == "lgkcckwl/hhhhhhhh/8/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1"
    pos = game.position
    assert [pos.variant.geometry.name(s) for s in pos.royals[Side.FIRST]] == ["e1"]
    assert [pos.variant.geometry.name(s) for s in pos.royals[Side.SECOND]] == ["c8", "f8"]
    assert SPARTAN.random_start_fen(__import__("random").Random(1)) == SPARTAN.start_fen
    assert len(game.legal_moves()) == 20


# ------------------------------------------------------------------ §4.3 pieces


def test_warlord_moves_as_bishop_plus_knight() -> None:
    assert from_square("4k3/8/8/3w4/8/8/8/4K3 b - - 0 1", "d5") == {
        "a2", "b3", "c4", "e6", "f7", "g8", "a8", "b7", "c6", "e4", "f3", "g2", "h1",
        "b4", "b6", "c3", "c7", "e3", "e7", "f4", "f6",
    }


def test_general_moves_as_rook_plus_one_diagonal_step() -> None:
    assert from_square("4k3/8/8/3g4/8/8/8/4K3 b - - 0 1", "d5") == {
        "a5", "b5", "c5", "e5", "f5", "g5", "h5", "d1", "d2", "d3", "d4", "d6", "d7", "d8",
        "c4", "c6", "e4", "e6",
    }


def test_lieutenant_leaps_one_or_two_diagonally_and_steps_sideways_without_capturing() -> None:
    # Persian pawns on c4 and e6: captured by the one-step, leapt over by the two-step.
    assert from_square("4k3/8/4P3/3l4/2P5/8/8/4K3 b - - 0 1", "d5") == {
        "c4", "e6", "c6", "e4", "b3", "f7", "b7", "f3", "c5", "e5",
    }
    # Sideways it never captures and never goes forward or back.
    assert from_square("4k3/8/8/2PlP3/8/8/8/4K3 b - - 0 1", "d5") == {
        "c4", "c6", "e4", "e6", "b3", "b7", "f3", "f7",
    }


def test_captain_leaps_one_or_two_orthogonally() -> None:
    assert from_square("4k3/8/8/3c4/3P4/8/8/4K3 b - - 0 1", "d5") == {
        "d4", "d3", "d6", "d7", "c5", "b5", "e5", "f5",
    }


def test_hoplite_moves_diagonally_forward_and_captures_straight_forward() -> None:
    assert from_square("4k3/8/3h4/8/8/8/8/4K3 b - - 0 1", "d6") == {"c5", "e5"}
    assert from_square("4k3/8/3h4/2PP4/8/8/8/4K3 b - - 0 1", "d6") == {"d5", "e5"}  # no diagonal capture


def test_hoplite_initial_double_step_jumps_diagonally() -> None:
    assert from_square("4k3/3h4/8/8/8/8/8/4K3 b - - 0 1", "d7") == {"c6", "e6", "b5", "f5"}
    # Pieces on c6 and e6 do not block the jump to b5 and f5.
    assert from_square("4k3/3h4/2P1P3/8/8/8/8/4K3 b - - 0 1", "d7") == {"b5", "f5"}
    # Only from rank 7.
    assert from_square("4k3/8/3h4/8/8/8/8/4K3 b - - 0 1", "d6") == {"c5", "e5"}
    # The jump lands only on an empty square.
    assert from_square("4k3/3h4/8/1P3P2/8/8/8/4K3 b - - 0 1", "d7") == {"c6", "e6"}


def test_persian_pieces_move_as_in_fide_chess() -> None:
    assert from_square("4k3/8/8/8/3N4/8/8/4K3 w - - 0 1", "d4") == {
        "b3", "b5", "c2", "c6", "e2", "e6", "f3", "f5",
    }
    assert len(moves("4k3/8/8/8/3Q4/8/8/7K w - - 0 1", "d4")) == 27


# ------------------------------------------------------- §4.4 pawns and hoplites


def test_persian_pawn_double_step_is_blocked_by_a_piece_on_rank_3() -> None:
    assert from_square("4k3/8/8/8/8/2h5/2P5/4K3 w - - 0 1", "c2") == set()
    assert from_square("4k3/8/8/8/2h5/8/2P5/4K3 w - - 0 1", "c2") == {"c3"}
    assert from_square("4k3/8/8/8/8/8/2P5/4K3 w - - 0 1", "c2") == {"c3", "c4"}


def test_no_en_passant_for_either_side() -> None:
    game = Game(SPARTAN, "4k3/8/8/8/3h4/8/2P5/4K3 w - - 0 1")
    game.play("c2c4")
    assert game.fen().split()[3] == "-"
    game.play("d4c3")  # a plain hoplite move: the c4 pawn stays
    assert game.fen() == "4k3/8/8/8/2P5/2h5/8/4K3 w - - 0 2"
    game = Game(SPARTAN, "4k3/4h3/8/3P4/8/8/8/4K3 b - - 0 1")
    game.play("e7c5")
    assert game.fen().split()[3] == "-"
    assert "d5c6" not in game.legal_moves()


def test_hoplite_promotes_on_rank_1_to_king_warlord_general_lieutenant_or_captain() -> None:
    assert moves("4k3/8/8/8/8/8/3h4/7K b - - 0 1", "d2") == {
        "d2c1k", "d2c1w", "d2c1g", "d2c1l", "d2c1c", "d2e1k", "d2e1w", "d2e1g", "d2e1l", "d2e1c",
    }
    game = Game(SPARTAN, "4k3/8/8/8/8/8/3h4/7K b - - 0 1")
    with pytest.raises(IllegalMoveError, match="must promote"):
        game.play("d2c1")
    with pytest.raises(IllegalMoveError):
        game.play("d2c1q")


def test_hoplite_promotes_to_king_only_while_the_spartans_have_one_king() -> None:
    assert moves("3kk3/8/8/8/8/8/3h4/7K b - - 0 1", "d2") == {
        "d2c1w", "d2c1g", "d2c1l", "d2c1c", "d2e1w", "d2e1g", "d2e1l", "d2e1c",
    }
    game = Game(SPARTAN, "4k3/8/8/8/8/8/3h4/7K b - - 0 1")
    game.play("d2c1k")
    assert len(game.position.royals[Side.SECOND]) == 2
    assert game.fen() == "4k3/8/8/8/8/8/8/2k4K w - - 0 2"


def test_persian_pawn_promotes_to_queen_rook_bishop_or_knight_only() -> None:
    assert moves("4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7") == {"a7a8q", "a7a8r", "a7a8b", "a7a8n"}
    game = Game(SPARTAN, "4k3/P7/8/8/8/8/8/4K3 w - - 0 1")
    for piece in "kwglc":
        with pytest.raises(IllegalMoveError):
            game.play(f"a7a8{piece}")


# ------------------------------------------------------------------ §4.5 castling


def test_persians_castle_as_in_fide_chess() -> None:
    fen = "lgkcckwl/8/8/8/8/8/8/R3K2R w KQ - 0 1"
    game = Game(SPARTAN, fen)
    assert {"e1g1", "e1c1"} <= set(game.legal_moves())
    game.play("e1g1")
    assert game.fen() == "lgkcckwl/8/8/8/8/8/8/R4RK1 b - - 1 1"
    game = Game(SPARTAN, fen)
    game.play("e1c1")
    assert game.fen() == "lgkcckwl/8/8/8/8/8/8/2KR3R b - - 1 1"


def test_spartans_never_castle() -> None:
    pos = Position.from_fen(SPARTAN, "l1k2k1l/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    assert pos.fen().split()[2] == "KQ"
    assert not {"e8g8", "e8c8"} & moves("l3k2l/8/8/8/8/8/8/R3K2R b KQkq - 0 1")


# ---------------------------------------------------------------- §4.6 legality


def test_persian_king_never_steps_next_to_a_spartan_king() -> None:
    assert from_square("8/8/8/3k4/8/3K4/8/8 w - - 0 1", "d3") == {"c2", "d2", "e2", "c3", "e3"}


def test_spartan_king_may_stand_attacked_while_the_other_king_is_safe() -> None:
    # Spartan kings a8 and h8; the bishop attacks a8 and h7, the rooks the b and g files.
    fen = "k6k/8/8/8/4B3/8/8/1R2K1R1 b - - 0 1"
    assert moves(fen) == {"a8a7", "a8b7", "a8b8"}  # every h8 move would leave both attacked
    assert not Game(SPARTAN, fen).position.is_check()


def test_spartan_king_may_step_next_to_the_persian_king_when_the_other_is_safe() -> None:
    assert "d5d4" in moves("7k/8/8/3k4/8/3K4/8/8 b - - 0 1")
    assert "d5d4" not in moves("8/8/8/3k4/8/3K4/8/8 b - - 0 1")


def test_persians_may_capture_a_king_and_the_game_goes_on() -> None:
    game = Game(SPARTAN, "k6k/8/8/8/8/8/8/1R2K3 b - - 0 1")
    game.play("a8b8")
    game.play("b1b8")
    assert game.outcome() is None
    assert game.fen() == "1R5k/8/8/8/8/8/8/4K3 b - - 0 2"
    assert game.position.is_check()  # the last king is an ordinary king now
    assert set(game.legal_moves()) == {"h8g7", "h8h7"}


def test_sole_spartan_king_attacked_is_check() -> None:
    assert Game(SPARTAN, "5k2/8/8/8/8/8/8/4KR2 b - - 0 1").position.is_check()


def test_one_of_two_kings_attacked_is_not_check() -> None:
    assert not Game(SPARTAN, "k6k/8/8/8/8/8/8/R3K3 b - - 0 1").position.is_check()


def test_duple_check_must_be_answered_by_unattacking_a_king() -> None:
    game = Game(SPARTAN, "k6k/8/8/8/8/8/8/R3K2R b - - 0 1")
    assert game.position.is_check()
    assert set(game.legal_moves()) == {"a8b7", "a8b8", "h8g7", "h8g8"}


# ---------------------------------------------------------------- §4.7 game end


def test_persian_checkmate_wins_for_the_spartans() -> None:
    outcome = Game(SPARTAN, "4k3/8/8/8/4c3/8/4g3/4K3 w - - 0 1").outcome()
    assert outcome is not None and outcome.termination is Termination.CHECKMATE
    assert outcome.winner is Side.SECOND


def test_single_spartan_king_checkmate_wins_for_the_persians() -> None:
    outcome = Game(SPARTAN, "k7/8/8/8/8/8/8/RR2K3 b - - 0 1").outcome()
    assert outcome is not None and outcome.termination is Termination.CHECKMATE
    assert outcome.winner is Side.FIRST


def test_duple_checkmate_wins_for_the_persians() -> None:
    game = Game(SPARTAN, "k6k/8/8/8/8/8/8/RR1QK1R1 w - - 0 1")
    record = game.play("d1h5")
    assert record.display == "Qh5#"
    outcome = game.outcome()
    assert outcome is not None and outcome.termination is Termination.CHECKMATE
    assert outcome.winner is Side.FIRST


@pytest.mark.parametrize(
    "fen",
    [
        "k7/8/8/8/8/8/2g5/K7 w - - 0 1",  # Persians cannot move
        "k7/2Q5/1K6/8/8/8/8/8 b - - 0 1",  # Spartans cannot move
    ],
)
def test_stalemate_is_a_draw(fen: str) -> None:
    outcome = Game(SPARTAN, fen).outcome()
    assert outcome is not None and outcome.termination is Termination.STALEMATE
    assert outcome.winner is None


def test_repetition_threefold_claim_fivefold_automatic() -> None:
    game = Game(SPARTAN)
    for n in range(1, 5):
        for m in ("g1f3", "g8f6", "f3g1", "f6g8"):
            game.play(m)
        assert game.repetitions() == n + 1
        if n == 2:
            assert game.claimable_draw() is Termination.REPETITION and game.outcome() is None
    outcome = game.outcome()
    assert outcome is not None and outcome.termination is Termination.REPETITION and outcome.winner is None


def test_fifty_move_claim_and_seventy_five_move_automatic() -> None:
    game = Game(SPARTAN, "4k3/8/8/8/8/8/8/R3K3 w - - 99 80")
    game.play("a1a2")
    assert game.claimable_draw() is Termination.FIFTY_MOVES and game.outcome() is None
    game = Game(SPARTAN, "4k3/8/8/8/8/8/8/R3K3 w - - 149 80")
    game.play("a1a2")
    outcome = game.outcome()
    assert outcome is not None and outcome.termination is Termination.SEVENTY_FIVE_MOVES


def test_fifty_move_counter_is_reset_by_hoplite_moves() -> None:
    game = Game(SPARTAN, "4k3/3h4/8/8/8/8/7P/R3K3 b - - 80 50")
    game.play("e8f8")
    assert game.position.halfmove == 81
    game.play("a1a2")
    game.play("d7c6")
    assert game.position.halfmove == 0
    game.play("h2h3")  # and by Persian pawn moves
    assert game.position.halfmove == 0


@pytest.mark.parametrize(
    "fen",
    [
        "4k3/8/8/8/8/8/8/4K3 w - - 0 1",  # bare kings
        "4k3/8/8/8/8/8/8/3BK3 w - - 0 1",  # K+B v K
        "4k3/8/8/8/8/8/8/3NK3 b - - 0 1",  # K+N v K
    ],
)
def test_dead_position_minimal_set(fen: str) -> None:
    outcome = Game(SPARTAN, fen).outcome()
    assert outcome is not None and outcome.termination is Termination.DEAD_POSITION


@pytest.mark.parametrize(
    "fen",
    [
        "3kk3/8/8/8/8/8/8/4K3 w - - 0 1",  # two Spartan kings can mate
        "4k3/8/8/8/8/8/8/2B1KB2 w - - 0 1",  # outside the minimal set
        "4k3/8/8/8/8/8/8/2N1KN2 w - - 0 1",
        "4k3/4c3/8/8/8/8/8/4K3 w - - 0 1",
        "4k3/4h3/8/8/8/8/8/4K3 w - - 0 1",
        "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1",
    ],
)
def test_nothing_else_is_a_dead_position(fen: str) -> None:
    assert Game(SPARTAN, fen).outcome() is None


@pytest.mark.parametrize(
    ("fen", "persians", "spartans"),
    [
        ("4k3/8/8/8/8/8/8/4K3 w - - 0 1", False, False),
        ("3kk3/8/8/8/8/8/8/4K3 w - - 0 1", False, True),
        ("4k3/8/8/8/8/8/8/3NK3 w - - 0 1", False, False),
        ("4k3/4h3/8/8/8/8/8/3NK3 w - - 0 1", True, True),
        ("4k3/4c3/8/8/8/8/8/3BK3 w - - 0 1", True, True),
        ("3kk3/8/8/8/8/8/8/3BK3 w - - 0 1", True, True),
    ],
)
def test_time_out_needs_mating_material(fen: str, persians: bool, spartans: bool) -> None:
    pos = Position.from_fen(SPARTAN, fen)
    assert has_mating_material(pos, Side.FIRST) is persians
    assert has_mating_material(pos, Side.SECOND) is spartans


# -------------------------------------------------------------------------- CLI


def test_cli_perft_and_play() -> None:
    from server.rules.cli import main

    out = io.StringIO()
    assert main(["perft", "spartan", "2"], stdout=out) == 0
    pos = Position.from_fen(SPARTAN, SPARTAN.start_fen)
    assert int(out.getvalue()) == sum(len(pos.play(m).legal_moves()) for m in pos.legal_moves())
    out = io.StringIO()
    fen = "k6k/8/8/8/8/8/8/RR1QK1R1 w - - 0 1"
    assert main(["play", "spartan", "--fen", fen, "--moves", "d1h5"], stdout=out) == 0
    assert out.getvalue().splitlines() == ["k6k/8/8/7Q/8/8/8/RR2K1R1 b - - 1 1", "checkmate", "first"]

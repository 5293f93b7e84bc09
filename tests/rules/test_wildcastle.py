"""Wild Castle (spec §3): one named test per rule, on hand-built positions.

Differential tests against Fairy-Stockfish and python-chess live in test_wildcastle_diff.py.
"""

from __future__ import annotations

import io
import random
from collections import Counter

import pytest

from server.rules import (
    Game,
    IllegalMoveError,
    InvalidFenError,
    Position,
    Side,
    Termination,
    get_variant,
    has_mating_material,
)
from server.rules.chess_family import ICS_SETUPS, SEED_SETUPS, WILDCASTLE_GENERATORS

WILD = get_variant("wildcastle")
FILES = "abcdefgh"


def moves(fen: str) -> set[str]:
    return set(Game(WILD, fen).legal_moves())


def back_rank(fen: str, black: bool) -> str:
    """The 8 pieces of a setup's back rank, upper case, files a..h."""
    rows = fen.split()[0].split("/")
    return (rows[0] if black else rows[7]).upper()


def is_light(file: int, rank: int) -> bool:
    return (file + rank) % 2 == 1


# ------------------------------------------------------------------ §3.1 board


def test_board_a1_is_dark_h1_is_light() -> None:
    assert not is_light(FILES.index("a"), 0)
    assert [f for f in FILES if is_light(FILES.index(f), 0)] == ["b", "d", "f", "h"]
    assert [f for f in FILES if is_light(FILES.index(f), 7)] == ["a", "c", "e", "g"]
    assert WILD.geometry.files == WILD.geometry.ranks == 8


# ------------------------------------------------------------ §3.2 start position


def assert_family_f(fen: str) -> None:
    pos = Position.from_fen(WILD, fen)
    assert fen.split()[1:] == ["w", "KQkq", "-", "0", "1"]
    rows = fen.split()[0].split("/")
    assert rows[1] == "pppppppp" and rows[6] == "PPPPPPPP"
    assert rows[2:6] == ["8"] * 4
    for black, rank in ((False, 0), (True, 7)):
        row = back_rank(fen, black)
        assert row[0] == row[7] == "R"
        assert row.index("K") in (3, 4)
        assert sorted(row[1:7].replace("K", "")) == sorted("QBBNN")
        bishops = [f for f, p in enumerate(row) if p == "B"]
        assert is_light(bishops[0], rank) != is_light(bishops[1], rank)
    assert pos.fen() == fen


def test_seed_generator_has_36_distinct_family_f_setups() -> None:
    assert SEED_SETUPS.count == 36 == len(set(SEED_SETUPS.fens))
    for fen in SEED_SETUPS.fens:
        assert_family_f(fen)
    king_files = Counter(back_rank(f, False).index("K") for f in SEED_SETUPS.fens)
    assert king_files == {3: 18, 4: 18}


def test_seed_generator_black_mirrors_white_file_by_file() -> None:
    for fen in SEED_SETUPS.fens:
        assert back_rank(fen, black=True) == back_rank(fen, black=False)


def test_seed_generator_covers_every_legal_setup() -> None:
    """Brute force over all 8!/(2!2!2!) arrangements: exactly the family-F ones with Black
    mirrored appear."""
    import itertools

    expected = set()
    for perm in set(itertools.permutations("RRKQBBNN")):
        row = "".join(perm)
        bishops = [f for f, p in enumerate(row) if p == "B"]
        if row[0] == row[7] == "R" and row.index("K") in (3, 4) and is_light(bishops[0], 0) != is_light(bishops[1], 0):
            expected.add(row)
    assert {back_rank(f, False) for f in SEED_SETUPS.fens} == expected


def test_seed_generator_draws_uniformly() -> None:
    rng = random.Random(20240601)
    draws = Counter(SEED_SETUPS(rng) for _ in range(36 * 400))
    assert set(draws) == set(SEED_SETUPS.fens)
    # 400 expected per setup, sd = 19.7: a band of ±100 (over 5 sd) holds for a fair draw.
    assert all(300 <= n <= 500 for n in draws.values()), draws.most_common(3)


def test_ics_generator_has_64_setups_with_black_independent() -> None:
    assert ICS_SETUPS.count == 64 == len(set(ICS_SETUPS.fens))
    pairs = {(back_rank(f, False), back_rank(f, True)) for f in ICS_SETUPS.fens}
    whites = {w for w, _ in pairs}
    blacks = {b for _, b in pairs}
    assert len(whites) == len(blacks) == 8
    assert pairs == {(w, b) for w in whites for b in blacks}
    assert any(w.index("K") != b.index("K") for w, b in pairs)  # kings on different files


def test_ics_generator_matches_fics_wild1() -> None:
    for fen in ICS_SETUPS.fens:
        assert_family_f(fen)
        for black, light_files, dark_files in ((False, "bf", "cg"), (True, "cg", "bf")):
            row = back_rank(fen, black)
            assert {row[3], row[4]} == {"K", "Q"}
            bishops = {FILES[f] for f, p in enumerate(row) if p == "B"}
            assert len(bishops & set(light_files)) == 1 and len(bishops & set(dark_files)) == 1
            assert all(row[FILES.index(f)] == "N" for f in "bcfg" if f not in bishops)


def test_ics_generator_draws_uniformly() -> None:
    rng = random.Random(7)
    draws = Counter(ICS_SETUPS(rng) for _ in range(64 * 300))
    assert set(draws) == set(ICS_SETUPS.fens)
    assert all(200 <= n <= 400 for n in draws.values())


def test_seed_generator_is_the_default_and_ics_the_option() -> None:
    assert WILD.start_fen_generator is WILDCASTLE_GENERATORS["seed"] is SEED_SETUPS
    assert WILDCASTLE_GENERATORS["ics"] is ICS_SETUPS


def test_setup_fen_numbers_the_setups() -> None:
    assert [SEED_SETUPS.setup_fen(i) for i in range(36)] == list(SEED_SETUPS.fens)
    assert SEED_SETUPS.index_of(SEED_SETUPS.setup_fen(17)) == 17
    assert back_rank(SEED_SETUPS.setup_fen(0), False).index("K") == 3
    assert back_rank(SEED_SETUPS.setup_fen(35), False).index("K") == 4
    for bad in (-1, 36):
        with pytest.raises(ValueError, match=r"0\.\.35"):
            SEED_SETUPS.setup_fen(bad)
    with pytest.raises(ValueError):
        SEED_SETUPS.index_of(WILD.start_fen.replace("KQkq", "-"))


def test_random_start_fen_is_stored_with_the_game() -> None:
    rng = random.Random(3)
    fen = WILD.random_start_fen(rng)
    assert fen in SEED_SETUPS.fens
    game = Game(WILD, fen)
    game.play("a2a3")
    assert game.start_fen == fen
    replay = Game(WILD, game.start_fen)
    replay.play("a2a3")
    assert replay.fen() == game.fen()
    assert WILD.start_fen in SEED_SETUPS.fens  # the standard array is one of the 36


def test_family_f_with_kings_on_different_files_is_accepted() -> None:
    fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBKQBNR w KQkq - 0 1"
    assert Position.from_fen(WILD, fen).fen() == fen


# ------------------------------------------------------------------- §3.3 pieces


def test_pawn_promotes_to_queen_rook_bishop_or_knight() -> None:
    fen = "1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1"
    legal = moves(fen)
    assert {m for m in legal if m.startswith("a7")} == {
        "a7a8q", "a7a8r", "a7a8b", "a7a8n", "a7b8q", "a7b8r", "a7b8b", "a7b8n",
    }


def test_promotion_is_mandatory() -> None:
    game = Game(WILD, "1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1")
    with pytest.raises(IllegalMoveError, match="must promote"):
        game.play("a7a8")
    with pytest.raises(IllegalMoveError):
        game.play("a7a8k")
    assert game.play("a7b8n").display == "axb8=N"


# -------------------------------------------------------------------- §3.4 moves


def test_pawn_double_step_from_the_second_rank_only_and_blockable() -> None:
    legal = moves("4k3/8/8/8/8/4n3/3PP3/4K3 w - - 0 1")
    assert {"d2d3", "d2d4"} <= legal
    assert "e2e3" not in legal and "e2e4" not in legal
    assert "d3d5" not in moves("4k3/8/8/8/8/3P4/8/4K3 w - - 0 1")


def test_en_passant_capture_only_right_after_the_double_step() -> None:
    game = Game(WILD, "4k3/8/8/8/4p3/8/3P4/4K3 w - - 0 1")
    game.play("d2d4")
    assert game.fen() == "4k3/8/8/8/3Pp3/8/8/4K3 b - d3 0 1"
    assert "e4d3" in game.legal_moves()
    record = game.play("e4d3")
    assert record.display == "exd3"
    assert game.fen() == "4k3/8/8/8/8/3p4/8/4K3 w - - 0 2"
    late = Game(WILD, "4k3/8/8/8/4p3/8/3P3P/4K3 w - - 0 1")
    late.play("d2d4")
    late.play("e8e7")
    late.play("h2h3")
    assert "e4d3" not in late.legal_moves()


# ----------------------------------------------------------------- §3.5 castling


@pytest.mark.parametrize(
    ("fen", "uci", "after", "san"),
    [
        ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1g1", "r3k2r/8/8/8/8/8/8/R4RK1 b kq - 1 1", "O-O"),
        ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1c1", "r3k2r/8/8/8/8/8/8/2KR3R b kq - 1 1", "O-O-O"),
        ("r2k3r/8/8/8/8/8/8/R2K3R w KQkq - 0 1", "d1b1", "r2k3r/8/8/8/8/8/8/1KR4R b kq - 1 1", "O-O"),
        ("r2k3r/8/8/8/8/8/8/R2K3R w KQkq - 0 1", "d1f1", "r2k3r/8/8/8/8/8/8/R3RK2 b kq - 1 1", "O-O-O"),
        ("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "e8g8", "r4rk1/8/8/8/8/8/8/R3K2R w KQ - 1 2", "O-O"),
        ("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "e8c8", "2kr3r/8/8/8/8/8/8/R3K2R w KQ - 1 2", "O-O-O"),
        ("r2k3r/8/8/8/8/8/8/R2K3R b KQkq - 0 1", "d8b8", "1kr4r/8/8/8/8/8/8/R2K3R w KQ - 1 2", "O-O"),
        ("r2k3r/8/8/8/8/8/8/R2K3R b KQkq - 0 1", "d8f8", "r3rk2/8/8/8/8/8/8/R2K3R w KQ - 1 2", "O-O-O"),
    ],
)
def test_castling_table_king_two_squares_rook_to_crossed_square(fen: str, uci: str, after: str, san: str) -> None:
    game = Game(WILD, fen)
    record = game.play(uci)
    assert game.fen() == after
    assert record.display == san


def test_castling_with_kings_on_different_files() -> None:
    game = Game(WILD, "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R2K3R w KQkq - 0 1")
    castles = {m for m in game.legal_moves() if m.startswith("d1") and m[2] in "bf"}
    assert castles == {"d1b1", "d1f1"}
    game.play("d1f1")
    black = {m for m in game.legal_moves() if m.startswith("e8") and m[2] in "cg"}
    assert black == {"e8c8", "e8g8"}
    game.play("e8c8")
    assert game.fen() == "2kr3r/pppppppp/8/8/8/8/PPPPPPPP/R3RK2 w - - 2 2"


def test_castling_needs_every_square_between_king_and_rook_empty() -> None:
    # d-king, h-rook: e1, f1 and g1 must be empty even though the king stops on f1.
    assert "d1f1" not in moves("4k3/8/8/8/8/8/8/R2K2NR w KQ - 0 1")
    # e-king, a-rook: b1 must be empty even though neither piece ends there.
    assert "e1c1" not in moves("4k3/8/8/8/8/8/8/RN2K2R w KQ - 0 1")
    assert "d1b1" not in moves("4k3/8/8/8/8/8/8/RN1K3R w KQ - 0 1")


def test_castling_not_out_of_check() -> None:
    legal = moves("3rk3/8/8/8/8/8/8/R2K3R w KQ - 0 1")
    assert "d1b1" not in legal and "d1f1" not in legal


def test_castling_not_through_an_attacked_square() -> None:
    legal = moves("2r1k3/8/8/8/8/8/8/R2K3R w KQ - 0 1")  # c1 attacked: the d-king crosses c1
    assert "d1b1" not in legal and "d1f1" in legal
    legal = moves("4kr2/8/8/8/8/8/8/R3K2R w KQ - 0 1")  # f1 crossed by the e-king
    assert "e1g1" not in legal and "e1c1" in legal


def test_castling_not_into_check() -> None:
    legal = moves("1r2k3/8/8/8/8/8/8/R2K3R w KQ - 0 1")  # b1 is the d-king's destination
    assert "d1b1" not in legal and "d1f1" in legal
    legal = moves("4k1r1/8/8/8/8/8/8/R3K2R w KQ - 0 1")
    assert "e1g1" not in legal


def test_castling_rook_path_need_not_be_safe() -> None:
    assert "e1c1" in moves("1r2k3/8/8/8/8/8/8/R3K2R w KQ - 0 1")  # b1 attacked
    assert "d1f1" in moves("4k1r1/8/8/8/8/8/8/R2K3R w KQ - 0 1")  # g1 attacked


def test_castling_rights_lost_when_the_king_moves() -> None:
    game = Game(WILD, "r2k3r/8/8/8/8/8/8/R2K3R w KQkq - 0 1")
    game.play("d1d2")
    game.play("d8d7")
    game.play("d2d1")
    game.play("d7d8")
    assert game.fen().split()[2] == "-"
    assert not {"d1b1", "d1f1"} & set(game.legal_moves())


def test_castling_rights_lost_when_a_rook_moves_or_is_captured() -> None:
    game = Game(WILD, "r2k3r/8/8/8/8/8/8/R2K3R w KQkq - 0 1")
    game.play("h1h8")  # captures the h8 rook on its corner: K (moved) and k (captured) go
    assert game.fen().split()[2] == "Qq"
    game.play("d8c7")  # out of check: the king's move costs q
    assert game.fen().split()[2] == "Q"
    game.play("a1a2")
    assert game.fen().split()[2] == "-"


def test_castling_only_from_the_d_or_e_file() -> None:
    pos = Position.from_fen(WILD, "r1k4r/8/8/8/8/8/8/R1K4R w KQkq - 0 1")
    assert pos.fen().split()[2] == "-"
    assert not {"c1a1", "c1e1"} & moves("r1k4r/8/8/8/8/8/8/R1K4R w KQkq - 0 1")


def test_castling_right_letters_name_the_rook_file() -> None:
    only_h = moves("r2k3r/8/8/8/8/8/8/R2K3R w K - 0 1")
    assert "d1f1" in only_h and "d1b1" not in only_h
    only_a = moves("r2k3r/8/8/8/8/8/8/R2K3R w Q - 0 1")
    assert "d1b1" in only_a and "d1f1" not in only_a


# --------------------------------------------------------------- §3.6 game end


def test_checkmate_wins() -> None:
    game = Game(WILD)
    for m in ("f2f3", "e7e5", "g2g4"):
        game.play(m)
    record = game.play("d8h4")
    assert record.display == "Qh4#"
    assert game.outcome() is not None
    assert game.outcome().termination is Termination.CHECKMATE
    assert game.outcome().winner is Side.SECOND
    assert game.legal_moves() == []


def test_stalemate_is_a_draw() -> None:
    game = Game(WILD, "7k/8/4Q1K1/8/8/8/8/8 w - - 0 1")
    game.play("e6f7")
    outcome = game.outcome()
    assert outcome is not None and outcome.termination is Termination.STALEMATE
    assert outcome.winner is None and outcome.result() == "1/2-1/2"


def shuffle_knights(game: Game, times: int) -> None:
    for _ in range(times):
        for m in ("g1f3", "g8f6", "f3g1", "f6g8"):
            game.play(m)


def test_threefold_repetition_is_a_claim_not_an_ending() -> None:
    game = Game(WILD)
    shuffle_knights(game, 1)
    assert game.claimable_draw() is None
    shuffle_knights(game, 1)
    assert game.repetitions() == 3
    assert game.claimable_draw() is Termination.REPETITION
    assert game.outcome() is None


def test_fivefold_repetition_ends_the_game() -> None:
    game = Game(WILD)
    shuffle_knights(game, 3)
    assert game.outcome() is None
    shuffle_knights(game, 1)
    outcome = game.outcome()
    assert outcome is not None and outcome.termination is Termination.REPETITION
    assert outcome.winner is None


def test_repetition_counts_castling_rights() -> None:
    game = Game(WILD, "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    for m in ("h1h2", "h8h7", "h2h1", "h7h8"):  # same pieces, rights lost: a new position
        game.play(m)
    assert game.repetitions() == 1


def test_repetition_ignores_an_en_passant_square_that_cannot_be_used() -> None:
    # After d2d4 the e4 pawn is pinned: the FEN shows d3, but the position repeats.
    game = Game(WILD, "8/8/8/8/R3p2k/8/3P4/4K3 w - - 0 1")
    game.play("d2d4")
    assert game.fen().split()[3] == "d3"
    for m in ("h4h5", "e1e2", "h5h4", "e2e1"):
        game.play(m)
    game.play("h4h5")
    game.play("e1e2")
    game.play("h5h4")
    game.play("e2e1")
    assert game.repetitions() == 3


def test_fifty_move_rule_is_a_claim() -> None:
    game = Game(WILD, "4k3/8/8/8/8/8/8/R3K3 w - - 98 80")
    game.play("a1a2")
    assert game.claimable_draw() is None
    game.play("e8e7")
    assert game.claimable_draw() is Termination.FIFTY_MOVES
    assert game.outcome() is None


def test_fifty_move_counter_resets_on_pawn_moves_and_captures() -> None:
    game = Game(WILD, "4k3/8/8/8/8/8/P6r/R3K3 w - - 90 80")
    game.play("a2a3")
    assert game.position.halfmove == 0
    game.play("h2h1")
    game.play("e1d2")
    game.play("h1a1")
    assert game.position.halfmove == 0


def test_seventy_five_move_rule_ends_the_game() -> None:
    game = Game(WILD, "4k3/8/8/8/8/8/8/R3K3 w - - 149 80")
    game.play("a1a2")
    outcome = game.outcome()
    assert outcome is not None and outcome.termination is Termination.SEVENTY_FIVE_MOVES


def test_checkmate_on_the_seventy_fifth_move_counts_as_checkmate() -> None:
    game = Game(WILD, "4k3/R7/8/8/8/8/8/4K2R w - - 149 80")
    game.play("h1h8")
    outcome = game.outcome()
    assert outcome is not None and outcome.termination is Termination.CHECKMATE


@pytest.mark.parametrize(
    "fen",
    [
        "8/8/8/4k3/8/8/8/4K3 w - - 0 1",  # K v K
        "8/8/8/4k3/8/8/8/3BK3 w - - 0 1",  # K+B v K
        "8/8/8/4k3/8/8/8/3NK3 b - - 0 1",  # K+N v K
        "4k3/8/8/8/8/8/8/1n2K3 w - - 0 1",  # K v K+N
        "2b1k3/8/8/8/8/8/8/3BK3 w - - 0 1",  # K+B v K+B, both bishops light
        "4k3/8/8/8/5B2/8/8/2B1K3 w - - 0 1",  # K+B+B on one colour v K
        "1b2k3/b7/8/8/8/8/8/2B1K3 w - - 0 1",  # K+B v K+B+B, all dark
    ],
)
def test_dead_position_is_an_automatic_draw(fen: str) -> None:
    outcome = Game(WILD, fen).outcome()
    assert outcome is not None and outcome.termination is Termination.DEAD_POSITION
    assert outcome.winner is None


@pytest.mark.parametrize(
    "fen",
    [
        "3bk3/8/8/8/8/8/8/3BK3 w - - 0 1",  # bishops on opposite colours
        "4k3/8/8/8/8/8/8/3NKN2 w - - 0 1",  # K+N+N v K
        "4k1n1/8/8/8/8/8/8/3NK3 w - - 0 1",  # K+N v K+N
        "4k1n1/8/8/8/8/8/8/3BK3 w - - 0 1",  # K+B v K+N
        "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1",  # a pawn
        "4k3/8/8/8/8/8/8/3RK3 w - - 0 1",  # a rook
    ],
)
def test_positions_with_mating_chances_are_not_dead(fen: str) -> None:
    assert Game(WILD, fen).outcome() is None


def test_a_capture_into_a_dead_position_ends_the_game() -> None:
    game = Game(WILD, "4k3/8/8/8/8/8/3q4/4K3 w - - 0 1")
    game.play("e1d2")
    outcome = game.outcome()
    assert outcome is not None and outcome.termination is Termination.DEAD_POSITION


@pytest.mark.parametrize(
    ("fen", "white", "black"),
    [
        ("4k3/8/8/8/8/8/8/4K3 w - - 0 1", False, False),
        ("4k3/8/8/8/8/8/8/3NK3 w - - 0 1", False, False),
        ("4k3/8/8/8/8/8/8/3BK3 w - - 0 1", False, False),
        ("3qk3/8/8/8/8/8/8/3NK3 w - - 0 1", False, True),  # a queen cannot help the knight
        ("3rk3/8/8/8/8/8/8/3NK3 w - - 0 1", True, True),  # a rook can block its own king
        ("3nk3/8/8/8/8/8/8/3NK3 w - - 0 1", True, True),
        ("3bk3/8/8/8/8/8/8/3BK3 w - - 0 1", True, True),  # opposite-coloured bishops
        ("2b1k3/8/8/8/8/8/8/3BK3 w - - 0 1", False, False),  # same-coloured bishops
        ("2b1k3/8/8/8/8/8/8/3BKN2 w - - 0 1", True, True),  # a knight on the board
        ("4k3/8/8/8/8/8/8/3NKN2 w - - 0 1", True, False),
        ("4k3/8/8/8/8/8/7p/4K3 w - - 0 1", False, True),
    ],
)
def test_time_out_needs_mating_material(fen: str, white: bool, black: bool) -> None:
    pos = Position.from_fen(WILD, fen)
    assert has_mating_material(pos, Side.FIRST) is white
    assert has_mating_material(pos, Side.SECOND) is black


# --------------------------------------------------------------- §3.7 notation


def test_notation_castling_by_coordinates_and_san() -> None:
    from server.rules.san import parse_san

    pos = Position.from_fen(WILD, "r2k3r/8/8/8/8/8/8/R2K3R w KQkq - 0 1")
    assert pos.uci(parse_san(pos, "O-O")) == "d1b1"
    assert pos.uci(parse_san(pos, "O-O-O")) == "d1f1"
    assert pos.uci(parse_san(pos, "d1b1")) == "d1b1"


def test_fen_rejects_positions_outside_the_rules() -> None:
    with pytest.raises(InvalidFenError):
        Position.from_fen(WILD, "4k3/8/8/8/8/8/8/3KK3 w - - 0 1")
    with pytest.raises(InvalidFenError):
        Position.from_fen(WILD, "4k2P/8/8/8/8/8/8/4K3 w - - 0 1")  # pawn on the last rank
    with pytest.raises(InvalidFenError):
        Position.from_fen(WILD, "4k3/4R3/8/8/8/8/8/6K1 w - - 0 1")  # Black in check, White to move


# -------------------------------------------------------------------------- CLI


def run_cli(*argv: str) -> tuple[int, str, str]:
    from server.rules.cli import main

    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_cli_seed_picks_the_numbered_setup() -> None:
    status, out, _ = run_cli("play", "wildcastle", "--seed", "17", "--moves")
    assert status == 0
    assert out.splitlines() == [SEED_SETUPS.setup_fen(17), "none", "none"]
    status, _, err = run_cli("perft", "wildcastle", "--seed", "36", "1")
    assert status == 2 and "0..35" in err


def test_cli_perft_moves_and_play_with_a_fen() -> None:
    fen = "r2k3r/8/8/8/8/8/8/R2K3R w KQkq - 0 1"
    status, out, _ = run_cli("moves", "wildcastle", "--fen", fen)
    assert status == 0 and {"d1b1", "d1f1"} <= set(out.split())
    status, out, _ = run_cli("perft", "wildcastle", "--fen", fen, "2")
    pos = Position.from_fen(WILD, fen)
    assert int(out) == sum(len(pos.play(m).legal_moves()) for m in pos.legal_moves())
    status, out, _ = run_cli("play", "wildcastle", "--moves", "f2f3", "e7e5", "g2g4", "d8h4")
    assert out.splitlines()[1:] == ["checkmate", "second"]
    status, out, _ = run_cli("play", "wildcastle", "--fen", fen, "--moves", "d1b1", "d8f8")
    assert out.splitlines()[0] == "r3rk2/8/8/8/8/8/8/1KR4R w - - 2 2"

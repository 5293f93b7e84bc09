"""Mini-Shogi, one test per rule of spec §1 (minishogi.md), on hand-made positions.

Board reminder (FSF FEN, sente = upper case = first player, ``w`` = sente to move)::

    rank 5   a5 b5 c5 d5 e5     gote's back rank, sente's promotion zone
    ...
    rank 1   a1 b1 c1 d1 e1     sente's back rank, gote's promotion zone
"""

from __future__ import annotations

import random

import pyffish as sf
import pytest
from rule_helpers import RuleHelpers, play_all

from server.rules import (
    Game,
    IllegalMoveError,
    InvalidMoveError,
    Move,
    Outcome,
    Position,
    Side,
    Termination,
    get_variant,
)
from server.rules.notation import display_move

MINI = get_variant("minishogi")
START = "rbsgk/4p/5/P4/KGSBR[] w - - 0 1"


_RULES = RuleHelpers(MINI)
game, moves_from, targets, illegal_reason = (
    _RULES.game,
    _RULES.moves_from,
    _RULES.targets,
    _RULES.illegal_reason,
)


# --------------------------------------------------------------------- §1.2 start position


def test_start_position_pieces_and_fen() -> None:
    g = Game(MINI)
    assert g.fen() == START  # FSF's get_fen form of the start
    assert g.side_to_move is Side.FIRST
    board = {MINI.geometry.name(s): p for s, p in enumerate(g.position.board) if p}
    code = MINI.t.code
    expected = {
        "a1": "K", "b1": "G", "c1": "S", "d1": "B", "e1": "R", "a2": "P",
        "e5": "k", "d5": "g", "c5": "s", "b5": "b", "a5": "r", "e4": "p",
    }  # fmt: skip
    assert board == {sq: (code[s] if s.isupper() else -code[s.upper()]) for sq, s in expected.items()}
    assert g.position.hands == ((0,) * (MINI.t.n + 1),) * 2


def test_start_position_accepts_fsf_forms_and_sfen() -> None:
    # FSF's own start FEN has "[-]" and no castling/ep fields; both forms are accepted.
    assert game("rbsgk/4p/5/P4/KGSBR[-] w 0 1").fen() == START
    assert Game(MINI).position.sfen() == "rbsgk/4p/5/P4/KGSBR b - 1"


def test_start_position_legal_moves() -> None:
    assert Game(MINI).legal_moves() == [
        "a1b2", "a2a3", "b1b2", "b1c2", "c1b2", "c1c2", "c1d2",
        "d1a4", "d1b3", "d1c2", "d1e2", "e1e2", "e1e3", "e1e4",
    ]  # fmt: skip


# ------------------------------------------------------------------------- §1.3 pieces
# Sente king a1 and gote king d5 stay out of the way of a piece on c3.


def test_king_moves_one_step_any_direction() -> None:
    assert targets("4k/5/5/5/K4[] w - - 0 1", "a1") == {"a2", "b1", "b2"}
    # In the centre: all 8 neighbours except d4, which the gote king on e5 guards.
    assert targets("4k/5/2K2/5/5[] w - - 0 1", "c3") == {"b2", "b3", "b4", "c2", "c4", "d2", "d3"}


def test_rook_moves_any_distance_orthogonally() -> None:
    assert targets("3k1/5/2R2/5/K4[] w - - 0 1", "c3") == {"a3", "b3", "d3", "e3", "c1", "c2", "c4", "c5"}
    # Blocked by its own piece, stops on an enemy piece (capturing it).
    assert targets("3k1/2p2/2R2/2G2/K4[] w - - 0 1", "c3") == {"a3", "b3", "d3", "e3", "c4"}


def test_bishop_moves_any_distance_diagonally() -> None:
    # a1 holds its own king; e5 and a5 are reached.
    assert targets("3k1/5/2B2/5/K4[] w - - 0 1", "c3") == {"b2", "b4", "a5", "d4", "e5", "d2", "e1"}


def test_gold_moves_orthogonally_or_diagonally_forward() -> None:
    assert targets("3k1/5/2G2/5/K4[] w - - 0 1", "c3") == {"b3", "d3", "c2", "c4", "b4", "d4"}


def test_silver_moves_diagonally_or_straight_forward() -> None:
    assert targets("3k1/5/2S2/5/K4[] w - - 0 1", "c3") == {"b2", "b4", "d2", "d4", "c4"}


def test_pawn_moves_and_captures_straight_forward() -> None:
    assert targets("3k1/5/2P2/5/K4[] w - - 0 1", "c3") == {"c4"}
    # The pawn takes the piece in front of it, never diagonally.
    assert moves_from("3k1/1pgp1/2P2/5/K4[] w - - 0 1", "c3") == {"c3c4"}
    assert game("3k1/1pgp1/2P2/5/K4[] w - - 0 1").play("c3c4").display == "Px3b"
    assert targets("3k1/1p1p1/2P2/5/K4[] w - - 0 1", "c3") == {"c4"}


def test_dragon_moves_as_rook_plus_diagonal_step() -> None:
    assert targets("3k1/5/2+R2/5/K4[] w - - 0 1", "c3") == {
        "a3", "b3", "d3", "e3", "c1", "c2", "c4", "c5", "b2", "b4", "d2", "d4",
    }  # fmt: skip


def test_horse_moves_as_bishop_plus_orthogonal_step() -> None:
    assert targets("3k1/5/2+B2/5/K4[] w - - 0 1", "c3") == {
        "b2", "b4", "a5", "d4", "e5", "d2", "e1", "b3", "d3", "c2", "c4",
    }  # fmt: skip


@pytest.mark.parametrize("promoted", ["+S", "+P"])
def test_promoted_silver_and_tokin_move_as_gold(promoted: str) -> None:
    assert targets(f"3k1/5/2{promoted}2/5/K4[] w - - 0 1", "c3") == {"b3", "d3", "c2", "c4", "b4", "d4"}


def test_gote_pieces_move_toward_rank_1() -> None:
    # Gote to move; its pieces' "forward" is down the board.
    assert targets("4k/5/2p2/5/K4[] b - - 0 1", "c3") == {"c2"}
    assert targets("4k/5/2s2/5/K4[] b - - 0 1", "c3") == {"b2", "b4", "d2", "d4", "c2"}
    assert targets("4k/5/2g2/5/K4[] b - - 0 1", "c3") == {"b3", "d3", "c2", "c4", "b2", "d2"}


# ---------------------------------------------------------------------- §1.4 promotion


def test_promotion_optional_entering_the_zone() -> None:
    assert moves_from("4k/2S2/5/5/K4[] w - - 0 1", "c4") == {
        "c4b5", "c4b5+", "c4c5", "c4c5+", "c4d5", "c4d5+", "c4b3", "c4d3",
    }  # fmt: skip


def test_promotion_optional_moving_within_and_leaving_the_zone() -> None:
    moves = moves_from("2R2/5/k4/5/4K[] w - - 0 1", "c5")
    # Every rook move starts in the zone, so each one may promote or not.
    assert {m for m in moves if not m.endswith("+")} == {"c5a5", "c5b5", "c5d5", "c5e5", "c5c4", "c5c3", "c5c2", "c5c1"}
    assert moves == {m for plain in moves if not plain.endswith("+") for m in (plain, plain + "+")}
    g = game("2R2/5/k4/5/4K[] w - - 0 1")
    g.play("c5c2+")
    assert g.fen() == "5/5/k4/2+R2/4K[] b - - 1 1"


def test_no_promotion_outside_the_zone() -> None:
    assert moves_from("4k/5/5/2S2/K4[] w - - 0 1", "c2") == {"c2b1", "c2b3", "c2c3", "c2d1", "c2d3"}
    assert illegal_reason("4k/5/5/2S2/K4[] w - - 0 1", "c2c3+") == "c2c3+: the silver cannot promote on this move"


def test_gote_promotion_zone_is_rank_1() -> None:
    assert moves_from("4k/5/5/2s2/K4[] b - - 0 1", "c2") >= {"c2c1", "c2c1+", "c2b1+", "c2d1+"}
    assert "c3c2+" not in game("4k/5/2s2/5/K4[] b - - 0 1").legal_moves()


def test_pawn_must_promote_on_the_last_rank() -> None:
    assert moves_from("k4/2P2/5/5/4K[] w - - 0 1", "c4") == {"c4c5+"}
    assert illegal_reason("k4/2P2/5/5/4K[] w - - 0 1", "c4c5") == "c4c5: the pawn must promote on c5"
    assert moves_from("4k/5/5/2p2/K4[] b - - 0 1", "c2") == {"c2c1+"}


def test_no_other_piece_is_forced_to_promote() -> None:
    for fen, square in (
        ("4k/2S2/5/5/K4[] w - - 0 1", "c4"),
        ("4k/2R2/5/5/K4[] w - - 0 1", "c4"),
        ("3k1/5/2B2/5/K4[] w - - 0 1", "c3"),
    ):
        moves = moves_from(fen, square)
        for m in moves:
            if m.endswith("+"):
                assert m[:-1] in moves, f"{m} is offered but {m[:-1]} is not"


def test_king_gold_and_promoted_pieces_never_promote() -> None:
    assert not any(m.endswith("+") for m in game("4k/2G2/5/5/K4[] w - - 0 1").legal_moves())
    assert not any(m.endswith("+") for m in game("4k/2+S2/5/5/K4[] w - - 0 1").legal_moves())
    assert not any(m.endswith("+") for m in game("K3k/5/5/5/5[] w - - 0 1").legal_moves())
    assert illegal_reason("4k/2G2/5/5/K4[] w - - 0 1", "c4c5+") == "c4c5+: that piece cannot promote"


def test_drops_never_promote() -> None:
    moves = game("3k1/5/5/5/K4[S] w - - 0 1").legal_moves()
    drops = [m for m in moves if "@" in m]
    assert drops and all(m.startswith("S@") for m in drops)
    assert illegal_reason("3k1/5/5/5/K4[S] w - - 0 1", "+S@c3") == "+S@c3: you have no promoted silver in hand"


# -------------------------------------------------------------------------- §1.5 drops


def test_captured_piece_goes_to_hand_unpromoted_and_changes_side() -> None:
    g = game("k4/5/2+s2/5/2R1K[] w - - 0 1")
    g.play("c1c3")  # sente rook takes gote's promoted silver
    assert g.fen().split()[0] == "k4/5/2R2/5/4K[S]"
    g.play("a5a4")
    g.play("S@c4")  # ...and drops it as its own, unpromoted, silver
    assert g.fen().split()[0] == "5/k1S2/2R2/5/4K[]"
    # Gote capturing a dragon gets a rook.
    g2 = game("k4/1+R3/5/5/4K[] b - - 0 1")
    g2.play("a5b4")
    assert g2.fen().split()[0] == "5/1k3/5/5/4K[r]"


def test_drop_on_any_empty_square() -> None:
    g = game("3k1/5/5/5/K4[G] w - - 0 1")
    empty = {MINI.geometry.name(s) for s, p in enumerate(g.position.board) if not p}
    assert {m[2:] for m in g.legal_moves() if m.startswith("G@")} == empty
    assert len(empty) == 23
    assert illegal_reason("3k1/5/5/5/K4[G] w - - 0 1", "G@a1") == "G@a1: you can only drop on an empty square"
    assert illegal_reason("3k1/5/5/5/K4[] w - - 0 1", "G@c3") == "G@c3: you have no gold in hand"


def test_no_pawn_drop_on_the_last_rank() -> None:
    drops = {m for m in game("3k1/5/5/5/K4[P] w - - 0 1").legal_moves() if m.startswith("P@")}
    assert drops and not any(m.endswith("5") for m in drops)
    assert "P@c1" in drops  # its own back rank is fine
    assert illegal_reason("3k1/5/5/5/K4[P] w - - 0 1", "P@c5") == "P@c5: a pawn dropped on c5 could never move"
    gote = {m for m in game("3k1/5/5/5/K4[p] b - - 0 1").legal_moves() if m.startswith("P@")}
    assert gote and not any(m.endswith("1") for m in gote)


def test_nifu_no_second_unpromoted_pawn_on_a_file() -> None:
    fen = "3k1/5/5/5/K1P2[P] w - - 0 1"
    drops = {m for m in game(fen).legal_moves() if m.startswith("P@")}
    assert not any(m[2] == "c" for m in drops)
    assert {"P@a2", "P@b2", "P@d2", "P@e2"} <= drops
    assert illegal_reason(fen, "P@c3") == "P@c3: two pawns on file c"


def test_nifu_tokin_and_enemy_pawn_do_not_count() -> None:
    tokin = {m for m in game("3k1/5/5/5/K1+P2[P] w - - 0 1").legal_moves() if m.startswith("P@")}
    assert {"P@c2", "P@c3", "P@c4"} <= tokin
    enemy = {m for m in game("3k1/2p2/5/5/K4[P] w - - 0 1").legal_moves() if m.startswith("P@")}
    assert {"P@c2", "P@c3"} <= enemy


# Gote king a5 boxed in by its own rook b5 and pawn b4; a pawn on a4 protected by the gold a3
# would be mate.
UCHIFUZUME = "kr3/1p3/G4/5/4K[P] w - - 0 1"


def test_uchifuzume_pawn_drop_mate_is_not_a_legal_move() -> None:
    moves = game(UCHIFUZUME).legal_moves()
    assert "P@a4" not in moves
    assert "P@c3" in moves  # other pawn drops are fine
    assert illegal_reason(UCHIFUZUME, "P@a4") == "P@a4: pawn drop would give mate"


def test_pawn_drop_check_that_is_not_mate_is_legal() -> None:
    g = game("k4/1p3/G4/5/4K[P] w - - 0 1")  # b5 is free: the king can escape
    assert "P@a4" in g.legal_moves()
    rec = g.play("P@a4")
    assert rec.gives_check and rec.display == "P*5b"
    assert g.outcome() is None
    assert g.legal_moves() == ["a5b5"]


def test_pawn_move_that_mates_is_legal() -> None:
    g = game("kr3/1p3/P4/5/R3K[] w - - 0 1")
    rec = g.play("a3a4")
    assert rec.gives_check
    assert g.outcome() == Outcome(Termination.CHECKMATE, Side.FIRST)


def test_drop_of_another_piece_that_mates_is_legal() -> None:
    for piece in ("G", "S", "R"):
        g = game(f"kr3/1p3/G4/5/4K[{piece}] w - - 0 1")
        assert f"{piece}@a4" in g.legal_moves()
        g.play(f"{piece}@a4")
        assert g.outcome() == Outcome(Termination.CHECKMATE, Side.FIRST), piece


# ------------------------------------------------------------------- §1.6 legality, check


def test_king_may_not_move_into_attack() -> None:
    # The gote rook on b4 guards rank 4 and file b.
    assert targets("4k/1r3/5/5/K4[] w - - 0 1", "a1") == {"a2"}
    assert illegal_reason("4k/1r3/5/5/K4[] w - - 0 1", "a1b1") == "a1b1: your king would be in check"


def test_pinned_piece_may_not_expose_the_king() -> None:
    fen = "4k/5/2b2/1S3/K4[] w - - 0 1"  # silver b2 shields a1 from the bishop c3
    assert moves_from(fen, "b2") == {"b2c3"}
    assert illegal_reason(fen, "b2b3") == "b2b3: your king would be in check"


def test_in_check_every_legal_move_answers_the_check() -> None:
    g = game("k4/5/5/5/K3r[S] w - - 0 1")  # rook e1 checks along rank 1
    assert g.position.is_check()
    assert sorted(g.legal_moves()) == ["S@b1", "S@c1", "S@d1", "a1a2", "a1b2"]


def test_drop_may_not_leave_the_king_in_check() -> None:
    assert illegal_reason("k4/5/5/5/K3r[S] w - - 0 1", "S@c3") == "S@c3: your king would be in check"


# -------------------------------------------------------------------- §1.7 game end


def test_checkmate_loses() -> None:
    g = game("kr3/1p3/G4/5/4K[G] w - - 0 1")
    g.play("G@a4")
    assert g.position.is_check()
    assert g.legal_moves() == []
    assert g.outcome() == Outcome(Termination.CHECKMATE, Side.FIRST)
    with pytest.raises(IllegalMoveError, match="the game is over"):
        g.play("a5b5")


def test_stalemate_loses_for_the_player_to_move() -> None:
    # Gote king a5: a4 and b4 are guarded by the gold b3; c3-c4 takes b5 away too.
    g = game("k4/5/1GS2/5/4K[] w - - 0 1")
    g.play("c3c4")
    assert not g.position.is_check()
    assert g.outcome() == Outcome(Termination.STALEMATE, Side.FIRST)
    # The mirror image: sente is stalemated and loses.
    g = game("k4/5/2sg1/5/4K[] b - - 0 1")
    g.play("c3c2")
    assert g.outcome() == Outcome(Termination.STALEMATE, Side.SECOND)


SHUFFLE = ["b1b2", "d5d4", "b2b1", "d4d5"]


def test_fourfold_repetition_first_player_loses() -> None:
    g = Game(MINI)
    play_all(g, SHUFFLE * 3)
    assert g.repetitions() == 4
    assert g.outcome() == Outcome(Termination.REPETITION, Side.SECOND)
    g.undo()
    assert g.outcome() is None  # only three occurrences before the last move


def test_fourfold_repetition_first_player_loses_even_when_gote_starts() -> None:
    g = game("rbsgk/4p/5/P4/KGSBR[] b - - 0 1")
    play_all(g, ["d5d4", "b1b2", "d4d5", "b2b1"] * 3)
    assert g.outcome() == Outcome(Termination.REPETITION, Side.SECOND)


def test_threefold_repetition_does_not_end_the_game() -> None:
    g = Game(MINI)
    play_all(g, SHUFFLE * 2)
    assert g.repetitions() == 3
    assert g.outcome() is None
    assert g.legal_moves()


def test_perpetual_check_by_sente_loses() -> None:
    # Sente's rook checks the gote king on every move: a4-a5+, e5-e4, a5-a4+, e4-e5.
    g = game("4k/R4/5/5/K4[] w - - 0 1")
    cycle = ["a4a5", "e5e4", "a5a4", "e4e5"]
    play_all(g, cycle * 2 + cycle[:3])
    assert g.outcome() is None
    g.play(cycle[3])
    assert g.outcome() == Outcome(Termination.PERPETUAL_CHECK, Side.SECOND)


def test_perpetual_check_by_gote_loses() -> None:
    # Gote's rook checks the sente king on every move: e2-e1+, a1-a2, e1-e2+, a2-a1.
    g = game("4k/5/5/4r/K4[] b - - 0 1")
    play_all(g, ["e2e1", "a1a2", "e1e2", "a2a1"] * 3)
    # Without the perpetual-check rule sente would lose this repetition.
    assert g.outcome() == Outcome(Termination.PERPETUAL_CHECK, Side.FIRST)


def test_no_move_count_limit() -> None:
    # A half-move counter far beyond any chess-style limit ends nothing.
    g = game("rbsgk/4p/5/P4/KGSBR[] w - - 400 300")
    g.play("b1b2")
    assert g.outcome() is None
    assert MINI.move_rule is None and g.claimable_draw() is None


# -------------------------------------------------------------------- §1.8 notation


@pytest.mark.parametrize(
    ("fen", "move", "display"),
    [
        (START, "d1c2", "B-3d"),
        ("k4/1p3/1G3/5/4K[] w - - 0 1", "b3b4", "Gx4b"),
        ("k4/5/5/5/4K[P] w - - 0 1", "P@c3", "P*3c"),
        ("4k/2S2/5/5/K4[] w - - 0 1", "c4b5+", "S-4a+"),
        ("4k/2S2/5/5/K4[] w - - 0 1", "c4b5", "S-4a="),
        ("k4/4+R/5/5/K4[] w - - 0 1", "e4e5", "+R-1a"),
        # Two golds can reach c2: the origin is written.
        ("4k/5/5/5/KG1G1[] w - - 0 1", "b1c2", "G4e-3d"),
        ("4k/5/5/5/KG1G1[] w - - 0 1", "d1c2", "G2e-3d"),
        ("4k/5/5/5/KG1G1[] w - - 0 1", "b1b2", "G-4d"),
        # As FSF: only a rival that can make the same kind of move (promoting or not) counts.
        ("1B2k/5/5/4B/K4[] w - - 0 1", "b5d3+", "B-2c+"),
        ("1B2k/5/5/4B/K4[] w - - 0 1", "b5d3", "B4a-2c="),
        ("1B2k/5/5/4B/K4[] w - - 0 1", "e2d3", "B1d-2c"),
    ],
)
def test_hodges_notation(fen: str, move: str, display: str) -> None:
    assert game(fen).play(move).display == display


def shared_targets(pos: Position) -> list[Move]:
    """Board moves whose target another piece of the same type can also reach."""
    board = pos.board
    reach: dict[tuple[int, int], set[int]] = {}
    moves = [m for m in pos.legal_moves() if m.from_sq >= 0]
    for m in moves:
        reach.setdefault((board[m.from_sq], m.to_sq), set()).add(m.from_sq)
    return [m for m in moves if len(reach[(board[m.from_sq], m.to_sq)]) > 1]


def test_hodges_notation_matches_fairy_stockfish() -> None:
    """Along a seeded random game, moves (all with ambiguous origins, a few others) are
    written as FSF's NOTATION_SHOGI_HODGES writes them."""
    rng = random.Random(2024)
    g = Game(MINI)
    checked = ambiguous = 0
    while g.outcome() is None and g.ply < 60:
        fen = g.fen()
        pos = g.position
        shared = shared_targets(pos)
        ambiguous += len(shared)
        legal = pos.legal_moves()
        for move in shared + rng.sample(legal, min(2, len(legal))):
            uci = pos.uci(move)
            expected = sf.get_san("minishogi", fen, uci, False, sf.NOTATION_SHOGI_HODGES)
            assert display_move(pos, move) == expected, (fen, uci)
            checked += 1
        g.play(rng.choice(g.legal_moves()))
    assert checked > 100 and ambiguous > 10


def test_wire_format_errors_are_readable() -> None:
    with pytest.raises(InvalidMoveError, match="not a move in coordinate form"):
        Game(MINI).play("hello")
    with pytest.raises(InvalidMoveError, match="not a square of a 5x5 board"):
        Game(MINI).play("a1f1")
    assert illegal_reason(START, "e5e4") == "e5e4: the piece on e5 is not yours"
    assert illegal_reason(START, "c3c4") == "c3c4: there is no piece on c3"
    assert illegal_reason(START, "a1c3") == "a1c3: the king on a1 cannot move to c3"

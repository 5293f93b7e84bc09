"""Sho Shogi, one test per rule of spec §2 (shoshogi.md), on hand-made positions.

9×9, files a–i, ranks 1–9; sente (first player, upper case, FSF ``w``) starts at the bottom.
The Drunk Elephant ``E`` promotes to the Crown Prince ``+E``, a second royal piece.
"""

from __future__ import annotations

import random

import pyffish as sf
import pytest
from rule_helpers import RuleHelpers, play_all

from server.rules import (
    Game,
    IllegalMoveError,
    InvalidFenError,
    Outcome,
    Side,
    Termination,
    get_variant,
)
from server.rules.notation import display_move

SHO = get_variant("shoshogi")
START = "lnsgkgsnl/1r2e2b1/ppppppppp/9/9/9/PPPPPPPPP/1B2E2R1/LNSGKGSNL w - - 0 1"


_RULES = RuleHelpers(SHO)
game, moves_from, targets, illegal_reason = (
    _RULES.game,
    _RULES.moves_from,
    _RULES.targets,
    _RULES.illegal_reason,
)


def attacked(g: Game, square: str, by: Side) -> bool:
    return g.position.attacked(SHO.geometry.parse(square), int(by))


# --------------------------------------------------------------------- §2.2 start position


def test_start_position_pieces_and_fen() -> None:
    g = Game(SHO)
    assert g.fen() == START == SHO.start_fen
    board = {SHO.geometry.name(s): p for s, p in enumerate(g.position.board) if p}
    code = SHO.t.code
    expected: dict[str, str] = {}
    for i, letter in enumerate("LNSGKGSNL"):
        f = "abcdefghi"[i]
        expected[f"{f}1"] = letter
        expected[f"{f}9"] = letter.lower()
        expected[f"{f}3"] = "P"
        expected[f"{f}7"] = "p"
    expected.update({"b2": "B", "e2": "E", "h2": "R", "b8": "r", "e8": "e", "h8": "b"})
    assert board == {sq: (code[s] if s.isupper() else -code[s.upper()]) for sq, s in expected.items()}


def test_start_position_legal_moves() -> None:
    moves = Game(SHO).legal_moves()
    assert len(moves) == 26  # FSF: len(pyffish.legal_moves("shoshogi", start, []))
    assert {"e2d2", "e2f2", "h2f2", "h2g2", "h2i2", "e1d2", "e1f2"} <= set(moves)
    assert not any(m.startswith(("b1", "h1", "b2")) for m in moves)  # knights, bishop boxed in


def test_start_position_fsf_forms_and_sfen() -> None:
    assert game("lnsgkgsnl/1r2e2b1/ppppppppp/9/9/9/PPPPPPPPP/1B2E2R1/LNSGKGSNL w 0 1").fen() == START
    assert Game(SHO).position.sfen() == "lnsgkgsnl/1r2e2b1/ppppppppp/9/9/9/PPPPPPPPP/1B2E2R1/LNSGKGSNL b - 1"


# ------------------------------------------------------------------------- §2.3 pieces
# Sente king e1 and gote king e9 are far from a piece on e5.


def test_king_moves_one_step_any_direction() -> None:
    assert targets("4k4/9/9/9/4K4/9/9/9/9 w - - 0 1", "e5") == {"d4", "d5", "d6", "e4", "e6", "f4", "f5", "f6"}


def test_rook_moves_orthogonally() -> None:
    reach = targets("k8/9/9/9/4R4/9/9/9/K8 w - - 0 1", "e5")
    assert reach == {f"{f}5" for f in "abcdfghi"} | {f"e{r}" for r in (1, 2, 3, 4, 6, 7, 8, 9)}
    # Blocked by its own piece, stops on (captures) an enemy one.
    assert targets("k8/9/4p4/9/4R4/4P4/9/9/K8 w - - 0 1", "e5") == {f"{f}5" for f in "abcdfghi"} | {"e6", "e7"}


def test_bishop_moves_diagonally() -> None:
    reach = targets("4k4/9/9/9/4B4/9/9/9/4K4 w - - 0 1", "e5")
    assert reach == {"d4", "c3", "b2", "a1", "f6", "g7", "h8", "i9", "d6", "c7", "b8", "a9", "f4", "g3", "h2", "i1"}


def test_drunk_elephant_moves_one_step_except_straight_back() -> None:
    assert targets("4k4/9/9/9/4E4/9/9/9/4K4 w - - 0 1", "e5") == {"d4", "d5", "d6", "e6", "f4", "f5", "f6"}
    # Gote's elephant: "back" is up the board.
    assert targets("4k4/9/9/9/4e4/9/9/9/K8 b - - 0 1", "e5") == {"d6", "d5", "d4", "e4", "f6", "f5", "f4"}


def test_gold_moves_orthogonally_or_diagonally_forward() -> None:
    assert targets("4k4/9/9/9/4G4/9/9/9/4K4 w - - 0 1", "e5") == {"d5", "f5", "e4", "e6", "d6", "f6"}


def test_silver_moves_diagonally_or_straight_forward() -> None:
    assert targets("4k4/9/9/9/4S4/9/9/9/4K4 w - - 0 1", "e5") == {"d4", "f4", "d6", "f6", "e6"}


def test_knight_jumps_to_the_two_narrow_forward_squares() -> None:
    assert targets("4k4/9/9/9/4N4/9/9/9/4K4 w - - 0 1", "e5") == {"d7", "f7"}
    # It jumps: pawns all around do not stop it.
    assert targets("4k4/9/9/9/9/9/3PPP3/3PNP3/4K4 w - - 0 1", "e2") == {"d4", "f4"}


def test_lance_moves_any_distance_straight_forward() -> None:
    assert targets("4k4/9/9/9/9/9/9/9/L3K4 w - - 0 1", "a1") == {f"a{r}" for r in range(2, 10)}
    assert targets("4k4/p8/9/9/9/9/9/9/L3K4 w - - 0 1", "a1") == {f"a{r}" for r in range(2, 9)}
    assert targets("4k4/9/9/9/9/9/P8/9/L3K4 w - - 0 1", "a1") == {"a2"}


def test_pawn_moves_and_captures_straight_forward() -> None:
    assert targets("4k4/9/9/9/4P4/9/9/9/4K4 w - - 0 1", "e5") == {"e6"}
    assert moves_from("4k4/9/9/3pgp3/4P4/9/9/9/4K4 w - - 0 1", "e5") == {"e5e6"}


def test_dragon_and_horse() -> None:
    dragon = targets("k8/9/9/9/4+R4/9/9/9/K8 w - - 0 1", "e5")
    assert dragon == {f"{f}5" for f in "abcdfghi"} | {f"e{r}" for r in (1, 2, 3, 4, 6, 7, 8, 9)} | {"d4", "d6", "f4", "f6"}
    horse = targets("4k4/9/9/9/4+B4/9/9/9/K8 w - - 0 1", "e5")
    assert horse == {"d4", "c3", "b2", "f6", "g7", "h8", "i9", "d6", "c7", "b8", "a9", "f4", "g3", "h2", "i1", "d5", "f5", "e4", "e6"}


def test_crown_prince_moves_as_king() -> None:
    assert targets("4k4/9/9/9/4+E4/9/9/9/4K4 w - - 0 1", "e5") == {"d4", "d5", "d6", "e4", "e6", "f4", "f5", "f6"}


@pytest.mark.parametrize("promoted", ["+S", "+N", "+L", "+P"])
def test_promoted_minor_pieces_move_as_gold(promoted: str) -> None:
    assert targets(f"4k4/9/9/9/4{promoted}4/9/9/9/4K4 w - - 0 1", "e5") == {"d5", "f5", "e4", "e6", "d6", "f6"}


# ---------------------------------------------------------------------- §2.4 promotion


def test_promotion_zone_is_the_last_three_ranks() -> None:
    # Entering rank 7 may promote; a move on ranks 1-6 may not.
    assert moves_from("4k4/9/9/4S4/9/9/9/9/4K4 w - - 0 1", "e6") == {
        "e6d5", "e6d7", "e6d7+", "e6e7", "e6e7+", "e6f5", "e6f7", "e6f7+",
    }  # fmt: skip
    assert not any(m.endswith("+") for m in moves_from("4k4/9/9/9/4S4/9/9/9/4K4 w - - 0 1", "e5"))
    assert illegal_reason("4k4/9/9/9/4S4/9/9/9/4K4 w - - 0 1", "e5e6+") == "e5e6+: the silver cannot promote on this move"


def test_promotion_optional_within_and_leaving_the_zone() -> None:
    assert moves_from("k8/9/4S4/9/9/9/9/9/4K4 w - - 0 1", "e7") == {
        "e7d6", "e7d6+", "e7d8", "e7d8+", "e7e8", "e7e8+", "e7f6", "e7f6+", "e7f8", "e7f8+",
    }  # fmt: skip


def test_gote_promotion_zone_is_ranks_1_to_3() -> None:
    assert moves_from("4k4/9/9/9/9/4s4/9/9/K8 b - - 0 1", "e4") == {
        "e4d3", "e4d3+", "e4d5", "e4e3", "e4e3+", "e4f3", "e4f3+", "e4f5",
    }  # fmt: skip


def test_pawn_and_lance_must_promote_on_the_last_rank() -> None:
    assert moves_from("k8/4P4/9/9/9/9/9/9/4K4 w - - 0 1", "e8") == {"e8e9+"}
    assert moves_from("k8/9/4P4/9/9/9/9/9/4K4 w - - 0 1", "e7") == {"e7e8", "e7e8+"}
    assert moves_from("4k4/L8/9/9/9/9/9/9/4K4 w - - 0 1", "a8") == {"a8a9+"}
    assert moves_from("4k4/9/L8/9/9/9/9/9/4K4 w - - 0 1", "a7") == {"a7a8", "a7a8+", "a7a9+"}
    assert illegal_reason("4k4/L8/9/9/9/9/9/9/4K4 w - - 0 1", "a8a9") == "a8a9: the lance must promote on a9"


def test_knight_must_promote_on_the_last_two_ranks() -> None:
    assert moves_from("4k4/9/9/4N4/9/9/9/9/4K4 w - - 0 1", "e6") == {"e6d8+", "e6f8+"}
    assert moves_from("4k4/9/9/9/4N4/9/9/9/4K4 w - - 0 1", "e5") == {"e5d7", "e5d7+", "e5f7", "e5f7+"}
    assert illegal_reason("4k4/9/9/4N4/9/9/9/9/4K4 w - - 0 1", "e6d8") == "e6d8: the knight must promote on d8"
    # Gote's knight: ranks 2 and 1.
    assert moves_from("k8/9/9/9/9/4n4/9/9/K8 b - - 0 1", "e4") == {"e4d2+", "e4f2+"}


def test_king_gold_and_promoted_pieces_never_promote() -> None:
    fen = "k8/9/4G1+S2/2K3+R2/9/9/9/9/9 w - - 0 1"
    assert not any(m.endswith("+") for m in game(fen).legal_moves())
    assert illegal_reason(fen, "e7e8+") == "e7e8+: that piece cannot promote"


def test_drunk_elephant_promotes_to_crown_prince() -> None:
    g = game("4k4/9/9/4E4/9/9/9/9/4K4 w - - 0 1")
    rec = g.play("e6e7+")
    assert rec.display == "E-5c+"
    assert g.fen().split()[0] == "4k4/9/4+E4/9/9/9/9/9/4K4"
    assert len(g.position.royals[Side.FIRST]) == 2  # King and Crown Prince


# -------------------------------------------------------------------------- §2.5 drops


def test_no_drops_captured_pieces_leave_the_game() -> None:
    g = game("4k4/9/9/9/4p4/9/9/9/R3K4 w - - 0 1")
    g.play("a1a5")
    g.play("e9d9")
    g.play("a5e5")  # takes the pawn
    assert g.fen().split()[0] == "3k5/9/9/9/4R4/9/9/9/4K4"
    assert g.position.hands == ((0,) * (SHO.t.n + 1),) * 2
    assert not any("@" in m for m in g.legal_moves())
    with pytest.raises(IllegalMoveError, match="there are no drops in Sho Shogi"):
        g.play("P@e6")


def test_fen_with_pieces_in_hand_is_rejected() -> None:
    with pytest.raises(InvalidFenError, match="Sho Shogi has no pieces in hand"):
        game("4k4/9/9/9/9/9/9/9/4K4[P] w - - 0 1")


def test_two_pawns_on_a_file_are_allowed() -> None:
    # No nifu in Sho Shogi: doubled pawns arise from captures and are legal.
    g = game("4k4/9/9/9/9/4P4/4P4/9/4K4 w - - 0 1")
    assert {"e4e5"} <= set(g.legal_moves())
    g.play("e4e5")
    assert g.fen().split()[0] == "4k4/9/9/9/4P4/9/4P4/9/4K4"


# --------------------------------------------------------------- §2.6 legality and check


def test_single_king_may_not_move_into_attack() -> None:
    fen = "4kr3/9/9/9/9/9/9/9/4K4 w - - 0 1"  # the rook f9 guards the f-file
    assert targets(fen, "e1") == {"d1", "d2", "e2"}
    assert illegal_reason(fen, "e1f1") == "e1f1: your king would be in check"


def test_pinned_piece_may_not_expose_the_single_king() -> None:
    fen = "4k4/4r4/9/9/9/9/9/4G4/4K4 w - - 0 1"
    assert moves_from(fen, "e2") == {"e2e3"}
    assert illegal_reason(fen, "e2d2") == "e2d2: your king would be in check"


def test_with_crown_prince_the_king_may_move_into_attack() -> None:
    fen = "4kr3/9/9/9/9/9/9/9/+E3K4 w - - 0 1"
    assert targets(fen, "e1") == {"d1", "d2", "e2", "f1", "f2"}
    g = game(fen)
    g.play("e1f1")
    assert attacked(g, "f1", Side.SECOND)
    assert not g.position.checked(int(Side.FIRST))


# Sente: King e1 (attacked by the rook e8) and Crown Prince a1 (attacked by the bishop h8).
BOTH_ATTACKED = "8k/4r2b1/9/9/9/9/8P/9/+E3K4 w - - 0 1"


def test_with_two_royals_both_may_be_left_attacked_and_it_is_not_check() -> None:
    g = game(BOTH_ATTACKED)
    assert attacked(g, "e1", Side.SECOND) and attacked(g, "a1", Side.SECOND)
    assert not g.position.is_check()
    assert "i3i4" in g.legal_moves()  # a move that ignores both attacks
    g.play("i3i4")
    assert g.outcome() is None


def test_attacking_one_of_two_royals_does_not_give_check() -> None:
    g = game("k8/3r5/9/9/9/9/9/9/+E3K4 b - - 0 1")
    rec = g.play("d8e8")
    assert attacked(g, "e1", Side.SECOND)
    assert not rec.gives_check
    assert not g.position.is_check()


def test_capturing_one_royal_leaves_the_other_as_a_normal_king() -> None:
    g = game(BOTH_ATTACKED)
    g.play("i3i4")
    rec = g.play("e8e1")  # gote takes the King; the Crown Prince is now the sole royal
    assert rec.gives_check  # the rook on e1 attacks the prince along rank 1
    assert g.outcome() is None
    assert g.position.royals[Side.FIRST] == (SHO.geometry.parse("a1"),)
    assert g.position.is_check()
    # The prince must leave the attacks of the rook (rank 1) and the bishop (a1-i9).
    assert g.legal_moves() == ["a1a2"]
    assert illegal_reason(g.fen(), "i4i5") == "i4i5: your king would be in check"


def test_promoting_the_drunk_elephant_answers_a_check() -> None:
    """After E-to-Crown-Prince the player has two royals, so the attacked King is no longer
    protected by the legality rule (spec §2.6). FSF rejects this move (see docs/rules.md)."""
    fen = "k3r4/9/9/3E5/9/9/9/9/4K4 w - - 0 1"
    g = game(fen)
    assert g.position.is_check()
    assert {"d6d7+", "d6c7+"} <= set(g.legal_moves())
    assert "d6d7" not in g.legal_moves()  # without promoting the King stays in check
    g.play("d6d7+")
    assert not g.position.checked(int(Side.FIRST))


# -------------------------------------------------------------------- §2.7 game end


def test_checkmate_of_the_single_king() -> None:
    g = game("4k4/9/4G4/9/9/9/9/9/3KL4 w - - 0 1")
    rec = g.play("e7e8")
    assert rec.gives_check
    assert g.legal_moves() == []
    assert g.outcome() == Outcome(Termination.CHECKMATE, Side.FIRST)


def test_checkmate_of_a_sole_crown_prince() -> None:
    g = game("k3l4/9/9/9/9/9/4g4/9/4+E4 b - - 0 1")
    g.play("e3e2")
    assert g.outcome() == Outcome(Termination.CHECKMATE, Side.SECOND)


def test_stalemate_loses_for_the_player_to_move() -> None:
    g = game("k8/9/1G1S5/9/9/9/9/9/4K4 w - - 0 1")
    g.play("d7c8")  # now a8, b8 and b9 are all guarded; a9 is not attacked
    assert not g.position.is_check()
    assert g.outcome() == Outcome(Termination.STALEMATE, Side.FIRST)


def test_fourfold_repetition_is_a_draw() -> None:
    g = Game(SHO)
    cycle = ["h2g2", "b8c8", "g2h2", "c8b8"]
    play_all(g, cycle * 2 + cycle[:3])
    assert g.outcome() is None
    g.play(cycle[3])
    assert g.repetitions() == 4
    assert g.outcome() == Outcome(Termination.REPETITION, None)


def test_perpetual_check_by_sente_loses() -> None:
    g = game("8k/R8/9/9/9/9/9/9/4K4 w - - 0 1")
    cycle = ["a8a9", "i9i8", "a9a8", "i8i9"]
    play_all(g, cycle * 2 + cycle[:3])
    assert g.outcome() is None
    g.play(cycle[3])
    # FSF scores this as a plain draw; the spec (§2.7.3) makes the checker lose.
    assert g.outcome() == Outcome(Termination.PERPETUAL_CHECK, Side.SECOND)


def test_perpetual_check_by_gote_loses() -> None:
    g = game("k8/9/9/9/9/9/9/8r/K8 b - - 0 1")
    play_all(g, ["i2i1", "a1a2", "i1i2", "a2a1"] * 3)
    assert g.outcome() == Outcome(Termination.PERPETUAL_CHECK, Side.FIRST)


def test_perpetual_attack_on_a_king_with_a_crown_prince_is_not_perpetual_check() -> None:
    # The same rook dance, but sente also has a Crown Prince: the attacks are not checks.
    g = game("k8/9/9/9/4+E4/9/9/8r/K8 b - - 0 1")
    play_all(g, ["i2i1", "a1a2", "i1i2", "a2a1"] * 3)
    assert g.outcome() == Outcome(Termination.REPETITION, None)


def test_no_move_count_limit() -> None:
    g = game(START.replace(" 0 1", " 400 300"))
    g.play("h2g2")
    assert g.outcome() is None
    assert SHO.move_rule is None and g.claimable_draw() is None


# -------------------------------------------------------------------- §2.8 notation


def _after(moves: list[str]) -> str:
    g = Game(SHO)
    for m in moves:
        g.play(m)
    return g.fen()


@pytest.mark.parametrize(
    ("fen", "move", "display"),
    [
        (START, "c3c4", "P-7f"),
        (START, "h2f2", "R-4h"),
        (_after(["c3c4", "g7g6"]), "b2h8+", "Bx2b+"),
        (_after(["c3c4", "g7g6"]), "b2h8", "Bx2b="),
        ("4k4/9/9/9/8N/9/9/9/4K4 w - - 0 1", "i5h7", "N-2c="),
        (_after(["e3e4", "a7a6"]), "e2e3", "E-5g"),
        ("4k4/9/9/9/9/9/4+E4/9/4K4 w - - 0 1", "e3e2", "+E-5h"),
        ("4k4/9/9/9/9/9/9/9/+E3K4 w - - 0 1", "a1b2", "+E-8h"),
        # Both golds can reach e2: the origin is written.
        ("4k4/9/9/9/9/9/9/9/3GKG3 w - - 0 1", "d1e2", "G6i-5h"),
        ("4k4/9/9/9/9/9/9/9/3GKG3 w - - 0 1", "f1e2", "G4i-5h"),
        ("4k4/9/9/9/9/9/9/9/3GKG3 w - - 0 1", "d1d2", "G-6h"),
    ],
)
def test_hodges_notation(fen: str, move: str, display: str) -> None:
    assert game(fen).play(move).display == display


def test_hodges_notation_matches_fairy_stockfish() -> None:
    """Along a seeded random game, moves (all with ambiguous origins, a few others) are written as
    FSF's NOTATION_SHOGI_HODGES writes them. Moves FSF does not allow (the Crown-Prince check
    evasions, see test_promoting_the_drunk_elephant_answers_a_check) are skipped."""
    rng = random.Random(7)
    g = Game(SHO)
    checked = ambiguous = 0
    while g.outcome() is None and g.ply < 30:
        fen = g.fen()
        pos = g.position
        legal = pos.legal_moves()
        board = pos.board
        reach: dict[tuple[int, int], int] = {}
        for m in legal:
            reach[(board[m.from_sq], m.to_sq)] = reach.get((board[m.from_sq], m.to_sq), 0) + 1
        shared = [m for m in legal if reach[(board[m.from_sq], m.to_sq)] > 1]
        ambiguous += len(shared)
        fsf_legal = set(sf.legal_moves("shoshogi", fen, [])) if pos.is_check() else None
        for move in rng.sample(shared, min(4, len(shared))) + rng.sample(legal, min(2, len(legal))):
            uci = pos.uci(move)
            if fsf_legal is not None and uci not in fsf_legal:
                continue
            expected = sf.get_san("shoshogi", fen, uci, False, sf.NOTATION_SHOGI_HODGES)
            assert display_move(pos, move) == expected, (fen, uci)
            checked += 1
        g.play(rng.choice(g.legal_moves()))
    assert checked > 60 and ambiguous > 0

"""Lion power (spec §5.4): the Lion, the Horned Falcon and the Soaring Eagle, one test per case,
plus wire format and attack detection for multi-leg moves."""

from __future__ import annotations

import pytest
from test_daishogi_oracle import fen_of

from server.rules import Game, IllegalMoveError, InvalidMoveError, Position, get_variant
from server.rules.lion import lion_area

DAI = get_variant("daishogi")
G = DAI.geometry
KINGS = {"a1": "K", "o15": "k"}


def game(pieces: dict[str, str], turn: str = "w") -> Game:
    return Game(DAI, fen_of({**KINGS, **pieces}, turn))


def moves_from(g: Game, origin: str) -> set[str]:
    """Legal moves of the piece on ``origin`` in wire form (a pass shows as ``@@@@``)."""
    pos = g.position
    start = G.parse(origin)
    return {pos.uci(m) for m in pos.legal_moves() if m.from_sq == start}


def piece_at(g: Game, square: str) -> str:
    p = g.position.board[G.parse(square)]
    if not p:
        return ""
    text = DAI.t.types[abs(p)].display
    return text if p > 0 else text.lower()


def test_lion_jumps_to_every_square_within_two() -> None:
    # Boxed in by its own pieces: only the 16 distance-2 squares remain, reached by leaping.
    ring = {sq: "G" for sq in ("g7", "g8", "g9", "h7", "h9", "i7", "i8", "i9")}
    g = game({"h8": "L!", **ring})
    expected = {
        f"h8{f}{r}"
        for f in "fghij"
        for r in range(6, 11)
        if max(abs(ord(f) - ord("h")), abs(r - 8)) == 2
    }
    assert moves_from(g, "h8") == expected
    assert "@@@@" not in g.legal_moves()  # no empty neighbour: no pass
    g.play("h8f10")
    assert piece_at(g, "f10") == "Ln" and piece_at(g, "g9") == "G"


def test_lion_jump_captures_behind_a_blocker() -> None:
    g = game({"h8": "L!", "h9": "G", "h10": "p", "i9": "G", "j10": "p"})
    assert {"h8h10", "h8j10"} <= moves_from(g, "h8")
    g.play("h8j10")
    assert piece_at(g, "j10") == "Ln" and piece_at(g, "i9") == "G"


def test_lion_double_capture() -> None:
    g = game({"m9": "L!", "m8": "p", "n7": "p"})
    record = g.play("m9m8,m8n7")
    assert record.display == "Lnx3hx2i"  # spec §5.9's own example
    assert piece_at(g, "n7") == "Ln" and piece_at(g, "m8") == "" and piece_at(g, "m9") == ""


def test_lion_igui_captures_without_moving() -> None:
    # Spec §5.9: gote's Lion on 8c (h13) capturing 9d (g12) without moving = Lnx!9d.
    g = game({"h13": "l!", "g12": "P"}, "b")
    record = g.play("h13g12,g12h13")
    assert record.display == "Lnx!9d"
    assert record.uci == "h13g12,g12h13"
    assert piece_at(g, "h13") == "ln" and piece_at(g, "g12") == ""


def test_lion_hit_and_run() -> None:
    g = game({"m9": "L!", "m8": "p"})
    record = g.play("m9m8,m8n7")
    assert record.display == "Lnx3h-2i"
    assert piece_at(g, "n7") == "Ln" and piece_at(g, "m8") == "" and piece_at(g, "m9") == ""


def test_lion_second_leg_may_not_land_on_a_friend() -> None:
    g = game({"h8": "L!", "h9": "p", "h10": "G", "g10": "p"})
    moves = moves_from(g, "h8")
    assert "h8h9,h9h10" not in moves
    assert {"h8h9,h9g10", "h8h9,h9h8", "h8h9,h9i10"} <= moves
    with pytest.raises(IllegalMoveError):
        g.play("h8h9,h9h10")


def test_lion_capture_then_step_covers_all_neighbours_of_the_victim() -> None:
    g = game({"h8": "L!", "i9": "p"})
    multi = {m for m in moves_from(g, "h8") if "," in m}
    assert multi == {f"h8i9,i9{f}{r}" for f in "hij" for r in (8, 9, 10) if (f, r) != ("i", 9)}


def test_lion_pass_is_one_move_and_changes_nothing() -> None:
    g = game({"h8": "L!", "h9": "G", "g9": "G", "i9": "G"})
    before = g.position
    assert g.legal_moves().count("@@@@") == 1
    record = g.play("@@@@")
    assert record.uci == "@@@@" and record.display == "Ln-8h"
    after = g.position
    assert after.board == before.board and after.turn == 1 - before.turn
    assert g.moves == ["@@@@"]


def test_lion_cannot_pass_without_an_empty_neighbour() -> None:
    ring = {sq: "G" for sq in ("g7", "g8", "g9", "h7", "h9", "i7", "i8", "i9")}
    g = game({"h8": "L!", **ring})
    with pytest.raises(IllegalMoveError, match="pass"):
        g.play("@@@@")


def test_sente_lion_pass_from_start_square_notation() -> None:
    g = game({"h3": "L!"})
    assert g.play("@@@@").display == "Ln-8m"  # spec §5.9


def test_only_one_pass_however_many_pieces_can_pass() -> None:
    g = game({"h8": "L!", "c3": "+O", "l4": "+H", "e10": "+D"})
    assert g.legal_moves().count("@@@@") == 1
    passes = [m for m in g.position.legal_moves() if g.position.uci(m) == "@@@@"]
    assert len(passes) == 1


def test_no_duplicate_lion_routes() -> None:
    # A route through an empty square to where a leap ends is the leap: listed once, one leg.
    g = game({"h8": "L!", "h10": "p", "j9": "p"})
    pos = g.position
    lion = [m for m in pos.legal_moves() if m.from_sq == G.parse("h8")]
    identities = [
        (m.from_sq, tuple(s for s in m.via if pos.board[s]), m.to_sq)
        for m in lion
        if pos.uci(m) != "@@@@"
    ]
    assert len(identities) == len(set(identities)) == 24
    assert all(pos.board[m.via[0]] for m in lion if m.via and pos.uci(m) != "@@@@")
    with pytest.raises(IllegalMoveError, match="send h8h10 instead"):
        g.play("h8h9,h9h10")  # h9 is empty: the move is the leap h8h10
    with pytest.raises(IllegalMoveError, match="send @@@@ instead"):
        g.play("h8h9,h9h8")  # out and back through an empty square is the pass


def test_two_orders_of_a_double_capture_are_two_moves() -> None:
    g = game({"h8": "L!", "h9": "p", "i9": "p"})
    moves = moves_from(g, "h8")
    assert {"h8h9,h9i9", "h8i9,i9h9"} <= moves


def test_lion_may_capture_a_lion_freely() -> None:
    # No Chu-style Lion-trading restrictions (spec §5.4): by leap, by igui, protected or not.
    g = game({"h8": "L!", "h10": "l!", "i9": "l!", "j9": "p"})
    assert {"h8h10", "h8i9", "h8i9,i9h8", "h8i9,i9h10", "h8i9,i9j9"} <= moves_from(g, "h8")
    g.play("h8i9,i9h10")
    assert piece_at(g, "h10") == "Ln" and piece_at(g, "i9") == ""


# ----------------------------------------------------------- Horned Falcon, Soaring Eagle


def test_horned_falcon_double_capture_forward() -> None:
    g = game({"h8": "+H", "h9": "p", "h10": "p"})
    record = g.play("h8h9,h9h10")
    assert record.display == "+DHx8gx8f"
    assert piece_at(g, "h10") == "+DH" and piece_at(g, "h9") == ""


def test_horned_falcon_igui_and_hit_and_run_and_jump() -> None:
    g = game({"h8": "+H", "h9": "p"})
    assert {"h8h9", "h8h10", "h8h9,h9h8", "h8h9,h9h10"} <= moves_from(g, "h8")
    assert g.play("h8h9,h9h8").display == "+DHx!8g"
    g2 = game({"h8": "+H", "h9": "G"})
    assert "h8h10" in moves_from(g2, "h8")  # jumps its own piece
    assert not {m for m in moves_from(g2, "h8") if "," in m}


def test_horned_falcon_has_no_lion_power_sideways_or_diagonally() -> None:
    g = game({"h8": "+H", "i8": "p", "i9": "p", "g7": "p"})
    assert not {m for m in moves_from(g, "h8") if "," in m}
    assert "h8j8" not in moves_from(g, "h8")  # the sideways slide stops at the capture


def test_horned_falcon_pass_needs_the_forward_square_empty() -> None:
    g = game({"h8": "+H", "g8": "G", "i8": "G", "h7": "G"})
    assert "@@@@" in g.legal_moves()
    blocked = game({"h8": "+H", "h9": "G"})
    assert "@@@@" not in blocked.legal_moves()


def test_soaring_eagle_lion_power_on_both_forward_diagonals() -> None:
    g = game({"h8": "+D", "g9": "p", "i9": "p", "j10": "p"})
    moves = moves_from(g, "h8")
    assert {"h8g9,g9f10", "h8g9,g9h8", "h8i9,i9j10", "h8i9,i9h8", "h8f10", "h8j10"} <= moves
    # No turn through 90°: after g9 it may go on to f10 or back, nothing else.
    assert {m for m in moves if m.startswith("h8g9,")} == {"h8g9,g9f10", "h8g9,g9h8"}
    assert "h8k11" not in moves  # the forward diagonal ends at two squares
    assert g.play("h8i9,i9j10").display == "+DKx7gx6f"


def test_soaring_eagle_has_no_lion_power_backward() -> None:
    g = game({"h8": "+D", "g7": "p", "i7": "p", "h7": "p"})
    assert not {m for m in moves_from(g, "h8") if "," in m}


def test_gote_horned_falcon_lion_power_points_down() -> None:
    g = game({"h8": "+h", "h7": "P", "h6": "P", "h9": "P"}, "b")
    moves = moves_from(g, "h8")
    assert {"h8h7,h7h6", "h8h7,h7h8"} <= moves
    assert not {m for m in moves if m.startswith("h8h9,")}


def test_promoted_kirin_is_a_full_lion() -> None:
    g = game({"h8": "+O", "g9": "p"})
    assert len({m for m in moves_from(g, "h8") if "," in m}) == 8
    assert g.play("h8g9,g9h8").display == "+Krx!9g"


def test_lion_area_definition() -> None:
    assert (
        len(lion_area(((1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)))) == 24
    )
    assert lion_area(((0, 1),)) == {(0, 1), (0, 2)}


# ------------------------------------------------------------------- wire format, attacks


def test_multi_leg_wire_format_round_trip() -> None:
    g = game({"h3": "L!", "i4": "p", "i5": "p"})
    pos = g.position
    move = pos.parse_uci("h3i4,i4i5")
    assert move.via == (G.parse("i4"),) and move.to_sq == G.parse("i5")
    assert pos.uci(move) == "h3i4,i4i5"
    assert move in pos.legal_moves()


@pytest.mark.parametrize("text", ["h3i4,i5i6", "h3i4,", "h3i4,i4", "h3i4,i4i5+", "@@@"])
def test_malformed_multi_leg_moves_are_rejected(text: str) -> None:
    g = game({"h3": "L!", "i4": "p", "i5": "p"})
    fen = g.fen()
    with pytest.raises((InvalidMoveError, IllegalMoveError)):
        g.play(text)
    assert g.fen() == fen and g.ply == 0


def test_lion_attacks_count_for_check() -> None:
    # The Lion attacks a king a knight's jump away over other pieces (spec §0.4).
    pos = Position.from_fen(
        DAI, fen_of({"h8": "L!", "h9": "G", "i9": "G", "i10": "k", "a1": "K"}, "b")
    )
    assert pos.is_check()
    # Attack through a capture-then-step route: the king is two steps away behind a piece.
    pos2 = Position.from_fen(DAI, fen_of({"h8": "L!", "h9": "p", "h10": "k", "a1": "K"}, "b"))
    assert pos2.is_check()
    # The Horned Falcon attacks two squares forward, jumping; not a knight's jump.
    pos3 = Position.from_fen(DAI, fen_of({"h8": "+H", "h9": "p", "h10": "k", "a1": "K"}, "b"))
    assert pos3.is_check()
    pos4 = Position.from_fen(DAI, fen_of({"h8": "+H", "i10": "k", "a1": "K"}, "b"))
    assert not pos4.is_check()


def test_a_lion_move_giving_check_is_reported() -> None:
    g = Game(DAI, fen_of({"a1": "K", "h8": "L!", "j11": "k"}))
    assert not g.position.is_check()
    assert g.play("h8h9").gives_check  # j11 is a knight's jump from h9


def test_lion_attack_on_one_of_two_royals_is_not_check() -> None:
    # M4: "in check" only with exactly one royal (spec §0.4).
    pos = Position.from_fen(DAI, fen_of({"a1": "K", "h8": "L!", "j9": "k", "o15": "+e"}, "b"))
    assert not pos.is_check()

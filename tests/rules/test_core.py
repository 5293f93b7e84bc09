"""Engine core: board geometry, the Betza parser, FEN/SFEN reading and writing, errors."""

from __future__ import annotations

import random

import pyffish as sf
import pytest

from server.rules import (
    VARIANT_NAMES,
    Game,
    Geometry,
    IllegalMoveError,
    InvalidFenError,
    InvalidMoveError,
    Position,
    RulesError,
    get_variant,
)
from server.rules.betza import Atom, BetzaError, parse
from server.rules.fen import empty_hand_spelled

MINI = get_variant("minishogi")
SHO = get_variant("shoshogi")

# ---------------------------------------------------------------------------- geometry


@pytest.mark.parametrize(("files", "ranks"), [(5, 5), (8, 8), (9, 9), (15, 15), (3, 7)])
def test_every_square_name_round_trips(files: int, ranks: int) -> None:
    g = Geometry(files, ranks)
    names = [g.name(s) for s in range(g.size)]
    assert len(set(names)) == g.size
    assert all(g.parse(n) == s for s, n in enumerate(names))
    assert all(g.square(g.file_of(s), g.rank_of(s)) == s for s in range(g.size))


def test_square_numbering_is_rank_major_from_a1() -> None:
    g = Geometry(9, 9)
    assert (g.parse("a1"), g.parse("i1"), g.parse("a2"), g.parse("i9")) == (0, 8, 9, 80)
    assert Geometry(15, 15).name(224) == "o15"
    assert Geometry(5, 5).name(24) == "e5"


@pytest.mark.parametrize("text", ["f1", "a6", "a0", "a01", "z1", "", "a", "1a", "aa", "e-1"])
def test_parse_rejects_what_is_not_a_square_of_the_board(text: str) -> None:
    with pytest.raises(ValueError):
        Geometry(5, 5).parse(text)


def test_relative_rank_counts_from_each_side_s_back_rank() -> None:
    g = Geometry(9, 9)
    assert g.relative_rank(g.parse("c1"), 0) == 0 and g.relative_rank(g.parse("c1"), 1) == 8
    assert g.relative_rank(g.parse("c7"), 0) == 6 and g.relative_rank(g.parse("c7"), 1) == 2


@pytest.mark.parametrize(("files", "ranks"), [(16, 8), (8, 16), (0, 5), (5, 0)])
def test_board_size_is_limited_to_15(files: int, ranks: int) -> None:
    with pytest.raises(ValueError, match=r"outside 1\.\.15"):
        Geometry(files, ranks)


# ------------------------------------------------------------------------------- Betza


def vectors(betza: str) -> set[tuple[int, int]]:
    return {(a.dx, a.dy) for a in parse(betza)}


ORTHOGONAL = {(1, 0), (-1, 0), (0, 1), (0, -1)}
DIAGONAL = {(1, 1), (1, -1), (-1, 1), (-1, -1)}


def test_basic_atoms_are_single_steps_or_leaps() -> None:
    assert vectors("W") == ORTHOGONAL and vectors("F") == DIAGONAL
    assert vectors("K") == ORTHOGONAL | DIAGONAL
    assert vectors("N") == {(1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1)}
    assert vectors("D") == {(2, 0), (-2, 0), (0, 2), (0, -2)}
    assert vectors("A") == {(2, 2), (2, -2), (-2, 2), (-2, -2)}
    assert all(a.max_range == 1 and not a.jump for a in parse("WF"))
    assert all(a.max_range == 1 and a.jump for a in parse("NDAH"))


def test_sliders_and_doubled_atoms_ride() -> None:
    for betza, dirs in (("R", ORTHOGONAL), ("B", DIAGONAL), ("Q", ORTHOGONAL | DIAGONAL)):
        atoms = parse(betza)
        assert {(a.dx, a.dy) for a in atoms} == dirs
        assert all(a.max_range == 0 for a in atoms)
    # §0.3: WW is R and FF is B (a doubled atom is a rider).
    assert parse("WW") == parse("R")
    assert parse("FF") == parse("B")
    assert [a.max_range for a in parse("W2")] == [2, 2, 2, 2]


def test_direction_modifiers_of_the_shogi_pieces() -> None:
    assert vectors("fW") == {(0, 1)}  # pawn
    assert vectors("WfF") == ORTHOGONAL | {(1, 1), (-1, 1)}  # gold
    assert vectors("FfW") == DIAGONAL | {(0, 1)}  # silver
    assert vectors("FsfW") == (ORTHOGONAL | DIAGONAL) - {(0, -1)}  # drunk elephant
    assert vectors("ffN") == {(1, 2), (-1, 2)}  # shogi knight: the two narrow forward leaps
    assert vectors("fR") == {(0, 1)} and parse("fR")[0].max_range == 0  # lance
    assert vectors("RF") == ORTHOGONAL | DIAGONAL  # dragon
    assert {(a.dx, a.dy) for a in parse("RF") if a.max_range == 1} == DIAGONAL
    assert vectors("vW") == {(0, 1), (0, -1)} and vectors("sW") == {(1, 0), (-1, 0)}


def test_move_capture_initial_and_lame_modifiers() -> None:
    (move_only,) = parse("mfW")
    assert move_only.can_move and not move_only.can_capture
    (capture_only,) = parse("cfF")[:1]
    assert capture_only.can_capture and not capture_only.can_move
    assert all(a.initial for a in parse("imfnD"))
    (lame,) = parse("mfnD")
    assert lame == Atom(0, 1, 2, 2, False, True, False, False)  # a blockable two-step ride


@pytest.mark.parametrize("betza", ["Z", "xW", "3W", "Wx", "aW", "W!"])
def test_betza_parser_rejects_what_it_does_not_understand(betza: str) -> None:
    with pytest.raises(BetzaError):
        parse(betza)


# -------------------------------------------------------------------------------- FEN


def random_positions(name: str, games: int, plies: int, seed: int) -> list[tuple[Position, int]]:
    """Positions (with their ply) from seeded random games, to exercise hands and promotions."""
    rng = random.Random(seed)
    variant = get_variant(name)
    out = []
    for _ in range(games):
        game = Game(variant)
        while game.outcome() is None and game.ply < plies:
            game.play(rng.choice(game.legal_moves()))
            out.append((game.position, game.ply))
    return out


@pytest.mark.parametrize("name", ["minishogi", "shoshogi"])
def test_fen_round_trips(name: str) -> None:
    variant = get_variant(name)
    positions = random_positions(name, 6, 80, seed=31)
    assert any(any(p.hands[0]) or any(p.hands[1]) for p, _ in positions) or name == "shoshogi"
    assert any("+" in p.fen() for p, _ in positions)
    for pos, _ in positions:
        again = Position.from_fen(variant, pos.fen())
        assert again.fen() == pos.fen()
        assert (again.board, again.hands, again.turn, again.key) == (pos.board, pos.hands, pos.turn, pos.key)


@pytest.mark.parametrize("name", ["minishogi", "shoshogi"])
def test_sfen_round_trips(name: str) -> None:
    variant = get_variant(name)
    for pos, ply in random_positions(name, 4, 60, seed=32):
        sfen = pos.sfen(ply)
        assert sfen.split()[-1] == str(ply + 1)  # SFEN numbers plies from 1
        again = Position.from_sfen(variant, sfen)
        assert (again.board, again.hands, again.turn) == (pos.board, pos.hands, pos.turn)
        assert again.sfen(ply) == sfen


def test_position_key_does_not_depend_on_how_the_position_was_reached() -> None:
    # A capture fills an empty hand (0 -> 1) and a drop empties it again (1 -> 0).
    game = Game(MINI)
    game.play("e1e4")  # Rx1b: sente's hand gets a pawn
    assert game.position.key == Position.from_fen(MINI, game.fen()).key
    game.play("e5e4")  # Kx1b: gote's hand gets a rook
    game.play("P@c3")
    assert game.position.key == Position.from_fen(MINI, game.fen()).key
    held = Position.from_fen(MINI, "rbsgk/5/5/P4/KGSB1[Pr] w - - 0 1")
    assert held.play(held.move_from_uci("P@c3")).key == Position.from_fen(MINI, "rbsgk/5/2P2/P4/KGSB1[r] b").key


def test_side_letters_fsf_w_and_sfen_b_are_the_first_player() -> None:
    fen = "rbsgk/4p/5/P4/KGSBR[] w - - 0 1"
    assert Position.from_fen(MINI, fen).turn == 0
    assert Position.from_fen(MINI, fen.replace(" w ", " b ")).turn == 1
    assert Position.from_sfen(MINI, "rbsgk/4p/5/P4/KGSBR b - 1").turn == 0
    assert Position.from_sfen(MINI, "rbsgk/4p/5/P4/KGSBR w - 2").turn == 1
    assert Position.from_fen(MINI, fen).sfen() == "rbsgk/4p/5/P4/KGSBR b - 1"


def test_hands_in_fen_and_sfen() -> None:
    # §1.2: "[RPp]" = sente holds R and P, gote holds p.
    pos = Position.from_fen(MINI, "4k/5/5/5/K4[RPp] w - - 0 1")
    code = MINI.t.code
    assert pos.hands[0][code["R"]] == 1 and pos.hands[0][code["P"]] == 1
    assert pos.hands[1][code["P"]] == 1 and sum(pos.hands[1]) == 1
    two = Position.from_fen(MINI, "4k/5/5/5/K4[2P2p] b - - 3 9")
    assert two.fen() == "4k/5/5/5/K4[PPpp] b - - 3 9"
    assert two.sfen() == "4k/5/5/5/K4 w 2P2p 18"
    assert Position.from_sfen(MINI, "4k/5/5/5/K4 w 2P2p 18").hands == two.hands


@pytest.mark.parametrize("name", VARIANT_NAMES)
def test_a_variants_declared_start_fen_is_what_the_writer_writes(name: str) -> None:
    """One spelling (before 67b7208, ``gameStart.game.fen`` wrote ``[]`` where ``initialFen`` wrote
    Mini-Shogi's declared ``[-]``): the declared start FEN is ``Game(variant).fen()``, and an
    older stored spelling reads back as the writer's (``empty_hand_spelled``)."""
    variant = get_variant(name)
    assert Game(variant).fen() == variant.start_fen
    assert empty_hand_spelled(variant.start_fen) == variant.start_fen
    if variant.hand_in_fen:
        older = variant.start_fen.replace("[]", "[-]", 1)
        assert empty_hand_spelled(older) == variant.start_fen
        assert Game(variant, older).fen() == variant.start_fen


def test_fsf_fen_forms_are_accepted() -> None:
    expected = "rbsgk/4p/5/P4/KGSBR[] w - - 0 1"
    for fen in (
        "rbsgk/4p/5/P4/KGSBR[-] w 0 1",  # FSF's start FEN
        "rbsgk/4p/5/P4/KGSBR[] w - - 0 1",  # FSF's get_fen
        "rbsgk/4p/5/P4/KGSBR[] w",
        "rbsgk/4p/5/P4/KGSBR",
    ):
        assert Position.from_fen(MINI, fen).fen() == expected
    assert Position.from_fen(SHO, SHO.start_fen.replace(" w - - 0 1", " w 0 1")).fen() == SHO.start_fen


def test_fen_reads_what_fairy_stockfish_writes() -> None:
    rng = random.Random(33)
    for name in ("minishogi", "shoshogi"):
        variant = get_variant(name)
        game = Game(variant)
        while game.outcome() is None and game.ply < 40:
            game.play(rng.choice(game.legal_moves()))
            theirs = Position.from_fen(variant, sf.get_fen(name, variant.start_fen, game.moves))
            ours = game.position
            assert (theirs.board, theirs.hands, theirs.turn) == (ours.board, ours.hands, ours.turn)


@pytest.mark.parametrize(
    ("name", "fen", "message"),
    [
        ("minishogi", "", "empty FEN"),
        ("minishogi", "rbsgk/4p/5/P4/KGSBR[", "must end with ']'"),
        ("minishogi", "5/5", "2 ranks in the board, expected 5"),
        ("minishogi", "rbsgk/4p/5/P4/KGSB[] w", "rank 1 has 4 squares, expected 5"),
        ("minishogi", "rbsgk/4p/5/P4/KGSBRR[] w", "rank 1 has more than 5 squares"),
        ("minishogi", "rb?gk/4p/5/P4/KGSBR[] w", "unexpected '?' in rank 5"),
        # a digit int() refuses (str.isdigit takes it): a bare ValueError before
        ("minishogi", "rbsgk/4p/\u00b2/P4/KGSBR[] w", "unexpected '\u00b2' in rank 3"),
        ("minishogi", "rbsgk/4p/\u0665/P4/KGSBR[] w", "unexpected '\u0665' in rank 3"),
        ("minishogi", "rbsgk/4p/5/P4/KGSBX[] w", "unknown piece 'X' in Mini-Shogi"),
        ("minishogi", "rbsgk/4p/5/P4/KGSBR[] x", "side to move must be 'w' or 'b'"),
        ("minishogi", "rbsgk/4p/5/P4/KGSBR[] w KQ - 0 1", "bad castling field"),
        ("minishogi", "rbsgk/4p/5/P4/KGSBR[K] w", "'K' cannot be in hand"),
        ("minishogi", "rbsgk/4p/5/P4/KGSBR[+P] w", "'+P' cannot be in hand"),
        ("minishogi", "rbsg1/4p/5/P4/KGSBR[] w", "the second player has no king"),
        ("minishogi", "rbsgK/4p/5/P4/KGSBR[] w", "the first player has more than one king"),
        ("minishogi", "Pbsgk/4p/5/P4/KGSBR[] w", "the piece on a5 could never move"),
        ("minishogi", "4k/5/5/5/K3R[] w - - 0 1", "the side not to move is in check"),
        ("shoshogi", "4k4/9/9/9/9/9/9/9/4K4[P] w", "Sho Shogi has no pieces in hand"),
        ("shoshogi", "4k4/N8/9/9/9/9/9/9/4K4 w", "the piece on a8 could never move"),
        ("shoshogi", "4k4/9/9/9/9/9/9/9/9 w", "the first player has no king"),
    ],
)
def test_invalid_fens_are_rejected_with_the_reason(name: str, fen: str, message: str) -> None:
    with pytest.raises(InvalidFenError) as err:
        Position.from_fen(get_variant(name), fen)
    assert message in str(err.value)
    with pytest.raises(InvalidFenError):
        Game(get_variant(name), fen or "x")


@pytest.mark.parametrize("sfen", ["rbsgk/4p/5/P4/KGSBR", "rbsgk/4p/5/P4/KGSBR x - 1"])
def test_invalid_sfens_are_rejected(sfen: str) -> None:
    with pytest.raises(InvalidFenError, match="is not an SFEN"):
        Position.from_sfen(MINI, sfen)


# ----------------------------------------------------------------------------- errors


def test_error_classes() -> None:
    for cls in (InvalidMoveError, IllegalMoveError, InvalidFenError):
        assert issubclass(cls, RulesError) and issubclass(cls, ValueError)


def test_a_rejected_move_changes_nothing() -> None:
    game = Game(MINI)
    before = (game.fen(), game.ply, list(game.moves))
    for bad in ("e1e5", "zz", "P@c3", "e5e4"):
        with pytest.raises(RulesError):
            game.play(bad)
    assert (game.fen(), game.ply, list(game.moves)) == before


def test_undo_takes_back_the_last_move_and_its_repetition_count() -> None:
    game = Game(MINI)
    for move in ("b1b2", "d5d4", "b2b1", "d4d5"):
        game.play(move)
    assert game.repetitions() == 2
    game.undo()
    assert game.ply == 3 and game.fen() == "rbs1k/3gp/5/P4/KGSBR[] b - - 3 2"
    assert game.repetitions() == 1
    for _ in range(3):
        game.undo()
    with pytest.raises(IllegalMoveError, match="no move to take back"):
        game.undo()


def test_unknown_variant_names_the_known_ones() -> None:
    with pytest.raises(KeyError) as err:
        get_variant("chess")
    assert "minishogi" in str(err.value) and "shoshogi" in str(err.value)
    assert {"minishogi", "shoshogi"} <= set(VARIANT_NAMES)

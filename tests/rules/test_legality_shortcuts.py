"""The legal-move shortcuts (legality.py) agree with the general test, on seeded positions.

`Position.legal_moves`, `is_legal`, `has_legal_move` and `legal_moves_from` skip the full
royal-safety test (`legal_after`: play the move on a scratch board, look at every royal) for
moves that cannot expose a royal, answer a sole royal's steps from an attack map
(`attack_set`) or one reverse look-up, and a pinned piece's moves from its pin line; with two
Spartan kings only the moves of pieces that could expose the king that matters are tested.
Here every one of those answers is compared with the general test on every pseudo-legal
move, for every variant, over positions of seeded random games (checks, pins, castling,
en passant, drops, promotions) and over scrambled ones (the same pieces shuffled over the
board: many checks, double and duple checks, pins against either Spartan king).
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from server.rules import (
    Game,
    Geometry,
    PieceType,
    Position,
    Repetition,
    RoyalModel,
    Variant,
    get_variant,
    legality,
)
from server.rules.drops import drop_mates
from server.rules.legality import GUARD_MULTI, attack_set, legal_after
from server.rules.move import Move

# variant -> (random games, plies per game, scrambles per game position sampled)
PLAN = {
    "wildcastle": (12, 90, 3),
    "spartan": (12, 90, 3),
    "minishogi": (12, 90, 3),
    "shoshogi": (4, 90, 2),
    "daishogi": (2, 50, 1),
}


def reference_legal(pos: Position) -> set[Move]:
    """Every pseudo-legal move that passes the general royal-safety test (no shortcut)."""
    scratch = list(pos.board)
    no_mate = pos.variant.t.no_drop_mate
    return {
        m
        for m in pos.pseudo_legal_moves()
        if legal_after(pos, m, scratch) and not (m.drop and m.drop in no_mate and drop_mates(pos, m))
    }


def fresh(pos: Position) -> Position:
    """The same position with no cached move lists, pins or check answer."""
    return Position(pos.variant, pos.board, pos.hands, pos.turn, pos.castling, pos.ep, pos.halfmove, pos.fullmove)


def game_positions(name: str, games: int, plies: int, seed: int) -> list[Position]:
    variant = get_variant(name)
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        game = Game(variant, variant.random_start_fen(rng))
        out.append(game.position)
        while game.ply < plies and game.outcome() is None:
            game.play(rng.choice(game.legal_moves()))
            out.append(game.position)
    return out


def scrambled(pos: Position, rng: random.Random) -> Position:
    """``pos``'s pieces shuffled over the board (no castling, no en passant), every other
    time with most non-royal pieces taken off (endings: few attackers, free royals)."""
    royal = pos.variant.t.royal
    board = list(pos.board)
    if rng.random() < 0.5:
        board = [p if royal[abs(p)] or rng.random() < 0.3 else 0 for p in board]
    rng.shuffle(board)
    return Position(pos.variant, tuple(board), pos.hands, pos.turn)


def check_position(pos: Position, seen: Counter[str]) -> None:
    expected = reference_legal(fresh(pos))
    where = pos.fen()

    fast = fresh(pos)
    listed = fast.legal_moves()
    assert len(listed) == len(set(listed)), where
    assert set(listed) == expected, where
    if fast._guard == GUARD_MULTI:
        seen["two kings, not in duple check"] += 1
        if fast._pins:
            seen["two kings, pieces to test"] += 1
    if fast.is_check():
        seen["in check"] += 1
    if fast._pins and fast._guard != GUARD_MULTI:
        seen["pinned pieces"] += 1

    probe = fresh(pos)
    for m in probe.pseudo_legal_moves():
        assert probe.is_legal(m) == (m in expected), (where, m)
    assert fresh(pos).has_legal_move() == bool(expected), where
    per_square = fresh(pos)
    sign = 1 if pos.turn == 0 else -1
    for sq, p in enumerate(pos.board):
        if p * sign > 0:
            assert set(per_square.legal_moves_from(sq)) == {m for m in expected if m.from_sq == sq}, (where, sq)

    # The forward attack map answers exactly as the reverse look-up, on the board and on
    # the board without the mover's royal (the map _legal_one uses).
    boards: list[tuple[int, ...] | list[int]] = [pos.board]
    for r in pos.royals[pos.turn]:
        without = list(pos.board)
        without[r] = 0
        boards.append(without)
    enemy = 1 - pos.turn
    for board in boards:
        covered = attack_set(pos, enemy, board)
        arg = None if board is pos.board else board
        assert covered == {s for s in range(len(board)) if pos.attacked(s, enemy, arg)}, where
    mine = attack_set(pos, pos.turn, pos.board)
    assert mine == {s for s in range(len(pos.board)) if pos.attacked(s, pos.turn)}, where


@pytest.mark.parametrize("name", sorted(PLAN))
def test_shortcuts_agree_with_the_general_test(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    games, plies, scrambles = PLAN[name]
    maps = Counter[str]()
    real_attack_set = legality.attack_set

    def counting_attack_set(pos: Position, by: int, board: list[int] | tuple[int, ...]) -> set[int]:
        maps["attack map"] += 1
        return real_attack_set(pos, by, board)

    monkeypatch.setattr(legality, "attack_set", counting_attack_set)
    rng = random.Random(14)
    seen = Counter[str]()
    positions = game_positions(name, games, plies, seed=2024)
    for pos in positions:
        check_position(pos, seen)
    for pos in rng.sample(positions, min(len(positions), 120)):
        for _ in range(scrambles):
            check_position(scrambled(pos, rng), seen)
    seen.update(maps)
    # The positions reached the cases the shortcuts are for (so this test can fail).
    if name != "daishogi":  # royal capture: no safety test at all
        assert seen["in check"] > 0 and seen["pinned pieces"] > 0, seen
        assert seen["attack map"] > 0, seen
    if name == "spartan":
        assert seen["two kings, not in duple check"] > 100, seen
        assert seen["two kings, pieces to test"] > 0, seen


@pytest.mark.parametrize(
    ("fen", "legal"),
    [
        # Pinned rook on the e-file: only moves along the pin line (taking the pinner too).
        ("4r2k/8/8/8/8/8/4R3/4K3 w - - 0 1", {"e2e3", "e2e4", "e2e5", "e2e6", "e2e7", "e2e8"}),
        # Pinned bishop: its only move along the pin line takes the pinner.
        ("7k/8/8/8/8/2b5/3B4/4K3 w - - 0 1", {"d2c3"}),
    ],
)
def test_pinned_piece_moves_stay_on_the_line(fen: str, legal: set[str]) -> None:
    pos = Position.from_fen(get_variant("wildcastle"), fen)
    piece_moves = {pos.uci(m) for m in pos.legal_moves() if pos.board[m.from_sq] != pos.board[pos.royals[0][0]]}
    assert piece_moves == legal


def test_two_spartan_kings_one_may_be_left_attacked_not_both() -> None:
    """Kings c8 and f6; the captain on c5 shields c8 from the rook on c1. While f6 is not
    attacked the captain may leave the c-file; with a second rook on f1 attacking f6 it may
    only move along the file (leaving both kings attacked is illegal)."""
    spartan = get_variant("spartan")
    free = Position.from_fen(spartan, "2k5/8/5k2/2c5/8/8/8/2R1K3 b - - 0 1")
    names = {free.uci(m) for m in free.legal_moves()}
    assert {"c5d5", "c5b5", "c5c4"} <= names
    assert names == {free.uci(m) for m in reference_legal(fresh(free))}
    both = Position.from_fen(spartan, "2k5/8/5k2/2c5/8/8/8/2R1KR2 b - - 0 1")
    names = {both.uci(m) for m in both.legal_moves()}
    assert "c5c4" in names and "c5c3" in names
    assert "c5d5" not in names and "c5b5" not in names
    assert names == {both.uci(m) for m in reference_legal(fresh(both))}
    # The move check (is_legal, no list generated) agrees.
    check = Position.from_fen(spartan, "2k5/8/5k2/2c5/8/8/8/2R1KR2 b - - 0 1")
    assert not check.is_check()
    assert check.is_legal(check.parse_uci("c5c4")) and not check.is_legal(check.parse_uci("c5d5"))


def test_attack_map_on_lame_and_ranged_pieces() -> None:
    """Pieces whose rays attack only from some distances (a lame dabbaba ``nD``, a
    two-square rook ``W2``) next to leapers and riders: the attack map and the legal moves
    (map-based royal steps included) agree with the reverse look-up and the general test
    on random sparse boards."""
    variant = Variant(
        name="lame-test",
        title="Lame test",
        family="chess",
        geometry=Geometry(6, 6),
        pieces=(
            PieceType("K", "King", "K", royal=True),
            PieceType("D", "Lame dabbaba", "nD"),
            PieceType("T", "Short rook", "W2"),
            PieceType("N", "Knight", "N"),
            PieceType("B", "Bishop", "B"),
        ),
        start_fen="k5/6/6/6/6/5K w - - 0 1",
        royalty=(RoyalModel.CHECKMATE, RoyalModel.CHECKMATE),
        stalemate_loses=False,
        repetition=Repetition(automatic=3),
    )
    assert any(flags is not None for _, rays in variant.t.attacks_from(-2) for _, flags in rays)
    start = Position.from_fen(variant, variant.start_fen)
    rng = random.Random(7)
    seen = Counter[str]()
    for _ in range(1500):
        board = [0] * 36
        squares = rng.sample(range(36), 2 + rng.randint(1, 10))
        board[squares[0]], board[squares[1]] = 1, -1
        for s in squares[2:]:
            board[s] = rng.choice((2, 3, 4, 5)) * rng.choice((1, -1))
        pos = Position(variant, tuple(board), start.hands, rng.randint(0, 1))
        check_position(pos, seen)
    assert seen["in check"] > 0 and seen["pinned pieces"] > 0, seen

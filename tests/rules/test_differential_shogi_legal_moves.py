"""Mini-Shogi and Sho Shogi legal-move sets against Fairy-Stockfish (pyffish 0.0.90): perft
trees from the start and from middlegame positions (pieces in hand, promoted pieces, check,
Crown Prince, a pending mating pawn drop) have FSF's legal-move set at every inner node, apart
from the named differences of test_differential_shogi.py; and the single-move check
(``Position.is_legal``) accepts exactly the moves of that legal list. ``--long`` perfts one ply
deeper (run it with ``--timeout=0``).
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from fsf_oracle import walk_tree
from shogi_differential import SEEDS, VARIANTS, budget, named_difference, oracle_for

from server.rules import Game, IllegalMoveError, Move, Position, Variant, get_variant
from server.rules.position import NULL_SQUARE

# ------------------------------------------------------------------------ perft


def engine_perft(pos: Position, depth: int) -> int:
    if depth == 0:
        return 1
    moves = pos.legal_moves()
    if depth == 1:
        return len(moves)
    return sum(engine_perft(pos.play(m), depth - 1) for m in moves)


@pytest.mark.parametrize("name", VARIANTS)
def test_perft_from_start(name: str, long_sweep: bool) -> None:
    """Every inner node of the start position's perft tree has exactly FSF's legal-move set,
    so the perft counts are equal."""
    variant = get_variant(name)
    oracle = oracle_for(variant)
    start = Position.from_fen(variant, variant.start_fen)
    depth = budget(name, long_sweep).start_depth
    report = walk_tree(oracle, start, depth, lambda p, path, m, fsf_only: False)
    assert report.shared_leaves == engine_perft(start, depth)
    assert report.nodes_compared > 1


def has_promoted_piece(pos: Position) -> bool:
    return any(p and pos.variant.t.types[abs(p)].is_promoted for p in pos.board)


def has_hand(pos: Position) -> bool:
    return any(any(hand) for hand in pos.hands)


def has_two_royals(pos: Position) -> bool:
    return len(pos.royals[pos.turn]) > 1 or len(pos.royals[1 - pos.turn]) > 1


def pending_mating_drop(pos: Position) -> bool:
    """A pawn drop that would mate is available (the engine excludes it, FSF lists it)."""
    no_mate = pos.variant.t.no_drop_mate
    if not no_mate:
        return False
    for m in pos.pseudo_legal_moves():
        if m.drop in no_mate:
            after = pos.play(m)
            if not after.checked(pos.turn) and after.is_check() and not after.has_legal_move():
                return True
    return False


MIDDLE_KINDS = {
    "promoted piece and pieces in hand": lambda p: has_promoted_piece(p) and has_hand(p),
    "in check": lambda p: p.is_check(),
    "promoted piece": has_promoted_piece,
    "pieces in hand, second player to move": lambda p: has_hand(p) and p.turn == 1,
    "mating pawn drop pending": pending_mating_drop,
    "Crown Prince beside the King": has_two_royals,
}


def middlegame_positions(variant: Variant, count: int, seed: int) -> list[tuple[str, str]]:
    """``count`` (kind, FEN) pairs from seeded random playouts, cycling through the kinds that
    apply to the variant, each taken at least 12 plies into a game."""
    rng = random.Random(seed)
    kinds = [k for k in MIDDLE_KINDS if variant.drops is not None or ("hand" not in k and "drop" not in k)]
    if variant.name != "shoshogi":
        kinds.remove("Crown Prince beside the King")
    wanted = [kinds[i % len(kinds)] for i in range(count)]
    found: list[tuple[str, str]] = []
    for _ in range(5000):
        if not wanted:
            break
        game = Game(variant)
        target = rng.randrange(12, 160)
        while game.outcome() is None and game.ply < target:
            game.play(rng.choice(game.legal_moves()))
            pos = game.position
            if game.ply >= 12 and game.outcome() is None and MIDDLE_KINDS[wanted[0]](pos):
                found.append((wanted.pop(0), game.fen()))
                break
    assert not wanted, f"no position found for {wanted}"
    return found


@pytest.mark.parametrize("name", VARIANTS)
def test_perft_from_middlegame(name: str, long_sweep: bool) -> None:
    """Perft trees from middlegame positions (hands, promotions, checks, Crown Prince, a
    pending mating pawn drop) match FSF node by node, apart from the named differences; in
    Mini-Shogi the mating-drop difference shows up and is verified."""
    variant = get_variant(name)
    plan = budget(name, long_sweep)
    oracle = oracle_for(variant)
    found: Counter[str] = Counter()
    for _kind, fen in middlegame_positions(variant, plan.middle_positions, SEEDS[name]):
        pos = Position.from_fen(variant, fen)

        def tolerate(p: Position, path: tuple[str, ...], move: str, fsf_only: bool, fen: str = fen) -> bool:
            difference = named_difference(oracle, fen, path, p, move, fsf_only)
            found[difference or "unexplained"] += 1
            return difference is not None

        report = walk_tree(oracle, pos, plan.middle_depth, tolerate)
        assert report.nodes_compared > 1 and report.shared_leaves > 0
    if variant.t.no_drop_mate:
        assert found["mating pawn drop"] > 0, "the mating-pawn-drop difference never showed up"


# ------------------------------------------------------- the one-move check, engine vs engine


def candidate_moves(pos: Position, rng: random.Random) -> set[Move]:
    """Moves to put to the one-move check: every pseudo-legal move, each with the promotion
    flag toggled, every drop of every piece type on every square, and random board moves."""
    t = pos.variant.t
    size = len(pos.board)
    out = set(pos.pseudo_legal_moves())
    for m in list(out):
        if m.from_sq >= 0:
            code = abs(pos.board[m.from_sq])
            out.add(Move(m.from_sq, m.to_sq, 0 if m.promotion else t.promote[code]))
    if pos.variant.drops is not None:
        out |= {Move(NULL_SQUARE, s, 0, code) for code in range(1, t.n + 1) for s in range(size)}
    out |= {Move(rng.randrange(size), rng.randrange(size), rng.choice((0, 0, 2))) for _ in range(60)}
    return out


@pytest.mark.parametrize("name", VARIANTS)
def test_one_move_check_agrees_with_the_legal_list(name: str) -> None:
    """The single-move check (``Position.is_legal``, used by ``Game.play``) accepts exactly the
    moves of the full legal list, which the tests above hold against FSF; so does
    ``legal_moves_from``. Each query runs on a fresh position (nothing cached)."""
    variant = get_variant(name)
    rng = random.Random(SEEDS[name] + 7)
    positions = 0
    for _ in range(8):
        game = Game(variant)
        while game.outcome() is None and game.ply < 120:
            if rng.random() < 0.2:
                p = game.position
                fen = p.fen()

                def fresh(p: Position = p) -> Position:
                    return Position(variant, p.board, p.hands, p.turn, p.castling, p.ep, p.halfmove, p.fullmove)

                legal = set(fresh().legal_moves())
                rejected = []
                for m in candidate_moves(fresh(), rng):
                    assert fresh().is_legal(m) == (m in legal), (fen, m)
                    if m not in legal and (m.drop or p.board[m.from_sq]):
                        rejected.append(p.uci(m))
                for uci in rejected[:5]:  # through Game.play: an error, and nothing changes
                    with pytest.raises(IllegalMoveError):
                        game.play(uci)
                    assert game.fen() == fen
                by_square = fresh()
                for sq in range(len(p.board)):
                    assert set(by_square.legal_moves_from(sq)) == {m for m in legal if m.from_sq == sq}, (fen, sq)
                positions += 1
            game.play(rng.choice(game.legal_moves()))
    assert positions > 30

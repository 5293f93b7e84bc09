"""Mini-Shogi and Sho Shogi checked move by move against Fairy-Stockfish (pyffish 0.0.90).

What is compared (FSF's answer is the expected value everywhere, except for the two
differences below):

* perft trees from the start and from middlegame positions (pieces in hand, promoted pieces,
  check, Crown Prince, a pending mating pawn drop): the legal-move *set* of every inner node
  (test_differential_shogi_legal_moves.py, which also holds the one-move check to that set);
* legal-move sets along seeded random playouts, some of them biased toward taking back one's
  previous move (to reach 4-fold repetitions) and toward checking (perpetual check);
* the outcome where each playout ends (checkmate, stalemate-as-loss, repetition, perpetual
  check), whether each move gave check, the final position, and the display notation
  (FSF's Hodges output for the whole game);
* hand-made positions for endings the playouts reach only by chance.

Differences the tests accept, each verified every time it shows up, and nothing else:

1. Mini-Shogi (spec §1.5, the spec wins): FSF lists a pawn drop that gives immediate mate
   as a legal move; the engine excludes and rejects it. Accepted only for a pawn drop that
   obeys every other drop rule and, per both FSF and the engine, leaves the opponent in
   check without a legal move.
2. Sho Shogi (spec §2.7, the spec wins): FSF scores perpetual check as a draw; the engine
   makes the checker lose. Accepted only where the engine ends the game by PERPETUAL_CHECK
   and FSF reports a drawn 4-fold repetition at exactly that ply.
3. Sho Shogi, found by this sweep and not yet decided by the spec: promoting the Drunk
   Elephant to Crown Prince while the sole King stays attacked. The engine counts the
   royals after the move (two royals, neither protected: legal); FSF counts them before it
   (a sole King left attacked: illegal). Accepted only for an engine-only move that
   promotes to a royal piece while the mover's single royal is attacked afterwards.
   Playouts never choose such a move, since FSF would reject the rest of the game.

The sweep itself (budgets, differences, comparisons) is in shogi_differential.py.

Budget: a pyffish call costs about 2.4 ms here, so the CI sweep compares every ply that is
in check or ends a game and a seeded share of the others. ``--long`` compares every ply of
many more and longer games and perfts one ply deeper (run it with ``--timeout=0``: the
deeper perfts take longer than the suite's per-test timeout).
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
from collections import Counter

import pytest
from shogi_differential import (
    VARIANTS,
    SweepLog,
    compare_legal,
    compare_outcome,
    oracle_for,
    run_sweep,
)

from server.rules import Game, IllegalMoveError, Side, Termination, Variant, get_variant

# The sweeps run in the fixtures' setup: minutes under load, hours with --long. Time only
# the test functions (quick checks of the sweep's log); the sweep itself is bounded by its
# budget of games and plies.
SWEEP_TIMEOUT = pytest.mark.timeout(120, func_only=True)


@pytest.fixture(scope="module")
def sweeps(long_sweep: bool) -> dict[str, SweepLog]:
    """Every variant's playout sweep, each run once and in full. They are independent and
    CPU-bound (mostly pyffish calls, which hold the GIL), so the last one runs in a spawned
    worker process while this process runs the others: the same games and comparisons, in
    about the wall time of the longest sweep instead of the sum. ``spawn`` (not ``fork``): the
    test process may hold threads and event loops left by earlier tests."""
    context = multiprocessing.get_context("spawn")
    *here, there = VARIANTS
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        remote = pool.submit(run_sweep, there, long_sweep)
        logs = {name: run_sweep(name, long_sweep) for name in here}
        logs[there] = remote.result()
    return logs


@pytest.fixture(scope="module", params=VARIANTS)
def sweep(request: pytest.FixtureRequest, sweeps: dict[str, SweepLog]) -> tuple[Variant, SweepLog]:
    """One variant's playout sweep; the tests below each check one aspect of it."""
    return get_variant(request.param), sweeps[request.param]


@SWEEP_TIMEOUT
def test_playout_legal_moves(sweep: tuple[Variant, SweepLog]) -> None:
    """Along the playouts, the engine's legal-move sets are FSF's (less the mating pawn drops)."""
    _, log = sweep
    assert log.legal_compared > log.games
    assert "legal" not in log.mismatches, log.report("legal")


@SWEEP_TIMEOUT
def test_playout_outcomes(sweep: tuple[Variant, SweepLog]) -> None:
    """Each playout ends where FSF says and with FSF's result; repetitions are counted right;
    the sweep reaches checkmate and repetition (in Mini-Shogi also stalemate and perpetual
    check; in Sho Shogi those are rare in random play and covered by hand-made positions)."""
    variant, log = sweep
    assert "repetition" not in log.mismatches, log.report("repetition")
    assert "outcome" not in log.mismatches, log.report("outcome")
    expected = {"checkmate", "repetition"}
    if variant.name == "minishogi":
        expected |= {"stalemate", "perpetual_check"}
    assert expected <= set(log.endings), log.endings


@SWEEP_TIMEOUT
def test_playout_checks(sweep: tuple[Variant, SweepLog]) -> None:
    """Every checking move and a sample of the others: FSF agrees whether the move gave check."""
    _, log = sweep
    assert log.checks_given > 0
    assert "check" not in log.mismatches, log.report("check")


@SWEEP_TIMEOUT
def test_playout_positions_and_notation(sweep: tuple[Variant, SweepLog]) -> None:
    """FSF accepts every game, reaches the same final position, and writes the same Hodges
    notation for every move (origin only when ambiguous, ``=`` for a declined promotion)."""
    _, log = sweep
    assert "position" not in log.mismatches, log.report("position")
    assert "notation" not in log.mismatches, log.report("notation")


@SWEEP_TIMEOUT
def test_playout_differences_are_the_named_ones(sweep: tuple[Variant, SweepLog]) -> None:
    """The only disagreements are the documented ones (see the module docstring), and the
    sweep meets those it is expected to meet."""
    variant, log = sweep
    assert not log.mismatches, {kind: found[:3] for kind, found in log.mismatches.items()}
    allowed = {
        "minishogi": {"mating pawn drop"},
        "shoshogi": {"perpetual check scored as a draw by FSF", "royal promotion into attack"},
    }[variant.name]
    assert set(log.differences) <= allowed, log.examples
    if variant.name == "minishogi":
        assert log.differences["mating pawn drop"] > 0, "no mating pawn drop met: the sweep lost its coverage"
    else:
        assert log.differences["perpetual check scored as a draw by FSF"] == log.endings["perpetual_check"]


# ------------------------------------------------------------------ hand-made endings

MINI_START = get_variant("minishogi").start_fen
SHO_START = get_variant("shoshogi").start_fen
HANDMADE = [
    # endings the playouts meet only by chance: (variant, start FEN, moves), named
    pytest.param("minishogi", "4k/5/4R/5/K4[] b - - 0 1", "e5d5 e3d3 d5e5 d3e3 " * 3, id="mini-perpetual-by-sente"),
    pytest.param("minishogi", "4k/5/r4/5/K4[] w - - 0 1", "a1b1 a3b3 b1a1 b3a3 " * 3, id="mini-perpetual-by-gote"),
    pytest.param("minishogi", MINI_START, "a1b2 e5d4 b2a1 d4e5 " * 3, id="mini-repetition"),
    pytest.param("minishogi", "4k/5/4G/5/K2R1[] b - - 0 1", "", id="mini-stalemate"),
    pytest.param("shoshogi", "4k4/9/9/9/4R4/9/9/9/K8 b - - 0 1", "e9d9 e5d5 d9e9 d5e5 " * 3, id="sho-perpetual"),
    pytest.param("shoshogi", SHO_START, "e1d2 e9d8 d2e1 d8e9 " * 3, id="sho-repetition"),
    pytest.param("shoshogi", "8k/9/8G/9/9/9/9/9/K6R1 b - - 0 1", "", id="sho-stalemate"),
]


@pytest.mark.parametrize(("name", "fen", "moves"), HANDMADE)
def test_handmade_endings(name: str, fen: str, moves: str) -> None:
    """Perpetual check, plain repetition and stalemate: the outcome is FSF's, except that a
    Sho Shogi perpetual check is lost by the checker (FSF: draw)."""
    variant = get_variant(name)
    oracle = oracle_for(variant)
    game = Game(variant, fen)
    for uci in moves.split():
        assert game.outcome() is None
        game.play(uci)
    outcome = game.outcome()
    assert outcome is not None
    if game.ply:
        assert game.legal_moves() == []
    log = SweepLog()
    compare_outcome(oracle, fen, game, log)
    assert not log.mismatches, log.mismatches
    if variant.name == "shoshogi" and outcome.termination is Termination.PERPETUAL_CHECK:
        assert log.differences["perpetual check scored as a draw by FSF"] == 1
        checker = game.position_at(1).turn  # sente made the checking moves 2, 4, ...
        assert outcome.winner is Side(checker).other
    else:
        assert not log.differences


def test_mating_pawn_drop_is_the_only_extra_fsf_move() -> None:
    """A position where FSF lists a mating pawn drop: it is the only difference, FSF scores
    the result as a win for the mated side, and the engine rejects the drop."""
    variant = get_variant("minishogi")
    oracle = oracle_for(variant)
    fen = "1+P+Rsk/5/K1+bG1/1r3/1g1+bs[P] w - - 6 92"
    game = Game(variant, fen)
    log = SweepLog()
    compare_legal(oracle, fen, game, log)
    assert not log.mismatches, log.mismatches
    assert log.differences == Counter({"mating pawn drop": 1})
    assert log.examples["mating pawn drop"].startswith("P@e4 ")
    assert oracle.game_result(fen, ["P@e4"]) > 0  # FSF: the side "mated" by the drop wins
    with pytest.raises(IllegalMoveError, match="would give mate"):
        game.play("P@e4")
    assert game.ply == 0

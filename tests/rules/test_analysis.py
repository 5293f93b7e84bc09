"""Analysis records and lichess's judgements (server.rules.analysis)."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.rules import VARIANT_NAMES, Game, get_variant
from server.rules.analysis import (
    AnalysisError,
    AnalysisLimits,
    AnalysisRecord,
    FirstPlayerScore,
    PlyEval,
    advices,
    judge,
    mover_of,
    summarize,
    win_chances,
    win_percent,
)
from server.rules.export.annotate import annotate
from server.transport.analysis_api import view_of


def cp_for_chances(w: float) -> float:
    """The inverse of win_chances."""
    return -math.log(2 / (w + 1) - 1) / 0.00368208


def test_win_chances_curve() -> None:
    assert win_chances(0) == 0
    assert win_chances(100) == pytest.approx(2 / (1 + math.exp(-0.368208)) - 1)
    assert win_chances(100) == pytest.approx(0.1820, abs=1e-4)
    assert win_chances(-300) == pytest.approx(-win_chances(300))
    assert win_chances(10**6) == 1.0 and win_chances(-(10**6)) == -1.0
    assert win_percent(FirstPlayerScore(0)) == 50
    assert (
        win_percent(FirstPlayerScore(mate=3))
        == win_percent(FirstPlayerScore(5000))
        == pytest.approx(50 + 50 * win_chances(1000))
    )


@pytest.mark.parametrize(
    ("drop", "expected"),
    [(0.099, None), (0.101, "inaccuracy"), (0.199, "inaccuracy"), (0.201, "mistake"),
     (0.299, "mistake"), (0.301, "blunder"), (0.9, "blunder")],
)
def test_cp_thresholds(drop: float, expected: str | None) -> None:
    # From an even position, the first player loses `drop` winning chances.
    before = FirstPlayerScore(0)
    after = FirstPlayerScore(round(cp_for_chances(-drop)))
    got = judge(before, after, mover=0)
    assert (got[0] if got else None) == expected
    # The same for the second player: the score (first player's view) moves the other way.
    mirrored_after = FirstPlayerScore(-after.cp if after.cp is not None else 0)
    mirrored = judge(FirstPlayerScore(0), mirrored_after, mover=1)
    assert (mirrored[0] if mirrored else None) == expected
    # A gain is never a mistake.
    assert judge(after, before, mover=0) is None


def test_mate_judgements() -> None:
    # Mate created against the mover: by how lost the position already was.
    assert judge(FirstPlayerScore(0), FirstPlayerScore(mate=-3), 0) == ("blunder", "mate_created")
    mated = FirstPlayerScore(mate=-3)
    assert judge(FirstPlayerScore(-800), mated, 0) == ("mistake", "mate_created")
    assert judge(FirstPlayerScore(-1200), mated, 0) == ("inaccuracy", "mate_created")
    # Second player to move: "against the mover" is a positive mate in the first player's view.
    assert judge(FirstPlayerScore(0), FirstPlayerScore(mate=2), 1) == ("blunder", "mate_created")
    # Mate lost: by how good the position still is.
    assert judge(FirstPlayerScore(mate=2), FirstPlayerScore(300), 0) == ("blunder", "mate_lost")
    assert judge(FirstPlayerScore(mate=2), FirstPlayerScore(800), 0) == ("mistake", "mate_lost")
    assert judge(FirstPlayerScore(mate=2), FirstPlayerScore(1500), 0) == ("inaccuracy", "mate_lost")
    assert judge(FirstPlayerScore(mate=2), FirstPlayerScore(mate=-4), 0) == ("blunder", "mate_lost")
    # A slower mate, or a mate kept, is no remark.
    assert judge(FirstPlayerScore(mate=2), FirstPlayerScore(mate=5), 0) is None
    assert judge(FirstPlayerScore(mate=-2), FirstPlayerScore(mate=-1), 0) is None
    # The mover delivering a mate sequence is not a mistake.
    assert judge(FirstPlayerScore(200), FirstPlayerScore(mate=3), 0) is None


def test_pgn_text() -> None:
    assert FirstPlayerScore(35).pgn_text() == "0.35"
    assert FirstPlayerScore(-120).pgn_text() == "-1.20"
    assert FirstPlayerScore(0).pgn_text() == "0.00"
    assert FirstPlayerScore(mate=3).pgn_text() == "#3"
    assert FirstPlayerScore(mate=-1).pgn_text() == "#-1"


def test_advices_and_summary() -> None:
    evals = [
        PlyEval(0, FirstPlayerScore(20), best="e2e4"),
        PlyEval(1, FirstPlayerScore(30), best="e7e5"),     # move 1 by first: fine
        PlyEval(2, FirstPlayerScore(400), best="d2d4"),    # move 2 by second: blunder (best e7e5)
        PlyEval(3, FirstPlayerScore(220), best="g8f6"),    # move 3 by first: 400 -> 220 = mistake
        PlyEval(5, FirstPlayerScore(0)),                   # ply 4 missing: moves 4 and 5 not judged
    ]
    found = advices(evals)
    assert [(a.ply, a.side, a.judgement, a.best) for a in found] == [
        (2, 1, "blunder", "e7e5"),
        (3, 0, "mistake", "d2d4"),
    ]
    first, second = summarize(evals)
    assert (first.inaccuracies, first.mistakes, first.blunders, first.moves) == (0, 1, 0, 2)
    assert (second.inaccuracies, second.mistakes, second.blunders, second.moves) == (0, 0, 1, 1)
    assert first.acpl == (0 + 180) // 2 and second.acpl == 370
    assert first.accuracy is not None and second.accuracy is not None
    assert 0 <= second.accuracy < first.accuracy <= 100
    # A start position with the second player to move shifts who made each move.
    assert mover_of(1, first_mover=1) == 1 and mover_of(2, first_mover=1) == 0
    # ... and then the same score changes are gains for the movers.
    assert advices(evals, first_mover=1) == []


def test_entry_round_trip() -> None:
    entry = PlyEval(4, FirstPlayerScore(mate=-2), best="P*3c", pv=("P*3c", "4a3b"), depth=12,
                    nodes=999, time_ms=210)
    assert PlyEval.from_json(entry.as_json()) == entry
    assert PlyEval.from_json({"ply": 0, "score": {"cp": 5}}) == PlyEval(0, FirstPlayerScore(5))


@pytest.mark.parametrize(
    "bad",
    [
        None, [], {"ply": -1, "score": {"cp": 0}}, {"ply": 0}, {"ply": 0, "score": {}},
        {"ply": 0, "score": {"cp": 1, "mate": 2}}, {"ply": 0, "score": {"mate": 0}},
        {"ply": 0, "score": {"cp": 1.5}}, {"ply": True, "score": {"cp": 1}},
        {"ply": 0, "score": {"cp": 10**9}}, {"ply": 0, "score": {"cp": 1}, "best": "a b"},
        {"ply": 0, "score": {"cp": 1}, "pv": 3}, {"ply": 0, "score": {"cp": 1}, "extra": 1},
        {"ply": 0, "score": {"cp": 1}, "depth": -1}, {"ply": 0, "score": {"cp": 1}, "pv": "x " * 65},
    ],
)
def test_bad_entries(bad: Any) -> None:
    with pytest.raises(AnalysisError):
        PlyEval.from_json(bad)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=10,
)
_entryish = st.fixed_dictionaries(
    {"ply": _json | st.integers(-2, 5), "score": _json | st.sampled_from([{"cp": 3}, {"mate": -2}])},
    optional={"best": _json, "pv": _json, "depth": _json, "nodes": _json, "time_ms": _json},
)


@given(_json | _entryish)
def test_any_json_is_an_entry_or_an_analysis_error(obj: Any) -> None:
    try:
        entry = PlyEval.from_json(obj)
    except AnalysisError:
        return
    assert PlyEval.from_json(entry.as_json()) == entry


@given(st.integers(-3000, 3000), st.integers(-3000, 3000), st.integers(0, 1))
def test_judgement_is_monotonic(a: int, b: int, mover: int) -> None:
    """A larger loss for the mover is never judged more leniently."""
    order = {None: 0, "inaccuracy": 1, "mistake": 2, "blunder": 3}
    sign = 1 if mover == 0 else -1
    small = judge(FirstPlayerScore(sign * max(a, b)), FirstPlayerScore(sign * min(a, b)), mover)
    big = judge(
        FirstPlayerScore(sign * max(a, b) + sign * 100),
        FirstPlayerScore(sign * min(a, b) - sign * 100),
        mover,
    )
    assert order[small[0] if small else None] <= order[big[0] if big else None]


@pytest.mark.parametrize("name", VARIANT_NAMES)
def test_the_engines_own_best_moves_are_never_marked(name: str) -> None:
    """A game whose every move is the engine's best move in the position before it gets no
    mark and loses nothing, however much the evaluations of successive positions (each its
    own search, at its own depth) swing; the best moves and lines read as the move list."""
    rng = random.Random(38)
    game = Game(get_variant(name))
    while game.ply < 12 and game.outcome() is None:
        game.play(rng.choice(game.legal_moves()))
    moves = game.moves
    # Swings of 4 pawns from one position to the next, as an odd/even depth effect gives.
    evals = [
        PlyEval(ply, FirstPlayerScore(-400 if ply % 2 else 400),
                best=moves[ply] if ply < len(moves) else None,
                pv=tuple(moves[ply:ply + 3]), depth=8 + ply % 2)
        for ply in range(len(moves) + 1)
    ]
    assert advices(evals, game.start_turn), "without the moves these swings are judged"
    assert advices(evals, game.start_turn, moves) == []
    for side in summarize(evals, game.start_turn, moves):
        assert (side.inaccuracies, side.mistakes, side.blunders, side.acpl, side.accuracy) == (
            0, 0, 0, 0, 100.0)
    notes = annotate(evals, game)
    assert all(notes.glyph(ply) == "" for ply in range(1, len(moves) + 1))
    record = AnalysisRecord(f"g{name}", "done", None, AnalysisLimits(depth=8), len(evals), tuple(evals))
    view = view_of(record, game)
    assert view["advice"] == []
    assert view["summary"]["first"]["accuracy"] == view["summary"]["second"]["accuracy"] == 100.0
    for entry in view["plies"][:-1]:
        ply = entry["ply"]
        assert entry["best_display"] == game.displays[ply]
        assert entry["pv_display"] == game.displays[ply:ply + 3]
    assert view["plies"][-1]["best_display"] is None


def test_a_worse_move_names_the_best_one_in_the_variants_notation() -> None:
    """The judged move's best move, in the notation of the move list (SAN here)."""
    game = Game(get_variant("wildcastle"))
    for move in game.legal_moves()[:1]:
        game.play(move)
    best = sorted(Game(get_variant("wildcastle")).legal_moves())[-1]
    evals = [PlyEval(0, FirstPlayerScore(0), best=best, pv=(best,)),
             PlyEval(1, FirstPlayerScore(-600))]
    record = AnalysisRecord("gw", "done", None, AnalysisLimits(depth=8), 2, tuple(evals))
    view = view_of(record, game)
    [advice] = view["advice"]
    shown = Game(get_variant("wildcastle"))
    assert advice["judgement"] == "blunder" and advice["best"] == best
    assert advice["best_display"] == shown.play(best).display != best

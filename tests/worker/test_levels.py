"""Levels and honest clock use: no search may be allowed more time than the clock leaves."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from server.worker.computer import clock_for
from server.worker.levels import (
    DEADLINE_MARGIN_MS,
    FIRST_MOVE_MS,
    LEVELS,
    MAX_THINK_MS,
    OVERHEAD_MS,
    search_deadline_ms,
    think_limits,
)
from server.worker.search import EngineClock


def test_every_engine_has_eight_levels_that_grow() -> None:
    for engine, table in LEVELS.items():
        assert sorted(table) == list(range(1, 9)), engine
        times = [table[n].movetime_ms for n in range(1, 8)]
        assert times == sorted(times) and table[8].movetime_ms is None, engine
        # without a clock too, each level thinks longer than the one below (level 8 included)
        unclocked = [think_limits(engine, n, None).movetime_ms or 0 for n in range(1, 9)]
        assert unclocked == sorted(set(unclocked)), (engine, unclocked)
        depths = [table[n].depth or 99 for n in range(1, 9)]
        assert depths == sorted(depths), engine


def test_without_a_clock_each_level_thinks_its_time() -> None:
    assert think_limits("fairy-stockfish", 1, None).movetime_ms == 50
    assert think_limits("fairy-stockfish", 1, None).options == (("Skill Level", "-9"),)
    assert think_limits("sjaakii", 8, None).movetime_ms == 1000
    assert think_limits("hachu", 3, None).depth == 2
    # Dai Shogi levels 1-4 are bound by their depth, 5-7 by their time (docs/engines.md, Levels)
    assert think_limits("hachu", 4, None).depth == 3
    # the wide ladder (docs/benchmarks.md, "The wide Dai Shogi ladder"): 1 s, 2.5 s, 7 s, then the clock
    assert [think_limits("hachu", n, None).movetime_ms for n in (5, 6, 7)] == [1000, 2500, 7000]
    assert [think_limits("hachu", n, None).depth for n in (5, 6, 7)] == [5, 8, None]
    # level 8 has no depth cap; without a clock it gets more than level 7's time, not 1 s
    assert think_limits("hachu", 8, None).depth is None
    assert think_limits("hachu", 8, None).movetime_ms == 15_000


def test_hachu_levels_1_to_4_are_bound_by_depth_and_5_to_7_by_time() -> None:
    """Depth-bound levels 5-7 were tried and did worse (docs/benchmarks.md, "Dai Shogi levels
    5–7 bound by depth, tried and dropped")."""
    from server.worker.levels import HACHU_LEVELS

    assert all(HACHU_LEVELS[n].depth_bound for n in range(1, 5))
    assert not any(HACHU_LEVELS[n].depth_bound for n in range(5, 9))
    assert [HACHU_LEVELS[n].depth for n in range(1, 5)] == [1, 2, 2, 3]


def test_without_a_clock_an_engine_is_waited_for_past_its_last_iteration() -> None:
    """A CECP engine is given twice the move time and HaChu may finish its last iteration only
    near that: the deadline must not come first. (A search past the move job's lease keeps its
    job with keepalives: tests/transport/test_computer_keepalive.py.)"""
    for engine in LEVELS:
        for level in range(1, 9):
            limits = think_limits(engine, level, None)
            assert limits.movetime_ms is not None
            assert limits.deadline_ms >= limits.movetime_ms + 2000, (engine, level)
            assert limits.deadline_ms >= 2 * limits.movetime_ms + DEADLINE_MARGIN_MS, (engine, level)
            assert limits.deadline_ms == search_deadline_ms(limits.movetime_ms), (engine, level)


@given(
    st.sampled_from(sorted(LEVELS)),
    st.integers(1, 8),
    st.integers(0, 3_600_000),
    st.integers(0, 60_000),
    st.integers(0, 30_000),
)
def test_no_level_may_think_past_the_clock(engine: str, level: int, own: int, increment: int, byoyomi: int) -> None:
    clock = EngineClock(own, 60_000, increment, byoyomi, True)
    limits = think_limits(engine, level, clock)
    available = max(own + byoyomi - OVERHEAD_MS, 20)
    if limits.movetime_ms is not None:
        assert limits.movetime_ms <= max(available, 20)
        assert limits.movetime_ms <= MAX_THINK_MS
        # a slow engine is waited for up to the clock's bound (or the old move time + margin)
        bound = min(MAX_THINK_MS, max(available, 20))
        assert limits.deadline_ms <= max(bound, limits.movetime_ms + DEADLINE_MARGIN_MS)
    else:
        raise AssertionError("every level has a move time on a clock")


@given(
    st.sampled_from(sorted(LEVELS)),
    st.integers(1, 8),
    st.integers(0, 3_600_000),
    st.integers(0, 60_000),
)
def test_every_level_stops_at_the_clocks_budget(
    engine: str, level: int, own: int, increment: int
) -> None:
    """Level 8 too: Fairy-Stockfish left to its clock took up to 30 s a move in Mini-Shogi on
    5 + 3 (before e7b7de0); now every level's search ends at remaining/30 + 80 % of the increment
    (≤ 30 s), and a side's first move at 5 s (the clock does not run yet: the player waits)."""
    clock = EngineClock(own, 60_000, increment, 0, True)
    budget = min(MAX_THINK_MS, max(20, (max(0, own - OVERHEAD_MS)) // 30 + increment * 4 // 5))
    budget = min(budget, max(20, max(0, own - OVERHEAD_MS) // 2))
    limits = think_limits(engine, level, clock)
    assert limits.movetime_ms is not None and limits.movetime_ms <= budget
    if level == 8:
        assert limits.movetime_ms == budget
    first = think_limits(engine, level, clock, first_move=True)
    assert first.movetime_ms is not None and first.movetime_ms <= min(budget, FIRST_MOVE_MS)
    unclocked = think_limits(engine, level, None, first_move=True)
    assert unclocked.movetime_ms is not None and unclocked.movetime_ms <= FIRST_MOVE_MS


def test_level_8_on_5_plus_3_and_15_plus_10() -> None:
    """The clocks where level 8 overran (before e7b7de0): 5 + 3 gives level 8 12.4 s a move at
    the start, 15 + 10 and 30 + 20 the 30 s cap; the first move 5 s; Fairy-Stockfish keeps its
    clock (its own planning) too."""
    for base, inc, expected in ((300_000, 3000, 12_395), (900_000, 10_000, MAX_THINK_MS)):
        clock = EngineClock(base, base, inc, 0, True)
        for engine in LEVELS:
            assert think_limits(engine, 8, clock).movetime_ms == expected, engine
            assert think_limits(engine, 8, clock, first_move=True).movetime_ms == FIRST_MOVE_MS
        assert think_limits("fairy-stockfish", 8, clock).clock == clock
    assert think_limits("hachu", 8, EngineClock(1_800_000, 1_800_000, 20_000, 0, True)).movetime_ms == MAX_THINK_MS


def test_the_job_clock_is_read_from_the_engine_side_less_the_time_spent() -> None:
    job = {"kind": "byoyomi", "first_ms": 10_000, "second_ms": 7_000, "increment_ms": 0, "byoyomi_ms": 3000, "periods": 1}
    assert clock_for(job, engine_is_first=False, spent_ms=500) == EngineClock(6500, 10_000, 0, 3000, False)
    assert clock_for(job, engine_is_first=True) == EngineClock(10_000, 7000, 0, 3000, True)
    fischer = {**job, "kind": "fischer", "byoyomi_ms": 0, "increment_ms": 2000}
    assert clock_for(fischer, True, 20_000) == EngineClock(0, 7000, 2000, 0, True)
    assert clock_for(None, True) is None


def test_sjaak_noise_is_switched_on_below_level_8_only() -> None:
    from server.worker.levels import level_blunder, level_commands

    assert think_limits("sjaakii", 1, None).commands == ("random on",)
    assert think_limits("sjaakii", 8, None).commands == ("random off",)
    assert level_commands("fairy-stockfish", 1) == () and level_commands("hachu", 1) == ()
    assert [level_blunder("sjaakii", n) for n in (1, 2, 3, 4, 8)] == [0.5, 0.1, 0.05, 0.0, 0.0]


def test_a_depth_bound_level_searches_to_its_depth_within_the_clock_budget() -> None:
    """Dai Shogi level 4 (HaChu depth 3): on a clock its move time is the clock's budget, not
    its 0.5 s safety net, so a starved engine still completes depth 3; level 5 (time-bound)
    keeps its 1.5 s; both wait for a slow engine up to 3 × the budget."""
    clock = EngineClock(300_000, 300_000, 0, 0, True)
    four, five = think_limits("hachu", 4, clock), think_limits("hachu", 5, clock)
    assert four.depth == 3 and four.movetime_ms == (300_000 - OVERHEAD_MS) // 30
    assert five.movetime_ms == 1000
    assert four.deadline_ms == five.deadline_ms == min(MAX_THINK_MS, 3 * four.movetime_ms)
    short = EngineClock(3_000, 3_000, 0, 0, True)  # time trouble: the budget binds both
    assert think_limits("hachu", 4, short).movetime_ms == (3_000 - OVERHEAD_MS) // 30


def test_hachu_level_8_searches_the_budget_of_a_clock_and_ends_before_the_deadline() -> None:
    """HaChu is not handed the clock (it planned past a move job's time on long clocks): level 8
    searches the clock's budget as a fixed move time, and the time CECP gives the engine ends a
    second before the deadline, so HaChu's own cut of an iteration comes first."""
    from server.worker.cecp import ENGINE_CUT_MARGIN_MS, CecpEngine

    for own, increment in ((1_800_000, 30_000), (10_000, 30_000), (60_000, 1000), (3000, 0)):
        clock = EngineClock(own, own, increment, 0, True)
        limits = think_limits("hachu", 8, clock)
        assert limits.clock is None and limits.depth is None
        assert limits.movetime_ms is not None and limits.movetime_ms <= MAX_THINK_MS
        assert limits.movetime_ms < limits.deadline_ms <= max(own - OVERHEAD_MS, 20)
        engine = CecpEngine(["true"])  # not started: only its time control is built
        (given,) = [
            int(line.split()[1]) * 10
            for line in engine._time_control(limits, 0)
            if line.startswith("time ")
        ]
        # (whole centiseconds; never less than the move time itself)
        assert limits.movetime_ms - 10 < given <= 2 * limits.movetime_ms
        assert given <= max(limits.deadline_ms - ENGINE_CUT_MARGIN_MS, limits.movetime_ms)
    assert think_limits("sjaakii", 8, EngineClock(60_000, 60_000, 0, 0, True)).clock is not None

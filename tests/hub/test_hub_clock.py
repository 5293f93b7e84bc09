"""GameClock: Fischer and byoyomi, the deadline boundary, lag compensation. Manual time, no loop."""

import pytest

from server.hub.clock import ClockError, GameClock, LagPolicy, time_control_view
from server.rules import Side
from server.rules.time_control import Byoyomi, Fischer, SideTime

NO_LAG = LagPolicy(gain_ms=0, initial_ms=0, max_ms=0)


def fischer(base_ms: int, inc_ms: int, lag: LagPolicy = NO_LAG) -> GameClock:
    return GameClock(Fischer(base_ms, inc_ms), lag)


def byoyomi(main_ms: int, period_ms: int, periods: int, lag: LagPolicy = NO_LAG) -> GameClock:
    return GameClock(Byoyomi(main_ms, period_ms, periods), lag)


# --- Fischer -----------------------------------------------------------------------------------


def test_fischer_charges_elapsed_time_and_adds_increment() -> None:
    clock = fischer(60_000, 2_000)
    clock.start(Side.FIRST, now=1_000)
    timing = clock.press(now=4_500)
    assert (timing.spent_ms, timing.main_ms, timing.periods) == (3_500, 58_500, 0)
    assert clock.time(0) == SideTime(58_500)
    assert clock.running == 1
    assert clock.deadline() == 4_500 + 60_000


def test_fischer_deadline_is_turn_start_plus_remaining() -> None:
    clock = fischer(10_000, 0)
    assert clock.deadline() is None
    clock.start(Side.SECOND, now=500)
    assert clock.deadline() == 10_500


def test_move_in_the_last_millisecond_is_in_time() -> None:
    clock = fischer(10_000, 0)
    clock.start(Side.FIRST, now=0)
    assert not clock.out_of_time(9_999)
    timing = clock.press(now=9_999)
    assert timing.main_ms == 1


def test_flag_falls_exactly_at_the_deadline() -> None:
    clock = fischer(10_000, 5_000)
    clock.start(Side.FIRST, now=0)
    assert clock.out_of_time(10_000)
    with pytest.raises(ClockError):
        clock.press(now=10_000)
    # Refused press changed nothing.
    assert clock.running == 0 and clock.time(0) == SideTime(10_000)


def test_increment_is_not_added_when_pressing_out_of_time() -> None:
    clock = fischer(1_000, 10_000)
    clock.start(Side.FIRST, now=0)
    with pytest.raises(ClockError):
        clock.press(now=1_001)


def test_press_on_stopped_clock_raises() -> None:
    with pytest.raises(ClockError):
        fischer(1_000, 0).press(now=0)


def test_start_twice_raises() -> None:
    clock = fischer(1_000, 0)
    clock.start(Side.FIRST, 0)
    with pytest.raises(ClockError):
        clock.start(Side.SECOND, 0)


def test_stop_charges_elapsed_without_increment() -> None:
    clock = fischer(10_000, 3_000)
    clock.start(Side.FIRST, now=0)
    clock.stop(now=4_000)
    assert clock.time(0) == SideTime(6_000)
    assert clock.running is None and clock.deadline() is None


def test_flag_sets_running_side_to_zero() -> None:
    clock = fischer(10_000, 0)
    clock.start(Side.SECOND, now=0)
    clock.flag()
    assert clock.time(1) == SideTime(0) and clock.running is None


def test_live_view_counts_down_only_for_the_running_side() -> None:
    clock = fischer(10_000, 0)
    clock.start(Side.FIRST, now=0)
    assert clock.live(0, 2_500).main_ms == 7_500
    assert clock.live(1, 2_500).main_ms == 10_000
    assert clock.view(2_500) == {
        "first": {"ms": 7_500},
        "second": {"ms": 10_000},
        "running": "first",
    }


# --- byoyomi -----------------------------------------------------------------------------------


def test_byoyomi_move_inside_main_time_keeps_periods() -> None:
    clock = byoyomi(60_000, 10_000, 3)
    clock.start(Side.FIRST, now=0)
    timing = clock.press(now=59_999)
    assert (timing.main_ms, timing.periods) == (1, 3)


def test_byoyomi_main_time_used_exactly_enters_periods_without_losing_one() -> None:
    clock = byoyomi(60_000, 10_000, 3)
    clock.start(Side.FIRST, now=0)
    timing = clock.press(now=60_000)
    assert (timing.main_ms, timing.periods) == (0, 3)


def test_byoyomi_move_inside_first_period_keeps_it_and_period_resets() -> None:
    clock = byoyomi(5_000, 10_000, 2)
    clock.start(Side.FIRST, now=0)
    timing = clock.press(now=5_000 + 9_999)
    assert (timing.main_ms, timing.periods) == (0, 2)
    clock.press(now=20_000)  # opponent
    # Next turn of side 0 starts with a full period again: budget = 2 full periods.
    assert clock.deadline() == 20_000 + 2 * 10_000


def test_byoyomi_move_spanning_k_periods_spends_k() -> None:
    clock = byoyomi(0, 10_000, 5)
    clock.start(Side.FIRST, now=0)
    timing = clock.press(now=25_000)  # two whole periods used, inside the third
    assert timing.periods == 3


def test_byoyomi_period_used_exactly_to_its_end_is_spent() -> None:
    clock = byoyomi(0, 10_000, 3)
    clock.start(Side.FIRST, now=0)
    timing = clock.press(now=10_000)
    assert timing.periods == 2


def test_byoyomi_flag_when_last_period_runs_out() -> None:
    clock = byoyomi(30_000, 10_000, 2)
    clock.start(Side.SECOND, now=1_000)
    assert clock.deadline() == 1_000 + 30_000 + 2 * 10_000
    assert not clock.out_of_time(50_999)
    assert clock.out_of_time(51_000)


def test_byoyomi_move_in_last_millisecond_of_last_period_is_in_time() -> None:
    clock = byoyomi(0, 10_000, 1)
    clock.start(Side.FIRST, now=0)
    timing = clock.press(now=9_999)
    assert (timing.main_ms, timing.periods, timing.spent_ms) == (0, 1, 9_999)
    clock.press(now=10_000)
    assert clock.deadline() == 20_000  # a full period again


def test_byoyomi_live_view_shows_period_countdown() -> None:
    clock = byoyomi(2_000, 10_000, 3)
    clock.start(Side.FIRST, now=0)
    live = clock.live(0, 2_000 + 13_000)
    assert (live.main_ms, live.periods, live.period_left_ms) == (0, 2, 7_000)
    assert clock.live(1, 15_000).period_left_ms == 10_000
    assert clock.view(15_000)["first"] == {"ms": 0, "periods": 2, "period_ms": 7_000}


def test_byoyomi_stop_after_deadline_reports_zero() -> None:
    clock = byoyomi(0, 1_000, 1)
    clock.start(Side.FIRST, now=0)
    clock.stop(now=5_000)
    assert clock.time(0) == SideTime(0, 0)


# --- lag compensation --------------------------------------------------------------------------


def test_lag_compensation_is_bounded_by_lag() -> None:
    clock = fischer(60_000, 0, LagPolicy(gain_ms=100, initial_ms=300, max_ms=700))
    clock.start(Side.FIRST, now=0)
    timing = clock.press(now=5_000, lag_ms=120)
    assert (timing.compensation_ms, timing.spent_ms) == (120, 4_880)
    assert clock.quota(0) == 300 - 120 + 100


def test_lag_compensation_is_bounded_by_quota_and_quota_refills() -> None:
    clock = fischer(60_000, 0, LagPolicy(gain_ms=100, initial_ms=300, max_ms=700))
    clock.start(Side.FIRST, now=0)
    first = clock.press(now=5_000, lag_ms=1_000)
    assert first.compensation_ms == 300 and clock.quota(0) == 100
    clock.press(now=6_000)
    second = clock.press(now=9_000, lag_ms=1_000)
    assert second.compensation_ms == 100
    assert clock.quota(0) == 100


def test_lag_quota_never_exceeds_max() -> None:
    clock = fischer(60_000, 0, LagPolicy(gain_ms=100, initial_ms=300, max_ms=450))
    clock.start(Side.FIRST, now=0)
    now = 0
    for _ in range(6):
        now += 100
        clock.press(now=now)
    assert clock.quota(0) == 450 and clock.quota(1) == 450


def test_lag_compensation_never_exceeds_elapsed_time() -> None:
    clock = fischer(60_000, 0, LagPolicy(gain_ms=100, initial_ms=300, max_ms=700))
    clock.start(Side.FIRST, now=0)
    timing = clock.press(now=50, lag_ms=200)
    assert (timing.compensation_ms, timing.spent_ms) == (50, 0)


def test_negative_lag_is_ignored() -> None:
    clock = fischer(60_000, 0, LagPolicy(gain_ms=100, initial_ms=300, max_ms=700))
    clock.start(Side.FIRST, now=0)
    assert clock.press(now=1_000, lag_ms=-50).compensation_ms == 0


def test_lag_compensation_does_not_move_the_deadline() -> None:
    clock = fischer(1_000, 0, LagPolicy(gain_ms=100, initial_ms=300, max_ms=700))
    clock.start(Side.FIRST, now=0)
    with pytest.raises(ClockError):
        clock.press(now=1_000, lag_ms=300)


def test_lag_compensation_applies_to_byoyomi_periods() -> None:
    clock = byoyomi(0, 10_000, 2, LagPolicy(gain_ms=100, initial_ms=300, max_ms=700))
    clock.start(Side.FIRST, now=0)
    # 10 050 ms elapsed would spend a period; 200 ms compensation brings it inside the first.
    timing = clock.press(now=10_050, lag_ms=200)
    assert (timing.spent_ms, timing.periods) == (9_850, 2)


def test_lag_policy_scales_with_time_control() -> None:
    bullet = LagPolicy.for_control(Fischer.from_seconds(15, 0))
    blitz = LagPolicy.for_control(Fischer.from_seconds(300, 3))
    assert bullet.gain_ms < blitz.gain_ms == 100
    assert blitz.initial_ms == 300 and blitz.max_ms == 700


# --- undo support ------------------------------------------------------------------------------


def test_state_restore_undoes_a_press_exactly() -> None:
    clock = byoyomi(1_000, 5_000, 3, LagPolicy(gain_ms=100, initial_ms=300, max_ms=700))
    clock.start(Side.FIRST, now=0)
    before = clock.state()
    clock.press(now=12_000, lag_ms=50)
    clock.restore(before)
    assert clock.state() == before
    assert clock.deadline() == 1_000 + 15_000


def test_time_control_wire_form() -> None:
    assert time_control_view(Fischer.from_seconds(180, 2)) == {
        "kind": "fischer",
        "base_s": 180,
        "inc_s": 2,
    }
    assert time_control_view(Byoyomi.from_seconds(600, 30, 3)) == {
        "kind": "byoyomi",
        "main_s": 600,
        "period_s": 30,
        "periods": 3,
    }

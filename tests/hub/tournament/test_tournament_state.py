"""The state fold and the decisions on commands: refusals change nothing, replay equals the
running fold, starts by time or by number."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tournament_support import settings as make_settings
from tournament_support import simulate_swiss

from server.hub.errors import ErrorCode
from server.hub.tournament.state import (
    Refusal,
    decide_join,
    decide_pause,
    decide_withdraw,
    replay,
    should_start,
)
from server.hub.tournament.values import Ended, Joined, Paused, Resumed, Started, Withdrew


def test_join_refusals() -> None:
    s = make_settings("arena", min_rating=1500, bots=False, max_players=2, password_hash="$argon2id$x")
    state = replay([])
    assert decide_join(s, state, "a", "A", 1600, 5) == Refusal(ErrorCode.WRONG_TOURNAMENT_PASSWORD)
    assert decide_join(s, state, "a", "A", 1400, 5, password_ok=True) == Refusal(ErrorCode.RATING_TOO_LOW)
    assert decide_join(s, state, "a", "A", 1600, 5, bot=True, password_ok=True) == Refusal(ErrorCode.BOTS_NOT_ALLOWED)
    assert decide_join(s, state, "c", "C", 1600, 5, computer=True, password_ok=True) == Refusal(ErrorCode.COMPUTER_NOT_ALLOWED)
    joined = decide_join(s, state, "a", "A", 1600, 5, password_ok=True)
    assert joined == Joined("a", "A", 1600, 5)
    state.apply(joined)
    assert decide_join(s, state, "a", "A", 1600, 6, password_ok=True) == Refusal(ErrorCode.ALREADY_ENTERED)
    state.apply(Joined("b", "B", 1700, 7))
    assert decide_join(s, state, "z", "Z", 1600, 8, password_ok=True) == Refusal(ErrorCode.TOURNAMENT_FULL)
    state.apply(Withdrew("a", 9))
    # A withdrawn player may come back (their entry is kept, so the limit is not hit).
    assert isinstance(decide_join(s, state, "a", "A", 1600, 10, password_ok=True), Joined)
    state.apply(Ended(11))
    assert decide_join(s, state, "a", "A", 1600, 12, password_ok=True) == Refusal(ErrorCode.TOURNAMENT_FINISHED)


def test_withdraw_and_pause() -> None:
    s = make_settings("arena")
    state = replay([Joined("a", "A", 1500, 1), Started(2)])
    assert decide_withdraw(state, "b", 3) == Refusal(ErrorCode.NOT_ENTERED)
    assert decide_pause(s, state, "a", 3, pause=False) == Refusal(ErrorCode.NOT_PAUSED)
    assert decide_pause(s, state, "a", 3, pause=True) == Paused("a", 3)
    state.apply(Paused("a", 3))
    assert state.active() == []
    assert decide_pause(s, state, "a", 4, pause=True) == Refusal(ErrorCode.ALREADY_PAUSED)
    assert decide_pause(s, state, "a", 4, pause=False) == Resumed("a", 4)
    assert decide_pause(make_settings("swiss"), state, "a", 4, pause=True) == Refusal(ErrorCode.NOT_ARENA)
    assert decide_withdraw(state, "a", 5) == Withdrew("a", 5)


def test_round_robin_closes_entries_at_the_start() -> None:
    s = make_settings("round_robin")
    state = replay([Joined("a", "A", 1500, 1), Joined("b", "B", 1500, 1), Started(2)])
    assert decide_join(s, state, "c", "C", 1500, 3) == Refusal(ErrorCode.TOURNAMENT_FINISHED)


def test_start_by_time_or_by_number() -> None:
    by_time = make_settings("arena", start_at_ms=1000)
    by_count = make_settings("arena", start_at_ms=None, start_when_joined=3)
    state = replay([Joined("a", "A", 1500, 1), Joined("b", "B", 1500, 1)])
    assert not should_start(by_time, state, 999) and should_start(by_time, state, 1000)
    assert not should_start(by_count, state, 10**12)
    state.apply(Joined("c", "C", 1500, 2))
    assert should_start(by_count, state, 0)
    state.apply(Started(3))
    assert not should_start(by_count, state, 10**12)


def test_settings_refuse_nonsense() -> None:
    with pytest.raises(ValueError):
        make_settings("swiss", rounds=0)
    with pytest.raises(ValueError):
        make_settings("arena", duration_ms=None)
    with pytest.raises(ValueError):
        make_settings("swiss", start_at_ms=None)
    with pytest.raises(ValueError):
        make_settings("swiss", variant="checkers")


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 1000))
def test_replay_equals_the_running_fold(seed: int) -> None:
    sim = simulate_swiss(seed, 9, 4, churn=0.1)
    again = replay(sim.events)
    assert again == sim.state

"""The tournaments' one codec: every event type and the settings round-trip through JSON text;
stored objects of another layout, type or shape are refused."""

from __future__ import annotations

import json
from typing import Any, get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.hub.game_ids import GAME_ID_PATTERN
from server.hub.tournament.state import TournamentState, replay
from server.hub.tournament.values import (
    Bye,
    Ended,
    Event,
    Finished,
    Joined,
    Paired,
    Paused,
    Resumed,
    Started,
    TournamentGame,
    TournamentSettings,
    Withdrew,
)
from server.rules.record import RESULT_CODES
from server.rules.time_control import Byoyomi, Fischer
from server.store.tournament_codec import (
    EVENT_TYPES,
    TOURNAMENT_LAYOUT,
    event_json,
    event_of_json,
    settings_json,
    settings_of_json,
)

players = st.text(min_size=1, max_size=16)
times = st.integers(0, 2**53)
rounds = st.integers(1, 50)
game_ids = st.from_regex(GAME_ID_PATTERN, fullmatch=True)
games = st.builds(
    TournamentGame, players, players, st.sampled_from(RESULT_CODES), st.integers(0, 1000),
    st.booleans(), st.booleans(),
)
EVENTS: dict[type, st.SearchStrategy[Any]] = {
    Joined: st.builds(Joined, players, st.text(max_size=32), st.integers(0, 4000), times, st.booleans()),
    Withdrew: st.builds(Withdrew, players, times),
    Paused: st.builds(Paused, players, times),
    Resumed: st.builds(Resumed, players, times),
    Started: st.builds(Started, times),
    Ended: st.builds(Ended, times),
    Paired: st.builds(Paired, game_ids, rounds, players, players, times),
    Bye: st.builds(Bye, players, rounds, st.floats(allow_nan=False, allow_infinity=False), times),
    Finished: st.builds(Finished, game_ids, games, times),
}
events = st.one_of(*EVENTS.values())


def through_text(obj: object) -> object:
    """What a JSON column gives back: the object written as JSON text and read again."""
    return json.loads(json.dumps(obj))


def test_every_event_type_is_coded_and_generated() -> None:
    assert set(EVENT_TYPES.values()) == set(get_args(Event)) == set(EVENTS)
    assert len(set(EVENT_TYPES)) == len(EVENT_TYPES)


@settings(max_examples=300, deadline=None)
@given(events)
def test_every_event_round_trips(event: Event) -> None:
    stored = event_json(event)
    assert stored["layout"] == TOURNAMENT_LAYOUT and EVENT_TYPES[stored["type"]] is type(event)
    assert event_of_json(through_text(stored)) == event


@settings(max_examples=30, deadline=None)
@given(st.lists(events, max_size=40))
def test_replay_of_decoded_events_is_the_running_fold(history: list[Event]) -> None:
    running = TournamentState()
    for event in history:
        running.apply(event)
    assert replay(event_of_json(through_text(event_json(e))) for e in history) == running


SETTINGS = [
    TournamentSettings("Hourly", "arena", "minishogi", Fischer(180_000, 2_000), start_at_ms=10**12,
                       duration_ms=3_600_000, password_hash="$argon2id$v=19$x", berserk=False),
    TournamentSettings("Weekly", "swiss", "daishogi", Byoyomi(600_000, 30_000, 3), rated=False,
                       start_at_ms=5, start_when_joined=8, rounds=7, min_rating=1500, bots=False,
                       computer=True, max_players=64),
    TournamentSettings("Monthly", "double_round_robin", "wildcastle", Fischer(0, 5_000),
                       start_when_joined=4),
]


@pytest.mark.parametrize("value", SETTINGS, ids=lambda s: s.format)
def test_settings_round_trip(value: TournamentSettings) -> None:
    stored = settings_json(value)
    assert stored["layout"] == TOURNAMENT_LAYOUT
    assert settings_of_json(through_text(stored)) == value


def test_a_missing_field_with_a_default_takes_it() -> None:
    stored = event_json(Joined("p", "P", 1500, 7))
    del stored["bot"]
    assert event_of_json(stored) == Joined("p", "P", 1500, 7)


def _changed(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = dict(base)
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


FINISHED = event_json(Finished("g1", TournamentGame("a", "b", "1-0", 30), 9))
BAD_EVENTS = [
    _changed(FINISHED, layout=2),
    _changed(FINISHED, layout=None),
    _changed(FINISHED, layout=True),
    _changed(FINISHED, type="draw_offered"),
    _changed(FINISHED, type=None),
    _changed(FINISHED, extra=1),
    _changed(FINISHED, at_ms=None),
    _changed(FINISHED, at_ms="9"),
    _changed(FINISHED, at_ms=True),
    _changed(FINISHED, game_id=7),
    _changed(FINISHED, result={**FINISHED["result"], "result": "2-0"}),
    _changed(FINISHED, result={**FINISHED["result"], "plies": 1.5}),
    _changed(FINISHED, result="1-0"),
    _changed(FINISHED, result={**FINISHED["result"], "layout": 1}),
    [1, 2],
    "finished",
]


@pytest.mark.parametrize("stored", BAD_EVENTS)
def test_bad_stored_events_are_refused(stored: object) -> None:
    with pytest.raises(ValueError):
        event_of_json(stored)


ARENA = settings_json(SETTINGS[0])
BAD_SETTINGS = [
    _changed(ARENA, layout=0),
    _changed(ARENA, format="knockout"),
    _changed(ARENA, duration_ms=None),
    _changed(ARENA, control={"kind": "hourglass", "base_ms": 1}),
    _changed(ARENA, control={"kind": "fischer", "base_ms": -1, "increment_ms": 0}),
    _changed(ARENA, control={"kind": "fischer", "base_ms": 1, "period_ms": 0}),
    _changed(ARENA, rated="yes"),
    _changed(ARENA, min_rating=1500.5),
    _changed(ARENA, colour="white"),
    _changed(ARENA, type="arena"),
]


@pytest.mark.parametrize("stored", BAD_SETTINGS)
def test_bad_stored_settings_are_refused(stored: object) -> None:
    with pytest.raises(ValueError):
        settings_of_json(stored)

"""The standings a running arena keeps game by game equal the ones replayed from its events
(whatever the joins, rejoins, withdrawals and results), hypothesis-generated."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from server.app.live_tournament import Live
from server.hub.tournament.standings import standings
from server.hub.tournament.state import TournamentState, replay
from server.hub.tournament.values import (
    Event,
    Finished,
    Joined,
    Paired,
    Started,
    TournamentGame,
    TournamentSettings,
    Withdrew,
)
from server.rules.time_control import Fischer

ARENA = TournamentSettings(
    "Kept", "arena", "wildcastle", Fischer(60_000, 0), start_at_ms=0, duration_ms=3_600_000
)
PLAYERS = [f"p{i}" for i in range(6)]

steps = st.lists(
    st.one_of(
        st.tuples(st.just("join"), st.sampled_from(PLAYERS), st.integers(1000, 2000)),
        st.tuples(st.just("withdraw"), st.sampled_from(PLAYERS), st.just(0)),
        st.tuples(
            st.just("game"),
            st.tuples(st.sampled_from(PLAYERS), st.sampled_from(PLAYERS)),
            st.tuples(
                st.sampled_from(["1-0", "0-1", "1/2-1/2"]), st.integers(0, 40), st.booleans()
            ),
        ),
        st.tuples(st.just("again"), st.integers(0, 50), st.just(0)),
    ),
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(steps)
def test_kept_standings_equal_the_replayed_ones(plan: list[tuple[object, object, object]]) -> None:
    live = Live("T0urnam1", None, ARENA, TournamentState(), 0)
    events: list[Event] = [Started(0)]
    live.apply(events[0])
    games = 0
    for kind, what, detail in plan:
        if kind == "join":
            event: Event = Joined(str(what), f"name {what}", int(detail), 1)  # type: ignore[call-overload]
        elif kind == "withdraw":
            event = Withdrew(str(what), 2)
        elif kind == "game":
            white, black = what  # type: ignore[misc]
            result, plies, berserk = detail  # type: ignore[misc]
            if white == black:
                continue
            game_id = f"g{games}"
            games += 1
            paired = Paired(game_id, games, white, black, 3)
            events.append(paired)
            live.apply(paired)
            event = Finished(game_id, TournamentGame(white, black, result, plies, berserk), 4)
        else:  # a result reported again: stored once
            if not games:
                continue
            event = Finished(f"g{int(what) % games}", TournamentGame("p0", "p1", "1-0", 1), 5)  # type: ignore[call-overload]
        events.append(event)
        live.apply(event)
        live.seq = len(events)
        assert live.standings() == standings(ARENA, replay(events))

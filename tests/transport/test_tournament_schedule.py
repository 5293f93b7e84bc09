"""The server's own calendar: the next slot of every recurring tournament exists, created once
(the scheduler's look at start, and again after a slot passes), on a live app."""

from __future__ import annotations

import pytest
from tournament_players import TournamentClock
from ws_support import OpenClient, StartApp

from server.config import ConfigError, Settings
from server.hub.tournament.schedule import next_slot, parse_schedule

HOUR = 3_600_000
CALENDAR = "arena minishogi 60+0 every 1h; swiss shoshogi 300+0 every 7d rounds 3 rated"


@pytest.mark.parametrize(
    "bad",
    [
        "arena minishogi 60+0",  # no period
        "arena xiangqi 60+0 every 1h",
        "arena wildcastle 60|10x1 every 1h",  # byoyomi for chess
        "swiss minishogi 60+0 every 1h for 30m",  # a Swiss has no duration
        "arena minishogi 60+0 every 1w",
        "arena minishogi 60+0 every 1h frequently",
    ],
)
def test_a_calendar_that_does_not_read_is_refused_at_start(bad: str) -> None:
    with pytest.raises(ConfigError, match="tournament_schedule"):
        Settings(tournament_schedule=bad)


def test_the_calendar_reads() -> None:
    arena, swiss = parse_schedule(CALENDAR)
    assert (arena.name, arena.every_ms, arena.duration_ms) == (
        "Hourly Mini-Shogi arena",
        HOUR,
        HOUR - 180_000,
    )
    assert (swiss.name, swiss.rounds, swiss.rated) == ("Weekly Sho Shogi Swiss", 3, True)
    assert next_slot(HOUR, 5 * HOUR) == 6 * HOUR and next_slot(HOUR, 5 * HOUR + 1) == 6 * HOUR


async def test_the_next_slots_always_exist_and_are_created_once(
    start_app: StartApp, open_client: OpenClient
) -> None:
    clock = TournamentClock(500 * HOUR + 1234)
    app = await start_app(tournament_schedule=CALENDAR, app_options={"tournament_clock": clock})
    reader = await open_client(app, "reader")
    await reader.guest()
    listed = (await reader.ok("tournament_list", {"status": "created"}))["tournaments"]
    starts = {t["settings"]["name"]: t["settings"]["start_at_ms"] for t in listed}
    assert starts == {
        "Hourly Mini-Shogi arena": 501 * HOUR,
        "Weekly Sho Shogi Swiss": next_slot(7 * 24 * HOUR, clock.now_ms),
    }
    assert all(t["created_by"] is None for t in listed)
    assert await app.tournament_schedule.run_once() == []  # nothing twice
    clock.now_ms = 501 * HOUR + 5  # the hourly slot began: the next one is created
    created = await app.tournament_schedule.run_once()
    assert len(created) == 1
    view = await reader.ok("tournament", {"id": created[0]})
    assert view["settings"]["start_at_ms"] == 502 * HOUR and view["settings"]["format"] == "arena"
    assert len((await reader.ok("tournament_list", {"status": "created"}))["tournaments"]) == 3

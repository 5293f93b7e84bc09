"""Recurring tournaments from ``[tournaments] tournament_schedule`` on a live app, with an
injected clock: the next occurrence of every entry is always in the calendar, two hubs on one
database create each occurrence once, an entry taken out gets no new occurrence."""

from __future__ import annotations

import asyncio

import pytest
from tournament_players import TournamentClock
from ws_support import StartApp

from server.app import App
from server.config import ConfigError, Settings
from server.hub.tournament.schedule import next_start, occurrence_id, parse_schedule, upcoming
from server.store import UnknownTournamentError

NOW = 1_800_000_000_000  # Friday 15 January 2027, 08:00 UTC
HOURLY = "quick-arena  hour  :10        arena  minishogi   3+2  30m"
WEEKLY = "sat-swiss    week  Sat@16:00  swiss  wildcastle  5+3  5r"
SCHEDULE = f"{HOURLY}\n{WEEKLY}\n"


async def start(start_app: StartApp, clock: TournamentClock, schedule: str, **kw: object) -> App:
    return await start_app(
        tournament_schedule=schedule, app_options={"tournament_clock": clock}, **kw
    )


async def exists(app: App, tournament_id: str) -> bool:
    try:
        await app.store.load_tournament(tournament_id)
    except UnknownTournamentError:
        return False
    return True


@pytest.mark.parametrize(
    "bad",
    [
        "quick  hour  :10  arena  minishogi  3+2",  # an arena without its length
        "quick  hour  :10  arena  xiangqi  3+2  30m",
        "quick  hour  :10  arena  wildcastle  3|10  30m",  # byoyomi for chess
        "quick  hour  :10  swiss  minishogi  3+2  30m",  # a Swiss has rounds
        "quick  fortnight  :10  arena  minishogi  3+2  30m",
    ],
)
def test_a_schedule_that_does_not_read_is_refused_at_start(bad: str) -> None:
    with pytest.raises(ConfigError, match="tournament_schedule"):
        Settings(tournament_schedule=bad)


def test_the_default_creates_no_tournaments() -> None:
    """Tests, which build their settings directly, and a development server have no calendar."""
    assert Settings().tournament_schedule == ""


async def test_the_next_occurrence_of_every_entry_is_always_listed(start_app: StartApp) -> None:
    clock = TournamentClock(NOW)
    app = await start(start_app, clock, SCHEDULE)
    entries = parse_schedule(SCHEDULE)
    listed = await app.tournaments.list("created")
    # At start: each entry's next occurrence, the server's own, under its derived id.
    assert sorted((t["settings"]["name"], t["settings"]["start_at_ms"]) for t in listed) == [
        ("Hourly Mini-Shogi Arena", NOW + 10 * 60_000),
        ("Weekly Wild Castle Swiss", NOW + 32 * 3_600_000),  # Saturday 16:00
    ]
    assert all(t["created_by"] is None for t in listed)
    assert {t["id"] for t in listed} == {occurrence_id(e, next_start(e, NOW)) for e in entries}
    wanted = {t["id"] for t in listed}
    # Two days looked at every 67 minutes (the looks come late, the calendar is never empty).
    for _ in range(43):
        clock.now_ms += 67 * 60_000
        await app.calendar.fill()
        for entry in entries:
            assert await exists(app, occurrence_id(entry, next_start(entry, clock.now_ms)))
        wanted |= {occurrence_id(e, at) for e, at in upcoming(entries, clock.now_ms, 2 * 60_000)}
    # Exactly the occurrences due at the looks, each once: the hourly one of every hour a look
    # came before its start, the Saturdays of both weeks.
    stored = await app.store.list_tournaments(None, limit=500)
    assert {t.id for t in stored} == wanted and len(stored) == len(wanted) == 46


@pytest.mark.parametrize("backend", ["postgresql"])
async def test_two_hubs_on_one_database_create_each_occurrence_once(
    start_app: StartApp, backend: str
) -> None:
    clock = TournamentClock(NOW)
    first = await start(start_app, clock, SCHEDULE, backend=backend)
    second = await start(
        start_app, clock, SCHEDULE, database_url=first.settings.database_url, node_id="other"
    )
    created: list[str] = []
    for _ in range(6):
        clock.now_ms += 3_600_000
        for ids in await asyncio.gather(first.calendar.fill(), second.calendar.fill()):
            created += ids
    stored = await first.store.list_tournaments(None, limit=500)
    assert len(created) == len(set(created)) == 6  # one hourly occurrence an hour, once
    assert len(stored) == 2 + 6 and len({t.id for t in stored}) == len(stored)


async def test_an_entry_taken_out_gets_no_new_occurrence(start_app: StartApp) -> None:
    clock = TournamentClock(NOW)
    app = await start(start_app, clock, SCHEDULE)
    url = app.settings.database_url
    await app.stop()
    # The operator takes the hourly arena out; a hub started with that schedule later on.
    clock.now_ms += 3 * 3_600_000
    later = await start(start_app, clock, WEEKLY, database_url=url)
    hourly, weekly = parse_schedule(SCHEDULE)
    assert await exists(later, occurrence_id(hourly, NOW + 10 * 60_000))  # created before
    assert not await exists(later, occurrence_id(hourly, next_start(hourly, clock.now_ms)))
    assert await exists(later, occurrence_id(weekly, next_start(weekly, clock.now_ms)))
    # "" turns the schedule off: nothing is looked at.
    off = await start(start_app, clock, "", database_url=url)
    assert off.calendar.entries == () and await off.calendar.fill() == []


async def test_an_occurrence_nobody_joined_ends_when_given_up(start_app: StartApp) -> None:
    clock = TournamentClock(NOW)
    app = await start(start_app, clock, HOURLY)
    (hourly,) = parse_schedule(HOURLY)
    first = occurrence_id(hourly, NOW + 10 * 60_000)
    # Its start time passes with nobody entered: still waiting (a second join would start it).
    clock.now_ms = NOW + 11 * 60_000
    await app.tournaments.tick(first)
    assert (await app.tournaments.view(first))["status"] == "created"
    # Its 30 minutes over: ended, no games; the next occurrence is listed.
    clock.now_ms = NOW + 40 * 60_000
    await app.tournaments.tick(first)
    view = await app.tournaments.view(first)
    assert view["status"] == "finished" and view["pairings"] == [] and view["podium"] == []
    await app.calendar.fill()
    assert await exists(app, occurrence_id(hourly, NOW + 70 * 60_000))

"""The schedule's text (``[tournaments] tournament_schedule``) and each entry's occurrences."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.config import DEFAULT_CONFIG_PATH, load_settings
from server.hub.game_ids import GAME_ID_ALPHABET
from server.hub.tournament.schedule import (
    next_start,
    occurrence_id,
    occurrence_settings,
    parse_schedule,
    upcoming,
)
from server.rules.time_control import Byoyomi, Fischer


def ms(*when: int) -> int:
    return int(datetime(*when, tzinfo=UTC).timestamp() * 1000)  # type: ignore[misc]


NOW = ms(2027, 1, 15, 8, 0)  # a Friday
ENTRIES = parse_schedule(
    """
    # a comment line, then one entry of each period
    h  hour   :10        arena        minishogi  3+2      30m   # a comment after an entry
    d  day    19:00      arena        daishogi   15|30x3  120m
    w  week   Sat@16:00  swiss        spartan    5+3      7r
    m  month  1@17:00    round_robin  daishogi   60|30
    """
)


def test_the_cluster_calendar_reads() -> None:
    """The calendar config/cluster.toml runs (the default is none) reads: every variant."""
    path = DEFAULT_CONFIG_PATH.parent / "cluster.toml"
    settings = load_settings(env={"HUB_CONFIG": str(path)})
    entries = parse_schedule(settings.tournament_schedule)
    assert len(entries) == 11
    assert {e.variant for e in entries} == {
        "minishogi", "shoshogi", "wildcastle", "spartan", "daishogi"
    }
    assert {e.format for e in entries} == {"arena", "swiss", "round_robin"}
    # scripts/serve.sh runs config/calendar.toml: the same calendar.
    served = load_settings(DEFAULT_CONFIG_PATH.parent / "calendar.toml", env={})
    assert served.tournament_schedule == settings.tournament_schedule


def test_entries_read_as_written() -> None:
    h, d, w, m = ENTRIES
    assert (h.every, h.minute, h.control, h.duration_ms) == ("hour", 10, Fischer(180_000, 2_000), 1_800_000)
    assert d.control == Byoyomi(900_000, 30_000, 3) and (d.hour, d.minute) == (19, 0)
    assert (w.weekday, w.hour, w.rounds) == (5, 16, 7)
    assert (m.day, m.control, m.format) == (1, Byoyomi(3_600_000, 30_000, 1), "round_robin")


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        (0, ms(2027, 1, 15, 8, 10)),
        (1, ms(2027, 1, 15, 19, 0)),
        (2, ms(2027, 1, 16, 16, 0)),
        (3, ms(2027, 2, 1, 17, 0)),
    ],
)
def test_next_start_hand_checked(entry: int, expected: int) -> None:
    assert next_start(ENTRIES[entry], NOW) == expected
    # Strictly after: at its own start, the next one is the one after.
    after = next_start(ENTRIES[entry], expected)
    assert after > expected and next_start(ENTRIES[entry], after - 1) == after


def test_month_and_year_roll_over() -> None:
    assert next_start(ENTRIES[3], ms(2027, 12, 1, 17, 0)) == ms(2028, 1, 1, 17, 0)


@given(st.integers(ms(2026, 1, 1), ms(2030, 1, 1)))
def test_next_start_is_the_first_occurrence_after_now(now: int) -> None:
    for entry in ENTRIES:
        start = next_start(entry, now)
        assert start > now
        moment = datetime.fromtimestamp(start / 1000, UTC)
        assert moment.minute == entry.minute and moment.second == 0
        if entry.every != "hour":
            assert moment.hour == entry.hour
        if entry.every == "week":
            assert moment.weekday() == entry.weekday
        if entry.every == "month":
            assert moment.day == entry.day
        # Nothing in between: the same answer from any moment up to the start.
        assert next_start(entry, (now + start) // 2) == start


def test_upcoming_names_the_next_and_those_within_the_look_ahead() -> None:
    h = ENTRIES[0]
    assert upcoming((h,), ms(2027, 1, 15, 8, 9), 60_000) == [(h, ms(2027, 1, 15, 8, 10))]
    assert upcoming((h,), ms(2027, 1, 15, 9, 9), 2 * 3_600_000) == [
        (h, ms(2027, 1, 15, 9, 10)), (h, ms(2027, 1, 15, 10, 10))  # 11:10 is after 11:09
    ]


def test_occurrence_ids_are_derived_alike_and_differ() -> None:
    h, d, _, _ = ENTRIES
    one = occurrence_id(h, NOW)
    assert one == occurrence_id(h, NOW) and len(one) == 8 and set(one) <= set(GAME_ID_ALPHABET)
    assert len({one, occurrence_id(h, NOW + 1), occurrence_id(d, NOW)}) == 3
    settings = occurrence_settings(h, NOW, 500)
    assert (settings.name, settings.start_at_ms, settings.max_players) == (
        "Hourly Mini-Shogi Arena", NOW, 500
    )
    assert settings.rated and settings.berserk and settings.bots


@pytest.mark.parametrize(
    ("line", "complaint"),
    [
        ("x hour 10 arena minishogi 3+2 30m", ":MM"),
        ("x hour :61 arena minishogi 3+2 30m", "no such time"),
        ("x week Sab@16:00 swiss spartan 5+3 7r", "weekday"),
        ("x month 31@17:00 round_robin daishogi 60|30", "1-28"),
        ("x day 19:00 blitz minishogi 3+2 30m", "format"),
        ("x day 19:00 arena chess 3+2 30m", "variant"),
        ("x day 19:00 arena spartan 10|30 30m", "byoyomi is for shogi"),
        ("x day 19:00 arena spartan 3-2 30m", "a clock is"),
        ("x day 19:00 arena spartan 3+2", "duration"),
        ("x day 19:00 swiss spartan 3+2 30m", "rounds"),
        ("x day 19:00 round_robin spartan 3+2 7r", "no length"),
        ("x day 19:00", "expected"),
        ("bad/name day 19:00 arena spartan 3+2 30m", "a name"),
    ],
)
def test_bad_lines_are_refused_with_their_number(line: str, complaint: str) -> None:
    with pytest.raises(ValueError, match="line 2") as error:
        parse_schedule(f"ok day 19:00 arena spartan 3+2 30m\n{line}\n")
    assert complaint in str(error.value)


def test_a_name_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="twice"):
        parse_schedule("a hour :00 arena spartan 3+2 30m\na hour :30 arena spartan 3+2 30m")

"""Recurring tournaments (``[tournaments] tournament_schedule``): the schedule's text, each
entry's occurrences, and the settings and id of an occurrence. Pure (times in epoch ms, UTC).

The schedule is text, one entry a line (``#`` starts a comment)::

    # name                  every  at          format       variant     clock   length
    hourly-minishogi-arena  hour   :00         arena        minishogi   3+2     55m
    weekly-spartan-swiss    week   Sat@18:00   swiss        spartan     5+3     7r
    monthly-daishogi-rr     month  1@17:00     round_robin  daishogi    60|30x3

* ``name``: letters, digits, ``-`` and ``_``; it names the entry for good (an occurrence's id
  is made from it and the start time: rename an entry and its next occurrence is a new one);
* ``every`` ``at`` (UTC): ``hour :MM``, ``day HH:MM``, ``week Ddd@HH:MM`` (Mon … Sun),
  ``month D@HH:MM`` (D 1–28, so that every month has it);
* ``format``: ``arena``, ``swiss``, ``round_robin``, ``double_round_robin``;
* ``clock``: Fischer ``M+S`` (minutes, seconds of increment), or byoyomi ``M|S`` or ``M|SxP``
  (main minutes, seconds a period, P periods; shogi variants only);
* ``length``: an arena's duration (``55m``), a Swiss's rounds (``7r``); none for a round robin.

Every occurrence is rated, open to bots, with berserk where the format has it, at most the
server's ``tournament_max_players``; it starts at its time (an arena ends ``length`` later).
"""

from __future__ import annotations

import calendar
import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal, get_args

from server.hub.game_ids import GAME_ID_ALPHABET, GAME_ID_LENGTH
from server.hub.tournament.values import Format, TournamentSettings
from server.rules.time_control import Byoyomi, Fischer, TimeControl
from server.rules.variants import VARIANT_NAMES, get_variant

__all__ = [
    "Every",
    "ScheduleEntry",
    "next_start",
    "occurrence_id",
    "occurrence_settings",
    "parse_schedule",
    "upcoming",
]

Every = Literal["hour", "day", "week", "month"]
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_EVERY_WORD = {"hour": "Hourly", "day": "Daily", "week": "Weekly", "month": "Monthly"}
_FORMAT_WORD = {
    "arena": "Arena",
    "swiss": "Swiss",
    "round_robin": "Round Robin",
    "double_round_robin": "Double Round Robin",
}
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_AT = {
    "hour": re.compile(r":(?P<minute>\d\d)"),
    "day": re.compile(r"(?P<hour>\d\d):(?P<minute>\d\d)"),
    "week": re.compile(r"(?P<weekday>[A-Z][a-z][a-z])@(?P<hour>\d\d):(?P<minute>\d\d)"),
    "month": re.compile(r"(?P<day>\d{1,2})@(?P<hour>\d\d):(?P<minute>\d\d)"),
}
_FISCHER = re.compile(r"(?P<minutes>\d+(?:\.\d+)?)\+(?P<increment>\d+)")
_BYOYOMI = re.compile(r"(?P<minutes>\d+(?:\.\d+)?)\|(?P<period>\d+)(?:x(?P<periods>\d+))?")
_HOUR_MS = 3_600_000
_DAY_MS = 24 * _HOUR_MS


@dataclass(frozen=True)
class ScheduleEntry:
    """One line of the schedule (see the module docstring)."""

    name: str
    every: Every
    minute: int
    hour: int
    weekday: int
    """0 Monday … 6 Sunday (``week``)."""
    day: int
    """Day of the month (``month``)."""
    format: Format
    variant: str
    control: TimeControl
    duration_ms: int | None
    """An arena's duration."""
    rounds: int | None
    """A Swiss's rounds."""


def parse_schedule(text: str) -> tuple[ScheduleEntry, ...]:
    """The entries of the schedule's text.

    :raises ValueError: a malformed line (its number and what is wrong), or a name twice."""
    entries: list[ScheduleEntry] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            entries.append(_entry(line.split()))
        except ValueError as error:
            raise ValueError(f"tournament_schedule line {number} ({line!r}): {error}") from None
    names = [entry.name for entry in entries]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"tournament_schedule: the name {twice[0]!r} is used twice")
    return tuple(entries)


def _entry(words: list[str]) -> ScheduleEntry:
    if len(words) not in (6, 7):
        raise ValueError("expected: name every at format variant clock [length]")
    name, every, at, fmt, variant, clock = words[:6]
    length = words[6] if len(words) == 7 else None
    if not _NAME.fullmatch(name):
        raise ValueError("a name is 1-64 letters, digits, '-' or '_'")
    if every not in _AT:
        raise ValueError(f"every is one of {', '.join(_AT)}")
    when = _AT[every].fullmatch(at)
    if when is None:
        raise ValueError(
            {"hour": ":MM", "day": "HH:MM", "week": "Ddd@HH:MM", "month": "D@HH:MM"}[every]
            + " expected for 'at'"
        )
    fields = when.groupdict()
    minute, hour = int(fields["minute"]), int(fields.get("hour") or 0)
    if minute > 59 or hour > 23:
        raise ValueError("no such time of day")
    weekday = 0
    if "weekday" in fields:
        if fields["weekday"] not in WEEKDAYS:
            raise ValueError(f"a weekday is one of {', '.join(WEEKDAYS)}")
        weekday = WEEKDAYS.index(fields["weekday"])
    day = int(fields.get("day") or 1)
    if not 1 <= day <= 28:
        raise ValueError("a day of the month is 1-28 (every month has it)")
    if fmt not in _FORMAT_WORD:
        raise ValueError(f"format is one of {', '.join(_FORMAT_WORD)}")
    if variant not in VARIANT_NAMES:
        raise ValueError(f"variant is one of {', '.join(VARIANT_NAMES)}")
    control = _control(clock, variant)
    duration_ms = rounds = None
    if fmt == "arena":
        if length is None or not re.fullmatch(r"\d+m", length):
            raise ValueError("an arena's length is its duration in minutes: 55m")
        duration_ms = int(length[:-1]) * 60_000
    elif fmt == "swiss":
        if length is None or not re.fullmatch(r"\d+r", length):
            raise ValueError("a Swiss's length is its number of rounds: 7r")
        rounds = int(length[:-1])
    elif length is not None:
        raise ValueError("a round robin has no length (its players decide its rounds)")
    entry = ScheduleEntry(
        name, every, minute, hour, weekday, day, fmt, variant, control,  # type: ignore[arg-type]
        duration_ms, rounds,
    )
    occurrence_settings(entry, 0, 1000)  # the core's own checks (a zero duration …)
    return entry


def _control(clock: str, variant: str) -> TimeControl:
    fischer = _FISCHER.fullmatch(clock)
    if fischer is not None:
        return Fischer(round(float(fischer["minutes"]) * 60_000), int(fischer["increment"]) * 1000)
    byoyomi = _BYOYOMI.fullmatch(clock)
    if byoyomi is None:
        raise ValueError("a clock is M+S (Fischer) or M|S, M|SxP (byoyomi)")
    if get_variant(variant).family != "shogi":
        raise ValueError("byoyomi is for shogi variants")
    return Byoyomi(
        round(float(byoyomi["minutes"]) * 60_000),
        int(byoyomi["period"]) * 1000,
        int(byoyomi["periods"] or 1),
    )


def next_start(entry: ScheduleEntry, now_ms: int) -> int:
    """The entry's first occurrence strictly after ``now_ms``."""
    now = datetime.fromtimestamp(now_ms / 1000, UTC)
    if entry.every == "hour":
        start = now.replace(minute=entry.minute, second=0, microsecond=0)
        step = timedelta(hours=1)
    elif entry.every == "day":
        start = now.replace(hour=entry.hour, minute=entry.minute, second=0, microsecond=0)
        step = timedelta(days=1)
    elif entry.every == "week":
        midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
        monday = midnight - timedelta(days=now.weekday())
        start = monday + timedelta(days=entry.weekday, hours=entry.hour, minutes=entry.minute)
        step = timedelta(weeks=1)
    else:
        start = now.replace(
            day=entry.day, hour=entry.hour, minute=entry.minute, second=0, microsecond=0
        )
        while _ms(start) <= now_ms:
            year, month = divmod(start.month, 12)
            start = start.replace(year=start.year + year, month=month + 1)
        return _ms(start)
    while _ms(start) <= now_ms:
        start += step
    while _ms(start - step) > now_ms:  # the first one after now, not a later one
        start -= step
    return _ms(start)


def upcoming(
    entries: tuple[ScheduleEntry, ...], now_ms: int, ahead_ms: int
) -> list[tuple[ScheduleEntry, int]]:
    """Each entry's occurrences to have in the calendar at ``now_ms``: its next one, and every
    one starting within ``ahead_ms`` (so that the next one is listed before the current one
    starts, whenever the calendar is next looked at)."""
    due: list[tuple[ScheduleEntry, int]] = []
    for entry in entries:
        start = next_start(entry, now_ms)
        due.append((entry, start))
        while (start := next_start(entry, start)) <= now_ms + ahead_ms:
            due.append((entry, start))
    return due


def occurrence_id(entry: ScheduleEntry, start_ms: int) -> str:
    """The occurrence's tournament id: the same on every hub (so two hubs racing to create it
    create one), in a game id's form."""
    digest = hashlib.sha256(f"schedule:{entry.name}:{start_ms}".encode()).digest()
    return "".join(GAME_ID_ALPHABET[b % len(GAME_ID_ALPHABET)] for b in digest[:GAME_ID_LENGTH])


def occurrence_settings(entry: ScheduleEntry, start_ms: int, max_players: int) -> TournamentSettings:
    """The settings of the occurrence starting at ``start_ms``."""
    title = get_variant(entry.variant).title
    return TournamentSettings(
        name=f"{_EVERY_WORD[entry.every]} {title} {_FORMAT_WORD[entry.format]}",
        format=entry.format,
        variant=entry.variant,
        control=entry.control,
        rated=True,
        start_at_ms=start_ms,
        duration_ms=entry.duration_ms,
        rounds=entry.rounds,
        bots=True,
        max_players=max_players,
        berserk=entry.format == "arena",
    )


def _ms(moment: datetime) -> int:
    return calendar.timegm(moment.utctimetuple()) * 1000


assert set(get_args(Every)) == set(_AT)

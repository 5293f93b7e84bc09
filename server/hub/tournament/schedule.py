"""Recurring tournaments: the server's own calendar, read from one setting
(``[tournaments] tournament_schedule``), as pure values (issue 35: "the calendar is never
empty").

The setting is entries separated by ``;``, each ``FORMAT VARIANT CLOCK every PERIOD [for
DURATION] [rounds N] [rated]``: ``FORMAT`` one of the core's formats, ``CLOCK`` ``BASE+INC``
(Fischer, seconds) or ``MAIN|PERIODxN`` (byoyomi, seconds), ``PERIOD`` and ``DURATION`` a
number with ``m``, ``h`` or ``d``. An arena lasts ``DURATION`` (default: its period less 3
minutes, at least 1 minute); a Swiss has ``rounds`` (default 7). Slots are the multiples of the
period since the epoch (an hourly arena starts on the hour)::

    >>> [r.name for r in parse_schedule("arena minishogi 180+2 every 1h; swiss shoshogi 600+10 every 7d rounds 5 rated")]
    ['Hourly Mini-Shogi arena', 'Weekly Sho Shogi Swiss']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from server.hub.tournament.values import FORMATS, Format, TournamentSettings
from server.rules import VARIANT_NAMES, get_variant
from server.rules.time_control import Byoyomi, Fischer, TimeControl

__all__ = ["Recurring", "next_slot", "parse_schedule"]

_UNITS = {"m": 60_000, "h": 3_600_000, "d": 86_400_000}
_PERIOD_NAMES = {
    3_600_000: "Hourly",
    86_400_000: "Daily",
    604_800_000: "Weekly",
    2_592_000_000: "Monthly",
}
_FORMAT_NAMES = {
    "arena": "arena",
    "swiss": "Swiss",
    "round_robin": "round robin",
    "double_round_robin": "double round robin",
}
DEFAULT_ROUNDS = 7


@dataclass(frozen=True)
class Recurring:
    """One recurring tournament of the calendar."""

    format: Format
    variant: str
    control: TimeControl
    every_ms: int
    duration_ms: int | None = None
    rounds: int | None = None
    rated: bool = False

    @property
    def name(self) -> str:
        every = _PERIOD_NAMES.get(self.every_ms, f"Every {self.every_ms // 60_000} min")
        return f"{every} {get_variant(self.variant).title} {_FORMAT_NAMES[self.format]}"

    def settings_at(self, start_ms: int) -> TournamentSettings:
        """The settings of the slot starting at ``start_ms``."""
        return TournamentSettings(
            name=self.name,
            format=self.format,
            variant=self.variant,
            control=self.control,
            rated=self.rated,
            start_at_ms=start_ms,
            duration_ms=self.duration_ms,
            rounds=self.rounds,
        )


def next_slot(every_ms: int, now_ms: int) -> int:
    """The first slot (a multiple of ``every_ms``) after ``now_ms``."""
    return (now_ms // every_ms + 1) * every_ms


def _time(text: str, what: str) -> int:
    unit = _UNITS.get(text[-1:])
    if unit is None or not text[:-1].isdigit() or int(text[:-1]) < 1:
        raise ValueError(f"{what} {text!r}: a number of minutes, hours or days (30m, 1h, 7d)")
    return int(text[:-1]) * unit


def _clock(text: str) -> TimeControl:
    try:
        if "+" in text:
            base, increment = text.split("+")
            return Fischer.from_seconds(int(base), int(increment))
        main, rest = text.split("|")
        period, periods = rest.split("x")
        return Byoyomi.from_seconds(int(main), int(period), int(periods))
    except ValueError:
        raise ValueError(f"clock {text!r}: BASE+INC or MAIN|PERIODxN, in seconds") from None


def _entry(text: str) -> Recurring:
    words = text.split()
    if len(words) < 5 or words[3] != "every":
        raise ValueError(
            f"{text!r}: FORMAT VARIANT CLOCK every PERIOD [for DURATION] [rounds N] [rated]"
        )
    kind, variant, clock, _, period, *rest = words
    if kind not in FORMATS:
        raise ValueError(f"{text!r}: the format is one of {', '.join(FORMATS)}")
    if variant not in VARIANT_NAMES:
        raise ValueError(f"{text!r}: the variant is one of {', '.join(VARIANT_NAMES)}")
    control = _clock(clock)
    if isinstance(control, Byoyomi) and get_variant(variant).family != "shogi":
        raise ValueError(f"{text!r}: byoyomi is for shogi variants")
    every = _time(period, "period")
    duration = rounds = None
    rated = False
    while rest:
        word = rest.pop(0)
        if word == "rated":
            rated = True
        elif word in ("for", "rounds") and rest:
            value = rest.pop(0)
            if word == "for":
                duration = _time(value, "duration")
            elif value.isdigit():
                rounds = int(value)
            else:
                raise ValueError(f"{text!r}: rounds is a number")
        else:
            raise ValueError(f"{text!r}: unknown word {word!r}")
    fmt = cast(Format, kind)
    if fmt == "arena" and duration is None:
        duration = max(60_000, every - 180_000)
    if fmt == "swiss" and rounds is None:
        rounds = DEFAULT_ROUNDS
    if (fmt != "arena" and duration is not None) or (fmt != "swiss" and rounds is not None):
        raise ValueError(f"{text!r}: only an arena has a duration, only a Swiss rounds")
    recurring = Recurring(fmt, variant, control, every, duration, rounds, rated)
    recurring.settings_at(every)  # the core's own checks (durations, rounds)
    return recurring


def parse_schedule(text: str) -> list[Recurring]:
    """The calendar of the setting (see the module docstring); empty text: none.

    :raises ValueError: an entry that does not read, with the reason.
    """
    return [_entry(part.strip()) for part in text.split(";") if part.strip()]

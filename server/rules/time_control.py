"""A game's time control: the one type that the hub's clock runs, the store keeps, the exports
and the review API show.

* :class:`Fischer` — ``base_ms`` at the start, ``increment_ms`` added after each move.
* :class:`Byoyomi` — ``base_ms`` of main time, then ``periods`` periods of ``period_ms`` each.
  Once main time is gone the player is in byoyomi: a move made inside the current period keeps
  it (the next turn starts with a full period again); a move that spans *k* whole periods (the
  thinking time after main time ran out is ``>= k * period_ms``) spends *k* periods; the flag
  falls when the last period runs out.
* :class:`Correspondence` — ``days_per_move`` days for every move (one of
  :data:`CORRESPONDENCE_DAYS`): the mover's time resets to the full allowance after each move
  (lichess's correspondence clock), so a turn's deadline is its start + the allowance.
* :class:`Unlimited` — no clock at all: no deadline, nobody ever loses on time.

All are plain values in integer milliseconds that refuse impossible clocks on construction, and
both carry the arithmetic of their rule (:meth:`Fischer.after_move` …) so that
``server.hub.clock.GameClock`` can run either as a strategy. Their other forms are each built by
one function: the protocol's ``tc`` object (``server.hub.clock.time_control_view``), the review
API's ``time_control`` (``server.transport.review_views.stored_time_control_view``), the store's
columns (``server.store.records.control_columns`` / ``control_of_columns``), the PGN and KIF
headers (``server.rules.export``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal, get_args

__all__ = [
    "CLOCK_KINDS",
    "CORRESPONDENCE_DAYS",
    "CORRESPONDENCE_KINDS",
    "DAY_MS",
    "Byoyomi",
    "ClockKind",
    "Correspondence",
    "Fischer",
    "LiveTime",
    "SideTime",
    "TimeControl",
    "Unlimited",
    "is_correspondence",
]

ClockKind = Literal["fischer", "byoyomi", "correspondence", "unlimited"]
CLOCK_KINDS: tuple[ClockKind, ...] = get_args(ClockKind)
CORRESPONDENCE_KINDS: frozenset[ClockKind] = frozenset({"correspondence", "unlimited"})
"""The kinds of the correspondence games (speed ``"correspondence"``): no player need be
present, a player may play many of them at once."""

DAY_MS = 86_400_000
CORRESPONDENCE_DAYS: tuple[int, ...] = (1, 2, 3, 5, 7, 10, 14)
"""The days per move a correspondence game may have (lichess's choices)."""


def _check_count(what: str, value: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{what} must be an integer >= 0, got {value!r}")


@dataclass(frozen=True)
class SideTime:
    """One player's stored time: main time left and byoyomi periods left (0 under Fischer)."""

    main_ms: int
    periods: int = 0


@dataclass(frozen=True)
class LiveTime:
    """One player's time as it stands at some instant, for display."""

    main_ms: int
    periods: int
    period_left_ms: int | None
    """Time left in the current byoyomi period (``None`` under Fischer)."""


@dataclass(frozen=True)
class Fischer:
    """Fischer time control: ``base_ms`` at the start, ``increment_ms`` added after each move.

    >>> Fischer.from_seconds(180, 2)
    Fischer(base_ms=180000, increment_ms=2000)

    :raises ValueError: a negative or non-integer number, or no time at all.
    """

    base_ms: int
    increment_ms: int = 0
    kind: ClassVar[ClockKind] = "fischer"

    def __post_init__(self) -> None:
        _check_count("base_ms", self.base_ms)
        _check_count("increment_ms", self.increment_ms)
        if self.base_ms == 0 and self.increment_ms == 0:
            raise ValueError("a clock needs some time: base or increment")

    @classmethod
    def from_seconds(cls, base_s: int, inc_s: int) -> Fischer:
        return cls(base_s * 1000, inc_s * 1000)

    def initial(self) -> SideTime:
        return SideTime(self.base_ms)

    def budget_ms(self, time: SideTime) -> int:
        return time.main_ms

    def after_move(self, time: SideTime, spent_ms: int) -> SideTime:
        return SideTime(time.main_ms - spent_ms + self.increment_ms)

    def stopped(self, time: SideTime, spent_ms: int) -> SideTime:
        return SideTime(max(0, time.main_ms - spent_ms))

    def live(self, time: SideTime, elapsed_ms: int) -> LiveTime:
        return LiveTime(max(0, time.main_ms - elapsed_ms), 0, None)


@dataclass(frozen=True)
class Byoyomi:
    """Byoyomi: ``base_ms`` of main time, then ``periods`` periods of ``period_ms``.

    >>> Byoyomi.from_seconds(600, 30, 3)
    Byoyomi(base_ms=600000, period_ms=30000, periods=3)

    :raises ValueError: a negative or non-integer number, or no period.
    """

    base_ms: int
    period_ms: int
    periods: int
    kind: ClassVar[ClockKind] = "byoyomi"

    def __post_init__(self) -> None:
        _check_count("base_ms", self.base_ms)
        _check_count("period_ms", self.period_ms)
        _check_count("periods", self.periods)
        if self.period_ms == 0 or self.periods == 0:
            raise ValueError("a byoyomi clock needs period_ms > 0 and at least one period")

    @classmethod
    def from_seconds(cls, main_s: int, period_s: int, periods: int) -> Byoyomi:
        return cls(main_s * 1000, period_s * 1000, periods)

    def initial(self) -> SideTime:
        return SideTime(self.base_ms, self.periods)

    def budget_ms(self, time: SideTime) -> int:
        # The current period is full at every turn start, so the budget is main + all periods left.
        return time.main_ms + time.periods * self.period_ms

    def after_move(self, time: SideTime, spent_ms: int) -> SideTime:
        if spent_ms < time.main_ms:
            return SideTime(time.main_ms - spent_ms, time.periods)
        whole_periods_used = (spent_ms - time.main_ms) // self.period_ms
        return SideTime(0, time.periods - whole_periods_used)

    def stopped(self, time: SideTime, spent_ms: int) -> SideTime:
        if spent_ms >= self.budget_ms(time):
            return SideTime(0, 0)
        return self.after_move(time, spent_ms)

    def live(self, time: SideTime, elapsed_ms: int) -> LiveTime:
        if elapsed_ms < time.main_ms:
            return LiveTime(time.main_ms - elapsed_ms, time.periods, self.period_ms)
        over = elapsed_ms - time.main_ms
        used, into_period = divmod(over, self.period_ms)
        if used >= time.periods:
            return LiveTime(0, 0, 0)
        return LiveTime(0, time.periods - used, self.period_ms - into_period)


@dataclass(frozen=True)
class Correspondence:
    """Correspondence: ``days_per_move`` days for each move, the allowance full again at every
    turn (the time left after a move is always the whole allowance).

    >>> Correspondence(3).per_move_ms
    259200000

    :raises ValueError: a number of days not in :data:`CORRESPONDENCE_DAYS`.
    """

    days_per_move: int
    kind: ClassVar[ClockKind] = "correspondence"

    def __post_init__(self) -> None:
        days = self.days_per_move
        if isinstance(days, bool) or days not in CORRESPONDENCE_DAYS:
            choices = ", ".join(map(str, CORRESPONDENCE_DAYS))
            raise ValueError(f"days per move must be one of {choices}, got {days!r}")

    @property
    def per_move_ms(self) -> int:
        return self.days_per_move * DAY_MS

    def initial(self) -> SideTime:
        return SideTime(self.per_move_ms)

    def budget_ms(self, time: SideTime) -> int:
        return time.main_ms

    def after_move(self, time: SideTime, spent_ms: int) -> SideTime:
        return SideTime(self.per_move_ms)

    def stopped(self, time: SideTime, spent_ms: int) -> SideTime:
        return SideTime(max(0, time.main_ms - spent_ms))

    def live(self, time: SideTime, elapsed_ms: int) -> LiveTime:
        return LiveTime(max(0, time.main_ms - elapsed_ms), 0, None)


@dataclass(frozen=True)
class Unlimited:
    """No clock: a move may come at any time, nobody loses on time (``budget_ms`` is
    ``None``: no deadline). Stored and shown times are 0."""

    kind: ClassVar[ClockKind] = "unlimited"

    def initial(self) -> SideTime:
        return SideTime(0)

    def budget_ms(self, time: SideTime) -> None:
        return None

    def after_move(self, time: SideTime, spent_ms: int) -> SideTime:
        return time

    def stopped(self, time: SideTime, spent_ms: int) -> SideTime:
        return time

    def live(self, time: SideTime, elapsed_ms: int) -> LiveTime:
        return LiveTime(0, 0, None)


TimeControl = Fischer | Byoyomi | Correspondence | Unlimited
"""A game's time control (``control.kind`` tells which)."""


def is_correspondence(control: TimeControl) -> bool:
    """Whether ``control`` makes a correspondence game (days per move, or no clock)."""
    return control.kind in CORRESPONDENCE_KINDS

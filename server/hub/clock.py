"""Game clocks in integer milliseconds, with the time passed in (never read from the system).

One :class:`GameClock` serves every time control; the control
(``server.rules.time_control``: :class:`~server.rules.time_control.Fischer` or
:class:`~server.rules.time_control.Byoyomi`) is its strategy: it says what a move, a stop and the
passing of time do to a player's :class:`~server.rules.time_control.SideTime`.

Boundary rule (deadline inclusive): a player whose turn started at ``t0`` with budget ``B``
(Fischer: remaining time; byoyomi: main + periods left × period) has the half-open interval
``[t0, t0 + B)``. A move handled at ``now < t0 + B`` is in time; at ``now >= t0 + B`` the player has
lost on time. So the flag falls exactly *at* :meth:`GameClock.deadline`, and a move in the last
millisecond (``deadline - 1``) counts, whatever it does. Byoyomi periods follow the same rule: a
period of 10 000 ms is used up by a move that took exactly 10 000 ms of it.

A correspondence clock (:class:`~server.rules.time_control.Correspondence`) is the same rule with
the whole allowance as every turn's budget; an unlimited one has no budget, so no deadline.

Lag compensation (lichess style): each player has a quota; each move's measured lag (reported by the
adapter) is credited back up to ``min(lag, quota, elapsed)``; then the quota refills by ``gain_ms``
up to ``max_ms``. Compensation lowers the time charged for a move that arrived in time; it never
moves the deadline, so flags stay exactly where :meth:`GameClock.deadline` says.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.hub.glicko2 import estimated_total_ms
from server.hub.payloads import ClocksView, SideClockView, TimeControlView
from server.rules import Side
from server.rules.time_control import (
    Byoyomi,
    Correspondence,
    Fischer,
    LiveTime,
    SideTime,
    TimeControl,
    is_correspondence,
)


class ClockError(RuntimeError):
    """A clock operation that the caller should have prevented (e.g. pressing a stopped clock)."""


def time_control_view(control: TimeControl) -> TimeControlView:
    """The protocol's ``tc`` object of a time control (read back by
    ``server.hub.commands.time_control_from_json``)."""
    if isinstance(control, Fischer):
        return {
            "kind": "fischer",
            "base_s": control.base_ms // 1000,
            "inc_s": control.increment_ms // 1000,
        }
    if isinstance(control, Correspondence):
        return {"kind": "correspondence", "days": control.days_per_move}
    if not isinstance(control, Byoyomi):
        return {"kind": "unlimited"}
    return {
        "kind": "byoyomi",
        "main_s": control.base_ms // 1000,
        "period_s": control.period_ms // 1000,
        "periods": control.periods,
    }


@dataclass(frozen=True)
class LagPolicy:
    """Bounds of lag compensation: the quota starts at ``initial_ms``, refills by ``gain_ms`` per move,
    never exceeds ``max_ms``."""

    gain_ms: int
    initial_ms: int
    max_ms: int

    @classmethod
    def for_control(cls, control: TimeControl) -> LagPolicy:
        """Scale with the game's length: 100 ms per move from 3 minutes up, less for bullet;
        none for correspondence (a day per move needs no credit for a network's lag)."""
        if is_correspondence(control):
            return cls(gain_ms=0, initial_ms=0, max_ms=0)
        gain = max(10, min(100, estimated_total_ms(control) // 1800))
        return cls(gain_ms=gain, initial_ms=3 * gain, max_ms=7 * gain)


@dataclass(frozen=True)
class MoveTiming:
    """What a move cost the player who made it."""

    spent_ms: int
    """Time charged, after lag compensation."""
    compensation_ms: int
    main_ms: int
    """Main time left after the move (Fischer: including the increment)."""
    periods: int
    """Byoyomi periods left after the move (0 under Fischer)."""


@dataclass(frozen=True)
class ClockState:
    """Everything a :class:`GameClock` holds, to take a move back exactly."""

    times: tuple[SideTime, SideTime]
    running: Side | None
    turn_started_ms: int | None
    quotas: tuple[int, int]


class GameClock:
    """A two-player clock, one time per :class:`~server.rules.Side`.

    >>> clock = GameClock(Fischer.from_seconds(60, 1))
    >>> clock.start(Side.FIRST, now=1_000)
    >>> clock.deadline()
    61000
    >>> clock.press(now=11_000).main_ms   # 10 s spent, 1 s increment
    51000
    >>> clock.running, clock.deadline()
    (<Side.SECOND: 1>, 71000)
    """

    def __init__(self, control: TimeControl, lag: LagPolicy | None = None) -> None:
        self.control: TimeControl = control
        """The game's control (a side that berserked has its own: :meth:`berserk`)."""
        self._controls = [control, control]
        self.lag = lag or LagPolicy.for_control(control)
        self._times = [control.initial(), control.initial()]
        self._quotas = [self.lag.initial_ms, self.lag.initial_ms]
        self._running: Side | None = None
        self._turn_started_ms: int | None = None

    @property
    def running(self) -> Side | None:
        """The side whose time is running, or ``None`` when the clock is stopped."""
        return self._running

    def time(self, side: Side) -> SideTime:
        """The stored time of ``side`` (as of its last turn start)."""
        return self._times[side]

    def quota(self, side: Side) -> int:
        """The lag compensation ``side`` can still receive on its next move."""
        return self._quotas[side]

    def deadline(self) -> int | None:
        """The instant the running side flags (the flag falls *at* this time), or ``None``."""
        if self._running is None or self._turn_started_ms is None:
            return None
        budget = self._controls[self._running].budget_ms(self._times[self._running])
        return None if budget is None else self._turn_started_ms + budget

    def out_of_time(self, now: int) -> bool:
        """Whether the running side has flagged at ``now`` (``now >= deadline``)."""
        deadline = self.deadline()
        return deadline is not None and now >= deadline

    def set_time(self, side: Side, time: SideTime) -> None:
        """Set ``side``'s stored time (restoring a stored game); the clock must be stopped."""
        if self._running is not None:
            raise ClockError("cannot set the time of a running clock")
        self._times[side] = time

    def berserk(self, side: Side, control: TimeControl) -> None:
        """``side`` berserked before its first move: from now on its time follows ``control``
        (the berserk control: half the base and no increment, or half the main time and the
        same periods), starting from its initial time. If its turn is running, the turn's
        start stays (the deadline moves closer)."""
        self._controls[side] = control
        self._times[side] = control.initial()

    def start(self, side: Side, now: int) -> None:
        """Start ``side``'s time at ``now``; the clock must be stopped."""
        if self._running is not None:
            raise ClockError("the clock is already running")
        self._running = side
        self._turn_started_ms = now

    def press(self, now: int, lag_ms: int = 0) -> MoveTiming:
        """Charge the running side's move made at ``now`` and start the opponent's time.

        :param lag_ms: the lag measured by the adapter for this move; credited up to the quota.
        :raises ClockError: if the clock is stopped or the running side is out of time at ``now``.
        """
        side, started = self._running, self._turn_started_ms
        if side is None or started is None:
            raise ClockError("the clock is not running")
        if self.out_of_time(now):
            raise ClockError("the player to move is out of time")
        elapsed = max(0, now - started)
        compensation = min(max(0, lag_ms), self._quotas[side], elapsed)
        self._quotas[side] = min(
            self._quotas[side] - compensation + self.lag.gain_ms, self.lag.max_ms
        )
        spent = elapsed - compensation
        after = self._controls[side].after_move(self._times[side], spent)
        self._times[side] = after
        self._running = side.other
        self._turn_started_ms = now
        return MoveTiming(spent, compensation, after.main_ms, after.periods)

    def stop(self, now: int) -> None:
        """Stop the clock at ``now`` (game over), charging the running side's elapsed time."""
        side, started = self._running, self._turn_started_ms
        if side is None or started is None:
            return
        self._times[side] = self._controls[side].stopped(self._times[side], max(0, now - started))
        self._running = None
        self._turn_started_ms = None

    def flag(self) -> None:
        """Stop the clock with the running side at zero (it lost on time)."""
        if self._running is None:
            return
        self._times[self._running] = SideTime(0, 0)
        self._running = None
        self._turn_started_ms = None

    def live(self, side: Side, now: int) -> LiveTime:
        """``side``'s time as it stands at ``now``."""
        elapsed = 0
        if side == self._running and self._turn_started_ms is not None:
            elapsed = max(0, now - self._turn_started_ms)
        return self._controls[side].live(self._times[side], elapsed)

    def state(self) -> ClockState:
        return ClockState(
            (self._times[0], self._times[1]),
            self._running,
            self._turn_started_ms,
            (self._quotas[0], self._quotas[1]),
        )

    def restore(self, state: ClockState) -> None:
        self._times = list(state.times)
        self._running = state.running
        self._turn_started_ms = state.turn_started_ms
        self._quotas = list(state.quotas)

    def view(self, now: int) -> ClocksView:
        """JSON view: live time of both sides at ``now`` and which one is running."""
        return {
            "first": _live_json(self.live(Side.FIRST, now)),
            "second": _live_json(self.live(Side.SECOND, now)),
            "running": None if self._running is None else self._running.word,
        }


def _live_json(live: LiveTime) -> SideClockView:
    obj: SideClockView = {"ms": live.main_ms}
    if live.period_left_ms is not None:
        obj["periods"] = live.periods
        obj["period_ms"] = live.period_left_ms
    return obj

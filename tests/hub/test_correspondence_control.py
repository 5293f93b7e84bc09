"""The correspondence time controls as one value in every form: the protocol's ``tc``, the
store's columns, the review API's view, PGN/KIF headers, the Bot API's and ICS's words."""

from __future__ import annotations

import pytest

from server.hub.clock import GameClock, LagPolicy, time_control_view
from server.hub.commands import ProtocolError, time_control_from_json
from server.hub.glicko2 import speed_of
from server.rules import Side
from server.rules.export.kif import _kif_time_control
from server.rules.export.replay import format_time_control
from server.rules.time_control import (
    CORRESPONDENCE_DAYS,
    DAY_MS,
    Correspondence,
    Fischer,
    TimeControl,
    Unlimited,
    is_correspondence,
)
from server.store.records import control_columns, control_of_columns
from server.transport.http_api import lichess
from server.transport.ics.parse import TermsError, parse_terms
from server.transport.review_views import stored_time_control_view

CONTROLS: list[TimeControl] = [Correspondence(d) for d in CORRESPONDENCE_DAYS] + [Unlimited()]


@pytest.mark.parametrize("control", CONTROLS, ids=lambda c: f"{c.kind}")
def test_every_form_reads_back(control: TimeControl) -> None:
    assert time_control_from_json(time_control_view(control)) == control
    assert control_of_columns(**control_columns(control)) == control
    assert speed_of(control) == "correspondence"
    assert is_correspondence(control)
    assert format_time_control(control) == "-"
    assert stored_time_control_view(control)["kind"] == control.kind
    assert not is_correspondence(Fischer(60_000))


def test_the_views_of_three_days() -> None:
    control = Correspondence(3)
    assert time_control_view(control) == {"kind": "correspondence", "days": 3}
    assert control_columns(control)["base_ms"] == 3 * DAY_MS
    assert stored_time_control_view(control)["days"] == 3
    assert _kif_time_control(control) == "1手3日"
    assert _kif_time_control(Unlimited()) == "無制限"
    tc = time_control_view(control)
    assert lichess.time_control_view(tc) == {"type": "correspondence", "daysPerTurn": 3}
    assert lichess.clock_view(tc) is None
    assert lichess.time_control_view({"kind": "unlimited"}) == {"type": "unlimited"}


@pytest.mark.parametrize("days", [0, 4, 6, 15, 30, -1, True])
def test_days_out_of_range_are_refused(days: object) -> None:
    with pytest.raises(ValueError, match="days per move"):
        Correspondence(days)  # type: ignore[arg-type]
    with pytest.raises(ProtocolError, match="days"):
        time_control_from_json({"kind": "correspondence", "days": days})
    with pytest.raises(ValueError):
        control_of_columns("correspondence", 86_400_000 + 1, 0, 0, 0)


def test_unlimited_takes_no_field() -> None:
    with pytest.raises(ProtocolError):
        time_control_from_json({"kind": "unlimited", "days": 3})


def test_ics_words() -> None:
    assert parse_terms(["3d", "daishogi", "rated"]).control == Correspondence(3)
    assert parse_terms(["unlimited"]).control == Unlimited()
    for bad in ("4d", "3d 5 0", "15d"):
        with pytest.raises(TermsError):
            parse_terms(bad.split())


def test_the_allowance_resets_after_each_move() -> None:
    clock = GameClock(Correspondence(1))
    assert clock.lag == LagPolicy(0, 0, 0)
    clock.start(Side.FIRST, now=0)
    assert clock.deadline() == DAY_MS
    timing = clock.press(now=DAY_MS - 60_000, lag_ms=500)  # 23 h 59 min: no lag credit
    assert (timing.spent_ms, timing.compensation_ms, timing.main_ms) == (DAY_MS - 60_000, 0, DAY_MS)
    assert clock.deadline() == 2 * DAY_MS - 60_000
    assert not clock.out_of_time(2 * DAY_MS - 60_001)
    assert clock.out_of_time(2 * DAY_MS - 60_000)


def test_unlimited_never_has_a_deadline() -> None:
    clock = GameClock(Unlimited())
    clock.start(Side.FIRST, now=0)
    assert clock.deadline() is None
    assert not clock.out_of_time(10**15)
    clock.press(now=10**12)
    assert clock.deadline() is None
    assert clock.view(10**13)["running"] == "second"

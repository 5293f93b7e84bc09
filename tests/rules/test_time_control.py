"""The one time-control type: its checks on construction (the hub's clock, the store and the
exports all rely on them)."""

from collections.abc import Callable

import pytest

from server.rules.time_control import Byoyomi, Fischer


@pytest.mark.parametrize(
    "make",
    [
        lambda: Fischer(0, 0),  # no time at all
        lambda: Fischer(-1, 2_000),
        lambda: Fischer(60_000, -1),
        lambda: Fischer(True, 0),  # a bool is not a number of milliseconds
        lambda: Fischer(60.5, 0),  # type: ignore[arg-type]
        lambda: Byoyomi(60_000, 0, 1),  # no period length
        lambda: Byoyomi(60_000, 10_000, 0),  # no periods
        lambda: Byoyomi(-1, 10_000, 1),
    ],
)
def test_impossible_clocks_are_refused(make: Callable[[], object]) -> None:
    with pytest.raises(ValueError):
        make()


def test_possible_clocks() -> None:
    assert Fischer(0, 1_000).kind == "fischer" and Fischer(60_000).increment_ms == 0
    assert Byoyomi(0, 10_000, 1).kind == "byoyomi"
    assert Byoyomi.from_seconds(600, 30, 3) == Byoyomi(600_000, 30_000, 3)

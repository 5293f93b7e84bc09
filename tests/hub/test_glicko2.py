"""Glicko-2 math against Glickman's worked example and its defining properties."""

import math

import pytest

from server.hub.glicko2 import (
    DEFAULT_DEVIATION,
    PROVISIONAL_DEVIATION,
    GameResult,
    Rating,
    estimated_game_seconds,
    expected_score,
    rate,
    rate_game,
    speed_class,
)

# Glickman, "Example of the Glicko-2 system" (2013), section "Example calculation".
PAPER_PLAYER = Rating(1500, 200, 0.06)
PAPER_OPPONENTS = (Rating(1400, 30), Rating(1550, 100), Rating(1700, 300))
PAPER_SCORES = (1.0, 0.0, 0.0)
PAPER_TAU = 0.5


def test_paper_example_final_rating() -> None:
    results = [GameResult(o, s) for o, s in zip(PAPER_OPPONENTS, PAPER_SCORES)]
    new = rate(PAPER_PLAYER, results, tau=PAPER_TAU)
    # The paper rounds its intermediate values to 4 digits (mu' = -0.2069,
    # phi' = 0.8722), so its published r' = 1464.06 and RD' = 151.52 carry that
    # rounding: 0.0001 on the Glicko-2 scale is 0.017 rating points.
    assert new.rating == pytest.approx(1464.06, abs=0.02)
    assert new.deviation == pytest.approx(151.52, abs=0.02)
    # The paper prints sigma' = 0.05999 (truncated, not rounded: 0.059996).
    assert 0.05999 <= new.volatility < 0.06
    # And the unrounded results agree with the paper's Glicko-2 scale values.
    assert (new.rating - 1500) / 173.7178 == pytest.approx(-0.2069, abs=0.00005)
    assert new.deviation / 173.7178 == pytest.approx(0.8722, abs=0.00005)


def test_paper_example_expected_scores() -> None:
    # E(mu, mu_j, phi_j) column of the paper's table.
    expected = [expected_score(PAPER_PLAYER, o) for o in PAPER_OPPONENTS]
    assert expected == pytest.approx([0.639, 0.432, 0.303], abs=0.0005)


def test_game_between_equals_is_zero_sum() -> None:
    first, second = rate_game(Rating(), Rating(), 1.0)
    assert first.rating > 1500 > second.rating
    assert first.rating - 1500 == pytest.approx(1500 - second.rating)
    assert first.deviation == pytest.approx(second.deviation)
    assert first.deviation < DEFAULT_DEVIATION


def test_draw_between_equals_keeps_ratings() -> None:
    first, second = rate_game(Rating(1700, 80), Rating(1700, 80), 0.5)
    assert first.rating == pytest.approx(1700)
    assert second.rating == pytest.approx(1700)
    assert first.deviation < 80


def test_upset_moves_ratings_more_than_expected_win() -> None:
    strong, weak = Rating(1900, 60), Rating(1500, 60)
    strong_wins, _ = rate_game(strong, weak, 1.0)
    _, weak_wins = rate_game(strong, weak, 0.0)
    assert 0 < strong_wins.rating - strong.rating < weak_wins.rating - weak.rating


def test_rate_game_is_one_period_per_player() -> None:
    a, b = Rating(1620, 140, 0.061), Rating(1480, 75, 0.059)
    new_a, new_b = rate_game(a, b, 0.0, tau=0.5)
    assert new_a == rate(a, [GameResult(b, 0.0)], tau=0.5)
    assert new_b == rate(b, [GameResult(a, 1.0)], tau=0.5)


def test_uncertain_opponent_moves_rating_less() -> None:
    me = Rating(1500, 100)
    vs_certain = rate(me, [GameResult(Rating(1500, 40), 1.0)])
    vs_uncertain = rate(me, [GameResult(Rating(1500, 340), 1.0)])
    assert vs_certain.rating > vs_uncertain.rating > me.rating


def test_surprising_results_raise_volatility() -> None:
    steady = surprising = Rating(1500, 60, 0.06)
    for _ in range(10):
        steady = rate(steady, [GameResult(Rating(1500, 60), 0.5)])
        surprising = rate(surprising, [GameResult(Rating(2100, 60), 1.0)])
    assert surprising.volatility > 0.06 > steady.volatility


def test_idle_period_only_grows_deviation() -> None:
    before = Rating(1800, 50, 0.06)
    after = rate(before, [])
    assert after.rating == before.rating
    assert after.volatility == before.volatility
    phi, sigma = 50 / 173.7178, 0.06
    assert after.deviation == pytest.approx(math.sqrt(phi * phi + sigma * sigma) * 173.7178)


def test_deviation_never_exceeds_a_newcomers() -> None:
    assert rate(Rating(1500, 349.9, 0.5), []).deviation == DEFAULT_DEVIATION


def test_provisional_flag() -> None:
    assert Rating().provisional
    assert not Rating(deviation=PROVISIONAL_DEVIATION).provisional
    assert Rating(deviation=PROVISIONAL_DEVIATION + 0.01).provisional


@pytest.mark.parametrize(
    "kwargs",
    [{"deviation": 0.0}, {"deviation": -5.0}, {"volatility": 0.0}, {"rating": math.nan}],
)
def test_invalid_rating_rejected(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        Rating(**kwargs)


@pytest.mark.parametrize("score", [-0.5, 1.5, math.nan])
def test_invalid_score_rejected(score: float) -> None:
    with pytest.raises(ValueError):
        rate_game(Rating(), Rating(), score)


def test_invalid_tau_rejected() -> None:
    with pytest.raises(ValueError):
        rate(Rating(), [GameResult(Rating(), 1.0)], tau=0.0)


@pytest.mark.parametrize(
    ("base_ms", "increment_ms", "byoyomi_ms", "periods", "speed"),
    [
        (15_000, 0, 0, 0, "bullet"),  # ultrabullet counts as bullet
        (60_000, 0, 0, 0, "bullet"),
        (120_000, 1_000, 0, 0, "bullet"),  # 120 + 40 = 160 s
        (180_000, 0, 0, 0, "blitz"),  # exactly 180 s starts blitz
        (179_999, 0, 0, 0, "bullet"),
        (300_000, 3_000, 0, 0, "blitz"),  # 300 + 120 = 420 s
        (600_000, 0, 0, 0, "rapid"),
        (900_000, 10_000, 0, 0, "rapid"),  # 900 + 400 = 1300 s
        (1_800_000, 0, 0, 0, "classical"),
        (600_000, 0, 30_000, 1, "rapid"),  # 600 + 25 * 30 = 1350 s
        (0, 0, 10_000, 1, "blitz"),  # byoyomi only: 25 * 10 s = 250 s
        (3 * 86_400_000, 0, 0, 0, "correspondence"),
    ],
)
def test_speed_class(
    base_ms: int, increment_ms: int, byoyomi_ms: int, periods: int, speed: str
) -> None:
    estimate = estimated_game_seconds(base_ms, increment_ms, byoyomi_ms, periods)
    assert estimate == (base_ms + 40 * increment_ms + 25 * byoyomi_ms * periods) / 1000
    assert speed_class(base_ms, increment_ms, byoyomi_ms, periods) == speed


def test_speed_class_rejects_negative_values() -> None:
    with pytest.raises(ValueError):
        speed_class(-1)

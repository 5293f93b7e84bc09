"""Glicko-2 ratings and speed classes (pure math, no I/O).

Implements Mark Glickman's *Example of the Glicko-2 system* (2013) with one
rating period per game, the way lichess and lishogi rate: after every rated game
both players get a new :class:`Rating` computed from that single result.

>>> first, second = rate_game(Rating(), Rating(), 1.0)
>>> round(first.rating), round(second.rating)
(1662, 1338)
>>> first.provisional
True

Ratings live in pools keyed by variant and speed class; :func:`speed_class`
derives the speed class from a time control so the hub (seeks) and the store
(rating rows) agree on which pool a game belongs to.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from server.rules.time_control import (
    Byoyomi,
    Correspondence,
    Fischer,
    TimeControl,
    is_correspondence,
)

__all__ = [
    "DEFAULT_DEVIATION",
    "DEFAULT_RATING",
    "DEFAULT_TAU",
    "DEFAULT_VOLATILITY",
    "PROVISIONAL_DEVIATION",
    "SPEEDS",
    "GameResult",
    "Rating",
    "Speed",
    "estimated_game_seconds",
    "expected_score",
    "rate",
    "rate_game",
    "speed_class",
]

#: Converts between the Glicko scale (1500-centred) and the Glicko-2 scale.
GLICKO2_SCALE = 173.7178

DEFAULT_RATING = 1500.0
DEFAULT_DEVIATION = 350.0
DEFAULT_VOLATILITY = 0.06

#: System constant constraining volatility change. Glickman recommends 0.3–1.2.
#: 0.75 is what lichess uses with the same one-game rating periods: with a
#: single result per period, a small tau would keep volatility almost frozen and
#: make ratings slow to follow real improvement; 0.75 lets a streak of surprising
#: results raise volatility noticeably while one upset barely moves it.
DEFAULT_TAU = 0.75

#: A rating whose deviation exceeds this is provisional (lichess convention,
#: shown as "1500?" in listings).
PROVISIONAL_DEVIATION = 110.0

#: Convergence tolerance of the volatility iteration (step 5 of the paper).
_EPSILON = 1e-6


@dataclass(frozen=True, slots=True)
class Rating:
    """A Glicko-2 rating on the familiar Glicko scale (1500 ± 350)."""

    rating: float = DEFAULT_RATING
    deviation: float = DEFAULT_DEVIATION
    volatility: float = DEFAULT_VOLATILITY

    def __post_init__(self) -> None:
        if not math.isfinite(self.rating):
            raise ValueError(f"rating must be finite, got {self.rating!r}")
        if not (math.isfinite(self.deviation) and self.deviation > 0):
            raise ValueError(f"deviation must be positive, got {self.deviation!r}")
        if not (math.isfinite(self.volatility) and self.volatility > 0):
            raise ValueError(f"volatility must be positive, got {self.volatility!r}")

    @property
    def provisional(self) -> bool:
        """Whether the rating is still too uncertain to be taken at face value."""
        return self.deviation > PROVISIONAL_DEVIATION

    @property
    def _mu(self) -> float:
        return (self.rating - DEFAULT_RATING) / GLICKO2_SCALE

    @property
    def _phi(self) -> float:
        return self.deviation / GLICKO2_SCALE


@dataclass(frozen=True, slots=True)
class GameResult:
    """One game of a rating period: the opponent's rating before it and our score."""

    opponent: Rating
    score: float

    def __post_init__(self) -> None:
        if not 0.0 <= self.score <= 1.0:
            raise ValueError(f"score must be between 0 and 1, got {self.score!r}")


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, opponent_mu: float, opponent_phi: float) -> float:
    return 1.0 / (1.0 + math.exp(-_g(opponent_phi) * (mu - opponent_mu)))


def expected_score(player: Rating, opponent: Rating) -> float:
    """The score *player* is expected to make against *opponent* (0 to 1).

    As in Glicko-2, only the opponent's deviation discounts the expectation.
    """
    return _expected(player._mu, opponent._mu, opponent._phi)


def _new_volatility(sigma: float, phi: float, v: float, delta: float, tau: float) -> float:
    """Step 5 of the paper: solve for the new volatility (Illinois algorithm)."""
    a = math.log(sigma * sigma)
    phi2 = phi * phi

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta * delta - phi2 - v - ex) / (2.0 * (phi2 + v + ex) ** 2) - (x - a) / (
            tau * tau
        )

    low = a
    if delta * delta > phi2 + v:
        high = math.log(delta * delta - phi2 - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        high = a - k * tau
    f_low, f_high = f(low), f(high)
    while abs(high - low) > _EPSILON:
        c = low + (low - high) * f_low / (f_high - f_low)
        f_c = f(c)
        if f_c * f_high <= 0:
            low, f_low = high, f_high
        else:
            f_low /= 2.0
        high, f_high = c, f_c
    return math.exp(low / 2.0)


def rate(player: Rating, results: Sequence[GameResult], *, tau: float = DEFAULT_TAU) -> Rating:
    """The player's rating after one rating period with the given *results*.

    With no results only the deviation grows (step 6 of the paper). The new
    deviation never exceeds :data:`DEFAULT_DEVIATION`: nobody is less certain
    than a newcomer.

    :raises ValueError: if *tau* is not positive.
    """
    if not (math.isfinite(tau) and tau > 0):
        raise ValueError(f"tau must be positive, got {tau!r}")
    mu, phi, sigma = player._mu, player._phi, player.volatility
    if not results:
        phi_star = math.sqrt(phi * phi + sigma * sigma)
        return Rating(player.rating, _capped_deviation(phi_star), sigma)

    inverse_v = 0.0
    improvement = 0.0  # sum of g(phi_j) * (s_j - E_j)
    for result in results:
        opponent = result.opponent
        g = _g(opponent._phi)
        e = _expected(mu, opponent._mu, opponent._phi)
        inverse_v += g * g * e * (1.0 - e)
        improvement += g * (result.score - e)
    v = 1.0 / inverse_v
    delta = v * improvement

    new_sigma = _new_volatility(sigma, phi, v, delta, tau)
    phi_star = math.sqrt(phi * phi + new_sigma * new_sigma)
    new_phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    new_mu = mu + new_phi * new_phi * improvement
    return Rating(
        rating=new_mu * GLICKO2_SCALE + DEFAULT_RATING,
        deviation=_capped_deviation(new_phi),
        volatility=new_sigma,
    )


def _capped_deviation(phi: float) -> float:
    return min(phi * GLICKO2_SCALE, DEFAULT_DEVIATION)


def rate_game(
    first: Rating, second: Rating, first_score: float, *, tau: float = DEFAULT_TAU
) -> tuple[Rating, Rating]:
    """Both players' new ratings after one game (one rating period each).

    *first_score* is 1 for a first-player win, 0 for a loss and 0.5 for a draw.

    :raises ValueError: if *first_score* is outside 0..1 or *tau* is not positive.
    """
    return (
        rate(first, [GameResult(second, first_score)], tau=tau),
        rate(second, [GameResult(first, 1.0 - first_score)], tau=tau),
    )


# --- Rating pools: speed classes ------------------------------------------------------------

Speed = Literal["bullet", "blitz", "rapid", "classical", "correspondence"]
SPEEDS: tuple[Speed, ...] = ("bullet", "blitz", "rapid", "classical", "correspondence")

#: Upper bounds (exclusive, in estimated seconds per player) of the speed classes, as on lichess.
_SPEED_LIMITS: tuple[tuple[int, Speed], ...] = (
    (180, "bullet"),
    (480, "blitz"),
    (1500, "rapid"),
    (86_400, "classical"),
)


def estimated_game_seconds(
    base_ms: int, increment_ms: int = 0, byoyomi_ms: int = 0, periods: int = 0
) -> float:
    """Estimated thinking time of one player for a whole game, in seconds.

    Assumes 40 moves for the increment (lichess) and 25 moves spent in each
    byoyomi period (lishogi).
    """
    if min(base_ms, increment_ms, byoyomi_ms, periods) < 0:
        raise ValueError("time control values must not be negative")
    return (base_ms + 40 * increment_ms + 25 * byoyomi_ms * periods) / 1000.0


def estimated_total_ms(control: TimeControl) -> int:
    """One player's expected thinking time for a game under *control*, in milliseconds
    (correspondence: 40 moves of a full allowance; unlimited: 40 moves of 14 days)."""
    if isinstance(control, Correspondence):
        return 40 * control.per_move_ms
    if not isinstance(control, Fischer | Byoyomi):
        return 40 * Correspondence(14).per_move_ms
    if isinstance(control, Fischer):
        return round(1000 * estimated_game_seconds(control.base_ms, control.increment_ms))
    return round(
        1000 * estimated_game_seconds(control.base_ms, 0, control.period_ms, control.periods)
    )


def speed_of(control: TimeControl) -> Speed:
    """The rating pool of a game's time control (the hub's and the store's): days per move
    and unlimited are ``"correspondence"``."""
    if is_correspondence(control):
        return "correspondence"
    if isinstance(control, Fischer):
        return speed_class(control.base_ms, control.increment_ms)
    assert isinstance(control, Byoyomi)
    return speed_class(control.base_ms, 0, control.period_ms, control.periods)


def speed_class(
    base_ms: int, increment_ms: int = 0, byoyomi_ms: int = 0, periods: int = 0
) -> Speed:
    """The rating pool of a time control.

    >>> speed_class(180_000, 2_000)   # 3+2: 180 s + 40 * 2 s = 260 s
    'blitz'
    >>> speed_class(600_000, 0, 30_000, 1)   # shogi 10 min + 30 s byoyomi
    'rapid'
    """
    seconds = estimated_game_seconds(base_ms, increment_ms, byoyomi_ms, periods)
    for limit, speed in _SPEED_LIMITS:
        if seconds < limit:
            return speed
    return "correspondence"

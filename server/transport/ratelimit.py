"""Per-socket rate limiting of incoming frames: a token bucket plus a flood detector."""

from __future__ import annotations

from enum import Enum


class Verdict(Enum):
    """What to do with one incoming frame."""

    ACCEPT = "accept"
    """Within the limit: process the frame."""
    REJECT = "reject"
    """Over the limit: answer with an error and drop the frame."""
    CLOSE = "close"
    """A sustained flood: close the socket (1008)."""


class TokenBucket:
    """``burst`` tokens, refilled at ``rate_per_s``; every frame costs one token.

    A frame that finds the bucket empty is rejected. Rejections are counted in a second bucket
    of the same size that drains at the same rate: when a client keeps sending after being told
    to slow down — ``burst`` rejected frames more than the refill rate excuses — the verdict is
    :attr:`Verdict.CLOSE`.

    Times are seconds from any monotonic clock, passed in so tests need no sleeping.

    >>> bucket = TokenBucket(rate_per_s=1.0, burst=2, now=0.0)
    >>> [bucket.take(0.0).value for _ in range(3)]
    ['accept', 'accept', 'reject']
    >>> bucket.take(1.0).value
    'accept'
    """

    __slots__ = ("_burst", "_excess", "_rate", "_stamp", "_tokens")

    def __init__(self, rate_per_s: float, burst: int, now: float) -> None:
        if rate_per_s <= 0 or burst < 1:
            raise ValueError("the rate must be positive and the burst at least 1")
        self._rate = rate_per_s
        self._burst = float(burst)
        self._tokens = float(burst)
        self._excess = 0.0
        self._stamp = now

    def take(self, now: float) -> Verdict:
        """Account for one frame arriving at ``now``."""
        elapsed = max(0.0, now - self._stamp)
        self._stamp = now
        refill = elapsed * self._rate
        self._tokens = min(self._burst, self._tokens + refill)
        self._excess = max(0.0, self._excess - refill)
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return Verdict.ACCEPT
        self._excess += 1.0
        if self._excess > self._burst:
            return Verdict.CLOSE
        return Verdict.REJECT

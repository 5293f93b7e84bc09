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


class KeyedBuckets:
    """One :class:`TokenBucket` per key (an address, an account, a token), for limits that must
    hold across connections: a client that reconnects keeps its bucket.

    Memory is bounded: at most ``max_keys`` buckets are kept, the least recently used dropped
    first. A dropped bucket starts full again if its key comes back, so ``max_keys`` must be far
    above the number of keys active within one refill of a bucket (``burst / rate_per_s``
    seconds); an attacker who cycles through more keys than that could only reset buckets, never
    starve another key's.

    >>> limits = KeyedBuckets(rate_per_s=1.0, burst=2, max_keys=2)
    >>> [limits.take("a", 0.0).value for _ in range(3)]
    ['accept', 'accept', 'reject']
    >>> limits.take("b", 0.0).value, limits.take("a", 1.0).value
    ('accept', 'accept')
    >>> limits.take("c", 1.0).value, len(limits)   # "b" was the least recently used
    ('accept', 2)
    """

    __slots__ = ("_buckets", "_burst", "_max_keys", "_rate")

    def __init__(self, rate_per_s: float, burst: int, *, max_keys: int = 100_000) -> None:
        if max_keys < 1:
            raise ValueError("max_keys must be at least 1")
        TokenBucket(rate_per_s, burst, 0.0)  # validates the rate and the burst
        self._rate = rate_per_s
        self._burst = burst
        self._max_keys = max_keys
        self._buckets: dict[str, TokenBucket] = {}

    def __len__(self) -> int:
        return len(self._buckets)

    def take(self, key: str, now: float) -> Verdict:
        """Account for one action of ``key`` at ``now`` (seconds, any monotonic clock)."""
        bucket = self._buckets.pop(key, None)
        if bucket is None:
            bucket = TokenBucket(self._rate, self._burst, now)
            if len(self._buckets) >= self._max_keys:
                del self._buckets[next(iter(self._buckets))]
        self._buckets[key] = bucket  # most recently used last (dicts keep insertion order)
        return bucket.take(now)

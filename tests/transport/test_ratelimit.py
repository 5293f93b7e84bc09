"""The token buckets of server/transport/ratelimit.py, with time passed in (no sleeping)."""

from __future__ import annotations

import doctest

import pytest

from server.transport import ratelimit
from server.transport.ratelimit import KeyedBuckets, TokenBucket, Verdict


def test_docstring_examples() -> None:
    assert doctest.testmod(ratelimit).failed == 0


def test_a_flood_after_rejections_is_closed() -> None:
    bucket = TokenBucket(rate_per_s=1.0, burst=2, now=0.0)
    verdicts = [bucket.take(0.0) for _ in range(6)]
    assert verdicts[:2] == [Verdict.ACCEPT, Verdict.ACCEPT]
    assert verdicts[2:4] == [Verdict.REJECT, Verdict.REJECT]
    assert verdicts[-1] is Verdict.CLOSE


def test_keys_have_buckets_of_their_own() -> None:
    limits = KeyedBuckets(rate_per_s=1.0, burst=1)
    assert limits.take("attacker", 0.0) is Verdict.ACCEPT
    assert limits.take("attacker", 0.0) is Verdict.REJECT
    assert limits.take("honest", 0.0) is Verdict.ACCEPT
    assert limits.take("attacker", 1.0) is Verdict.ACCEPT


def test_the_least_recently_used_key_is_dropped_first() -> None:
    limits = KeyedBuckets(rate_per_s=1.0, burst=1, max_keys=2)
    limits.take("a", 0.0)
    limits.take("b", 0.0)
    limits.take("a", 0.0)  # "a" is now the most recently used
    limits.take("c", 0.0)  # drops "b"
    assert len(limits) == 2
    assert limits.take("a", 0.0) is not Verdict.ACCEPT  # kept: still empty
    assert limits.take("b", 0.0) is Verdict.ACCEPT  # dropped: starts full


@pytest.mark.parametrize(("rate", "burst", "max_keys"), [(0.0, 1, 1), (1.0, 0, 1), (1.0, 1, 0)])
def test_nonsense_limits_are_refused(rate: float, burst: int, max_keys: int) -> None:
    with pytest.raises(ValueError):
        KeyedBuckets(rate, burst, max_keys=max_keys)

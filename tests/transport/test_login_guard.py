"""The login throttle's rules, with injected time (the live doors: test_login_abuse.py)."""

from __future__ import annotations

import doctest

import pytest

from server.transport import login_guard
from server.transport.login_guard import GuardLimits, LoginGuard, Throttled


def test_docstring_examples() -> None:
    assert doctest.testmod(login_guard).failed == 0


def test_the_owner_passes_where_they_logged_in_and_their_typos_count_apart() -> None:
    guard = LoginGuard(GuardLimits(free_per_address=2, free_per_account=2, backoff_max_s=8.0))
    guard.succeeded("Alice", "10.0.0.1")
    for _ in range(5):  # an attacker's guesses from elsewhere
        guard.failed("alice", "10.0.0.9", 0.0)
    with pytest.raises(Throttled) as refused:
        guard.check_login("ALICE", "10.0.0.9", 0.0)
    assert refused.value.retry_after_s == 8  # doubled up to the cap
    with pytest.raises(Throttled):
        guard.check_login("alice", "10.0.0.2", 0.0)  # a new address: the account's counter
    guard.check_login("alice", "10.0.0.1", 0.0)  # the owner's address passes
    assert guard.trusted("alice", "10.0.0.1") and not guard.trusted("bob", "10.0.0.9")
    guard.failed("alice", "10.0.0.1", 0.0)
    guard.failed("alice", "10.0.0.1", 0.0)
    with pytest.raises(Throttled):  # the owner's own typos: the pair's counter
        guard.check_login("alice", "10.0.0.1", 0.5)
    guard.check_login("bob", "10.0.0.1", 0.5)  # the address itself was not counted


def test_an_ipv6_subscriber_network_counts_as_one_address() -> None:
    guard = LoginGuard(GuardLimits(free_per_address=2, free_per_account=100))
    guard.failed("a", "2001:db8:0:1::1", 0.0)
    guard.failed("b", "2001:db8:0:1::ffff", 0.0)
    with pytest.raises(Throttled):
        guard.check_login("c", "2001:db8:0:1:abcd::2", 0.0)
    guard.check_login("c", "2001:db8:0:2::1", 0.0)  # another /64


def test_failures_are_forgotten_after_memory_s_and_the_maps_are_bounded() -> None:
    guard = LoginGuard(GuardLimits(free_per_address=1, memory_s=60.0, max_keys=3))
    guard.failed("x", "10.0.0.1", 0.0)
    with pytest.raises(Throttled):
        guard.check_login("y", "10.0.0.1", 0.5)
    guard.check_login("y", "10.0.0.1", 61.0)
    for n in range(10):
        guard.failed(f"name{n}", f"10.0.1.{n}", 100.0)
    assert len(guard._addresses) == 3 and len(guard._accounts) == 3

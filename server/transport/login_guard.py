"""Throttling of password checks: exponential back-off per account and per address, one hash
per address at once, and a cap on registrations per address.

Every door that checks a password (websocket ``login``/``register``/``password``, ICS login,
the HTTP token endpoints) asks :class:`LoginGuard` first, *before* any argon2 work:

* **Per address** (an IPv4 address, or an IPv6 /64): after ``free_per_address`` failed
  logins, each further attempt from the address is refused until a delay that starts at
  ``backoff_base_s`` and doubles with every further failure, up to ``backoff_max_s``.
* **Per account**: the same after ``free_per_account`` failures on one account name (unknown
  names included, so that names cannot be probed), counting only attempts from addresses that
  have not logged in to that account before.
* **Known addresses**: an address that logged in to an account (the last ``max_keys`` such
  pairs) is not held back by that account's counter nor by its own address counter; its
  failures on that account count on a counter of that pair alone (same rule as per account).
  So an attacker guessing one account from elsewhere cannot lock its owner out of the places
  the owner logged in from, and a crowd of guesses from one address slows only that address.
* A failure is forgotten ``memory_s`` after the last one; a success clears the account's and
  the pair's counters (not the address's: an attacker's own account must not reset the
  counter of the address he guesses other accounts from).
* **One hash per address**: the argon2 of one address's attempts run one at a time (the next
  waits for the one before), so forty connections from one address occupy one slot of the
  hashing pool, and the other players' logins get the others.
* **Trusted first**: when the hashing pool (:class:`HashPool`) is full, an attempt from an
  address that logged in to the account before, or from an address with no failure on record,
  gets the next free slot before the others (:meth:`LoginGuard.trusted`): guesses from many
  addresses queue behind the honest players, not in front of them.
* **Registrations**: at most ``registrations_per_hour`` per address (a token bucket with that
  burst), refused before hashing.

Throttled attempts are answered :attr:`~server.hub.errors.ErrorCode.TOO_MANY_ATTEMPTS`
with the seconds to wait (:class:`Throttled`). Times are seconds of a monotonic clock passed
in (tests inject them).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ipaddress
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from server.config import Settings
from server.transport.ratelimit import KeyedBuckets, Verdict

__all__ = ["Backoff", "GuardLimits", "HashPool", "LoginGuard", "Throttled", "address_key"]


class Throttled(Exception):
    """An attempt refused without checking the password; ``retry_after_s`` says when to retry."""

    def __init__(self, what: str, retry_after_s: float) -> None:
        self.retry_after_s = max(1, math.ceil(retry_after_s))
        super().__init__(f"{what}; try again in {self.retry_after_s} s.")


@dataclass(frozen=True)
class GuardLimits:
    """The limits of :class:`LoginGuard` (settings of ``[auth]``)."""

    free_per_address: int = 10
    free_per_account: int = 5
    backoff_base_s: float = 1.0
    backoff_max_s: float = 300.0
    memory_s: float = 3600.0
    registrations_per_hour: int = 10
    max_keys: int = 100_000

    @classmethod
    def from_settings(cls, settings: Settings) -> GuardLimits:
        return cls(
            settings.login_free_failures_per_address,
            settings.login_free_failures_per_account,
            settings.login_backoff_base_s,
            settings.login_backoff_max_s,
            settings.login_failure_memory_s,
            settings.registrations_per_address_per_hour,
        )


def address_key(address: str) -> str:
    """What an address is counted as: itself, an IPv6 address its /64 (one subscriber's
    network: cycling through its 2**64 addresses must not give fresh counters).

    >>> address_key("203.0.113.7"), address_key("2001:db8:1:2:3:4:5:6")
    ('203.0.113.7', '2001:db8:1:2::/64')
    """
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address[:64]
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, 64), strict=False))
    return str(parsed)


class Backoff:
    """Failures per key with exponential back-off (see the module docstring), in a bounded
    map (least recently failed dropped first).

    >>> backoff = Backoff(free=2, base_s=1.0, max_s=4.0, memory_s=60.0, max_keys=10)
    >>> backoff.failed("k", 0.0); backoff.wait("k", 0.0)
    0.0
    >>> backoff.failed("k", 0.0); backoff.wait("k", 0.0)
    1.0
    >>> backoff.failed("k", 1.0); backoff.failed("k", 1.0); backoff.wait("k", 1.0)
    4.0
    >>> backoff.wait("k", 200.0)
    0.0
    """

    __slots__ = ("_base", "_entries", "_free", "_max", "_max_keys", "_memory")

    def __init__(
        self, *, free: int, base_s: float, max_s: float, memory_s: float, max_keys: int
    ) -> None:
        self._free = max(1, free)
        self._base = base_s
        self._max = max_s
        self._memory = memory_s
        self._max_keys = max(1, max_keys)
        self._entries: dict[str, tuple[int, float, float]] = {}
        """key -> (failures, time of the last one, refused until)."""

    def __len__(self) -> int:
        return len(self._entries)

    def wait(self, key: str, now: float) -> float:
        """Seconds until ``key`` may try again (0: now)."""
        entry = self._entries.get(key)
        if entry is None:
            return 0.0
        _, last, until = entry
        if now - last > self._memory and now >= until:
            del self._entries[key]
            return 0.0
        return max(0.0, until - now)

    def failed(self, key: str, now: float) -> None:
        """Count a failure of ``key`` at ``now``."""
        entry = self._entries.pop(key, None)
        failures = 1 if entry is None or now - entry[1] > self._memory else entry[0] + 1
        until = now
        if failures >= self._free:
            until = now + min(self._max, self._base * 2.0 ** min(64, failures - self._free))
        if entry is None and len(self._entries) >= self._max_keys:
            del self._entries[next(iter(self._entries))]
        self._entries[key] = (failures, now, until)  # most recent last

    def forget(self, key: str) -> None:
        self._entries.pop(key, None)

    def __contains__(self, key: str) -> bool:
        """Whether ``key`` has a failure on record."""
        return key in self._entries


class HashPool:
    """At most ``slots`` password hashes at once. Waiting attempts queue in two lines, each in
    arrival order: the trusted one is served first (see the module docstring).

    >>> async def demo() -> list[str]:
    ...     pool, order = HashPool(1), []
    ...     async def attempt(name: str, trusted: bool) -> None:
    ...         async with pool.slot(trusted):
    ...             order.append(name)
    ...             await asyncio.sleep(0)
    ...     await asyncio.gather(attempt("a", False), attempt("b", False), attempt("c", True))
    ...     return order
    >>> asyncio.run(demo())
    ['a', 'c', 'b']
    """

    def __init__(self, slots: int) -> None:
        self._free = max(1, slots)
        self._lines: tuple[collections.deque[asyncio.Future[None]], ...] = (
            collections.deque(),
            collections.deque(),
        )

    @asynccontextmanager
    async def slot(self, trusted: bool) -> AsyncIterator[None]:
        """Hold a slot (waiting in the trusted line, or the other)."""
        if self._free > 0:
            self._free -= 1
        else:
            line = self._lines[0 if trusted else 1]
            waiter = asyncio.get_running_loop().create_future()
            line.append(waiter)
            try:
                await waiter  # a slot is handed over: _free stays as it is
            except asyncio.CancelledError:
                if waiter.cancelled():
                    with contextlib.suppress(ValueError):
                        line.remove(waiter)
                else:
                    self._release()  # handed over as it was cancelled: pass it on
                raise
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        for line in self._lines:
            while line:
                waiter = line.popleft()
                if not waiter.done():
                    waiter.set_result(None)
                    return
        self._free += 1


class LoginGuard:
    """See the module docstring. One per process, shared by every door."""

    def __init__(self, limits: GuardLimits | None = None) -> None:
        self.limits = limits = limits or GuardLimits()

        def backoff(free: int) -> Backoff:
            return Backoff(
                free=free,
                base_s=limits.backoff_base_s,
                max_s=limits.backoff_max_s,
                memory_s=limits.memory_s,
                max_keys=limits.max_keys,
            )

        self._addresses = backoff(limits.free_per_address)
        self._accounts = backoff(limits.free_per_account)
        self._pairs = backoff(limits.free_per_account)
        self._known: dict[str, None] = {}
        """Pairs ``account address`` that logged in (least recently used first)."""
        self._registrations = KeyedBuckets(
            limits.registrations_per_hour / 3600.0,
            limits.registrations_per_hour,
            max_keys=limits.max_keys,
        )
        self._hashing: dict[str, tuple[asyncio.Lock, int]] = {}
        """Address -> (its lock, how many attempts hold or wait for it)."""

    def check_login(self, account: str, address: str, now: float) -> None:
        """Refuse an attempt on ``account`` from ``address`` that must wait.

        :raises Throttled: with the wait.
        """
        account, address = _account_key(account), address_key(address)
        pair = f"{account} {address}"
        if pair in self._known:
            wait = self._pairs.wait(pair, now)
        else:
            wait = max(self._addresses.wait(address, now), self._accounts.wait(account, now))
        if wait > 0:
            raise Throttled("Too many failed logins", wait)

    def trusted(self, account: str, address: str) -> bool:
        """Whether an attempt goes first to the hashing pool: the address logged in to the
        account before, or has no failure on record."""
        account, address = _account_key(account), address_key(address)
        return f"{account} {address}" in self._known or address not in self._addresses

    def failed(self, account: str, address: str, now: float) -> None:
        account, address = _account_key(account), address_key(address)
        pair = f"{account} {address}"
        if pair in self._known:
            self._pairs.failed(pair, now)
        else:
            self._addresses.failed(address, now)
            self._accounts.failed(account, now)

    def succeeded(self, account: str, address: str) -> None:
        account, address = _account_key(account), address_key(address)
        pair = f"{account} {address}"
        self._known.pop(pair, None)
        self._known[pair] = None
        if len(self._known) > self.limits.max_keys:
            del self._known[next(iter(self._known))]
        self._pairs.forget(pair)
        self._accounts.forget(account)

    def check_registration(self, address: str, now: float) -> None:
        """Count a registration attempt from ``address``.

        :raises Throttled: over ``registrations_per_hour``.
        """
        if self._registrations.take(address_key(address), now) is not Verdict.ACCEPT:
            per_hour = self.limits.registrations_per_hour
            raise Throttled(
                f"Too many registrations from your address (at most {per_hour} an hour)",
                3600.0 / per_hour,
            )

    @asynccontextmanager
    async def one_at_a_time(self, address: str) -> AsyncIterator[None]:
        """Hold the address's turn to hash (see the module docstring)."""
        key = address_key(address)
        lock, users = self._hashing.get(key) or (asyncio.Lock(), 0)
        self._hashing[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._hashing[key]
            if users == 1:
                del self._hashing[key]
            else:
                self._hashing[key] = (lock, users - 1)


def _account_key(name: str) -> str:
    """Names are compared without letter case (as the store does); long ones are cut (they
    match no account, and must not grow the maps)."""
    return name.lower()[:64]

"""Connections counted per client address and in total, when they are accepted.

Every door (the public port: websockets and the HTTP API together; the ICS port) asks
:meth:`Admission.admit` for each connection it accepts, before reading anything from it, with
the connection's client address (:func:`server.transport.addresses.client_address`) and that
door's per-address limit; one :class:`Admission` per process also holds the total under
``max_connections`` (:func:`connection_cap`: below the process's open-file limit, so that the
store's and Redis's connections, the engine workers' requests and a health check still find a
descriptor). A connection counts until its socket is closed, by whichever library ended up
owning it: the table keeps the socket and finds out lazily (``fileno() == -1``) when an address
reaches its limit or the total its cap, so that an open connection costs the table nothing
after its admission — no hook in websockets' or aiohttp's protocols, nothing on the move path.

A refused connection costs only its accept: :class:`Refusals` writes a short HTTP answer
(``{"error": …}``, lichess's shape, which the web client and the bots read), half-closes, reads
and drops what the client still sends (so that its answer is not lost to a reset) and closes
within :data:`LINGER_S`, keeping at most :data:`MAX_LINGERING` such sockets at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import json
import logging
import resource
import socket
import time
from collections.abc import Callable

from server.transport.addresses import Descriptor

__all__ = [
    "LINGER_S",
    "MAX_LINGERING",
    "Admission",
    "Admit",
    "Door",
    "Refusals",
    "connection_cap",
    "http_refusal",
]

logger = logging.getLogger(__name__)

LINGER_S = 1.0
"""How long a refused connection is kept half-closed to read what its client still sends."""
MAX_LINGERING = 256
"""Refused connections kept lingering at once at most; beyond, they are closed at once."""
SWEEP_EVERY_S = 0.1
"""At the cap, the whole table is checked for closed sockets at most this often."""


class Door(enum.StrEnum):
    """Where a connection came in: each door has its own per-address limit."""

    PUBLIC = "public"
    ICS = "ics"


class Admit(enum.Enum):
    ADMIT = "admit"
    RESERVE = "reserve"
    """Over the total, within the reserve: only a health check may be served."""
    PER_ADDRESS = "per_address"
    FULL = "full"


def connection_cap(setting: int) -> int:
    """The total of open client connections allowed: ``max_connections``, or 90 % of the
    process's open-file limit if that is lower (each connection is a descriptor; the rest is
    the headroom for the store, Redis, the engine workers' requests and the log)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return setting
    return max(16, min(setting, soft - max(64, soft // 10)))


class Admission:
    """The open client connections of one process (module docstring).

    :param max_total: the cap (:func:`connection_cap`).
    :param reserve: connections accepted above the cap for a health check only.
    """

    def __init__(
        self, max_total: int, *, reserve: int = 0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.max_total = max_total
        self._reserve = reserve
        self._clock = clock
        # Two maps, keyed by a string ("door address"), rather than one of (socket, key) pairs:
        # a pair, or a key holding the Door member, would be one more object per connection for
        # the garbage collector to track (tests/transport/test_transport_memory.py).
        self._open: dict[int, Descriptor] = {}
        self._key_of: dict[int, str] = {}
        self._by_key: dict[str, set[int]] = {}
        self._swept_at = -SWEEP_EVERY_S

    @property
    def total(self) -> int:
        """Connections counted (some may have closed since the last check)."""
        return len(self._open)

    def count(self, door: Door, address: str) -> int:
        """Open connections of ``address`` on ``door`` (closed ones dropped first)."""
        key = f"{door.value} {address}"
        fds = self._by_key.get(key)
        if not fds:
            return 0
        self._prune(key, fds)
        return len(fds)

    def admit(self, sock: Descriptor, door: Door, address: str, per_address: int) -> Admit:
        """Count ``sock`` for ``address`` on ``door``, unless that address already has
        ``per_address`` open there or the process is at its cap (then nothing is counted)."""
        fd = sock.fileno()
        self._forget(fd)  # a closed connection's descriptor, reused
        key = f"{door.value} {address}"
        fds = self._by_key.get(key)
        if fds is not None and len(fds) >= per_address:
            self._prune(key, fds)
            if len(fds) >= per_address:
                return Admit.PER_ADDRESS
        verdict = Admit.ADMIT
        if len(self._open) >= self.max_total:
            self._sweep()
            if len(self._open) >= self.max_total + self._reserve:
                return Admit.FULL
            if len(self._open) >= self.max_total:
                verdict = Admit.RESERVE
        self._open[fd] = sock
        self._key_of[fd] = key
        if fds is None:
            self._by_key[key] = fds = set()
        fds.add(fd)
        return verdict

    def release(self, sock: Descriptor) -> None:
        """``sock`` is closing: it no longer counts (a door that knows when it closes says so;
        the others are found out lazily)."""
        fd = sock.fileno()
        if self._open.get(fd) is sock:
            self._forget(fd)

    def _forget(self, fd: int) -> None:
        if self._open.pop(fd, None) is None:
            return
        key = self._key_of.pop(fd)
        fds = self._by_key.get(key)
        if fds is not None:
            fds.discard(fd)
            if not fds:
                del self._by_key[key]

    def _prune(self, key: str, fds: set[int]) -> None:
        for fd in [fd for fd in fds if self._open[fd].fileno() != fd]:
            self._forget(fd)

    def _sweep(self) -> None:
        now = self._clock()
        if now - self._swept_at < SWEEP_EVERY_S:
            return
        self._swept_at = now
        for fd in [fd for fd, sock in self._open.items() if sock.fileno() != fd]:
            self._forget(fd)


_REASONS = {408: "Request Timeout", 429: "Too Many Requests", 503: "Service Unavailable"}


def http_refusal(status: int, message: str, retry_after_s: int = 10) -> bytes:
    """A complete HTTP/1.1 answer ``{"error": message}`` that closes the connection.

    >>> http_refusal(429, "Too many.").split(b"\\r\\n")[0]
    b'HTTP/1.1 429 Too Many Requests'
    """
    body = json.dumps({"error": message}).encode()
    head = (
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"Retry-After: {retry_after_s}\r\n"
        "Connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class Refusals:
    """Refused connections of one listener, answered and closed (module docstring)."""

    def __init__(self) -> None:
        self._lingering: dict[int, tuple[socket.socket, asyncio.TimerHandle]] = {}
        self.refused = 0
        """Connections refused so far (for logs, tests and benches)."""

    @property
    def lingering(self) -> int:
        return len(self._lingering)

    def refuse(self, sock: socket.socket, answer: bytes) -> None:
        """Answer ``sock`` with ``answer`` and close it (after :data:`LINGER_S` at most)."""
        self.refused += 1
        _drain(sock)
        try:
            sock.send(answer)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            sock.close()
            return
        if len(self._lingering) >= MAX_LINGERING:
            sock.close()
            return
        loop = asyncio.get_running_loop()
        fd = sock.fileno()
        timer = loop.call_later(LINGER_S, self._close, fd)
        self._lingering[fd] = (sock, timer)
        loop.add_reader(fd, self._readable, fd)

    def _readable(self, fd: int) -> None:
        entry = self._lingering.get(fd)
        if entry is not None and not _drain(entry[0]):
            self._close(fd)

    def _close(self, fd: int) -> None:
        entry = self._lingering.pop(fd, None)
        if entry is None:
            return
        sock, timer = entry
        timer.cancel()
        with contextlib.suppress(ValueError, OSError):
            asyncio.get_running_loop().remove_reader(fd)
        sock.close()

    def close(self) -> None:
        for fd in list(self._lingering):
            self._close(fd)


def _drain(sock: socket.socket) -> bool:
    """Read and drop what ``sock`` has received; False once the peer closed (or reset)."""
    try:
        for _ in range(16):
            if not sock.recv(65536):
                return False
    except (BlockingIOError, InterruptedError):
        return True
    except OSError:
        return False
    return True

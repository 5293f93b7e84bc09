"""The public address: one listening socket shared by the websocket server and the HTTP API.

Both are full HTTP/1.1 servers of their own library: websockets 17 (the websocket endpoint and
the plain pages it answers during the handshake, :mod:`server.transport.http`) and aiohttp (the
Bot API, its NDJSON streams and the engine workers' endpoints, :mod:`server.transport.http_api`).
:class:`PublicListener` accepts each connection itself, waits until the head of its first
request (request line and headers) has come, looking at it without consuming anything
(``MSG_PEEK``), and hands the socket, untouched, to one of them (``loop.connect_accepted_socket``
with that library's protocol factory): the library then reads the request from the first byte
and does all the HTTP parsing. Only the request's method and its target's path are looked at
here, to choose: websockets' server speaks only GET (another method got no answer at all, the
connection closed without a status line), so every other method goes to aiohttp, which answers
each path with its status (404, or 405 with ``Allow``: :mod:`server.transport.http_api.pages`).

A websocket connection therefore costs one ``recv(MSG_PEEK)`` more when it opens and nothing at
all afterwards: its frames go between the socket and websockets' protocol as before, with no hop
through another process or another parser.

Before anything is read the connection is counted for its client address
(:mod:`server.transport.admission`; from a trusted balancer, the address of the PROXY header it
sends first, which is the only thing this listener consumes: :mod:`server.transport.addresses`):
an address over its limit, or a process at its cap, gets a short 429/503 answer at once. A
request head that has not fully come within ``header_timeout_s`` is dropped: a client trickling
its headers holds a descriptor that long at most, and never an opening slot. A head longer than
:data:`MAX_HEAD` is handed over as it is (to websockets, which refuses it, unless its path is the
HTTP API's).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from server.transport.addresses import (
    MAX_PROXY_HEADER,
    ProxyHeaderError,
    TrustedProxies,
    parse_proxy_header,
    peer_host,
    remember_forwarded,
)
from server.transport.admission import Admission, Admit, Door, Refusals, http_refusal

__all__ = [
    "ACCEPTS_PER_TURN",
    "MAX_HEAD",
    "MAX_OPENING",
    "OPENING_HOLD_S",
    "ListenerLimits",
    "ProtocolFactory",
    "PublicListener",
    "request_method",
    "request_path",
]

logger = logging.getLogger(__name__)

ProtocolFactory = Callable[[], asyncio.BaseProtocol]
Chooser = Callable[[str, str], ProtocolFactory]
"""The protocol factory of the library that answers a connection whose first request is this
method (``""``: no well-formed request line) and path."""

MAX_HEAD = 16384
"""The most of a first request's head peeked at (its line and headers); a longer head is handed
over as soon as this much has come."""
PEEK_RETRY_S = 0.005
"""A first packet without a whole request head (rare: clients write the head at once) is
peeked at again after this long, then twice as long each time up to :data:`PEEK_RETRY_MAX_S`
(a level-triggered reader would otherwise fire in a loop while the bytes wait unread, and a
thousand clients trickling their headers would cost a peek each every few milliseconds)."""
PEEK_RETRY_MAX_S = 0.5
ACCEPTS_PER_TURN = 16
"""Connections accepted in one turn of the event loop at most. ``sock_accept`` returns at once
while the kernel's queue holds connections, so without a bound the accepting task drained it in
one go: in a reconnect storm hundreds of connections were accepted, then their handshakes and
logins all handled, in a few turns of 100 ms or more, and the running games' moves that
arrived meanwhile waited for them (docs/benchmarks.md, "Reconnect storm"). Sixteen a turn still
admit over a thousand logins a second on this machine, in turns short enough for a move."""
MAX_OPENING = 32
"""Websocket connections opening at once at most: handed over to websockets and not yet logged
in (nor older than :data:`OPENING_HOLD_S`). Further websocket connections, once their request
head has come, wait in a queue of the listener's, unread (the kernel holds their bytes), until
a slot frees; the queue serves client addresses in turn, so one address's many connections do
not come before another's one. However starved of CPU the hub is, a turn of its loop then holds
the handshakes and logins of at most this many connections besides the games' moves.
Measured on the idle machine with the 10,000-login storm (docs/benchmarks.md, "Reconnect
storm"): 64 let the running games' moves reach a p99 of 59 ms and the logins queue 3.2 s (connect → ``hello``
p50); 32 gave 35–49 ms and 0.5–1.1 s, and the storm ended sooner (fewer handshakes competing,
each done faster); 16 no better (42 ms, 4.0 s). Other connections (a health check, the HTTP
API) are never queued: a health check that waited behind a storm's logins got the hub marked
down by HAProxy, which then cut all its connections."""
OPENING_HOLD_S = 1.0
"""A websocket that has not logged in this long after it was handed over no longer counts as
opening: slow clients cannot hold the admission shut (each costs a slot for this long at most).
One that has not even asked to log in ``silent_hold_s`` after its handshake lets its slot go
sooner (``TransportServer.opened`` calls :meth:`PublicListener.admitted`): many addresses'
silent upgrades would otherwise each hold a slot this long."""
BACKLOG = 4096
"""Connections the kernel queues before the hub accepts them (capped by ``net.core.somaxconn``).
With asyncio's default of 100, a reconnect storm overflowed the queue: the dropped SYNs are
retried by the client's kernel after 1, 3, 7 s, which made logins take seconds while the hub
sat mostly idle (docs/benchmarks.md, "Reconnect storm")."""


@dataclass(frozen=True)
class ListenerLimits:
    """The listener's limits (the ``[connections]`` settings; the defaults are theirs)."""

    per_address: int = 64
    """Open connections per client address (websockets and HTTP together)."""
    header_timeout_s: float = 10.0
    """The first request's head must have come within this (also the most a connection waits
    in the websockets' queue)."""
    max_queued: int = 1024
    max_queued_per_address: int = 16
    max_opening: int = MAX_OPENING
    health_path: str = "/healthz"
    """The one path served to a connection accepted over the cap (within the reserve)."""


_OPENING_FULL = "Too many connections opening; try again shortly."


def request_path(peeked: bytes) -> str | None:
    """The path of the request line at the start of ``peeked``, or ``None`` while the line is
    not complete. A line that is not ``METHOD TARGET VERSION`` gives ``""``.

    >>> request_path(b"GET /api/account?x=1 HTTP/1.1\\r\\nHost: a\\r\\n"), request_path(b"GET /")
    ('/api/account', None)
    """
    end = peeked.find(b"\n")
    if end < 0:
        return None
    parts = peeked[:end].split(b" ")
    if len(parts) != 3:
        return ""
    return parts[1].split(b"?", 1)[0].decode("latin-1")


def request_method(peeked: bytes) -> str:
    """The method of the complete request line at the start of ``peeked`` (``""`` if it is not
    ``METHOD TARGET VERSION``).

    >>> request_method(b"POST /foo HTTP/1.1\\r\\n"), request_method(b"nonsense\\r\\n")
    ('POST', '')
    """
    parts = peeked[: peeked.find(b"\n")].split(b" ")
    return parts[0].decode("latin-1") if len(parts) == 3 else ""


def head_complete(peeked: bytes) -> bool:
    """Whether ``peeked`` holds a whole request head (up to the empty line), or as much of
    one as is looked at."""
    return len(peeked) >= MAX_HEAD or b"\r\n\r\n" in peeked or b"\n\n" in peeked


@dataclass(slots=True)
class _Queued:
    conn: socket.socket
    path: str
    since: float


class PublicListener:
    """Listens on ``host:port`` and dispatches each accepted connection (module docstring)."""

    def __init__(
        self,
        host: str,
        port: int,
        choose: Chooser,
        *,
        holds: Callable[[str], bool] = lambda path: False,
        max_opening: int | None = None,
        limits: ListenerLimits | None = None,
        admission: Admission | None = None,
        trusted: TrustedProxies | None = None,
    ) -> None:
        """``holds(path)``: whether a connection for ``path`` keeps its admission slot after it
        is handed over, until :meth:`admitted` (a websocket that has yet to log in); the others
        let it go at once. ``admission``: the process's count of connections (by default one
        of this listener's own, with no total cap)."""
        self._host = host
        self._port = port
        self._choose = choose
        self._holds = holds
        limits = limits or ListenerLimits()
        if max_opening is not None:
            limits = ListenerLimits(**{**limits.__dict__, "max_opening": max_opening})
        self.limits = limits
        self.admission = admission or Admission(1 << 30)
        self.trusted = trusted or TrustedProxies("")
        self.refusals = Refusals()
        self._opening: dict[int, asyncio.TimerHandle] = {}
        """The connections opening, by file descriptor: each one's :data:`OPENING_HOLD_S`."""
        self._queued: dict[str, deque[_Queued]] = {}
        """Websockets waiting for a slot (their request head has come), per client address in
        the order the addresses came, each address's oldest first."""
        self._queued_count = 0
        self._sock: socket.socket | None = None
        self._accepting: asyncio.Task[None] | None = None
        self._waiting: set[_FirstHead] = set()
        self._owns_socket = True
        self._bound_port: int | None = None

    @property
    def sock(self) -> socket.socket:
        assert self._sock is not None, "the listener is not started"
        return self._sock

    @property
    def port(self) -> int:
        """The port bound (still known once closed)."""
        assert self._bound_port is not None, "the listener is not bound"
        return self._bound_port

    @property
    def opening(self) -> int:
        """Connections opening (:data:`MAX_OPENING`)."""
        return len(self._opening)

    @property
    def queued(self) -> int:
        """Websocket connections waiting for a slot (:data:`MAX_OPENING`)."""
        return self._queued_count

    @property
    def waiting(self) -> int:
        """Connections accepted whose first request head has not come yet."""
        return len(self._waiting)

    def admitted(self, fd: int) -> None:
        """The connection on file descriptor ``fd`` logged in, did not ask to in time, or
        waited too long (:data:`OPENING_HOLD_S`): it no longer counts as opening (nothing if it
        did not), and queued ones are handed over, one client address after the other."""
        hold = self._opening.pop(fd, None)
        if hold is None:
            return
        hold.cancel()
        self._open_queued()

    def _open_queued(self) -> None:
        loop = asyncio.get_running_loop()
        stale = loop.time() - self.limits.header_timeout_s
        while self._queued and len(self._opening) < self.limits.max_opening:
            address = next(iter(self._queued))
            line = self._queued.pop(address)
            waiting = line.popleft()
            if line:
                self._queued[address] = line  # to the back: the next address goes first
            self._queued_count -= 1
            if waiting.conn.fileno() < 0:  # closed meanwhile (by close())
                continue
            if waiting.since < stale:  # its client has given up by now
                waiting.conn.close()
                continue
            self._open(waiting.conn, waiting.path)

    def bind(self) -> socket.socket:
        """Bind and listen (port 0 picks a free one); connections wait in the backlog until
        :meth:`start`."""
        infos = socket.getaddrinfo(
            self._host or None, self._port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
            sock.listen(BACKLOG)
            sock.setblocking(False)
        except OSError:
            sock.close()
            raise
        self._sock = sock
        self._bound_port = int(sock.getsockname()[1])
        return sock

    def share(self) -> socket.socket:
        """The bound socket, for the websocket server, which then closes it (it must know the
        public socket as its own: its port, buffer sizes, shutdown)."""
        sock = self.sock if self._sock is not None else self.bind()
        self._owns_socket = False
        return sock

    def start(self) -> None:
        if self._sock is None:
            self.bind()
        self._accepting = asyncio.get_running_loop().create_task(self._accept(), name="accept")

    async def _accept(self) -> None:
        loop = asyncio.get_running_loop()
        listening = self.sock
        accepted = 0
        while True:
            if accepted >= ACCEPTS_PER_TURN:
                # Let the turn's other work run (a move waiting to be read, a commit's ack)
                # before the next batch: the queued connections wait in the kernel.
                await asyncio.sleep(0)
                accepted = 0
            try:
                conn, peer_address = await loop.sock_accept(listening)
            except OSError as error:  # e.g. out of file descriptors: keep listening
                logger.warning("accept failed: %s", error)
                await asyncio.sleep(0.1)
                continue
            accepted += 1
            conn.setblocking(False)
            # As asyncio's own servers do: small frames (a move, its ack) go out at once, not
            # held back by Nagle's algorithm until the previous one is acknowledged.
            with contextlib.suppress(OSError):
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            peer = str(peer_address[0]) if isinstance(peer_address, tuple) else peer_host(conn)
            waiting = _FirstHead(self, conn, loop, peer, proxied=self.trusted.trusts(peer))
            if not waiting.proxied and not self._admit(waiting, peer):
                continue
            self._waiting.add(waiting)
            waiting.wait()

    def _admit(self, waiting: _FirstHead, address: str) -> bool:
        """Count the connection for ``address``; refuse it (and False) over a limit."""
        verdict = self.admission.admit(waiting.conn, Door.PUBLIC, address, self.limits.per_address)
        if verdict is Admit.PER_ADDRESS:
            self._refuse(
                waiting,
                429,
                f"Too many connections from your address (at most {self.limits.per_address}).",
            )
            return False
        if verdict is Admit.FULL:
            self._refuse(waiting, 503, "The server is full; try again shortly.")
            return False
        waiting.reserve = verdict is Admit.RESERVE
        return True

    def _refuse(self, waiting: _FirstHead, status: int, message: str) -> None:
        waiting.stop()
        self._waiting.discard(waiting)
        self.refusals.refuse(waiting.conn, http_refusal(status, message))

    def _forwarded(self, waiting: _FirstHead, address: str | None) -> bool:
        """A trusted balancer's connection named its client (``None``: none, the balancer's
        own): count it for that address."""
        if address is not None:
            remember_forwarded(waiting.conn, address)
        return self._admit(waiting, address or waiting.peer)

    def _hand_over(self, waiting: _FirstHead, method: str, path: str | None) -> None:
        """Give the connection to the library that answers ``method path`` (``None``: no
        request line within the limits; websockets refuses it). Only a GET can open a
        websocket: another method on its path is never queued as one."""
        self._waiting.discard(waiting)
        conn = waiting.conn
        if waiting.reserve and path != self.limits.health_path:
            self.refusals.refuse(conn, http_refusal(503, "The server is full; try again shortly."))
            return
        if method != "GET" or not self._holds(path or ""):
            self._connect(conn, method, path)
            return
        if len(self._opening) < self.limits.max_opening and not self._queued:
            self._open(conn, path or "")
            return
        line = self._queued.get(waiting.address)
        queued_here = 0 if line is None else len(line)
        if queued_here >= self.limits.max_queued_per_address or (
            self._queued_count >= self.limits.max_queued and not self._evict(queued_here)
        ):
            self.refusals.refuse(conn, http_refusal(503, _OPENING_FULL))
            return
        if line is None:
            self._queued[waiting.address] = line = deque()
        line.append(_Queued(conn, path or "", asyncio.get_running_loop().time()))
        self._queued_count += 1
        self._open_queued()

    def _evict(self, queued_here: int) -> bool:
        """The queue is full: make room for a connection of an address with ``queued_here``
        waiting, by refusing the oldest of the longest line if that is longer (many addresses'
        connections, each within its share, cannot keep out an address with fewer); False if
        no line is longer."""
        longest = max(self._queued, key=lambda address: len(self._queued[address]))
        line = self._queued[longest]
        if len(line) <= queued_here + 1:
            return False
        evicted = line.popleft()
        self._queued_count -= 1
        if evicted.conn.fileno() >= 0:
            self.refusals.refuse(evicted.conn, http_refusal(503, _OPENING_FULL))
        return True

    def _open(self, conn: socket.socket, path: str) -> None:
        """Hand over a websocket, which holds a slot until it logs in (or for
        :data:`OPENING_HOLD_S`)."""
        fd = conn.fileno()
        stale = self._opening.pop(fd, None)  # a closed connection's descriptor, reused
        if stale is not None:
            stale.cancel()
        loop = asyncio.get_running_loop()
        self._opening[fd] = loop.call_later(OPENING_HOLD_S, self.admitted, fd)
        self._connect(conn, "GET", path)

    def _connect(self, conn: socket.socket, method: str, path: str | None) -> None:
        factory = self._choose(method, path or "")
        loop = asyncio.get_running_loop()
        task = loop.create_task(loop.connect_accepted_socket(factory, conn))
        task.add_done_callback(lambda done: _log_failure(done, conn))

    def _drop(self, waiting: _FirstHead) -> None:
        self._waiting.discard(waiting)
        waiting.conn.close()

    async def close(self) -> None:
        """Stop accepting; connections not yet handed over are closed."""
        if self._accepting is not None:
            self._accepting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._accepting
            self._accepting = None
        for waiting in list(self._waiting):
            waiting.stop()
            waiting.conn.close()
        self._waiting.clear()
        for hold in self._opening.values():
            hold.cancel()
        self._opening.clear()
        for line in self._queued.values():
            for queued in line:
                queued.conn.close()
        self._queued.clear()
        self._queued_count = 0
        self.refusals.close()
        if self._sock is not None and self._owns_socket:
            self._sock.close()
        self._sock = None


def _log_failure(task: asyncio.Task[object], conn: socket.socket) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.warning("handing over a connection failed: %s", task.exception())
        conn.close()


class _FirstHead:
    """Waits until a connection's first request head has arrived, without reading it (only a
    trusted balancer's PROXY header is read, first)."""

    __slots__ = (
        "_delay",
        "_fd",
        "_listener",
        "_loop",
        "_retry",
        "_timeout",
        "address",
        "conn",
        "peer",
        "proxied",
        "reserve",
    )

    def __init__(
        self,
        listener: PublicListener,
        conn: socket.socket,
        loop: asyncio.AbstractEventLoop,
        peer: str,
        *,
        proxied: bool,
    ) -> None:
        self._listener = listener
        self.conn = conn
        self.peer = peer
        self.address = peer
        """The client address (the PROXY header's, once read)."""
        self.proxied = proxied
        """A PROXY header may come first (the peer is a trusted balancer), not read yet."""
        self.reserve = False
        """Accepted over the cap: only a health check is served."""
        self._loop = loop
        self._fd = conn.fileno()
        self._retry: asyncio.TimerHandle | None = None
        self._delay = PEEK_RETRY_S
        self._timeout = loop.call_later(listener.limits.header_timeout_s, self._timed_out)

    def wait(self) -> None:
        self._retry = None
        self._loop.add_reader(self._fd, self._readable)

    def stop(self) -> None:
        """Stop waiting (the connection is handed over, dropped or the listener closes)."""
        self._timeout.cancel()
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        with contextlib.suppress(ValueError, OSError):
            self._loop.remove_reader(self._fd)

    def _timed_out(self) -> None:
        self.stop()
        self._listener._drop(self)

    def _readable(self) -> None:
        try:
            peeked = self.conn.recv(MAX_HEAD, socket.MSG_PEEK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            peeked = b""
        if not peeked:  # closed (or reset) before saying anything
            self.stop()
            self._listener._drop(self)
            return
        if self.proxied and not self._read_proxy_header(peeked):
            return
        if not head_complete(peeked):
            self._again()
            return
        self.stop()
        self._listener._hand_over(self, request_method(peeked), request_path(peeked))

    def _read_proxy_header(self, peeked: bytes) -> bool:
        """Read the PROXY header at the start of ``peeked`` (nothing if there is none: the
        balancer's own request); False while waiting for more of it, or once refused."""
        try:
            header = parse_proxy_header(peeked[:MAX_PROXY_HEADER])
        except ProxyHeaderError:
            header = None
            self.proxied = False
        if self.proxied:
            if header is None:
                self._again()
                return False
            try:
                self.conn.recv(header.length)  # all there: peeked
            except OSError:
                return True  # the next peek finds it closed
            self.proxied = False
            self.address = header.address or self.peer
        if not self._listener._forwarded(self, None if self.address == self.peer else self.address):
            return False
        if header is not None:
            self._again(at_once=True)  # the request head is peeked afresh
            return False
        return True

    def _again(self, at_once: bool = False) -> None:
        """Peek again shortly (the unread bytes keep the socket readable)."""
        self._loop.remove_reader(self._fd)
        delay = 0.0 if at_once else self._delay
        self._delay = min(self._delay * 2, PEEK_RETRY_MAX_S)
        self._retry = self._loop.call_later(delay, self.wait)

"""The public address: one listening socket shared by the websocket server and the HTTP API.

Both are full HTTP/1.1 servers of their own library: websockets 17 (the websocket endpoint and
the plain pages it answers during the handshake, :mod:`server.transport.http`) and aiohttp (the
Bot API, its NDJSON streams and the engine workers' endpoints, :mod:`server.transport.http_api`).
:class:`PublicListener` accepts each connection itself, looks at the request line of its first
request without consuming anything (``MSG_PEEK``) and hands the socket, untouched, to one of them
(``loop.connect_accepted_socket`` with that library's protocol factory): the library then reads
the request from the first byte and does all the HTTP parsing. Only the request target's path is
looked at here, to choose.

A websocket connection therefore costs one ``recv(MSG_PEEK)`` more when it opens and nothing at
all afterwards: its frames go between the socket and websockets' protocol as before, with no hop
through another process or another parser.

A connection whose first request line does not come within :data:`FIRST_LINE_TIMEOUT_S`, or is
longer than :data:`MAX_FIRST_LINE`, is handed to websockets, which refuses it as it always did.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import socket
from collections.abc import Callable

__all__ = [
    "ACCEPTS_PER_TURN",
    "FIRST_LINE_TIMEOUT_S",
    "MAX_FIRST_LINE",
    "MAX_OPENING",
    "OPENING_HOLD_S",
    "ProtocolFactory",
    "PublicListener",
    "request_path",
]

logger = logging.getLogger(__name__)

ProtocolFactory = Callable[[], asyncio.BaseProtocol]
Chooser = Callable[[str], ProtocolFactory]
"""The protocol factory of the library that answers a connection whose first request is for
this path."""

FIRST_LINE_TIMEOUT_S = 10.0
MAX_FIRST_LINE = 8192
PEEK_RETRY_S = 0.005
"""A first packet without a whole request line (rare: clients write the request at once) is
peeked at again after this long; a level-triggered reader would otherwise fire in a loop while
the bytes wait unread."""
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
line has come, wait in a queue of the listener's, unread (the kernel holds their bytes), until
a slot frees. However starved of CPU the hub is, a turn of its loop then holds the handshakes
and logins of at most this many connections besides the games' moves (issue 25). Measured on
the idle machine with the 10,000-login storm (docs/benchmarks.md): 64 let the running games'
moves reach a p99 of 59 ms and the logins queue 3.2 s (connect → ``hello`` p50); 32 gave 35–49
ms and 0.5–1.1 s, and the storm ended sooner (fewer handshakes competing, each done faster);
16 no better (42 ms, 4.0 s). Other connections (a health check, the HTTP API) are never queued:
a health check that waited behind a storm's logins got the hub marked down by HAProxy, which
then cut all its connections."""
OPENING_HOLD_S = 1.0
"""A websocket that has not logged in this long after it was handed over no longer counts as
opening: silent or slow clients cannot hold the admission shut (each costs a slot for this long
at most)."""
BACKLOG = 4096
"""Connections the kernel queues before the hub accepts them (capped by ``net.core.somaxconn``).
With asyncio's default of 100, a reconnect storm overflowed the queue: the dropped SYNs are
retried by the client's kernel after 1, 3, 7 s, which made logins take seconds while the hub
sat mostly idle (docs/benchmarks.md, "Reconnect storm")."""


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


class PublicListener:
    """Listens on ``host:port`` and dispatches each accepted connection (module docstring)."""

    def __init__(
        self,
        host: str,
        port: int,
        choose: Chooser,
        *,
        holds: Callable[[str], bool] = lambda path: False,
        max_opening: int = MAX_OPENING,
    ) -> None:
        """``holds(path)``: whether a connection for ``path`` keeps its admission slot after it
        is handed over, until :meth:`admitted` (a websocket that has yet to log in); the others
        let it go at once."""
        self._host = host
        self._port = port
        self._choose = choose
        self._holds = holds
        self._max_opening = max_opening
        self._opening: dict[int, asyncio.TimerHandle] = {}
        """The connections opening, by file descriptor: each one's :data:`OPENING_HOLD_S`."""
        self._queued: collections.deque[tuple[socket.socket, str]] = collections.deque()
        """Websockets waiting for a slot (their request line has come), oldest first."""
        self._sock: socket.socket | None = None
        self._accepting: asyncio.Task[None] | None = None
        self._waiting: set[_FirstLine] = set()
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
        return len(self._queued)

    def admitted(self, fd: int) -> None:
        """The connection on file descriptor ``fd`` logged in or waited too long: it no longer
        counts as opening (nothing if it did not), and the oldest queued one is handed over."""
        hold = self._opening.pop(fd, None)
        if hold is None:
            return
        hold.cancel()
        while self._queued and len(self._opening) < self._max_opening:
            conn, path = self._queued.popleft()
            if conn.fileno() >= 0:  # not closed meanwhile (by close())
                self._open(conn, path)

    @property
    def waiting(self) -> int:
        """Connections accepted whose first request line has not come yet."""
        return len(self._waiting)

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
                conn, _ = await loop.sock_accept(listening)
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
            waiting = _FirstLine(self, conn, loop)
            self._waiting.add(waiting)
            waiting.wait()

    def _hand_over(self, waiting: _FirstLine, path: str | None) -> None:
        """Give the connection to the library that answers ``path`` (``None``: no request
        line within the limits; websockets refuses it)."""
        self._waiting.discard(waiting)
        conn = waiting.conn
        if self._holds(path or ""):
            if len(self._opening) >= self._max_opening:
                self._queued.append((conn, path or ""))
                return
            self._open(conn, path or "")
            return
        self._connect(conn, path)

    def _open(self, conn: socket.socket, path: str) -> None:
        """Hand over a websocket, which holds a slot until it logs in (or for
        :data:`OPENING_HOLD_S`)."""
        fd = conn.fileno()
        stale = self._opening.pop(fd, None)  # a closed connection's descriptor, reused
        if stale is not None:
            stale.cancel()
        loop = asyncio.get_running_loop()
        self._opening[fd] = loop.call_later(OPENING_HOLD_S, self.admitted, fd)
        self._connect(conn, path)

    def _connect(self, conn: socket.socket, path: str | None) -> None:
        factory = self._choose(path or "")
        loop = asyncio.get_running_loop()
        task = loop.create_task(loop.connect_accepted_socket(factory, conn))
        task.add_done_callback(lambda done: _log_failure(done, conn))

    def _drop(self, waiting: _FirstLine) -> None:
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
        for conn, _ in self._queued:
            conn.close()
        self._queued.clear()
        if self._sock is not None and self._owns_socket:
            self._sock.close()
        self._sock = None


def _log_failure(task: asyncio.Task[object], conn: socket.socket) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.warning("handing over a connection failed: %s", task.exception())
        conn.close()


class _FirstLine:
    """Waits until a connection's first request line has arrived, without reading it."""

    __slots__ = ("_fd", "_listener", "_loop", "_retry", "_timeout", "conn")

    def __init__(
        self, listener: PublicListener, conn: socket.socket, loop: asyncio.AbstractEventLoop
    ) -> None:
        self._listener = listener
        self.conn = conn
        self._loop = loop
        self._fd = conn.fileno()
        self._retry: asyncio.TimerHandle | None = None
        self._timeout = loop.call_later(FIRST_LINE_TIMEOUT_S, self._timed_out)

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
            peeked = self.conn.recv(MAX_FIRST_LINE, socket.MSG_PEEK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            peeked = b""
        if not peeked:  # closed (or reset) before saying anything
            self.stop()
            self._listener._drop(self)
            return
        path = request_path(peeked)
        if path is None and len(peeked) < MAX_FIRST_LINE:
            # Part of a line: look again shortly (the unread bytes keep the socket readable).
            self._loop.remove_reader(self._fd)
            self._retry = self._loop.call_later(PEEK_RETRY_S, self.wait)
            return
        self.stop()
        self._listener._hand_over(self, path)

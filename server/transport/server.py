"""The websocket server: one reading task per connection, authentication, limits, the hub.

Built on ``websockets.asyncio.server.serve`` (no compression; incoming frames up to
``max_frame_bytes``, larger ones close the connection with 1009; keepalive pings whose round
trip also measures the lag credited to moves).

A connection first authenticates (``register``, ``login``, ``guest`` or ``resume``; see
:mod:`server.transport.ws_auth`) within ``login_timeout_s`` (else it is closed with 1008,
"authentication timeout"); the answer is ``welcome`` with the
player and the session token, followed by the hub's ``hello``. Every text frame is read once
into one typed value (:func:`server.hub.incoming.read_frame`) and dispatched once on it
(:meth:`ClientConnection._dispatch`): a hub command (once logged in), an authentication frame,
or a review request (``games``, ``review``, ``export``…; see :mod:`server.transport.review`),
which reads the store and needs no login (it and the ``tournament_*`` frames are handled in
:mod:`server.transport.ws_requests`). Each incoming frame first passes the connection's
token bucket: over the limit it is answered with ``rate_limited`` and dropped; a sustained
flood closes the connection with 1008.
Frames that are binary, not JSON, or not a valid command get an ``error`` and change nothing.
A text frame with nothing before it is handled straight from the socket's data callback, without
waiting for the reading task's next turn
(:meth:`~server.transport.ws_internals.JitteredConnection.process_event`). Every use of
websockets' internals is in :mod:`server.transport.ws_internals`.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypedDict

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed, ConnectionClosedOK
from websockets.frames import CloseCode

from server.config import Settings
from server.hub.commands import Command, ack_of
from server.hub.effects import ConnId
from server.hub.errors import ErrorCode, ProtocolError
from server.hub.fields import shown
from server.hub.incoming import (
    AccountFrame,
    AuthFrame,
    Incoming,
    PingFrame,
    ReviewRequest,
    TournamentRequest,
    read_frame,
)
from server.hub.messages import AckId, Message, MessageKind, error_message
from server.transport.accounts import Accounts, Identity
from server.transport.codec import DecodeError, ack_of_text, decode, encode_message
from server.transport.driver import HubDriver
from server.transport.headers import SERVER_NAME
from server.transport.http import HealthCheck, HttpRoutes, PresenceLookup, peer_address
from server.transport.notify import Notices
from server.transport.outbox import Outbox
from server.transport.public import BACKLOG
from server.transport.ratelimit import TokenBucket, Verdict
from server.transport.review import ReviewStore
from server.transport.review_reads import ReviewReads
from server.transport.tournament_ws import TournamentDesk, TournamentDoor
from server.transport.turns import TurnBudget
from server.transport.ws_auth import on_auth
from server.transport.ws_internals import (
    HandedOver,
    JitteredConnection,
    accepted_connection,
    forget_handshake,
)
from server.transport.ws_requests import on_review, on_tournament
from server.transport.ws_sessions import PlayerConnections

__all__ = ["AUTH_TIMEOUT_REASON", "ClientConnection", "TransportServer"]

logger = logging.getLogger(__name__)


class _Listen(TypedDict, total=False):
    """Where ``serve`` listens: an address, or a socket the public listener owns."""

    host: str
    port: int
    sock: socket.socket
    start_serving: bool


AUTH_TIMEOUT_REASON = "authentication timeout"
"""The close reason (code 1008) of a connection not logged in within ``login_timeout_s``."""
MAX_LAG_MS = 500
"""Lag credited to a move is half the ping round trip, at most this."""
CLOSE_GRACE_S = 2.0
"""How long a closing handshake may take before the TCP connection is cut."""
WRITE_LIMIT = 32 * 1024
"""High-water mark of a connection's socket write buffer before messages queue in the outbox."""


@dataclass(frozen=True)
class TransportLimits:
    """The per-connection limits, from the settings."""

    max_frame_bytes: int
    send_queue_limit: int
    rate_per_s: float
    burst: int

    @classmethod
    def from_settings(cls, settings: Settings) -> TransportLimits:
        return cls(
            settings.max_frame_bytes,
            settings.send_queue_limit,
            settings.rate_limit_per_s,
            settings.rate_limit_burst,
        )


FrameRest = Coroutine[Any, Any, None]
"""What is left to do of a frame once it waits for something (a login, a review query)."""


class ClientConnection:
    """One websocket client (see the module docstring)."""

    def __init__(self, server: TransportServer, ws: ServerConnection) -> None:
        self.server = server
        """The listener this connection came through (its driver, accounts, limits)."""
        self.ws = ws
        limits = server.limits
        self.outbox = Outbox(
            ws, limits.send_queue_limit, WRITE_LIMIT, self._overflowed, server.flusher
        )
        self._loop = asyncio.get_running_loop()
        self._bucket = TokenBucket(limits.rate_per_s, limits.burst, self._loop.time())
        self.identity: Identity | None = None
        self.conn_id: ConnId | None = None
        self.auth_failures = 0
        """Refused logins so far (:data:`~server.transport.ws_auth.MAX_AUTH_FAILURES`)."""
        self.closing = False
        """Closing (:meth:`close_soon`): nothing more is sent, later frames are ignored."""
        self._reading = False
        """run() is handling a frame (it may be awaiting a login or a review query)."""
        self.tournament_door: TournamentDoor | None = None
        """The connection's tournament requests and watches (made at its first:
        :func:`~server.transport.ws_requests.on_tournament`)."""
        self._rest: asyncio.Task[None] | None = None
        """The rest of a frame handled at once, if it had to wait (a login, a review query),
        until it is done."""
        self._auth_timer: asyncio.TimerHandle | None = None
        """Runs :meth:`_silent` ``silent_hold_s`` after the handshake, then closes the connection
        if it is still anonymous after ``login_timeout_s``."""
        self._asked = False
        """An authentication frame (``login``, ``guest``, ``resume``, ``register``, or an
        account's own) has arrived: set when it is decoded, from ``data_received`` or
        :meth:`run`, before its handling waits; never looked at once logged in."""

    # --- Peer ---------------------------------------------------------------------------------

    def close_soon(self, code: int, reason: str) -> None:
        """Close without waiting: nothing more is sent, the handshake gets a short grace."""
        if self.closing:
            return
        self.closing = True
        self.outbox.flush()  # what was said before closing (an ack, an error) still goes out
        self.outbox.close()
        self.server.spawn(self._close(code, reason))

    async def _close(self, code: int, reason: str) -> None:
        try:
            await asyncio.wait_for(self.ws.close(code, reason[:120]), CLOSE_GRACE_S)
        except TimeoutError:
            self.ws.transport.abort()

    def _overflowed(self, outbox: Outbox) -> None:
        logger.info("dropping connection %s: outgoing queue overflow", self.conn_id)
        if self.conn_id is not None:
            # Not from inside the hub call whose effects overflowed the queue: right after it.
            self._loop.call_soon(self.server.driver.drop, self.conn_id)
        self.close_soon(CloseCode.POLICY_VIOLATION, "too slow: outgoing queue overflow")

    # --- reading ------------------------------------------------------------------------------

    def send(self, message: Message) -> None:
        self.outbox.put(encode_message(message))

    def error(self, code: ErrorCode, text: str | None = None, ack: AckId | None = None) -> None:
        self.send(error_message(code, text, ack))

    async def run(self) -> None:
        # Started once the handshake is done (the 101 written): an honest client asks to log
        # in one round trip later. One timer serves both waits, so that a connection logging
        # in at once (nearly all of them) costs no more timers than before.
        settings = self.server.settings
        if settings.silent_hold_s < settings.login_timeout_s:
            self._auth_timer = self._loop.call_later(settings.silent_hold_s, self._silent)
        else:
            self._auth_timer = self._loop.call_later(settings.login_timeout_s, self._auth_timeout)
        ws = self.ws
        forget_handshake(ws)
        if isinstance(ws, JitteredConnection):
            ws.frame_handler = self
            ws.turns = self.server.turns
        try:
            # recv() in a loop rather than ``async for``: no async generator (two more
            # tracked objects) per connection.
            while True:
                try:
                    data = await ws.recv()
                except ConnectionClosedOK:
                    break
                # The frames read here are those not handed over at once (see accepts_frame):
                # they wait for a frame before them still in progress, and later ones queue.
                self._reading = True
                await self._wait_for_rest()
                if self.server.turns.busy():  # a burst: this frame waits for a later turn
                    await self.server.turns.wait()
                # Once closing, read on (and ignore) until the close handshake ends, so that
                # our close code, not the handler's return, is what the client sees.
                if not self.closing:
                    rest = self._on_frame(data)
                    if rest is not None:
                        await rest
                self._reading = False
        except ConnectionClosed:
            pass
        finally:
            if isinstance(ws, JitteredConnection):
                ws.frame_handler = None  # no reference cycle left between the two
            self.stop_auth_timer()
            # A login handed over at once may still be running: it connects to the hub
            # before the connection leaves it.
            await self._wait_for_rest()
            if self.tournament_door is not None:
                self.tournament_door.close()
            self.outbox.close()
            self.server.players.discard(self)
            if self.conn_id is not None:
                self.server.driver.disconnect(self.conn_id)

    def _silent(self) -> None:
        """``silent_hold_s`` after the handshake, not logged in: a connection that has not even
        asked lets its opening slot go (:meth:`TransportServer.opened`); it stays open, silent
        and costing nothing, until ``login_timeout_s``. One that asked keeps its slot while
        its login is handled (a password hash may wait its turn: a reconnect storm's logins
        stay bounded), until it logs in or the listener's hold ends."""
        settings = self.server.settings
        self._auth_timer = self._loop.call_later(
            settings.login_timeout_s - settings.silent_hold_s, self._auth_timeout
        )
        if not self._asked and not self.closing:
            self.server.opened(self)

    def _auth_timeout(self) -> None:
        self._auth_timer = None
        if self.identity is None:
            self.close_soon(CloseCode.POLICY_VIOLATION, AUTH_TIMEOUT_REASON)

    def stop_auth_timer(self) -> None:
        timer = self._auth_timer
        if timer is not None:
            self._auth_timer = None
            timer.cancel()

    # --- frames handed over at once (JitteredConnection.process_event) -------------------------

    def accepts_frame(self) -> bool:
        """Whether a frame arriving now may be handled at once, from ``data_received``: not
        while :meth:`run` is in the middle of a frame, nor while the rest of a frame handled at
        once is running (a login, a review query), nor once closing (then :meth:`run` reads and
        ignores). Frames refused here queue for :meth:`run`, in order, behind that one."""
        rest = self._rest
        return not (self._reading or self.closing or (rest is not None and not rest.done()))

    def on_text_frame(self, text: str) -> None:
        """Handle a text frame at once; what must wait becomes a task that later frames (read
        by :meth:`run`) wait for. In a burst (the turn's budget spent, or frames of other
        connections waiting: :class:`~server.transport.turns.TurnBudget`) the whole frame is
        such a task, handled on a later turn."""
        if self.server.turns.busy():
            rest: FrameRest | None = self._later(text)
        else:
            rest = self._handled(text)
        if rest is not None:
            self._rest = task = self._loop.create_task(rest)
            task.add_done_callback(self._rest_done)

    def _handled(self, text: str) -> FrameRest | None:
        try:
            return self._on_frame(text)
        except Exception:
            # What would have ended run() — a bug outside the per-frame guard — ends the
            # connection as websockets would then: logged, closed with 1011.
            logger.exception("connection %s failed", self.conn_id)
            self.close_soon(CloseCode.INTERNAL_ERROR, "")
            return None

    async def _later(self, text: str) -> None:
        """A frame of a burst, handled once a turn has budget for it (later frames of the
        connection wait for it, as for a login's rest)."""
        await self.server.turns.wait()
        if self.closing:
            return
        rest = self._handled(text)
        if rest is not None:
            await rest

    def _rest_done(self, task: asyncio.Task[None]) -> None:
        """Let go of a finished task at once (a login's task would otherwise stay, with its
        coroutine and context, for as long as the connection stays idle)."""
        if self._rest is task:
            self._rest = None

    async def _wait_for_rest(self) -> None:
        """Wait until the rest of a frame handled at once, if any, has run."""
        rest = self._rest
        if rest is None:
            return
        if not rest.done():
            try:
                await asyncio.wait((rest,))
            except asyncio.CancelledError:
                rest.cancel()  # as if run() itself had been awaiting it
                raise
        self._rest = None

    # --- frames -------------------------------------------------------------------------------

    def _on_frame(self, data: str | bytes) -> FrameRest | None:
        """Handle one frame as far as it goes without waiting; return the rest (a login, a
        review query), which must run before the next frame, or ``None`` when done.

        The frame passes the token bucket, is decoded, read once into its typed value
        (:func:`~server.hub.incoming.read_frame`) and dispatched once on what it is."""
        verdict = self._bucket.take(self._loop.time())
        if verdict is not Verdict.ACCEPT:
            if verdict is Verdict.CLOSE:
                self.close_soon(CloseCode.POLICY_VIOLATION, "rate limit exceeded")
                return None
            self.error(
                ErrorCode.RATE_LIMITED,
                f"Too many messages: at most {self.server.limits.rate_per_s:g} per second; "
                "this one was ignored.",
                ack_of_text(data),
            )
            return None
        if not isinstance(data, str):
            self.error(ErrorCode.BAD_FRAME)
            return None
        try:
            obj = decode(data)
        except DecodeError as exc:
            self.error(exc.code, exc.message, exc.ack)
            return None
        try:
            incoming = read_frame(obj)
        except ProtocolError as exc:
            self.error(exc.code, str(exc), exc.ack)
            return None
        except Exception:
            self._failed_on(obj)
            return None
        try:
            rest = self._dispatch(incoming)
        except Exception:
            self._failed_on(obj)
            return None
        return None if rest is None else self._guarded(rest, obj)

    async def _guarded(self, rest: FrameRest, obj: object) -> None:
        # A burst of logins or tournament watches: each one's first step (the hub's hello, the
        # view) waits for a turn with budget left rather than all running in the next turn.
        turns = self.server.turns
        try:
            if turns.busy():
                try:
                    await turns.wait()
                except asyncio.CancelledError:
                    rest.close()  # never started: no "never awaited" warning
                    raise
            await rest
        except Exception:
            self._failed_on(obj)

    def _failed_on(self, obj: object) -> None:
        """Called while handling an exception raised by the handling of ``obj``."""
        # A bug, not the client's fault: answer it and keep the connection (never a 1011).
        logger.exception("connection %s failed on a frame", self.conn_id)
        self.error(ErrorCode.INTERNAL_ERROR, "The server failed on this frame.", ack_of(obj))

    def _dispatch(self, incoming: Incoming) -> FrameRest | None:
        """The one dispatch of a frame read: a hub command to the hub, an authentication frame
        to :func:`~server.transport.ws_auth.on_auth` (``ping`` answered here), a review request
        to the store; return what must wait (a login, a review query), if anything."""
        match incoming:
            case Command():
                if self.conn_id is None:
                    self.error(ErrorCode.NOT_AUTHENTICATED, ack=incoming.ack)
                    return None
                lag_ms = min(MAX_LAG_MS, int(self.ws.latency * 500))
                self.server.driver.handle(self.conn_id, incoming, lag_ms)
                return None
            case PingFrame():
                self.send(Message(MessageKind.PONG, {}, a=incoming.ack))
                return None
            case AuthFrame():
                self._asked = True  # before anything waits (see _silent)
                return on_auth(self, incoming)
            case TournamentRequest():
                return on_tournament(self, incoming)
            case AccountFrame():
                notices = self.server.notices
                if notices is None:  # no store behind this server
                    self.error(ErrorCode.UNAVAILABLE, ack=incoming.ack)
                    return None
                return notices.answer(self, incoming)
            case ReviewRequest():
                store = self.server.review_store
                if store is None:  # no store behind this server: no such command here
                    self.error(
                        ErrorCode.BAD_REQUEST,
                        f"unknown command type {shown(incoming.kind)}",
                        incoming.ack,
                    )
                    return None
                return on_review(self, store, incoming)
        return None

    # --- authentication -----------------------------------------------------------------------

    @property
    def address(self) -> str:
        """The client's address, as login throttling and the read limits count it
        (:func:`~server.transport.http.peer_address`: a trusted balancer's PROXY header
        honoured)."""
        return peer_address(self.ws)


class TransportServer:
    """The websocket listener of one hub process."""

    def __init__(
        self,
        settings: Settings,
        driver: HubDriver,
        accounts: Accounts,
        health: HealthCheck,
        static: dict[str, tuple[bytes, str]] | None = None,
        review_store: ReviewStore | None = None,
        presence: PresenceLookup | None = None,
        tournaments: TournamentDesk | None = None,
    ) -> None:
        self.settings = settings
        self.limits = TransportLimits.from_settings(settings)
        self.driver = driver
        self.accounts = accounts
        self.review_store = review_store
        self.tournaments = tournaments
        """The tournament director (``tournament_*`` frames), if this server has one."""
        self.notices: Notices | None = None
        """``my_games`` and ``mail_settings`` (server/transport/notify.py), set by the app."""
        self.reads = ReviewReads.from_settings(settings)
        """The stored-game reads' cache, gate and limits, shared with the other doors."""
        self._routes = HttpRoutes(
            settings.ws_path, health, static, review_store, presence, self.reads
        )
        self._server: Server | None = None
        self._handed_over: HandedOver | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.flusher = driver.flusher
        self.turns = TurnBudget()
        """The per-turn budget of the connections' frames and logins (bursts wait for later
        turns)."""
        self.open_sockets = 0
        self.on_opened: Callable[[int], None] = lambda fd: None
        """Told the socket's file descriptor of each connection that no longer opens
        (:meth:`opened`; it may be told more than once, and of a socket closed since): the
        public listener's admission (``PublicListener.admitted``) lets the next one open."""
        self.players = PlayerConnections()
        """The logged-in connections of each player (to close when their sessions end)."""
        accounts.on_revoked.append(self.players.revoked)

    def logged_in(self, connection: ClientConnection) -> None:
        """The connection logged in (:func:`~server.transport.ws_auth.on_auth`)."""
        self.players.add(connection)
        self.opened(connection)

    def opened(self, connection: ClientConnection) -> None:
        """The connection no longer counts as opening (:attr:`on_opened`): it logged in, its
        login was refused, or it did not ask to log in within ``silent_hold_s``."""
        sock = connection.ws.transport.get_extra_info("socket")
        if sock is not None:
            self.on_opened(sock.fileno())

    async def start(self, sock: socket.socket | None = None) -> None:
        """Listen on ``settings.host:settings.port`` (port 0 picks a free one); or, given the
        public listening ``sock`` (:class:`~server.transport.public.PublicListener`), accept
        nothing by itself: the listener hands it connections through :meth:`protocol`."""
        settings = self.settings
        where: _Listen = (
            {"host": settings.host, "port": settings.port}
            if sock is None
            else {"sock": sock, "start_serving": False}
        )
        self._server = await serve(
            self._handle,
            process_request=self._routes,
            process_response=self._routes.secured,
            server_header=SERVER_NAME,
            compression=None,
            # The handshake of a connection handed over (its request head has come whole)
            # and of one served directly (tests) alike.
            open_timeout=settings.header_timeout_s,
            max_size=settings.max_frame_bytes,
            ping_interval=settings.ping_interval_s,
            ping_timeout=settings.ping_timeout_s,
            create_connection=JitteredConnection,
            close_timeout=CLOSE_GRACE_S,
            write_limit=WRITE_LIMIT,
            backlog=BACKLOG,
            **where,
        )
        self._handed_over = HandedOver(self._server)

    def protocol(self) -> ServerConnection:
        """A websocket connection for a socket the public listener accepted: what websockets'
        own ``serve`` builds for each connection, with the same settings as :meth:`start`
        (no extensions, since there is no compression)."""
        assert self._server is not None and self._handed_over is not None, "not started"
        settings = self.settings
        return accepted_connection(
            self._server,
            self._handed_over,
            max_size=settings.max_frame_bytes,
            ping_interval=settings.ping_interval_s,
            ping_timeout=settings.ping_timeout_s,
            close_timeout=CLOSE_GRACE_S,
            write_limit=WRITE_LIMIT,
        )

    @property
    def routes(self) -> HttpRoutes:
        """The plain pages answered during the handshake (the HTTP API answers them too)."""
        return self._routes

    @property
    def port(self) -> int:
        """The port actually listened on."""
        assert self._server is not None, "the server is not started"
        for sock in self._server.sockets:
            return int(sock.getsockname()[1])
        raise RuntimeError("the server has no listening socket")

    @property
    def sockets(self) -> list[socket.socket]:
        """The listening sockets (connections accepted later inherit their buffer sizes)."""
        assert self._server is not None, "the server is not started"
        return list(self._server.sockets)

    def spawn(self, coroutine: Any) -> None:
        """Run a background coroutine, keeping a reference until it ends."""
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _handle(self, ws: ServerConnection) -> None:
        self.open_sockets += 1
        try:
            await ClientConnection(self, ws).run()
        finally:
            self.open_sockets -= 1

    async def close(self) -> None:
        """Stop listening and close every connection (1001, going away)."""
        if self._server is None:
            return
        if self._handed_over is not None:
            self._handed_over.serving = False
        self._server.close(close_connections=True)
        await self._server.wait_closed()
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=CLOSE_GRACE_S + 1)
        self._server = None

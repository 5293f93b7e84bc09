"""Every use of websockets' internals, in one module (websockets 17; ``pyproject.toml`` pins
``<18``).

The transport goes beneath websockets' public API in a few places, each for a measured reason
(docs/benchmarks.md, "The websockets fast path"). Nothing else in the server touches
websockets' private attributes or overrides its private methods (a test checks the sources).
What each use relies on is one test in ``tests/transport/test_ws_contract.py``: after an
upgrade of websockets, a change of behaviour fails the test that names it.

* **Frames handed over from ``data_received``** (:meth:`JitteredConnection.process_event`):
  websockets calls the private ``process_event`` once per frame, from ``data_received``, after
  the handshake; a data frame it does not queue in ``recv_messages`` (whose private
  ``frames`` queue is empty when nothing waits for ``recv``) leaves no trace, and ``recv``
  keeps waiting. Worth a task hop per incoming frame.
* **Frames written straight to the socket** (:func:`write_now`): while the protocol is
  ``OPEN``, the bytes of an unmasked, unfragmented text frame without extensions
  (:func:`text_frame_header` + payload) are what ``Protocol.send_text`` would have written, and
  ``Protocol.data_to_send`` hands back whatever websockets has not written yet (normally
  nothing), so that it goes first. Worth a frame object and a writer task per message.
* **Keepalive pings jittered** (:meth:`JitteredConnection.keepalive`): websockets starts the
  coroutine ``keepalive`` as a task when the connection opens, and only then.
* **Every attribute in a slot** (:attr:`JitteredConnection.__slots__`): the names of the
  attributes websockets gives a connection in its life.
* **The parser freed with the connection** (:meth:`JitteredConnection.connection_lost`): the
  protocol's ``parser`` is a generator that may be closed once the connection is lost.
* **The handshake forgotten** (:func:`forget_handshake`): after the handshake websockets reads
  neither the request's headers nor the response.
* **Connections handed over by the public listener** (:func:`accepted_connection`): a
  ``ServerConnection`` is built from a ``ServerProtocol`` and a server of which websockets
  reads ``handler``, ``handler_tasks`` and ``is_serving()`` only.
"""

from __future__ import annotations

import asyncio
import random
import struct
from collections.abc import Awaitable
from typing import Any, Protocol, cast

from websockets.asyncio.server import Server, ServerConnection
from websockets.frames import Frame, Opcode
from websockets.protocol import Event, State
from websockets.server import ServerProtocol
from websockets.typing import DataLike

from server.transport.turns import TurnBudget

__all__ = [
    "HandedOver",
    "JitteredConnection",
    "TextFrameHandler",
    "accepted_connection",
    "forget_handshake",
    "text_frame_header",
    "write_now",
]


# --- incoming: frames handed over from data_received ------------------------------------------


class TextFrameHandler(Protocol):
    """Who takes a connection's text frames straight from ``data_received``
    (:meth:`JitteredConnection.process_event`)."""

    def accepts_frame(self) -> bool:
        """Whether a frame arriving now may be handled at once (nothing earlier is pending)."""
        ...

    def on_text_frame(self, text: str) -> None:
        """Handle one text frame now; whatever must wait runs on, and holds later frames back."""
        ...


class JitteredConnection(ServerConnection):
    """A server connection whose keepalive pings start after a random fraction of the interval,
    and that lets its protocol be freed by reference counting once closed.

    websockets pings every ``ping_interval`` seconds from the moment a connection opens, so
    connections that open together — every client reconnecting after a restart, a deploy or a
    network blip — ping together for as long as they live: 2,000 pings and pongs in one burst
    every 20 s stalled the event loop for tens of milliseconds (docs/benchmarks.md, "Load").
    Waiting a random part of one interval first spreads them out; a dead peer is still noticed,
    within two intervals plus the ping timeout instead of one.

    It also hands whole text frames to :attr:`frame_handler` without a task hop when that keeps
    their order (:meth:`process_event`).
    """

    __slots__ = (
        # websockets' attributes (``asyncio.connection.Connection.__init__`` and
        # ``connection_made``, ``asyncio.server.ServerConnection.__init__``), every one a
        # connection gets in its life, and ours: ``frame_handler``, ``turns``.
        "close_deadline",
        "close_timeout",
        "connection_exc",
        "connection_lost_waiter",
        "debug",
        "drain_waiters",
        "frame_handler",
        "id",
        "keepalive_task",
        "latency",
        "logger",
        "loop",
        "max_queue_high",
        "max_queue_low",
        "paused",
        "pending_pings",
        "ping_interval",
        "ping_timeout",
        "protocol",
        "recv_messages",
        "request",
        "request_rcvd",
        "response",
        "send_in_progress",
        "server",
        "transport",
        "turns",
        "write_limit_high",
        "write_limit_low",
    )
    """Every attribute in a slot, none in the instance's ``__dict__``: a connection is lighter,
    and what it weighs does not depend on the order connections opened in. CPython 3.11 keeps
    the attribute values of a class's instances in one key table shared by the class, with room
    for 30 names less one for each instance created before a name is first set (a heuristic
    against unbounded tables). websockets sets ``recv_messages`` and ``transport`` only in
    ``connection_made``, the server ``frame_handler`` and ``turns`` after the handshake: with
    29 names in all, when a few connections were created before the first got them (a burst of
    connections: the process's first ones, a reconnect storm), the table filled up, and every
    later connection of the process carried a ``__dict__`` of its own, one more object the
    collector tracks per connection (tests/transport/test_transport_memory.py)."""

    def __init__(self, protocol: ServerProtocol, server: Server, **options: Any) -> None:
        self.frame_handler: TextFrameHandler | None = None
        """The :class:`~server.transport.server.ClientConnection` reading this connection,
        while it reads."""
        self.turns: TurnBudget | None = None
        """The server's per-turn budget: a keepalive ping waits for a turn with budget left."""
        super().__init__(protocol, server, **options)

    async def keepalive(self) -> None:
        assert self.ping_interval is not None
        await asyncio.sleep(random.uniform(0, self.ping_interval))
        await super().keepalive()

    async def ping(self, data: DataLike | None = None) -> Awaitable[float]:
        """Send a ping; in a busy turn (:attr:`turns`), on a later one. Pings fall due
        together after a stall (each connection's next one is due an interval after its last
        pong, and the pongs of a stall all arrive at its end): hundreds of keepalive steps ran
        in one turn, 3–9 ms with 6,000 connections."""
        turns = self.turns
        if turns is not None and turns.busy():
            await turns.wait()
        return await super().ping(data)

    def connection_lost(self, exc: Exception | None) -> None:
        """Also end websockets' parser: the protocol keeps its parser generator (suspended for
        good once the connection is closed), whose frame refers back to the protocol, a
        reference cycle that only a full garbage collection would free, and never one that
        the server has frozen (``server.app.collector``). Once the connection is lost the
        protocol never runs its parser again (``receive_eof`` is idempotent, ``receive_data``
        refuses data after EOF)."""
        super().connection_lost(exc)
        self.protocol.parser.close()

    def process_event(self, event: Event) -> None:
        """Hand a whole text frame to :attr:`frame_handler` right away when nothing is before it.

        Normally websockets queues each data frame in its ``Assembler`` (``recv_messages``) and
        wakes the reading task, which takes it on the next turn of the event loop: a task hop
        per frame on the path of every move. Most frames need no waiting at all, so a frame is
        handled here, inside ``data_received``, when that cannot change anything observable:

        * it is one whole (``fin``) text frame: fragments and binary frames keep the queue (a
          text frame never arrives in the middle of a fragmented message: the protocol fails
          the connection instead of emitting it);
        * the assembler's queue is empty: no earlier frame is waiting to be read;
        * the handler accepts it (``ClientConnection.accepts_frame``): its task is not in the
          middle of a frame (an awaited login, a review query), an earlier frame handled here
          left no remainder in flight, and the connection is not closing;
        * its payload is valid UTF-8; otherwise the queue takes it and ``recv`` fails the
          connection (1007) as before.

        Skipping the queue is safe for websockets: its queue only ever holds data frames for
        ``recv`` (nothing else reads it), so a frame that never enters it leaves no trace —
        flow control (``max_queue``) counts queued frames only, and an idle reader simply
        stays waiting in ``recv``, which still ends with the connection (close frames, pings
        and pongs always go to websockets). Checked against websockets 17
        (``asyncio/connection.py``, ``asyncio/messages.py``); the queue's ``frames`` is private.
        """
        handler = self.frame_handler
        if (
            handler is not None
            and isinstance(event, Frame)
            and event.opcode is Opcode.TEXT
            and event.fin
            and not self.recv_messages.frames
            and handler.accepts_frame()
        ):
            try:
                text = str(event.data, "utf-8")
            except UnicodeDecodeError:
                pass
            else:
                handler.on_text_frame(text)
                return
        super().process_event(event)


# --- outgoing: frames written straight to the socket ------------------------------------------


def text_frame_header(length: int) -> bytes:
    """The RFC 6455 header of one unfragmented, unmasked text frame whose payload is ``length``
    bytes: what websockets' ``Protocol.send_text`` writes before the payload on a server
    connection without extensions (the hub's: ``compression=None``).

    >>> text_frame_header(5), text_frame_header(300)[:2], len(text_frame_header(70_000))
    (b'\\x81\\x05', b'\\x81~', 10)
    """
    if length < 126:
        return _SMALL_HEADERS[length]
    if length < 65536:
        return struct.pack("!BBH", 0x81, 126, length)
    return struct.pack("!BBQ", 0x81, 127, length)


_SMALL_HEADERS = [bytes((0x81, length)) for length in range(126)]


def write_now(ws: ServerConnection, frames: list[bytes], high_water: int) -> bool:
    """Write ``frames`` (UTF-8 JSON payloads) as text frames with one ``writelines``, if the
    connection is open and its write buffer below ``high_water``; False (nothing written)
    otherwise, and the caller sends them with ``await ws.send(...)``, which waits for the
    socket."""
    if ws.protocol.state is not State.OPEN or ws.transport.get_write_buffer_size() >= high_water:
        return False
    # Whatever websockets still holds goes first (it writes its own frames, a pong or a
    # close, at once, so this is normally empty).
    chunks = ws.protocol.data_to_send()
    for frame in frames:
        chunks.append(text_frame_header(len(frame)))
        chunks.append(frame)
    ws.transport.writelines(chunks)
    return True


# --- the handshake and connections handed over -------------------------------------------------


def forget_handshake(ws: ServerConnection) -> None:
    """Let go of what the opening handshake left on the connection and is never read again.

    The request's and response's headers are about twenty objects the collector tracks, per
    connection, for the connection's life. The request stays (websockets tells the
    handshake's request from later events by ``request is None``; its parser also keeps it as
    a local of its suspended generator) but its headers are emptied (docs/benchmarks.md,
    "Reconnect storm")."""
    if ws.request is not None:
        ws.request.headers.clear()
    ws.response = None


class HandedOver:
    """websockets' server as the connections handed over by the public listener see it.

    Given the public socket without serving it (the listener accepts), websockets' own server
    would answer every handshake "shutting down" (503): to these connections it is serving
    until :meth:`~server.transport.server.TransportServer.close` sets :attr:`serving` to
    False. Their handler and its tasks are websockets' own."""

    __slots__ = ("handler", "handler_tasks", "serving")

    def __init__(self, server: Server) -> None:
        self.handler = server.handler
        self.handler_tasks = server.handler_tasks
        self.serving = True

    def is_serving(self) -> bool:
        return self.serving


def accepted_connection(
    server: Server,
    handed_over: HandedOver,
    *,
    max_size: int,
    ping_interval: float | None,
    ping_timeout: float | None,
    close_timeout: float,
    write_limit: int,
) -> ServerConnection:
    """A websocket connection for a socket the public listener accepted: what websockets' own
    ``serve`` builds for each connection (no extensions, since there is no compression)."""
    protocol = ServerProtocol(max_size=max_size, logger=server.logger)
    return JitteredConnection(
        protocol,
        cast(Server, handed_over),
        ping_interval=ping_interval,
        ping_timeout=ping_timeout,
        close_timeout=close_timeout,
        write_limit=write_limit,
    )

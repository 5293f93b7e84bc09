"""What the transport relies on of websockets beneath its public API: one test per behaviour
(``server/transport/ws_internals.py`` lists them). After an upgrade of websockets, a behaviour
that changed fails the test that names it; the last test checks that no other module of the
server reaches into websockets' internals.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.frames import Frame, Opcode
from websockets.http11 import Request
from websockets.protocol import Event, Protocol, Side, State

from server.transport import ws_internals
from server.transport.ws_internals import (
    HandedOver,
    JitteredConnection,
    accepted_connection,
    forget_handshake,
    text_frame_header,
    write_now,
)

TIMEOUT = 10.0


@asynccontextmanager
async def served(
    handler: Callable[[ServerConnection], object],
    connection: type[ServerConnection] = ServerConnection,
    **options: object,
) -> AsyncIterator[tuple[Server, str]]:
    async with serve(
        handler,  # type: ignore[arg-type]
        "127.0.0.1",
        0,
        compression=None,
        create_connection=connection,
        **options,  # type: ignore[arg-type]
    ) as server:
        port = server.sockets[0].getsockname()[1]
        yield server, f"ws://127.0.0.1:{port}"


def client(url: str, **options: object) -> connect:
    return connect(url, compression=None, open_timeout=TIMEOUT, **options)  # type: ignore[arg-type]


# --- incoming: process_event ------------------------------------------------------------------


class Recording(ServerConnection):
    """Records each event given to ``process_event`` and whether a task was running."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.events: list[tuple[Event, bool]] = []

    def process_event(self, event: Event) -> None:
        self.events.append((event, asyncio.current_task() is not None))
        super().process_event(event)


async def test_process_event_gets_the_request_then_each_frame_from_data_received() -> None:
    """JitteredConnection.process_event: called once per frame, outside any task (inside the
    socket's data callback), after the handshake's request; pings come as frames too."""
    connections: list[Recording] = []
    done = asyncio.Event()

    async def handler(ws: ServerConnection) -> None:
        assert isinstance(ws, Recording)
        connections.append(ws)
        assert await ws.recv() == "one"
        assert await ws.recv() == b"two"
        await ws.recv()  # "three": sent after the ping, so the ping's frame came first
        done.set()
        await ws.wait_closed()

    async with served(handler, Recording) as (_, url), client(url) as peer:
        await peer.send("one")
        await peer.send(b"two")
        await peer.ping(b"p")
        await peer.send("three")
        await asyncio.wait_for(done.wait(), TIMEOUT)
    (ws,) = connections
    assert isinstance(ws.events[0][0], Request)
    frames = [(event.opcode, bytes(event.data)) for event, _ in ws.events[1:4]]
    assert frames == [(Opcode.TEXT, b"one"), (Opcode.BINARY, b"two"), (Opcode.PING, b"p")]
    assert all(isinstance(event, Frame) and event.fin for event, _ in ws.events[1:5])
    assert not any(in_task for _, in_task in ws.events)


class Skipping(ServerConnection):
    """Keeps text frames starting with "skip" out of websockets' queue."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.skipped: list[bytes] = []

    def process_event(self, event: Event) -> None:
        if isinstance(event, Frame) and event.opcode is Opcode.TEXT and event.data[:4] == b"skip":
            self.skipped.append(bytes(event.data))
            return
        super().process_event(event)


async def test_a_data_frame_kept_from_the_queue_leaves_no_trace() -> None:
    """JitteredConnection.process_event: recv() never sees a frame not queued, keeps waiting,
    and the connection goes on (pings, later frames, the closing handshake) as if it never
    came. A flood of skipped frames does not pause reading (max_queue counts queued frames)."""
    connections: list[Skipping] = []
    received: list[str | bytes] = []

    async def handler(ws: ServerConnection) -> None:
        assert isinstance(ws, Skipping)
        connections.append(ws)
        received.append(await ws.recv())
        await ws.send("seen")
        await ws.wait_closed()

    async with served(handler, Skipping, max_queue=2) as (_, url), client(url) as peer:
        for n in range(10):
            await peer.send(f"skip {n}")
        pong = await peer.ping()
        await asyncio.wait_for(pong, TIMEOUT)
        await peer.send("kept")
        assert await asyncio.wait_for(peer.recv(), TIMEOUT) == "seen"
    assert received == ["kept"]
    assert connections[0].skipped == [f"skip {n}".encode() for n in range(10)]
    assert connections[0].close_code == 1000


async def test_the_queue_of_frames_is_sized_and_empty_when_nothing_waits() -> None:
    """JitteredConnection.process_event reads ``recv_messages.frames``: its length counts the
    data frames waiting for recv(), zero when none waits."""
    lengths: list[int] = []
    arrived = asyncio.Event()

    class Watching(ServerConnection):
        def process_event(self, event: Event) -> None:
            super().process_event(event)
            if isinstance(event, Frame) and event.opcode is Opcode.TEXT:
                lengths.append(len(self.recv_messages.frames))
                if len(lengths) == 2:
                    arrived.set()

    async def handler(ws: ServerConnection) -> None:
        assert len(ws.recv_messages.frames) == 0
        await arrived.wait()  # both frames came in while nothing read
        assert len(ws.recv_messages.frames) == 2
        assert [await ws.recv(), await ws.recv()] == ["a", "b"]
        assert len(ws.recv_messages.frames) == 0
        await ws.send("done")

    async with served(handler, Watching) as (_, url), client(url) as peer:
        await peer.send("a")
        await peer.send("b")
        assert await asyncio.wait_for(peer.recv(), TIMEOUT) == "done"
    assert lengths == [1, 2]


# --- keepalive, the parser, the handshake -----------------------------------------------------


async def test_keepalive_runs_once_per_connection_and_only_with_a_ping_interval() -> None:
    """JitteredConnection.keepalive: websockets starts the coroutine as a task when the
    connection opens (with a ping interval), and then pings from inside it."""
    started: list[float | None] = []

    class Counting(ServerConnection):
        async def keepalive(self) -> None:
            started.append(self.ping_interval)
            await super().keepalive()

    async def handler(ws: ServerConnection) -> None:
        await ws.send("hi")
        await ws.wait_closed()

    for interval in (None, 30.0):
        async with (
            served(handler, Counting, ping_interval=interval) as (_, url),
            client(url) as peer,
        ):
            assert await asyncio.wait_for(peer.recv(), TIMEOUT) == "hi"
    assert started == [30.0]
    assert inspect.iscoroutinefunction(ServerConnection.keepalive)


async def test_the_parser_is_a_generator_that_may_be_closed_once_the_connection_is_lost() -> None:
    """JitteredConnection.connection_lost closes ``protocol.parser``: a generator that websockets
    does not run again after the connection is lost."""
    connections: list[JitteredConnection] = []

    async def handler(ws: ServerConnection) -> None:
        assert isinstance(ws, JitteredConnection)
        assert inspect.isgenerator(ws.protocol.parser)
        connections.append(ws)
        await ws.send("hi")
        await ws.wait_closed()

    async with served(handler, JitteredConnection, ping_interval=None) as (_, url):
        async with client(url) as peer:
            assert await asyncio.wait_for(peer.recv(), TIMEOUT) == "hi"
        await asyncio.wait_for(connections[0].wait_closed(), TIMEOUT)
    (ws,) = connections
    assert inspect.getgeneratorstate(ws.protocol.parser) == inspect.GEN_CLOSED
    assert ws.protocol.state is State.CLOSED
    ws.protocol.receive_eof()  # idempotent: no parser step after the connection is lost


async def test_every_attribute_of_a_connection_is_in_a_slot() -> None:
    """JitteredConnection.__slots__ names every attribute websockets gives a connection in its
    life (the handshake, messages, a keepalive ping, the closing handshake): none lands in the
    instance's ``__dict__``."""
    connections: list[JitteredConnection] = []

    async def handler(ws: ServerConnection) -> None:
        assert isinstance(ws, JitteredConnection)
        connections.append(ws)
        await ws.send(await ws.recv())
        await asyncio.wait_for(await ws.ping(), TIMEOUT)
        await ws.wait_closed()

    async with served(handler, JitteredConnection, ping_interval=0.05) as (_, url):
        async with client(url) as peer:
            await peer.send("echo")
            assert await asyncio.wait_for(peer.recv(), TIMEOUT) == "echo"
        await asyncio.wait_for(connections[0].wait_closed(), TIMEOUT)
    (ws,) = connections
    assert ws.latency > 0  # a ping was answered
    assert vars(ws) == {}


async def test_the_handshake_may_be_forgotten_once_the_connection_is_open() -> None:
    """forget_handshake: websockets reads neither the request's headers nor the response after
    the handshake (messages, pings, the closing handshake still work)."""

    async def handler(ws: ServerConnection) -> None:
        forget_handshake(ws)
        assert ws.request is not None and not ws.request.headers and ws.response is None
        await ws.send(await ws.recv())
        await ws.wait_closed()

    async with served(handler) as (_, url), client(url) as peer:
        await peer.send("echo")
        assert await asyncio.wait_for(peer.recv(), TIMEOUT) == "echo"
        await asyncio.wait_for(await peer.ping(), TIMEOUT)
    assert peer.close_code == 1000


# --- outgoing: frames written by the transport ------------------------------------------------


@pytest.mark.parametrize("length", [0, 125, 126, 65535, 65536])
def test_a_text_frame_is_the_header_and_payload_that_send_text_writes(length: int) -> None:
    """write_now / text_frame_header: on an open server protocol without extensions,
    ``send_text`` leaves exactly our header and the payload in ``data_to_send()``, which hands
    them over once (a second call gives nothing)."""
    protocol = Protocol(Side.SERVER)
    assert protocol.state is State.OPEN
    payload = b"x" * length
    protocol.send_text(payload)
    assert protocol.data_to_send() == [text_frame_header(length) + payload]
    assert protocol.data_to_send() == []


async def test_websockets_writes_its_own_frames_at_once() -> None:
    """write_now: what ``data_to_send()`` still holds goes before our frames; websockets hands
    its own frames (here the pong of a ping) to the socket within the same ``data_received``,
    so that is normally nothing."""
    seen: list[tuple[State, list[bytes]]] = []

    async def handler(ws: ServerConnection) -> None:
        await ws.recv()  # after the ping, which was answered from data_received
        seen.append((ws.protocol.state, ws.protocol.data_to_send()))
        assert write_now(ws, [b'"direct"'], 1 << 20)
        await ws.wait_closed()

    async with served(handler) as (_, url), client(url) as peer:
        await asyncio.wait_for(await peer.ping(b"p"), TIMEOUT)
        await peer.send("go")
        assert await asyncio.wait_for(peer.recv(), TIMEOUT) == '"direct"'
    assert seen == [(State.OPEN, [])]


async def test_write_now_refuses_once_the_connection_is_not_open() -> None:
    """write_now reads ``protocol.state``: past OPEN it writes nothing (``send`` then raises
    ConnectionClosed, as the outbox's writer expects)."""
    results: list[bool] = []

    async def handler(ws: ServerConnection) -> None:
        await ws.close()
        assert ws.protocol.state is State.CLOSED
        results.append(write_now(ws, [b"late"], 1 << 20))
        with pytest.raises(ConnectionClosed):
            await ws.send("late")

    async with served(handler) as (_, url), client(url) as peer:
        await asyncio.wait_for(peer.wait_closed(), TIMEOUT)
    assert results == [False]


# --- connections handed over ------------------------------------------------------------------


async def test_a_connection_built_for_an_accepted_socket_serves_as_serve_would() -> None:
    """accepted_connection: a ServerConnection made of a ServerProtocol and a stand-in server
    (handler, handler_tasks, is_serving) answers the handshake and runs the handler; once the
    stand-in stops serving, handshakes get 503."""

    async def handler(ws: ServerConnection) -> None:
        await ws.send(await ws.recv())

    listening = socket.create_server(("127.0.0.1", 0))
    port = listening.getsockname()[1]
    server = await serve(handler, sock=listening, start_serving=False, compression=None)
    handed_over = HandedOver(server)
    loop = asyncio.get_running_loop()

    async def accept_one() -> None:
        conn, _ = await loop.sock_accept(listening)
        await loop.connect_accepted_socket(
            lambda: accepted_connection(
                server,
                handed_over,
                max_size=1024,
                ping_interval=None,
                ping_timeout=None,
                close_timeout=1,
                write_limit=32 * 1024,
            ),
            conn,
        )

    try:
        listening.setblocking(False)
        accepting = asyncio.create_task(accept_one())
        async with client(f"ws://127.0.0.1:{port}") as peer:
            await accepting
            await peer.send("through")
            assert await asyncio.wait_for(peer.recv(), TIMEOUT) == "through"
        handed_over.serving = False
        accepting = asyncio.create_task(accept_one())
        with pytest.raises(InvalidStatus, match="503"):
            async with client(f"ws://127.0.0.1:{port}"):
                pass
        await accepting
    finally:
        server.close()
        await server.wait_closed()


# --- nothing else reaches in --------------------------------------------------------------------

INTERNALS = re.compile(
    r"from websockets\.(protocol|frames|server|asyncio\.messages) import (?!CloseCode$)"
    r"|(def |\.)process_event\(|recv_messages\.|data_to_send\(|\.protocol\.(parser|state)\b"
    r"|def keepalive\(|handler_tasks\b|\.headers\.clear\("
)
"""Code that reaches beneath websockets' public API (``CloseCode``, public, is allowed)."""


def test_only_ws_internals_reaches_into_websockets() -> None:
    server = Path(ws_internals.__file__).resolve().parent.parent
    offenders = [
        f"{path.relative_to(server.parent)}:{n}: {line.strip()}"
        for path in sorted(server.rglob("*.py"))
        if path.name != "ws_internals.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if INTERNALS.search(line)
    ]
    assert offenders == []


def test_the_contract_is_pinned_to_the_major_version_it_was_checked_against() -> None:
    import websockets

    assert websockets.__version__.split(".")[0] == "17", (
        "websockets' internals used by server/transport/ws_internals.py were checked against "
        "17: run this module's tests and update the docstring's list before moving the pin"
    )

"""The public address: websockets and the HTTP API (aiohttp) on one port (server/transport/public.py)."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import socket

import aiohttp
import pytest
from support import wait_until
from ws_support import StartApp

from server.app import App
from server.transport.public import ACCEPTS_PER_TURN, PublicListener, request_path


async def _raw(app: App, data: bytes, *, pieces: int = 1) -> bytes:
    """Send ``data`` (in ``pieces`` writes, each drained before the next) and read until the
    server closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", app.port)
    try:
        step = -(-len(data) // pieces)
        for start in range(0, len(data), step):
            writer.write(data[start : start + step])
            await writer.drain()
        return await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()


def test_request_path_reads_the_first_line_only() -> None:
    assert request_path(b"GET /api/account?x=1 HTTP/1.1\r\nHost: a\r\n") == "/api/account"
    assert request_path(b"GET /api/acc") is None
    assert request_path(b"nonsense\r\n") == ""


async def test_websocket_pages_and_api_share_the_public_port(
    start_app: StartApp, open_client: object
) -> None:
    app = await start_app()
    async with aiohttp.ClientSession() as http:
        async with http.get(f"http://127.0.0.1:{app.port}/api/bot/no-such-thing") as answer:
            assert answer.status == 404
            assert await answer.json() == {"error": "Not found."}
        async with http.post(f"http://127.0.0.1:{app.port}/fishnet/nothing") as answer:
            assert answer.status in (404, 405)
            assert "error" in await answer.json()
        async with http.get(f"http://127.0.0.1:{app.port}/healthz") as answer:
            assert answer.status == 200
            assert (await answer.json())["status"] == "ok"
    from websockets.asyncio.client import connect

    async with connect(app.url) as ws:
        await ws.send(json.dumps({"t": "guest"}))
        welcome = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert welcome["t"] == "welcome"


async def test_a_kept_alive_api_connection_also_gets_the_pages(start_app: StartApp) -> None:
    app = await start_app()
    requests = (
        b"GET /api/bot/none HTTP/1.1\r\nHost: x\r\n\r\n"
        b"GET /api/variants HTTP/1.1\r\nHost: x\r\n\r\n"
        b"GET /ws HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    answer = await _raw(app, requests)
    heads = re.findall(rb"HTTP/1\.1 \d{3} [A-Za-z ]+\r\n", answer)
    assert heads == [
        b"HTTP/1.1 404 Not Found\r\n",
        b"HTTP/1.1 200 OK\r\n",
        b"HTTP/1.1 426 Upgrade Required\r\n",
    ]
    assert b'"variants"' in answer


async def test_a_request_line_in_pieces_is_still_routed(start_app: StartApp) -> None:
    app = await start_app()
    answer = await _raw(
        app, b"GET /api/account/nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", pieces=6
    )
    assert answer.startswith(b"HTTP/1.1 404")
    assert answer.rstrip().endswith(b'{"error": "Not found."}')
    answer = await _raw(app, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", pieces=4)
    assert answer.startswith(b"HTTP/1.1 200")


async def test_an_unparsable_api_request_is_answered_400_and_logged_in_one_line(
    start_app: StartApp, caplog: pytest.LogCaptureFixture
) -> None:
    """A raw non-ASCII byte in an API path: aiohttp answers 400 and used to log it at ERROR
    with a traceback (any client could fill the log); now one INFO line."""
    app = await start_app()
    with caplog.at_level(logging.INFO, logger="aiohttp.server"):
        answer = await _raw(app, b"GET /api/bot/\xc3\xa9 HTTP/1.1\r\nHost: x\r\n\r\n")
        assert answer.startswith(b"HTTP/1.0 400")
        # the next request is served, and its answer comes after the record of the bad one
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"http://127.0.0.1:{app.port}/healthz") as healthz,
        ):
            assert healthz.status == 200
    records = [r for r in caplog.records if r.name == "aiohttp.server"]
    assert [(r.levelname, r.exc_info) for r in records] == [("INFO", None)]
    assert "InvalidURLError (answered 400)" in records[0].getMessage()


async def test_garbage_and_silence_are_closed(start_app: StartApp) -> None:
    app = await start_app()
    # Not HTTP: websockets gets it, as before the API existed, and closes it.
    answer = await _raw(app, b"\x00\x01 not http at all\r\n\r\n")
    assert answer == b"" or answer.startswith(b"HTTP/1.1 400")
    _, writer = await asyncio.open_connection("127.0.0.1", app.port)
    writer.close()  # says nothing: the listener forgets it
    await writer.wait_closed()
    url = f"http://127.0.0.1:{app.port}/healthz"  # and still serves the next one
    async with aiohttp.ClientSession() as http, http.get(url) as healthz:
        assert healthz.status == 200


async def test_accepted_connections_send_small_frames_at_once(start_app: StartApp) -> None:
    """TCP_NODELAY on every connection the listener accepts, as asyncio's servers set it:
    otherwise a move's ack could wait for the previous frame's acknowledgement (Nagle)."""
    import socket

    app = await start_app()
    from websockets.asyncio.client import connect

    async with connect(app.url) as ws:
        await ws.send(json.dumps({"t": "guest"}))
        await asyncio.wait_for(ws.recv(), 10)
        (connection,) = app.server._server.connections  # type: ignore[union-attr]
        sock = connection.transport.get_extra_info("socket")
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1


async def test_a_burst_of_connections_is_accepted_a_batch_per_turn_of_the_loop() -> None:
    """A reconnect storm's queued connections are not all accepted (then handshaken and logged
    in) in one turn of the loop, ahead of the moves waiting to be read."""

    def nobody(path: str) -> asyncio.BaseProtocol:
        raise AssertionError("no connection says anything")

    listener = PublicListener("127.0.0.1", 0, lambda method, path: nobody)
    listener.bind()
    # The kernel completes these connections into the listen queue before any accept.
    clients = [
        socket.create_connection(("127.0.0.1", listener.port)) for _ in range(3 * ACCEPTS_PER_TURN)
    ]
    try:
        listener.start()
        seen: list[int] = []
        # Runs in the same turn as the accepting task's first step, just after it.
        asyncio.get_running_loop().call_soon(lambda: seen.append(listener.waiting))
        await wait_until(lambda: listener.waiting == len(clients))
        assert seen == [ACCEPTS_PER_TURN]
    finally:
        await listener.close()
        for client in clients:
            client.close()


async def test_websockets_opening_at_once_are_bounded_until_they_log_in() -> None:
    """At most ``max_opening`` websocket connections are handed over and not yet logged in: the
    others queue, unread; a login (``admitted``) lets the oldest queued one in, and so does a
    connection that has not logged in after ``OPENING_HOLD_S``. Other connections (a health
    check, the HTTP API) never queue behind them."""
    made: list[int] = []
    """The websockets handed over, by file descriptor."""
    api: list[asyncio.BaseTransport] = []

    class Websocket(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            made.append(transport.get_extra_info("socket").fileno())

    class Api(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            api.append(transport)

    listener = PublicListener(
        "127.0.0.1",
        0,
        lambda method, path: Websocket if path == "/ws" else Api,
        holds=lambda path: path == "/ws",
        max_opening=2,
    )
    listener.bind()
    clients = [socket.create_connection(("127.0.0.1", listener.port)) for _ in range(5)]
    for client in clients[:4]:
        client.sendall(b"GET /ws HTTP/1.1\r\n\r\n")
    # The last to come is for the HTTP API: handed over at once, the websockets' queue or not.
    clients[4].sendall(b"GET /healthz HTTP/1.1\r\n\r\n")
    try:
        listener.start()
        await wait_until(lambda: len(made) == 2 and len(api) == 1 and listener.queued == 2)
        assert (listener.opening, listener.waiting) == (2, 0)  # two websockets hold the slots
        listener.admitted(made[0])  # the first websocket logged in
        await wait_until(lambda: len(made) == 3)
        assert (listener.opening, listener.queued) == (2, 1)
        # Nobody else logs in: the slots are let go after OPENING_HOLD_S.
        await wait_until(lambda: len(made) == 4)
        await wait_until(lambda: listener.opening == 0)
        assert listener.queued == 0
    finally:
        await listener.close()
        for client in clients:
            client.close()

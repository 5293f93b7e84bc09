"""The outbox writes websocket text frames itself (``text_frame_header``): byte for byte what
websockets would have written, and readable by a real websockets client at every header size."""

from __future__ import annotations

import asyncio

import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.frames import Frame, Opcode

from server.transport.outbox import Flusher, Outbox, text_frame_header

# Around each boundary of RFC 6455's three header forms (7-bit, 16-bit and 64-bit lengths).
LENGTHS = [0, 1, 125, 126, 127, 65535, 65536, 70_000]


@pytest.mark.parametrize("length", LENGTHS)
def test_the_header_is_what_websockets_writes_for_a_server_text_frame(length: int) -> None:
    payload = b"x" * length
    expected = Frame(Opcode.TEXT, payload).serialize(mask=False, extensions=[])
    assert text_frame_header(length) + payload == expected


async def test_a_client_reads_every_frame_an_outbox_writes_in_order() -> None:
    payloads = [f'{{"n":{n},"pad":"{"é" * (n // 2)}"}}'.encode() for n in LENGTHS]
    overflowed: list[Outbox] = []
    done = asyncio.Event()

    async def handler(ws: ServerConnection) -> None:
        outbox = Outbox(ws, 100, 1 << 20, overflowed.append, Flusher())
        for payload in payloads[:3]:  # several frames in one turn: one writelines
            outbox.put(payload)
        await asyncio.sleep(0)  # the flusher's turn
        for payload in payloads[3:]:
            outbox.put(payload)
        await done.wait()

    async with serve(handler, "127.0.0.1", 0, compression=None) as server:
        port = server.sockets[0].getsockname()[1]
        async with connect(f"ws://127.0.0.1:{port}", compression=None, max_size=None) as client:
            async with asyncio.timeout(10):  # a wrong header leaves the client waiting for bytes
                received = [await client.recv(decode=False) for _ in payloads]
            done.set()
    assert received == payloads
    assert overflowed == []

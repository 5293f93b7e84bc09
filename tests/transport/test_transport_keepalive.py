"""Keepalive: the server pings every connection, spreads the pings of connections opened
together (server.transport.ws_internals.JitteredConnection), and closes a peer that stops answering.

The clients here are websockets' sans-I/O ClientProtocol over raw asyncio streams, so the test
sees every ping frame and decides whether to answer it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from websockets.client import ClientProtocol
from websockets.frames import Opcode
from websockets.protocol import State
from websockets.uri import parse_uri

from server.app import App

StartApp = Callable[..., Awaitable[App]]
INTERVAL = 0.4


@dataclass
class RawClient:
    """A websocket client that records when pings arrive and answers them only if told to."""

    protocol: ClientProtocol
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    answer_pings: bool = True
    pings: list[float] = field(default_factory=list)
    closed_at: float | None = None

    @classmethod
    async def open(cls, url: str, answer_pings: bool = True) -> RawClient:
        uri = parse_uri(url)
        reader, writer = await asyncio.open_connection(uri.host, uri.port)
        protocol = ClientProtocol(uri)
        protocol.send_request(protocol.connect())
        client = cls(protocol, reader, writer, answer_pings)
        client.flush()
        while protocol.state is State.CONNECTING:
            protocol.receive_data(await reader.read(65536))
            protocol.events_received()
        return client

    def flush(self) -> None:
        for data in self.protocol.data_to_send():
            if data:
                self.writer.write(data)

    async def listen(self, seconds: float) -> None:
        """Read for ``seconds``, noting pings and the server closing the connection."""
        loop = asyncio.get_running_loop()
        until = loop.time() + seconds
        while loop.time() < until and self.closed_at is None:
            try:
                data = await asyncio.wait_for(self.reader.read(65536), until - loop.time())
            except TimeoutError:
                return
            if not data:
                self.closed_at = loop.time()
                return
            self.protocol.receive_data(data)
            for frame in self.protocol.events_received():
                if frame.opcode is Opcode.PING:
                    self.pings.append(loop.time())
                elif frame.opcode is Opcode.CLOSE:
                    self.closed_at = loop.time()
            pending = self.protocol.data_to_send()  # pongs (queued by the protocol) and closes
            if self.answer_pings or self.closed_at is not None:
                for chunk in pending:
                    self.writer.write(chunk)

    def close(self) -> None:
        self.writer.close()


def settings(**overrides: Any) -> dict[str, Any]:
    return {"ping_interval_s": INTERVAL, "ping_timeout_s": INTERVAL, **overrides}


async def test_connections_opened_together_are_pinged_at_spread_times(
    start_app: StartApp,
) -> None:
    app = await start_app(**settings())
    clients = await asyncio.gather(*(RawClient.open(app.url) for _ in range(20)))
    opened = asyncio.get_running_loop().time()
    await asyncio.gather(*(client.listen(4 * INTERVAL) for client in clients))
    for client in clients:
        client.close()
    first_pings = sorted(client.pings[0] - opened for client in clients)
    # Each first ping comes after a random part of one interval, then one interval.
    assert all(INTERVAL * 0.9 <= at <= 2 * INTERVAL + 0.5 for at in first_pings), first_pings
    assert first_pings[-1] - first_pings[0] > INTERVAL / 3, "the pings were not spread"
    # And then every interval: answered pings keep the connection open.
    assert all(len(client.pings) >= 2 and client.closed_at is None for client in clients)


async def test_a_peer_that_stops_answering_pings_is_closed(start_app: StartApp) -> None:
    app = await start_app(**settings())
    silent = await RawClient.open(app.url, answer_pings=False)
    polite = await RawClient.open(app.url)
    opened = asyncio.get_running_loop().time()
    await asyncio.gather(silent.listen(8 * INTERVAL), polite.listen(8 * INTERVAL))
    silent.close()
    polite.close()
    assert silent.pings and silent.closed_at is not None
    # Closed within the ping timeout after its first unanswered ping.
    assert silent.closed_at - silent.pings[0] <= INTERVAL + 0.6
    assert silent.closed_at - opened <= 3 * INTERVAL + 0.6
    assert polite.closed_at is None and len(polite.pings) >= 3

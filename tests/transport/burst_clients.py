"""The clients of the login-burst test (tests/transport/test_transport_memory.py), in a process
of their own so that their objects are not counted with the server's.

``python burst_clients.py URL N``: opens N websockets at once, logs each in as a guest, prints
``ready`` once every one has its ``hello``, and closes them all when its standard input closes.
"""

from __future__ import annotations

import asyncio
import json
import sys

from websockets.asyncio.client import ClientConnection, connect


async def login(url: str) -> ClientConnection:
    ws = await connect(url, compression=None, ping_interval=None, open_timeout=60)
    await ws.send('{"t": "guest", "a": 1}')
    for expected in ("welcome", "hello"):
        message = json.loads(await ws.recv())
        assert message["t"] == expected, message
    return ws


async def main(url: str, count: int) -> None:
    sockets = await asyncio.gather(*(login(url) for _ in range(count)))
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await asyncio.gather(*(ws.close() for ws in sockets))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))

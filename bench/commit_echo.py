"""The commit echo: the floor of a move's round trip when a move is acknowledged only after its
commit, for ``bench_load.py``.

A websocket echo (the hub's websocket settings) that, before echoing a frame, stores one move
row through the server's own write path — :class:`~server.store.Store` and
:class:`~server.store.writer.MoveWriter`, configured as :mod:`server.app` configures them
(PostgreSQL: asyncpg straight, two flushers; SQLite: one connection, one flusher) — and waits
for its commit. Each connection gets a game row of its own when it opens; frame *n* becomes ply
*n*. What it leaves out is exactly the hub: parsing the command, the rules engine, clocks, the
room, building and encoding the events. A connection to ``/busy/N`` also burns N µs of CPU right
after each commit is handed to the database (``bench_load.py --echo-busy-us``); one to
``/timed`` answers, instead of the frame, with the ``time.perf_counter()`` readings of the
frame reaching the handler (``rx``) and of the answer leaving (``tx``) (``--phases``).

Run by ``bench_load.py`` as ``--commit-echo-server PORT DATABASE_URL``.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Awaitable, Callable

from sqlalchemy.engine import make_url
from websockets.asyncio.server import ServerConnection, serve

from server.config import Settings
from server.rules import MoveRecord
from server.rules.time_control import Fischer
from server.store import Store
from server.store.migrate import upgrade_to_head
from server.store.writer import MoveWriter

DEFAULTS = Settings()


async def commit_echo_main(port: int, database_url: str) -> None:
    sqlite = make_url(database_url).get_backend_name() == "sqlite"
    await upgrade_to_head(database_url)
    async with (
        Store.from_url(database_url, pool_size=1 if sqlite else 2) as store,
        MoveWriter(store, flushers=1 if sqlite else 2) as writer,
    ):

        async def echo(ws: ServerConnection) -> None:
            # /busy/N: burn N µs of CPU right after handing each commit to the database
            # (bench_load.py --echo-busy-us).
            path = ws.request.path if ws.request is not None else "/"
            busy_s = int(path.rsplit("/", 1)[1]) / 1e6 if path.startswith("/busy/") else 0.0
            timed = path == "/timed"
            loop = asyncio.get_running_loop()
            game_id = await store.create_game(
                variant="minishogi",
                start_fen="rbsgk/4p/5/P4/KGSBR[-] w 0 1",
                time_control=Fischer(3_600_000),
                first_name="echo",
                second_name="echo",
            )
            ply = 0
            async for message in ws:
                received = time.perf_counter()
                ply += 1
                if busy_s:
                    loop.call_soon(_burn, busy_s)  # runs once the batch is on its way
                await writer.append(game_id, MoveRecord(ply, "a1a2", "K-4d", 3_600_000, 0))
                if timed:
                    message = f'{{"rx":{received},"tx":{time.perf_counter()}}}'
                await ws.send(message)

        await serve_until_sigterm(echo, port)


def _burn(seconds: float) -> None:
    """Hold the CPU for ``seconds``, as a server's own work would."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


async def serve_until_sigterm(
    handler: Callable[[ServerConnection], Awaitable[None]], port: int
) -> None:
    """Serve ``handler`` on 127.0.0.1:``port`` with the hub's websocket settings; print
    ``ready``, stop at SIGTERM. Both of bench_load's echoes run this way."""
    async with serve(
        handler,
        "127.0.0.1",
        port,
        compression=None,
        max_size=DEFAULTS.max_frame_bytes,
        ping_interval=DEFAULTS.ping_interval_s,
        ping_timeout=DEFAULTS.ping_timeout_s,
    ) as server:
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        print("ready", flush=True)
        await stop.wait()
        server.close()

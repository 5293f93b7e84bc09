"""The human players of ``bench_bots.py``: a few websocket pairs (``load_clients.Player``, as
``bench_load.py`` plays them) in a process of their own.

    python bench/bot_humans.py PORT PAIRS THINK_MS MAX_PLIES

They run apart from the bots' clients so that the instrument's event loop is not the one
busy with 200 bots' HTTP, NDJSON and move choices: a round trip measured here is the hub's
(and the shared cores'), not the bench's own loop. The process prints ``ready`` once every
player has logged in as a guest and seeks, plays until a line (or end of file) on its stdin,
then prints one JSON line: every acknowledged move as ``[game, ply, sent, acknowledged]``, the
last two ``time.perf_counter()`` readings (the system-wide monotonic clock, so the parent splits them
by its own phase marks), the errors and the games finished.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time

from load_clients import Player, Stats, open_many


async def play(port: int, pairs: int, think_ms: float, max_plies: int) -> None:
    sockets = await open_many(f"ws://127.0.0.1:{port}/ws", 2 * pairs, login=True)
    stats = Stats()
    # Measured from the first move to the end (the parent picks each phase's moves by time).
    players = [
        Player(ws, random.Random(1000 + i), think_ms, max_plies, stats)
        for i, ws in enumerate(sockets)
    ]
    now = time.monotonic()
    tasks = [asyncio.create_task(p.run(now, 0.0, float("inf"))) for p in players]
    print("ready", flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    for task in tasks:
        task.cancel()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
            key = repr(result)[:60]
            stats.errors[key] = stats.errors.get(key, 0) + 1
    await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)
    trips = [list(trip) for trip in stats.trips]
    print(json.dumps({"trips": trips, "errors": stats.errors, "games": stats.games}), flush=True)


if __name__ == "__main__":
    port, pairs, think_ms, max_plies = sys.argv[1:5]
    asyncio.run(play(int(port), int(pairs), float(think_ms), int(max_plies)))

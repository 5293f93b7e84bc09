"""Password guessing at scale against a real hub, with honest players logging in beside it
(the login throttling of cede9d6, 2026-12-06).

Run by hand (never in CI)::

    .venv/bin/python bench/abuse_logins.py                    # every scenario, 20 s each
    .venv/bin/python bench/abuse_logins.py --seconds 10 --scenario ws-1000

The hub (``hub_probe.py``, a temporary SQLite file, the real argon2 cost of
``config/default.toml``) gets one registered honest player. In each scenario the attackers
send wrong passwords for the honest player's account as fast as they are answered (a
connection the server closes after five failures is opened again at once), while every
0.25 s an honest client opens a new websocket from 127.0.0.1 and logs in with the right
password. Printed per scenario: the honest logins' latency from the login frame to
``welcome`` (p50 / p99 / max, and how many) and, apart, the time to open their websocket (the
attackers' reconnections queue in the listener's admission of opening websockets, which is not
this bench's subject: ``abuse_connections.py``'s),
the attackers' answers by code and their password checks per second, the hub's loop lag
(the stall probe, max and p99) and CPU, and the load average.

Scenarios (``--scenario``):

* ``ws-40`` / ``ws-1000``: 40 / 1,000 websockets from one address (127.0.0.2), default
  throttling;
* ``ws-1000-no-backoff``: the same with the back-off switched off (free failures 10**9): only
  "one hash per address at once" stands between the attacker and the hashing pool;
* ``ws-8-addresses-no-backoff``: 800 websockets from 8 addresses (127.0.0.2–9), no back-off:
  eight addresses share the pool with the honest player;
* ``http-40``: 40 kept-alive HTTP connections from one address on ``POST /api/token/list``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp
from load_clients import percentile
from processes import cpu_seconds, probe_report, raise_fd_limit, start_hub
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

NAME, PASSWORD = "Honest", "the honest password"
NO_BACKOFF = {
    "HUB_LOGIN_FREE_FAILURES_PER_ADDRESS": "1000000000",
    "HUB_LOGIN_FREE_FAILURES_PER_ACCOUNT": "1000000000",
}
SCENARIOS: dict[str, tuple[str, int, int, dict[str, str]]] = {
    # name: (door, connections, addresses, settings)
    "ws-40": ("ws", 40, 1, {}),
    "ws-1000": ("ws", 1000, 1, {}),
    "ws-1000-no-backoff": ("ws", 1000, 1, NO_BACKOFF),
    "ws-8-addresses-no-backoff": ("ws", 800, 8, NO_BACKOFF),
    "http-40": ("http", 40, 1, {}),
}


async def request(ws: Any, frame: dict[str, Any]) -> dict[str, Any]:
    await ws.send(json.dumps(frame))
    while True:
        message: dict[str, Any] = json.loads(await ws.recv())
        if message.get("a") == frame.get("a"):
            return message


async def honest_login(ws: Any) -> float:
    """An honest login on an open connection: seconds from the login frame to ``welcome``."""
    started = time.perf_counter()
    frame = {"t": "login", "d": {"name": NAME, "password": PASSWORD}, "a": 1}
    answer = await request(ws, frame)
    assert answer["t"] == "welcome", answer
    await ws.close()
    return time.perf_counter() - started


async def honest_opening(url: str, until: float, opening: list[float]) -> None:
    """Once a second, the time an honest client takes to open a websocket."""
    while time.monotonic() < until - 1:
        started = time.perf_counter()
        async with connect(url, compression=None, open_timeout=120):
            opening.append(time.perf_counter() - started)
        await asyncio.sleep(1)


async def ws_attacker(url: str, address: str, until: float, codes: Counter[str]) -> None:
    frame = {"t": "login", "d": {"name": NAME, "password": "a wrong guess"}, "a": 1}
    while time.monotonic() < until:
        try:
            async with connect(
                url, compression=None, open_timeout=120, local_addr=(address, 0)
            ) as ws:
                while time.monotonic() < until:
                    answer = await request(ws, frame)
                    codes[answer["d"]["code"] if answer["t"] == "error" else answer["t"]] += 1
        except (ConnectionClosed, OSError, TimeoutError):
            codes["reconnect"] += 1


async def http_attacker(port: int, address: str, until: float, codes: Counter[str]) -> None:
    connector = aiohttp.TCPConnector(local_addr=(address, 0), limit=1)
    url = f"http://127.0.0.1:{port}/api/token/list"
    async with aiohttp.ClientSession(connector=connector) as http:
        while time.monotonic() < until:
            try:
                async with http.post(url, data={"name": NAME, "password": "a guess"}) as answer:
                    await answer.read()
                    codes[str(answer.status)] += 1
            except aiohttp.ClientError:
                codes["reconnect"] += 1


async def scenario(name: str, seconds: float) -> None:
    door, connections, addresses, settings = SCENARIOS[name]
    saved = dict(os.environ)
    os.environ.update(settings)
    try:
        with tempfile.TemporaryDirectory() as workdir:
            url = f"sqlite+aiosqlite:///{Path(workdir) / 'hub.sqlite3'}"
            hub = await start_hub(url, Path(workdir))
            try:
                await run(hub, name, door, connections, addresses, seconds)
            finally:
                hub.stop()
    finally:
        os.environ.clear()
        os.environ.update(saved)


async def run(
    hub: Any, name: str, door: str, connections: int, addresses: int, seconds: float
) -> None:
    url = f"ws://127.0.0.1:{hub.port}/ws"
    async with connect(url, compression=None) as ws:  # registered from 127.0.0.1
        answer = await request(
            ws, {"t": "register", "d": {"name": NAME, "password": PASSWORD}, "a": 1}
        )
        assert answer["t"] == "welcome", answer
    alone = [await honest_login(await connect(url, compression=None)) for _ in range(5)]
    # The honest players' connections are opened before the attack (and log in within the
    # 30 s allowed): the login is measured, not the listener's admission.
    honest = [
        await connect(url, compression=None, ping_interval=None)
        for _ in range(int(seconds / 0.25) + 1)
    ]
    await probe_report(hub, signal.SIGUSR1, "window")
    cpu_before = cpu_seconds(hub.popen.pid)
    until = time.monotonic() + seconds
    codes: Counter[str] = Counter()
    attackers = [
        asyncio.create_task(
            ws_attacker(url, f"127.0.0.{2 + i % addresses}", until, codes)
            if door == "ws"
            else http_attacker(hub.port, f"127.0.0.{2 + i % addresses}", until, codes)
        )
        for i in range(connections)
    ]
    opening: list[float] = []
    attackers.append(asyncio.create_task(honest_opening(url, until, opening)))
    latencies: list[float] = []
    while time.monotonic() < until - 1:
        latencies.append(await honest_login(honest.pop()))
        await asyncio.sleep(0.25)
    await asyncio.gather(*attackers, return_exceptions=True)
    await asyncio.gather(*(ws.close() for ws in honest))
    lag = await probe_report(hub, signal.SIGUSR1, "window")
    cpu = (cpu_seconds(hub.popen.pid) - cpu_before) / seconds
    checks = codes["bad_credentials"] + codes["401"]
    print(
        f"{name}: honest login (frame to welcome) alone p50 {1000 * percentile(alone, 0.5):.0f} ms;"
        f" under attack p50 {1000 * percentile(latencies, 0.5):.0f} ms, p99 "
        f"{1000 * percentile(latencies, 0.99):.0f} ms, max {1000 * max(latencies):.0f} ms "
        f"({len(latencies)} logins); opening its websocket p50 "
        f"{1000 * percentile(opening, 0.5):.0f} ms, max {1000 * max(opening, default=0):.0f} ms "
        f"({len(opening)}); attackers' "
        f"answers "
        f"{dict(codes.most_common())} = {checks / seconds:.1f} password checks/s; loop lag max "
        f"{lag['lag_max_ms']:.1f} ms, p99 {lag['lag_p99_ms']:.1f} ms; hub CPU {100 * cpu:.0f} %; "
        f"load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )


async def main(names: list[str], seconds: float) -> None:
    raise_fd_limit()
    for name in names:
        with contextlib.suppress(KeyboardInterrupt):
            await scenario(name, seconds)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), action="append")
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    asyncio.run(main(args.scenario or list(SCENARIOS), args.seconds))

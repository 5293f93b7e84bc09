"""Connection abuse at scale (the limits per address and in total of 34eaa62, 2026-12-06):
thousands of connections that never finish anything, from a few addresses, beside an honest
player.

Run by hand (never in CI)::

    .venv/bin/python bench/abuse_connections.py --connections 5000 --addresses 4
    .venv/bin/python bench/abuse_connections.py --connections 15000 --addresses 1 --seconds 45
    .venv/bin/python bench/abuse_connections.py --unlimited     # per-address connection limit off

A hub (``bench/hub_probe.py``, its loop-lag probe; a temporary SQLite file; the settings'
defaults unless ``--unlimited`` lifts the per-address connection limit, to see what the
timeouts and the websockets' queue alone do) and an attacker process (this script, ``--attack``) that keeps ``--connections`` sockets
going from 127.0.0.2, 127.0.0.3 … (``--addresses`` of them) for ``--seconds``: a quarter each
trickle a request head (one byte every 2 s), announce a 1 MB POST body and trickle it, trickle
a websocket upgrade, and complete a websocket upgrade that never logs in. A socket the hub
closes or refuses is opened again (after 1 s if it was refused). Meanwhile, from 127.0.0.1, two
guests play a Mini-Shogi game (a move every 100 ms or so: move → ack latency), a new guest logs
in every second (connect → ``hello``), and an HTTP API request is made every second.

Printed: what the attacker's sockets met (answered 429/503, closed without an answer — a
timeout —, still open at the end), the most descriptors the hub held, the honest player's
login and move-ack latencies and HTTP request time (p50/p99/max), the probe's loop lag and the
load average. Both processes raise their open-file limit to the hard limit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from load_clients import Player, Stats, login_guest, percentile
from processes import probe_report, raise_fd_limit, start_hub
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import WebSocketException

from server.config import Settings

KINDS = {
    "slow_head": (b"GET /api/account HTTP/1.1\r\nHost: hub\r\nX-Slow: ", b"a"),
    "slow_body": (
        b"POST /api/token HTTP/1.1\r\nHost: hub\r\nContent-Type: application/x-www-form-"
        b"urlencoded\r\nContent-Length: 1000000\r\n\r\nname=",
        b"a",
    ),
    "ws_unfinished": (b"GET /ws HTTP/1.1\r\nHost: hub\r\nUpgrade: websocket\r\nX-Slow: ", b"a"),
    "ws_silent": (
        b"GET /ws HTTP/1.1\r\nHost: hub\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        b"",
    ),
}
TRICKLE_S = 2.0
"""The attacker's trickled bytes come this far apart."""


# ------------------------------------------------------------------ the attacker (--attack)


async def attack(port: int, count: int, addresses: int, seconds: float) -> dict[str, Any]:
    outcomes: dict[str, dict[str, int]] = {kind: {} for kind in KINDS}
    opened = 0
    deadline = time.monotonic() + seconds
    gate = asyncio.Semaphore(256)  # connects in flight at once

    def note(kind: str, what: str) -> None:
        outcomes[kind][what] = outcomes[kind].get(what, 0) + 1

    async def slot(index: int) -> None:
        nonlocal opened
        kind = list(KINDS)[index % len(KINDS)]
        head, trickle = KINDS[kind]
        source = f"127.0.0.{2 + index % addresses}"
        while time.monotonic() < deadline:
            try:
                async with gate:
                    reader, writer = await asyncio.open_connection(
                        "127.0.0.1", port, local_addr=(source, 0)
                    )
                opened += 1
                writer.write(head)
            except OSError as error:
                note(kind, f"connect failed: {error.strerror}")
                await asyncio.sleep(1)
                continue
            what = await hold(reader, writer, trickle, deadline)
            note(kind, what)
            if what != "open at the end":
                await asyncio.sleep(1 if what.startswith("answered") else 0.1)

    await asyncio.gather(*(slot(index) for index in range(count)))
    return {"opened": opened, "outcomes": outcomes}


async def hold(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, trickle: bytes, deadline: float
) -> str:
    """Keep one connection going until the hub answers or closes it, or the deadline."""
    try:
        while time.monotonic() < deadline:
            try:
                data = await asyncio.wait_for(reader.read(64), TRICKLE_S)
            except TimeoutError:
                if trickle:
                    writer.write(trickle)
                continue
            if not data:
                return "closed without an answer"
            status = data.split(b" ", 2)[1].decode() if data.startswith(b"HTTP/") else "?"
            if status == "101":  # the silent websocket: upgraded, never logs in
                while await reader.read(4096):
                    if time.monotonic() > deadline:
                        return "open at the end"
                return "upgraded, then closed (login timeout)"
            return f"answered {status}"
        return "open at the end"
    except (ConnectionError, OSError):
        return "reset"
    finally:
        writer.close()


# ------------------------------------------------------------------ the honest player


async def honest(port: int, seconds: float) -> dict[str, Any]:
    url = f"ws://127.0.0.1:{port}/ws"
    logins: list[float] = []
    requests: list[float] = []
    failures: list[str] = []
    stats = Stats()
    rng = random.Random(7)
    players = []
    for _ in range(2):
        ws = await honest_login(url, failures)
        players.append(Player(ws, rng, think_ms=100, max_plies=10_000, stats=stats))
    now = time.monotonic()
    games = [asyncio.create_task(p.run(now, now, now + seconds)) for p in players]
    deadline = now + seconds
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < deadline:
            began = time.monotonic()
            try:
                async with asyncio.timeout(30):
                    ws = await honest_login(url, failures)
                    logins.append((time.monotonic() - began) * 1000)
                    await ws.close()
                began = time.monotonic()
                async with (
                    asyncio.timeout(30),
                    http.get(f"http://127.0.0.1:{port}/api/bot/online") as answer,
                ):
                    await answer.read()
                    requests.append((time.monotonic() - began) * 1000)
            except (OSError, TimeoutError, aiohttp.ClientError) as error:
                failures.append(type(error).__name__)
            await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - began)))
    for ws_player in players:
        await ws_player.ws.close()
    await asyncio.gather(*games, return_exceptions=True)
    return {"logins": logins, "requests": requests, "acks": stats.rtts_ms, "failures": failures}


async def honest_login(url: str, failures: list[str]) -> ClientConnection:
    """A guest logged in; a refused or failed attempt is noted and tried again at once (the
    time of a login is until it succeeds)."""
    while True:
        try:
            ws = await connect(url, compression=None, ping_interval=None)
            await login_guest(ws)
            return ws
        except (OSError, WebSocketException) as error:
            failures.append(str(error)[:60])


def hub_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def figures(values: list[float]) -> str:
    return (
        f"p50 {percentile(values, 0.5):.0f} ms, p99 {percentile(values, 0.99):.0f} ms, "
        f"max {max(values, default=float('nan')):.0f} ms (n={len(values)})"
    )


async def main(args: argparse.Namespace) -> None:
    limit = raise_fd_limit()
    defaults = Settings()  # the attacked hub's limits are the defaults (start_hub raises them)
    os.environ["HUB_MAX_CONNECTIONS_PER_ADDRESS"] = str(
        100_000 if args.unlimited else defaults.max_connections_per_address
    )
    os.environ["HUB_MAX_QUEUED_PER_ADDRESS"] = str(defaults.max_queued_per_address)
    with tempfile.TemporaryDirectory() as workdir:
        url = f"sqlite+aiosqlite:///{Path(workdir) / 'hub.sqlite3'}"
        hub = await start_hub(url, Path(workdir))
        try:
            await asyncio.sleep(5)  # start-up's own work (the rules' tables) is over
            await probe_report(hub, signal.SIGUSR1, "window")
            attacker = await asyncio.create_subprocess_exec(
                sys.executable, __file__, "--attack", str(hub.port), str(args.connections),
                str(args.addresses), str(args.seconds), stdout=subprocess.PIPE,
            )  # fmt: skip
            fds = 0

            async def sample() -> None:
                nonlocal fds
                while True:
                    fds = max(fds, hub_fds(hub.popen.pid))
                    await asyncio.sleep(0.5)

            sampler = asyncio.create_task(sample())
            await asyncio.sleep(2)  # the attack under way
            measured = await honest(hub.port, args.seconds - 4)
            output, _ = await attacker.communicate()
            sampler.cancel()
            lag = await probe_report(hub, signal.SIGUSR1, "window")
        finally:
            hub.stop()
    report = json.loads(output)
    limits = "per-address connection limit off" if args.unlimited else "default limits"
    print(
        f"{args.connections:,} attacker sockets from {args.addresses} address(es) for "
        f"{args.seconds:g} s ({limits}; open-file limit {limit:,}); connections opened "
        f"{report['opened']:,}; the hub held at most {fds:,} descriptors",
        flush=True,
    )
    for kind, outcomes in report["outcomes"].items():
        print(f"  {kind}: {dict(sorted(outcomes.items(), key=lambda item: -item[1]))}")
    print(f"honest logins (connect → hello): {figures(measured['logins'])}")
    print(f"honest HTTP API requests: {figures(measured['requests'])}")
    print(f"running game's move → ack: {figures(measured['acks'])}")
    if measured["failures"]:
        print(f"honest failures: {measured['failures']}")
    print(
        f"hub loop lag max {lag['lag_max_ms']:.0f} ms, own CPU between two wake-ups at most "
        f"{lag['busy_max_ms']:.0f} ms; load average {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--attack"]:
        raise_fd_limit()
        port, count, addresses, seconds = sys.argv[2:6]
        result = asyncio.run(attack(int(port), int(count), int(addresses), float(seconds)))
        print(json.dumps(result))
        sys.exit(0)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--connections", type=int, default=5000)
    parser.add_argument("--addresses", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=45.0)
    parser.add_argument("--unlimited", action="store_true", help="lift the per-address limits")
    asyncio.run(main(parser.parse_args()))

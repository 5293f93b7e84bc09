"""Games against the computer: the hub's loop while engines play, and how long the computer takes.

    .venv/bin/python bench/bench_computer.py [--games 20] [--seconds 60] [--level8-moves 6]

Starts the real hub (``bench/hub_probe.py``: ``python -m server`` with the loop-lag probe) on
an embedded SQLite database and one engine worker (``python -m server.worker``, the real
engines, its default slots: one per core, at most 2, niced). Then:

1. **Stall**: ``--games`` websocket clients each play the computer at level 1 at once, the five
   variants in turn, random legal moves (seeded), each game resigned at 80 plies (Dai Shogi 40)
   and a new one started, for ``--seconds``; the probe's window covers exactly that time: its
   largest loop lag is the longest stall any player felt.
2. **Reply time**: from the ack of the human's move to the computer's move event, per variant —
   at level 1 during part 1 (20 games sharing the worker), then one game at a time at level 1
   (clock 300 s + 0) and at level 8 (clock 60 s + 0: level 8 thinks on the clock, about
   remaining/30), ``--level8-moves`` computer moves per variant.

Prints a JSON report; numbers go to docs/benchmarks.md. Never in CI.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import secrets
import signal
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from processes import (
    cpu_seconds,
    probe_report,
    stall_summary,
    start_hub,
    start_worker,
    stop_worker,
)
from websockets.asyncio.client import ClientConnection, connect

VARIANTS = ("minishogi", "shoshogi", "wildcastle", "spartan", "daishogi")
RESIGN_AT = {"daishogi": 40}
DEFAULT_RESIGN_AT = 80


class Socket:
    """One websocket client: requests with ack ids, answers read in order (the benches' client;
    bench/abuse_analysis.py uses it too)."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.acks = itertools.count(1)

    async def send(self, t: str, d: dict[str, Any] | None = None, ack: int | None = None) -> None:
        frame: dict[str, Any] = {"t": t}
        if d is not None:
            frame["d"] = d
        if ack is not None:
            frame["a"] = ack
        await self.ws.send(json.dumps(frame))

    async def recv(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(await self.ws.recv())
        return message

    async def request(self, t: str, d: dict[str, Any] | None = None) -> dict[str, Any]:
        ack = next(self.acks)
        await self.send(t, d, ack)
        while True:
            message = await self.recv()
            if message.get("a") == ack:
                return message

    async def identify(self, t: str, d: dict[str, Any] | None = None) -> None:
        await self.send(t, d)
        while (message := await self.recv())["t"] != "hello":
            if message["t"] == "error":
                raise RuntimeError(f"{t} refused: {message}")


class Player(Socket):
    """One websocket client playing the computer (random legal moves)."""

    def __init__(self, ws: ClientConnection, seed: int) -> None:
        super().__init__(ws)
        self.rng = random.Random(seed)

    async def login(self) -> None:
        await self.ws.send(json.dumps({"t": "guest"}))
        while (await self.recv())["t"] != "hello":
            pass

    async def game(
        self, variant: str, level: int, tc: dict[str, int | str], samples: list[float],
        deadline: float, max_computer_moves: int | None = None,
    ) -> None:
        """Play one game; ``samples`` gets the seconds from each of our moves' ack to the
        computer's move. Returns at the game's end (resigning at the ply cap or deadline)."""
        ack = next(self.acks)
        await self.send("challenge_ai", {"variant": variant, "level": level, "tc": tc,
                                         "colour": self.rng.choice(["first", "second"])}, ack)
        game_id = None
        side, moves, legal, turn = "", 0, [], None
        acked_at: float | None = None
        computer_moves = 0
        my_ack = None
        while True:
            m = await self.recv()
            t, d = m["t"], m.get("d") or {}
            if t == "error":
                raise RuntimeError(f"refused: {m}")
            if m.get("a") == ack and t == "ack":
                game_id = d["game"]
                continue
            if d.get("game") != game_id or game_id is None:
                continue
            if t == "game":
                side, moves, legal, turn = d["role"], len(d["moves"]), d["legal"], d["turn"]
            elif t == "ack" and m.get("a") == my_ack:
                acked_at = time.perf_counter()
                continue
            elif t == "move":
                moves, legal, turn = d["ply"], d["legal"], d["turn"]
                if d["side"] != side:
                    computer_moves += 1
                    if acked_at is not None:
                        samples.append(time.perf_counter() - acked_at)
                        acked_at = None
            elif t == "end":
                return
            else:
                continue
            if turn != side or not legal:
                continue
            cap = RESIGN_AT.get(variant, DEFAULT_RESIGN_AT)
            done = max_computer_moves is not None and computer_moves >= max_computer_moves
            if moves >= cap or time.monotonic() > deadline or done:
                await self.send("resign", {"game": game_id})
                continue
            my_ack = next(self.acks)
            await self.send("move", {"game": game_id, "ply": moves + 1,
                                     "move": self.rng.choice(sorted(legal))}, my_ack)


def summary(samples: list[float]) -> dict[str, Any]:
    if not samples:
        return {"n": 0}
    ordered = sorted(samples)
    return {
        "n": len(ordered),
        "p50_ms": round(1000 * statistics.median(ordered), 1),
        "p95_ms": round(1000 * ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 1),
        "p99_ms": round(1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 1),
        "max_ms": round(1000 * ordered[-1], 1),
    }


async def many_games(url: str, games: int, seconds: float) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = defaultdict(list)
    deadline = time.monotonic() + seconds

    async def client(n: int) -> None:
        async with connect(url, max_size=2**22) as ws:
            player = Player(ws, seed=n)
            await player.login()
            for round_ in itertools.count():
                if time.monotonic() > deadline:
                    return
                variant = VARIANTS[(n + round_) % len(VARIANTS)]
                tc = {"kind": "fischer", "base_s": 300, "inc_s": 2}
                await player.game(variant, 1, tc, samples[variant], deadline)

    await asyncio.gather(*(client(n) for n in range(games)))
    return samples


async def alone(url: str, level: int, moves: int) -> dict[str, list[float]]:
    """One game at a time (nothing queued before the computer's jobs), per variant."""
    samples: dict[str, list[float]] = defaultdict(list)
    async with connect(url, max_size=2**22) as ws:
        player = Player(ws, seed=99)
        await player.login()
        for variant in VARIANTS:
            tc = {"kind": "fischer", "base_s": 60 if level == 8 else 300, "inc_s": 0}
            await player.game(variant, level, tc, samples[variant], time.monotonic() + 600, moves)
    return samples


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--level8-moves", type=int, default=6)
    args = parser.parse_args()
    key = secrets.token_urlsafe(24)
    os.environ["HUB_WORKER_KEYS"] = key
    workdir = Path(tempfile.mkdtemp(prefix="bench-computer-"))
    hub = await start_hub(f"sqlite+aiosqlite:///{workdir / 'hub.sqlite3'}", workdir)
    worker = start_worker(hub.port, key, workdir)
    url = f"ws://127.0.0.1:{hub.port}/ws"
    try:
        # The hub listens before it has finished starting (its rules tables are built and the
        # heap frozen after the port opens: seconds on a loaded machine): a first login waits
        # for that, so the window holds only the games.
        async with connect(url) as ws:
            await Player(ws, seed=0).login()
        await probe_report(hub, signal.SIGUSR1, "window")  # the window starts now
        load_before, cpu_before = os.getloadavg()[0], cpu_seconds(hub.popen.pid)
        started = time.monotonic()
        level1 = await many_games(url, args.games, args.seconds)
        window = await probe_report(hub, signal.SIGUSR1, "window")
        hub_cpu = cpu_seconds(hub.popen.pid) - cpu_before
        elapsed = time.monotonic() - started
        solo1 = await alone(url, 1, args.level8_moves)
        top = await alone(url, 8, args.level8_moves)
        report = {
            "games_at_once": args.games,
            "seconds": args.seconds,
            "cpus": os.cpu_count(),
            "stall": stall_summary(window),
            # the machine: the hub's share of a core, and the load average (1 min) around
            "hub_cpu_share": round(hub_cpu / elapsed, 3),
            "loadavg_before_after": [load_before, os.getloadavg()[0]],
            "level1_20_games": {v: summary(level1.get(v, [])) for v in VARIANTS},
            "level1_alone": {v: summary(solo1.get(v, [])) for v in VARIANTS},
            "level8": {v: summary(top.get(v, [])) for v in VARIANTS},
        }
        print(json.dumps(report, indent=1))
    finally:
        stop_worker(worker)
        hub.stop()


if __name__ == "__main__":
    asyncio.run(main())

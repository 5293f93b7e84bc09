"""A large arena on the real hub: pairing waves of 1,000 players whose games end together, and
the standings pushed to 5,000 spectators (docs/tournaments.md, "Scale").

Run by hand (never in CI), from the checkout's root::

    .venv/bin/python bench/bench_tournament_scale.py                      # 1,000 × 5,000, 4 waves
    .venv/bin/python bench/bench_tournament_scale.py --players 200 --spectators 500 --waves 2

The hub is ``python -m server`` with the loop-lag probe (``processes.start_hub``) on a fresh
PostgreSQL database (``--database-url`` to use another). The arena (minishogi 5+0, casual, no
berserk, starting when all players have joined) is stored before the hub starts, as a
scheduled one is (created_by NULL). Then:

1. **connect**: the players (this process) and the spectators (``--spectator-procs`` child
   processes) open their websockets and log in as guests; each player sends
   ``tournament_join``, each spectator ``tournament_watch`` (answered with the view and page 1
   of the standings, then pushed page 1 each time it changes);
2. **wave 1**: the last join starts the arena; its first wave pairs every player at once;
3. **waves 2…**: in every game the first player resigns, all in one burst (the games end
   together); the wave's time runs from the burst to the moment all players (but
   ``--slack``: an odd one out, two last opponents left alone) have their next ``game_start``.

Figures: the time per wave; the **max loop stall** (the probe's largest lag, and the hub's
largest CPU between two 5 ms wake-ups) over the whole run, connection phases included, and
per phase; the **fan-out** of each standings push: from its first to its last receipt among
the spectators (``time.time()`` in every process), and from a wave's burst to the last
spectator's receipt of the push naming that wave's pairing. ``BENCH_STALL_HANDLES=1`` makes
the probe list what held the loop in the long turns.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import signal
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import checkout  # noqa: F401  (this checkout's server and tests/ on sys.path)
from load_clients import open_many
from processes import (
    ChildProcess,
    Process,
    cpu_seconds,
    probe_report,
    raise_fd_limit,
    start_hub,
)
from support import create_database, drop_database
from websockets.asyncio.client import ClientConnection, connect

from server.rules.time_control import Fischer

ROUND = re.compile(rb'"round":(\d+)')


# ----------------------------------------------------------------------------- the arena


async def create_arena(url: str, players: int) -> str:
    from server.hub.tournament.values import TournamentSettings
    from server.store import Store
    from server.store.migrate import upgrade_to_head
    from server.store.tournaments import ms_datetime

    await upgrade_to_head(url)
    store = Store.from_url(url)
    try:
        settings = TournamentSettings(
            name="Bench Arena",
            format="arena",
            variant="minishogi",
            control=Fischer(300_000, 0),
            rated=False,
            start_when_joined=players,
            duration_ms=3_600_000,
            max_players=players,
            berserk=False,
        )
        return await store.create_tournament(
            settings, created_by=None, now=ms_datetime(time.time_ns() // 1_000_000)
        )
    finally:
        await store.close()


# ----------------------------------------------------------------------------- players


class Players:
    """The entrants, in this process: who is in which game, and when each got it."""

    def __init__(self, sockets: list[ClientConnection]) -> None:
        self.sockets = sockets
        self.game: dict[int, str | None] = dict.fromkeys(range(len(sockets)))
        self.started: dict[int, float] = dict.fromkeys(range(len(sockets)), 0.0)
        """player → the time.time() of their last ``game_start``."""
        self.first: dict[str, int] = {}
        """game id → the index of its first player (who resigns)."""
        self.changed = asyncio.Event()
        self.acks = 0
        self.ended: list[float] = []
        """The time.time() of every ``end`` a player received."""
        self.errors: list[Any] = []
        self._readers = [asyncio.create_task(self._read(i, ws)) for i, ws in enumerate(sockets)]

    async def _read(self, index: int, ws: ClientConnection) -> None:
        try:
            async for text in ws:
                message = json.loads(text)
                kind, data = message["t"], message["d"]
                if kind == "game_start":
                    self.game[index] = data["game"]
                    self.started[index] = time.time()
                    if data["side"] == "first":
                        self.first[data["game"]] = index
                    self.changed.set()
                elif kind == "end" and self.game[index] == data["game"]:
                    self.game[index] = None
                    self.ended.append(time.time())
                    self.first.pop(data["game"], None)
                    self.changed.set()
                elif kind == "ack":
                    self.acks += 1
                    self.changed.set()
                elif kind == "error":
                    self.errors.append(data)
        except Exception as error:
            self.errors.append(repr(error))

    async def until_acks(self, wanted: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self.acks < wanted:
            self.changed.clear()
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.acks} of {wanted} joins answered; {self.errors[:3]}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), 1.0)

    def playing(self, since: float = 0.0) -> int:
        """Players in a game that started after ``since`` (a time.time())."""
        return sum(
            1 for i, game in self.game.items() if game is not None and self.started[i] > since
        )

    async def until_playing(self, wanted: int, since: float, timeout: float) -> float:
        """Wait until ``wanted`` players are in a game started after ``since``; the
        time.time() of the last of them."""
        deadline = time.monotonic() + timeout
        while self.playing(since) < wanted:
            self.changed.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{self.playing(since)} of {wanted} players in a new game")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), left)
        return sorted(t for t in self.started.values() if t > since)[wanted - 1]

    async def resign_all(self) -> None:
        """Every game's first player resigns, in one burst."""
        frames = [
            (self.sockets[index], json.dumps({"t": "resign", "d": {"game": game}}))
            for game, index in list(self.first.items())
        ]
        await asyncio.gather(*(ws.send(frame) for ws, frame in frames))

    async def close(self) -> None:
        for reader in self._readers:
            reader.cancel()
        await asyncio.gather(*(ws.close() for ws in self.sockets), return_exceptions=True)


async def join_all(sockets: list[ClientConnection], tournament: str) -> None:
    frame = json.dumps({"t": "tournament_join", "d": {"id": tournament}})
    for start in range(0, len(sockets), 100):
        await asyncio.gather(*(ws.send(frame) for ws in sockets[start : start + 100]))


# ----------------------------------------------------------------------------- spectators


async def spectator_child(url: str, tournament: str, count: int) -> None:
    """A child process: ``count`` spectators; prints ``ready``, then on a line of stdin
    prints the receipts (push key → [round, first, last, count]) as JSON and exits."""
    raise_fd_limit()
    sockets = await open_many(url, count, batch=50, login=True)
    receipts: dict[int, list[float]] = {}
    watched = asyncio.Event()
    answered = 0

    async def read(ws: ClientConnection) -> None:
        nonlocal answered
        async for text in ws:
            now = time.time()
            raw = text.encode() if isinstance(text, str) else text
            if raw.startswith(b'{"t":"tournament_standings"'):
                key = zlib.crc32(raw) ^ (len(raw) << 32)  # alike in every process
                seen = receipts.get(key)
                if seen is None:
                    match = ROUND.search(raw, 0, 400)
                    receipts[key] = [float(match.group(1)) if match else -1.0, now, now, 1.0]
                else:
                    seen[1] = min(seen[1], now)
                    seen[2] = max(seen[2], now)
                    seen[3] += 1
            elif raw.startswith(b'{"t":"tournament"'):
                answered += 1
                if answered == count:
                    watched.set()

    readers = [asyncio.create_task(read(ws)) for ws in sockets]
    frame = json.dumps({"t": "tournament_watch", "d": {"id": tournament}})
    for start in range(0, count, 100):
        await asyncio.gather(*(ws.send(frame) for ws in sockets[start : start + 100]))
    await watched.wait()
    print("ready", flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    print(json.dumps({str(k): v for k, v in receipts.items()}), flush=True)
    for reader in readers:
        reader.cancel()


class Spectators:
    """The spectators' processes (:func:`spectator_child`), started side by side."""

    def __init__(self, children: list[ChildProcess]) -> None:
        self.children = children

    @classmethod
    async def start(cls, url: str, tournament: str, count: int, procs: int) -> Spectators:
        shares = [count // procs + (1 if n < count % procs else 0) for n in range(procs)]
        started = await asyncio.gather(
            *(
                ChildProcess.start(
                    "a spectator process",
                    __file__,
                    "--spectator-child",
                    url,
                    tournament,
                    str(share),
                )
                for share in shares
            ),
            return_exceptions=True,
        )
        children = [child for child in started if isinstance(child, ChildProcess)]
        failed = [error for error in started if isinstance(error, BaseException)]
        if failed:
            for child in children:
                child.kill()
            raise failed[0]
        return cls(children)

    async def receipts(self) -> dict[str, list[float]]:
        merged: dict[str, list[float]] = {}
        for child in self.children:
            child.tell("report")
            for key, (round_, first, last, n) in (await child.answer()).items():
                seen = merged.get(key)
                if seen is None:
                    merged[key] = [round_, first, last, n]
                else:
                    seen[1], seen[2], seen[3] = min(seen[1], first), max(seen[2], last), seen[3] + n
        return merged

    def stop(self) -> None:
        for child in self.children:
            child.kill()


# ----------------------------------------------------------------------------- the run


async def window(hub: Process) -> dict[str, Any]:
    return await probe_report(hub, signal.SIGUSR1, "window")


def stall(report: dict[str, Any]) -> str:
    gc = ", ".join(
        f"gen{g} max {v['max_ms']:.0f} ms (CPU {v['max_cpu_ms']:.0f})"
        for g, v in report["gc"].items()
        if v["count"]
    )
    return (
        f"max lag {report['lag_max_ms']:.1f} ms (p99.9 {report['lag_p999_ms']:.1f}), "
        f"max hub CPU between wake-ups {report['busy_max_ms']:.1f} ms, "
        f"lags > 50 ms: {report['lags_over_50ms']}; collections: {gc}"
    )


async def run(args: argparse.Namespace) -> None:
    raise_fd_limit()
    fresh = args.database_url is None
    url = await create_database("bench_tscale") if fresh else args.database_url
    workdir = Path(tempfile.mkdtemp(prefix="bench_tscale_"))
    tournament = await create_arena(url, args.players)
    hub = await start_hub(url, workdir)
    spectators: Spectators | None = None
    players: Players | None = None
    reports: dict[str, dict[str, Any]] = {}
    waves: list[float] = []
    try:
        ws_url = f"ws://127.0.0.1:{hub.port}/ws"
        cpu0 = cpu_seconds(hub.popen.pid)
        # Start-up is not measured; from here on everything is. The port accepts (its backlog)
        # while the hub still builds its tables (a second's turn, before it serves): one
        # websocket handshake answered first, so that turn falls in the start-up window.
        async with connect(ws_url, open_timeout=60):
            pass
        await window(hub)
        started = time.monotonic()
        sockets = await open_many(ws_url, args.players, batch=100, login=True)
        print(f"{args.players} players connected in {time.monotonic() - started:.1f} s")
        players = Players(sockets)
        # The spectators watch before the arena starts: they get every push from wave 1 on.
        # The last player joins after them (its join starts the arena).
        t = time.monotonic()
        await join_all(sockets[:-1], tournament)
        await players.until_acks(len(sockets) - 1, args.timeout)
        print(f"{len(sockets) - 1} joins answered in {time.monotonic() - t:.1f} s")
        t = time.monotonic()
        if args.spectators:
            spectators = await Spectators.start(
                ws_url, tournament, args.spectators, args.spectator_procs
            )
            print(f"{args.spectators} spectators watching in {time.monotonic() - t:.1f} s")
        reports["connect"] = await window(hub)
        bursts: list[float] = []
        burst = time.time()
        bursts.append(burst)
        await join_all(sockets[-1:], tournament)
        wanted = args.players - args.slack
        done = await players.until_playing(wanted, burst, args.timeout)
        waves.append(done - burst)
        print(f"wave 1: {players.playing(burst)} players in a game in {1000 * waves[-1]:.0f} ms")
        for number in range(2, args.waves + 1):
            await asyncio.sleep(args.pause)  # the hub's writes settle
            burst = time.time()
            bursts.append(burst)
            await players.resign_all()
            done = await players.until_playing(wanted, burst, args.timeout)
            waves.append(done - burst)
            ends = [t for t in players.ended if t > burst]
            print(
                f"wave {number}: {players.playing(burst)} players in a new game "
                f"{1000 * waves[-1]:.0f} ms after the burst (their games' ends received "
                f"{1000 * (min(ends) - burst):.0f}–{1000 * (max(ends) - burst):.0f} ms after it)"
            )
        await asyncio.sleep(args.settle)  # the push after the last wave (pushes are paced)
        reports["waves"] = await window(hub)
        hub_cpu = cpu_seconds(hub.popen.pid) - cpu0
        receipts = await spectators.receipts() if spectators is not None else {}
    finally:
        if players is not None:
            await players.close()
        if spectators is not None:
            spectators.stop()
        hub.stop()
        if fresh:
            await drop_database(url)

    print()
    print(f"arena of {args.players} players, {args.spectators} spectators, {args.waves} waves")
    print(f"time per wave (ms): {', '.join(f'{1000 * w:.0f}' for w in waves)}")
    for name, report in reports.items():
        print(f"stall, {name}: {stall(report)}")
    whole = max(r["lag_max_ms"] for r in reports.values())
    busy = max(r["busy_max_ms"] for r in reports.values())
    print(f"stall, whole run: max lag {whole:.1f} ms, max hub CPU between wake-ups {busy:.1f} ms")
    for report in reports.values():
        for turn in report.get("long_turns", [])[:5]:
            print("  long turn:", turn)
    # A push counts as told to all when (nearly) every spectator still connected got it.
    most = max((r[3] for r in receipts.values()), default=0)
    full = [r for r in receipts.values() if r[3] >= 0.99 * most]
    spreads = [1000 * (r[2] - r[1]) for r in full]
    print(
        f"standings pushes: {len(receipts)} distinct, {len(full)} told to {most} spectators "
        f"(of {args.spectators}); fan-out first→last receipt: median "
        f"{statistics.median(spreads or [0]):.0f} ms, max {max(spreads or [0]):.0f} ms"
    )
    for r in sorted(receipts.values(), key=lambda r: r[1]):
        print(
            f"  push of round {int(r[0])} (an arena's batch of pairings counts one): "
            f"{int(r[3])} receipts, "
            f"first→last {1000 * (r[2] - r[1]):.0f} ms"
        )
    for number, (burst, wave) in enumerate(zip(bursts, waves, strict=True), start=1):
        # The first push made after the wave's last game_start shows the whole wave paired.
        after = [r for r in full if r[1] >= burst + wave]
        if after:
            push = min(after, key=lambda r: r[1])
            print(
                f"wave {number}: the first push after it reached every spectator "
                f"{1000 * (push[2] - burst):.0f} ms after the burst "
                f"(first→last receipt {1000 * (push[2] - push[1]):.0f} ms)"
            )
    print(
        f"hub CPU over the run: {hub_cpu:.1f} s; player errors: {players.errors[:5] if players else []}"
    )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--spectator-child":
        url, tournament, count = sys.argv[2], sys.argv[3], int(sys.argv[4])
        asyncio.run(spectator_child(url, tournament, count))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--spectators", type=int, default=5000)
    parser.add_argument("--spectator-procs", type=int, default=4)
    parser.add_argument("--waves", type=int, default=4)
    parser.add_argument(
        "--slack",
        type=int,
        default=4,
        help="players who may stay unpaired when a wave is counted done",
    )
    parser.add_argument("--pause", type=float, default=2.0, help="seconds between two waves")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument(
        "--settle",
        type=float,
        default=30.0,
        help="seconds after the last wave, for the standings push that follows",
    )
    parser.add_argument("--database-url", default=None, help="default: a fresh PostgreSQL database")
    args = parser.parse_args()
    # 6,000 local sockets opened in bursts on a shared machine: the listener's queue and its
    # header timeout raised (the per-address limits already are: processes.start_hub).
    os.environ.setdefault("HUB_MAX_CONNECTIONS", "20000")
    os.environ.setdefault("HUB_MAX_QUEUED", "20000")
    os.environ.setdefault("HUB_HEADER_TIMEOUT_S", "120")
    asyncio.run(run(args))


if __name__ == "__main__":
    main()

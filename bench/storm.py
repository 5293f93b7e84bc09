"""``bench_load.py --storm N``: a reconnect storm against a hub that is already serving games.

N registered players with session tokens (written straight into the hub's database: no
password hashing) log in with ``resume`` within ``--storm-within T`` seconds, each at a moment
drawn uniformly from [0, T]: what a hub sees after a restart, a takeover, a network blip or
the start of a tournament. A fifth of them (at most 2 × ``--games``) are the players of the
hub's running games, which have been playing at a move per ``--think-ms`` since before the
storm: each drops its connection at its moment, reconnects, resumes, and re-joins its game
with the last version it saw (``join`` with ``v``), then plays on. The others connect, log
in, and stay idle. The idle logins run in a process of their own (``LoginsProcess``), so that
the timed players' round trips do not also wait for a client loop busy with thousands of
handshakes (``--storm-one-process``: all in one, as at first).

Reported: the hub's loop-lag probe over the whole storm (from just before the first
connection to two seconds after the last login: the connect phase itself), the login round
trip (``resume`` sent → ``hello`` received, and TCP connect → ``hello``), and the running
games' move round trips before and during the storm, and the players' own loop lag. With
``--phases`` the slowest 5 % of the storm's moves are split, joined with the hub's marks of the
same moves (``move_phases.py``): the way in, the hub, the writer's queue, the commit, the way out.

Here: the storm's run and report, its players' accounts and the idle logins' process; the
clients themselves (logins, the players of the running games, their figures) are in
``storm_players.py``.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import os
import random
import secrets
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from load_clients import percentile
from processes import ChildProcess, Process, cpu_seconds, probe_report
from sqlalchemy import insert, select
from storm_players import GamePlayer, StormStats, idle_login
from websockets.asyncio.client import ClientConnection

from server.store import create_engine
from server.store.schema import players, sessions

SETTLE_S = 2.0
"""The storm's window ends this long after the last login."""


async def seed_players(database_url: str, count: int) -> list[str]:
    """``count`` registered players, each with one session; their tokens. Written in bulk (the
    password hash is a placeholder nobody logs in with: the storm resumes sessions)."""
    engine = create_engine(database_url)
    tokens = [secrets.token_urlsafe(32) for _ in range(count)]
    try:
        async with engine.begin() as connection:
            names = [f"storm{i:06d}" for i in range(count)]
            await connection.execute(
                insert(players),
                [{"name": n, "name_key": n, "password_hash": "x" * 20} for n in names],
            )
            rows = await connection.execute(
                select(players.c.id, players.c.name_key).where(players.c.name_key.in_(names))
            )
            ids = {name: player_id for player_id, name in rows}
            await connection.execute(
                insert(sessions),
                [
                    {
                        "token_hash": hashlib.sha256(token.encode()).hexdigest(),
                        "player_id": ids[name],
                    }
                    for name, token in zip(names, tokens, strict=True)
                ],
            )
    finally:
        await engine.dispose()
    return tokens


class ClientLag:
    """The clients' own loop lag (ms): a move's round trip as the bench times it also waits
    for this process's loop, busy with the storm's thousands of connections."""

    def __init__(self) -> None:
        self.lags: list[float] = []

    async def run(self) -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(0.005)
            self.lags.append(1000 * (time.perf_counter() - before - 0.005))


SPLIT = (
    ("in", 0),
    ("parse", 1),
    ("hub", 2),
    ("writer queue", 3),
    ("commit", 4),
    ("wake-up", 5),
    ("send", 6),
)
"""The segments of a round trip, each named by where it ends (``move_phases.RAW`` index)."""


def slowest_split(
    trips: list[tuple[str, int, float, float]], raw: list[list[Any]], share: float
) -> dict[str, float]:
    """The mean ms of each segment of the slowest ``share`` of ``trips`` joined with the hub's
    marks (``move_phases.py``): ``in`` (the client's send to the hub's ``data_received``: the
    kernel and the hub's loop), ``parse``, ``hub`` (the rules and the room, to the writer),
    ``writer queue`` (to the batch's insert), ``commit``, ``wake-up`` (the commit told to the
    hub), ``send`` (every frame written), ``out`` (to the client reading the ack: the kernel and
    the clients' loop)."""
    marks = {(game, ply): rest for game, ply, *rest in raw}
    rows = []
    for game, ply, sent, acked in trips:
        m = marks.get((game, ply))
        if m is None:
            continue
        points = [sent, *m, acked]
        rows.append([b - a for a, b in itertools.pairwise(points)])
    if not rows:
        return {}
    rows.sort(key=sum)
    slow = rows[int(len(rows) * (1 - share)) :]
    names = [name for name, _ in SPLIT] + ["out"]
    split = {n: 1000 * sum(r[i] for r in slow) / len(slow) for i, n in enumerate(names)}
    return {**split, "from rtt ms": 1000 * sum(slow[0]), "moves": float(len(slow))}


class LoginsProcess:
    """The storm's idle logins in a process of their own (``bench_load.py --storm-logins``):
    the players of the running games, whose round trips are timed, must not wait for a loop
    busy with thousands of other clients' handshakes (in one process, the clients' own loop lag
    reached 1.7 s during a 3,000-login storm and was most of the moves' round trips); a player
    of a real hub has its own machine. ``--storm-one-process`` keeps them together."""

    def __init__(self, child: ChildProcess) -> None:
        self.child = child
        self._cpu_start = cpu_seconds(child.popen.pid)

    @classmethod
    async def start(
        cls, url: str, tokens: list[str], moments: list[float], start: float
    ) -> LoginsProcess:
        """Start the process (its imports take a while: it is told the window's start when
        ready); each token logs in at ``start`` + its moment (``time.monotonic``, system-wide)."""
        fd, path = tempfile.mkstemp(suffix=".json")
        with os.fdopen(fd, "w") as out:
            json.dump({"url": url, "tokens": tokens, "moments": moments}, out)
        try:
            child = await ChildProcess.start(
                "the storm's logins process",
                str(Path(__file__).with_name("bench_load.py")),
                "--storm-logins",
                path,
            )
        finally:
            os.unlink(path)
        child.tell(repr(start))
        return cls(child)

    async def wait_done(self, stats: StormStats, timeout: float) -> None:
        """Until every login is done or failed; their figures are added to ``stats``."""
        done = await self.child.answer(timeout)
        stats.logins_ms += done["logins_ms"]
        stats.connects_ms += done["connects_ms"]
        stats.last_login = max(stats.last_login, done["last_login"])
        for key, n in done["errors"].items():
            stats.errors[key] = stats.errors.get(key, 0) + n

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.child.popen.pid) - self._cpu_start

    async def close(self) -> None:
        """Close the process's connections (stdin closed), and wait for it."""
        await self.child.finish()


async def logins_main(path: str) -> None:
    """``bench_load.py --storm-logins FILE``: the storm's idle logins (:class:`LoginsProcess`)."""
    with open(path) as source:
        job = json.load(source)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    print("ready", flush=True)
    start = float(await reader.readline())
    stats = StormStats()
    idle: list[ClientConnection] = []
    logins = [
        asyncio.create_task(idle_login(job["url"], token, start + at, stats, idle))
        for token, at in zip(job["tokens"], job["moments"], strict=True)
    ]
    await asyncio.wait(logins)
    done = {
        "logins_ms": stats.logins_ms,
        "connects_ms": stats.connects_ms,
        "last_login": stats.last_login,
        "errors": stats.errors,
    }
    print(json.dumps(done), flush=True)
    await reader.read()  # until the bench closes stdin: the connections stay open till then
    await asyncio.gather(*(ws.close() for ws in idle), return_exceptions=True)


async def run_storm(hub: Process, database_url: str, args: Any) -> dict[str, Any]:
    """The storm (see the module docstring); prints its report and returns its figures."""
    url = f"ws://127.0.0.1:{hub.port}/ws"
    count, within, games = args.storm, args.storm_within, max(args.games or [0])
    in_games = min(2 * games, count)
    started = time.perf_counter()
    tokens = await seed_players(database_url, count)
    print(
        f"{'':10} storm: {count:,} players and sessions written in "
        f"{time.perf_counter() - started:.1f} s",
        flush=True,
    )
    stats = StormStats()
    rng = random.Random(25)
    gamers = [
        GamePlayer(url, token, random.Random(i), args.think_ms)
        for i, token in enumerate(tokens[:in_games])
    ]
    until = time.monotonic() + 3600.0
    tasks = [asyncio.create_task(p.run(until, stats)) for p in gamers]
    # Every game paired, then a few moves each before the storm.
    deadline = time.monotonic() + 120.0
    while sum(1 for p in gamers if p.game is not None) < in_games - 1:
        if time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    await asyncio.sleep(max(5.0, 3 * args.think_ms / 1000))
    paired = sum(1 for p in gamers if p.game is not None)
    before = len(stats.moves)
    await probe_report(hub, signal.SIGUSR1, "window")  # the storm window starts now
    cpu_before, client_before = cpu_seconds(hub.popen.pid), cpu_seconds(os.getpid())
    load_before = os.getloadavg()[0]
    window_start = time.monotonic()
    window_perf = time.perf_counter()
    client_lag = ClientLag()
    client_probe = asyncio.create_task(client_lag.run())
    for p in gamers:
        p.drop_at = window_start + rng.uniform(0, within)
    idle: list[ClientConnection] = []
    moments = [rng.uniform(0, within) for _ in tokens[in_games:]]
    others: LoginsProcess | None = None
    if args.storm_one_process:
        logins = [
            asyncio.create_task(idle_login(url, token, window_start + at, stats, idle))
            for token, at in zip(tokens[in_games:], moments, strict=True)
        ]
        await asyncio.wait(logins, timeout=within + 120)
    else:
        others = await LoginsProcess.start(url, tokens[in_games:], moments, window_start)
        await others.wait_done(stats, within + 120)
    while (
        sum(1 for p in gamers if p.drop_at is not None)
        and time.monotonic() < window_start + within + 120
    ):
        await asyncio.sleep(0.1)
    last_login = max(stats.last_login, window_start)
    await asyncio.sleep(max(0.0, last_login + SETTLE_S - time.monotonic()))
    lag = await probe_report(hub, signal.SIGUSR1, "window")
    client_probe.cancel()
    elapsed = time.monotonic() - window_start
    hub_cpu = (cpu_seconds(hub.popen.pid) - cpu_before) / elapsed
    client_cpu = (cpu_seconds(os.getpid()) - client_before) / elapsed
    logins_cpu = 0.0 if others is None else others.cpu_seconds() / elapsed
    window_end = time.monotonic()
    during = [rtt for at, rtt in stats.moves[before:] if window_start <= at <= window_end]
    earlier = [rtt for at, rtt in stats.moves[:before]]
    print(
        f"{'':10} storm: {count:,} logins (resume) within {within:g} s, {in_games:,} of them "
        f"players of {paired // 2:,} running games at a move per {args.think_ms / 1000:g} s who "
        f"re-join with their last version ({stats.rejoined:,} re-joined, {stats.snapshots} "
        f"snapshots); last login {last_login - window_start:.1f} s after the first moment; "
        f"load average {load_before:.1f} → {os.getloadavg()[0]:.1f}, cpu hub "
        f"{100 * hub_cpu:.0f}% players {100 * client_cpu:.0f}% "
        + (
            "(the storm's logins in the players' process)"
            if others is None
            else f"the storm's logins (their own process) {100 * logins_cpu:.0f}%"
        ),
        flush=True,
    )
    print(
        f"{'':10} storm login round trip (resume → hello) p50 "
        f"{percentile(stats.logins_ms, 0.5):.1f} ms p99 {percentile(stats.logins_ms, 0.99):.1f} ms "
        f"max {max(stats.logins_ms, default=float('nan')):.1f} ms; connect → hello p50 "
        f"{percentile(stats.connects_ms, 0.5):.1f} ms p99 "
        f"{percentile(stats.connects_ms, 0.99):.1f} ms ({len(stats.logins_ms):,} logins)",
        flush=True,
    )
    print(
        f"{'':10} running games' move round trip during the storm p50 "
        f"{percentile(during, 0.5):.2f} ms p99 {percentile(during, 0.99):.2f} ms max "
        f"{max(during, default=float('nan')):.1f} ms ({len(during):,} moves); before it p50 "
        f"{percentile(earlier, 0.5):.2f} ms p99 {percentile(earlier, 0.99):.2f} ms "
        f"({len(earlier):,} moves)",
        flush=True,
    )
    print(
        f"{'':10} hub loop lag over the storm, connect phase included ({lag['seconds']:.1f} s "
        f"from the first connection to {SETTLE_S:g} s after the last login): max "
        f"{lag['lag_max_ms']:.1f} ms, p99.9 {lag['lag_p999_ms']:.1f} ms, p99 "
        f"{lag['lag_p99_ms']:.1f} ms, {lag['lags_over_50ms']} wake-ups over 50 ms (the hub's "
        f"own CPU between two wake-ups: max {lag['busy_max_ms']:.1f} ms, p99.9 "
        f"{lag.get('busy_p999_ms') or 0:.1f} ms, p99 {lag.get('busy_p99_ms') or 0:.1f} ms, "
        f"{lag['busy_over_50ms']} over 50 ms); longest "
        "collection by generation (wall; the collector's own CPU): "
        + ", ".join(
            f"{g}: {v['max_ms']:.1f} ms; {v['max_cpu_ms']:.1f} ms ({v['count']}x)"
            for g, v in lag["gc"].items()
        )
        + f" | errors {stats.errors or 'none'}",
        flush=True,
    )
    lags = sorted(client_lag.lags)
    print(
        f"{'':10} the players' own loop lag over the storm"
        + (" (the storm's logins in the same process)" if others is None else "")
        + f": max {max(lags, default=0.0):.1f} ms, p99 "
        f"{percentile(lags, 0.99):.1f} ms",
        flush=True,
    )
    raw = lag.get("phases_us", {}).get("raw", [])
    if raw:
        slow = slowest_split([t for t in stats.trips if t[2] >= window_perf], raw, share=0.05)
        if slow:
            print(
                f"{'':10} where the slowest 5 % of the storm's moves waited (mean ms): "
                + ", ".join(f"{name} {ms:.1f}" for name, ms in slow.items() if name != "moves")
                + f" ({slow['moves']:.0f} moves)",
                flush=True,
            )
    for p in gamers:
        p.drop_at = None
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await asyncio.gather(*(ws.close() for ws in idle), return_exceptions=True)
    if others is not None:
        await others.close()
    await asyncio.gather(
        *(p.ws.close() for p in gamers if p.ws is not None), return_exceptions=True
    )
    return {"lag": lag, "stats": stats}

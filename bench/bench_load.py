"""Load test of the whole server: move round trips, throughput, memory per connection.

Run by hand (never in CI)::

    .venv/bin/python bench/bench_load.py                                  # SQLite, 10 and 100 games
    .venv/bin/python bench/bench_load.py --backend sqlite postgresql --games 100 1000
    .venv/bin/python bench/bench_load.py --games 1000 --think-ms 500 --seconds 30
    .venv/bin/python bench/bench_load.py --idle 10000 --games               # idle connections only
    # the ratio target (the hub's p50 within 1.5x the commit echo's), each hub run against the
    # commit echoes just before and after it:
    .venv/bin/python bench/bench_load.py --backend postgresql --games 1 --seconds 12 --repeat 3
    .venv/bin/python bench/bench_load.py --backend postgresql --games 1 --echo-busy-us 20 40 80
    .venv/bin/python bench/bench_load.py --backend postgresql --games 1 1000 --seconds 60 --interleave 2
    # a change against the checkout before it, within one interleaved run:
    .venv/bin/python bench/bench_load.py --backend postgresql --games 1 --seconds 40 \
        --interleave 1.5 --against /tmp/before   # git worktree add /tmp/before <commit>
    # the reconnect storm (storm.py): 10,000 logins in 10 s onto 1,000 running games
    .venv/bin/python bench/bench_load.py --backend postgresql --think-ms 3000 \
        --storm 10000 --storm-within 10 --games 1000
    # the stall target, no stall over 50 ms (the full run: --seconds 900):
    .venv/bin/python bench/bench_load.py --backend postgresql --games 1000 --think-ms 3000 \
        --seconds 120 --idle-during 10000 --full-gc-every 30 --census

What one run does, per backend:

1. **Echo baselines.** A tiny websocket echo server (same websockets settings as the hub:
   ``compression=None``, same ``max_size`` and keepalive) and the commit echo
   (``commit_echo.py``: the echo plus the hub's own commit of a move row) run in their own
   processes; N clients for N games — the hub's own concurrency, since the two players of a
   game alternate and a game has one move in flight — send small JSON frames with the same
   think time and time each round trip. These are the floors the hub is compared with,
   measured on the same machine in the same run. (Until this version the echoes had 2N
   clients: twice the hub's moves in flight, which inflated the commit echo's round trip about
   1.7× at saturation and so flattered the hub's ratio.)
2. **Games.** The real server (``bench/hub_probe.py``: ``python -m server`` plus a loop-lag
   probe) runs in its own process on a fresh database
   (a temporary SQLite file, or a new PostgreSQL database that is dropped afterwards). For each N,
   2N guest clients seek the same Mini-Shogi game and are paired by the hub; each player, when it
   is its turn, waits ``--think-ms`` (uniformly random in [0, 2 × think]) and plays a random move
   from the ``legal`` list of the last event, and times **send → ack** (the ack comes after the
   move's commit). Games end on the board, or after ``--max-plies`` by resignation, and the two
   players seek again, until ``--seconds`` have passed. Reported: round trip p50/p99, committed
   moves per second, the server's RSS growth per connection (``/proc/<pid>/status``), and the
   hub's event-loop lag over the window (max, p99.9; with the longest garbage collection of
   each generation): the longest stall any player could have felt, collections included. The
   stall figure also covers the connect phase (the idle guests' and the players' logins, and
   the ramp-up): the probe's first window opens before the first connection (since 2d4e6dc).
   ``--census`` then has the hub count the objects its collector tracks, by type, time its
   timed collection (``full_gc_interval_s``: a full collection of what is not frozen, then
   ``gc.freeze()``) and a whole-heap one, and count the cyclic garbage freezing kept (the
   leak), once with the games loaded and once after every client has closed.
   ``--idle-during K`` has K guests connect, log in and stay idle for the whole game run (the
   players connect after them); ``--full-gc-every S`` sets the hub's timed collection
   interval, so that a short window still contains the collections a long run meets.
3. **Interleaved ratio** (``--interleave S``, instead of 1 and 2): the hub's games and the
   commit echo take turns in slices of S seconds, so that a drift of the machine weighs on
   both alike (``interleave.py``); the commit echo's connections write their game rows
   before the first slice. The ratio target (1.5x) is measured this way. ``--against TREE``
   adds a hub from another checkout, in turn with this tree's: a small change is compared
   within one run.
4. **Idle connections** (``--idle``). K clients connect and log in as guests, then sit idle; the
   server's RSS growth divided by K is the memory per idle connection. Both processes raise their
   open-file limit (``resource.setrlimit``) first.

``--phases`` also splits each round trip outside the hub: the clients' send and ack times are
joined with the hub's marks of the same moves (both ``time.perf_counter()``, the system-wide
monotonic clock), and the commit echo answers with its own marks (``/timed``), so both report
the way in, their own part and the way out (``load_clients.way_in_and_out``). ``BENCH_HUB_SCRIPT=FILE``
runs FILE in place of ``hub_probe.py`` (an experiment: a script that patches the server, then
runs the probe).

The clients (players, observers, echo clients: ``load_clients.py``) run in one process with
one event loop: on a small machine it competes with the
server for CPU, so the numbers are a lower bound on what the server alone can do.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import random
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# this checkout's server first on sys.path, and tests/support.py (the test PostgreSQL's URL
# and the fresh-database helpers)
import checkout  # noqa: F401
from commit_echo import commit_echo_main, serve_until_sigterm
from interleave import interleaved_ratio
from load_clients import (
    Observer,
    Player,
    Stats,
    echo_round_trips,
    open_many,
    percentile,
    print_phases,
)
from processes import (
    Process,
    cpu_seconds,
    probe_report,
    raise_fd_limit,
    rss_kib,
    start_echo,
    start_hub,
)
from storm import logins_main, run_storm
from support import create_database, drop_database
from websockets.asyncio.server import ServerConnection

from server.app.collector import TIMED_GC_THRESHOLDS
from server.transport.codec import JSON_LIBRARY


async def echo_main(port: int) -> None:
    """``--echo-server PORT``: a bare websocket echo with the hub's websocket settings."""
    raise_fd_limit()

    async def echo(ws: ServerConnection) -> None:
        async for message in ws:
            await ws.send(message)

    await serve_until_sigterm(echo, port)


async def census(hub: Process, label: str, moves: int, closed: int) -> None:
    """Print the hub's census (``hub_probe.Probe.dump_census``): tracked objects, the timed
    collection's pause, and the cyclic garbage that freezing kept (per move played and per
    connection closed so far)."""
    report = await probe_report(hub, signal.SIGUSR2, "census")
    leaked = report["frozen_garbage"]
    print(
        f"{'':10} census {label}: {report['tracked']:,} tracked objects not frozen (per "
        f"generation {report['per_generation']}, {report['frozen']:,} frozen); the timed "
        f"collection (collect + freeze) took {report['timed_collection_ms']:.0f} ms; "
        f"a whole-heap collection ({report['whole_heap_objects']:,} objects, unfrozen) "
        f"{report['whole_heap_collection_ms']:.0f} ms; by type: "
        + ", ".join(f"{name} {count:,}" for name, count in report["top_types"][:12]),
        flush=True,
    )
    print(
        f"{'':10} frozen cyclic garbage (the leak of freezing): {leaked:,} objects "
        f"({leaked / max(moves, 1):.3f} per move over {moves:,} moves"
        + (f", {leaked / closed:.2f} per closed connection over {closed:,}" if closed else "")
        + "); "
        + ", ".join(f"{name} {count:,}" for name, count in report["frozen_garbage_types"])
        + " (tuples and dicts untracked or freed: "
        + ", ".join(
            f"{name} {count:,}" for name, count in report["tuples_dicts_untracked_or_freed"].items()
        )
        + ")",
        flush=True,
    )


# ------------------------------------------------------------------ runs


async def run_games(
    hub: Process,
    games: int,
    seconds: float,
    think_ms: float,
    max_plies: int,
    ramp_s: float,
    census_after: bool = False,
    observers: bool = False,
    idle_during: int = 0,
) -> tuple[Stats, float]:
    """Players start seeking spread over ``ramp_s`` seconds; after a further warm-up of two
    seconds, round trips, moves and CPU are measured for ``seconds``. With ``observers``, one
    spectator per game follows each game (so every move goes to both players and an
    observer). With ``idle_during``, that many guests connect, log in and sit idle before the
    players connect, and stay for the whole run."""
    url = f"ws://127.0.0.1:{hub.port}/ws"
    # The stall figure covers the connect phase: the probe's window starts before the first
    # connection (the logins are where the hub used to pause).
    await probe_report(hub, signal.SIGUSR1, "window")
    idle = await open_many(url, idle_during, batch=500, login=True) if idle_during else []
    before = rss_kib(hub.popen.pid)
    sockets = await open_many(url, (3 if observers else 2) * games, login=True)
    stats = Stats()
    now = time.monotonic()
    measure_from = now + ramp_s + 2.0
    until = measure_from + seconds
    watch: asyncio.Queue[str] | None = asyncio.Queue() if observers else None
    player_sockets = sockets[: 2 * games]
    players = [
        Player(ws, random.Random(i), think_ms, max_plies, stats, watch)
        for i, ws in enumerate(player_sockets)
    ]
    tasks = [
        asyncio.create_task(p.run(now + ramp_s * i / len(players), measure_from, until))
        for i, p in enumerate(players)
    ]
    if watch is not None:
        tasks += [
            asyncio.create_task(Observer(ws, watch, stats).run(measure_from, until))
            for ws in sockets[2 * games :]
        ]
    await asyncio.sleep(max(0.0, measure_from - time.monotonic()))
    # The connect phase (and ramp-up) ends, the measurement window starts now.
    stats.connect_lag = await probe_report(hub, signal.SIGUSR1, "window")
    cpu_before = cpu_seconds(hub.popen.pid)
    client_before = cpu_seconds(os.getpid())
    start = time.perf_counter()
    await asyncio.sleep(max(0.0, until - time.monotonic()))
    elapsed = time.perf_counter() - start
    stats.lag = await probe_report(hub, signal.SIGUSR1, "window")
    stats.hub_cpu = (cpu_seconds(hub.popen.pid) - cpu_before) / elapsed
    stats.client_cpu = (cpu_seconds(os.getpid()) - client_before) / elapsed
    stats.moves_per_s = stats.moves / elapsed
    during = rss_kib(hub.popen.pid)
    if census_after:
        await census(hub, "loaded", stats.all_moves, 0)
    await stats.stop_players(tasks)
    await asyncio.gather(*(ws.close() for ws in sockets + idle), return_exceptions=True)
    if census_after:
        await asyncio.sleep(3)  # the server sees every close
        await census(hub, "after every client closed", stats.all_moves, len(sockets) + len(idle))
    return stats, (during - before) / len(sockets)


def print_lag(connect: dict[str, Any], window: dict[str, Any]) -> None:
    """The hub's loop lag: the stall figure (max, wake-ups over 50 ms) covers the connect
    phase and ramp-up as well as the measurement window; p99.9 and p99 are the window's."""
    worst = max(connect["lag_max_ms"] or 0.0, window["lag_max_ms"] or 0.0)
    print(
        f"{'':10} hub loop lag, connect phase included: max {worst:.1f} ms "
        f"(connect phase and ramp-up, {connect['seconds']:.0f} s: max "
        f"{connect['lag_max_ms'] or 0.0:.1f} ms, {connect['lags_over_50ms']} wake-ups over "
        f"50 ms, the hub's own CPU between two wake-ups at most "
        f"{connect['busy_max_ms']:.1f} ms, longest full collection "
        f"{connect['gc']['2']['max_ms']:.1f} ms; window, "
        f"{window['seconds']:.0f} s: max {window['lag_max_ms']:.1f} ms, p99.9 "
        f"{window['lag_p999_ms']:.1f} ms, p99 {window['lag_p99_ms']:.1f} ms, "
        f"{window['lags_over_50ms']} wake-ups over 50 ms, the hub's own CPU between two "
        f"wake-ups at most {window['busy_max_ms']:.1f} ms); "
        "longest collection in the window by generation (wall; the collector's own CPU): "
        + ", ".join(
            f"{g}: {v['max_ms']:.1f} ms; {v['max_cpu_ms']:.1f} ms ({v['count']}x)"
            for g, v in window["gc"].items()
        ),
        flush=True,
    )


async def summarise_repeats(
    runs: list[tuple[int, float, float]], commit_echo_port: int, args: argparse.Namespace
) -> None:
    """``--repeat``: each hub run is compared with the mean of the commit echoes measured just
    before and just after it (one more echo closes the sequence), so that a drift of the
    machine during the sequence weighs on both sides of each ratio alike."""
    for games in args.games:
        hub_p50s = [hub for n, hub, _ in runs if n == games]
        echoes = [echo for n, _, echo in runs if n == games]
        after = await echo_round_trips(
            f"ws://127.0.0.1:{commit_echo_port}", games, min(args.seconds, 10), args.think_ms
        )
        echoes.append(percentile(after, 0.5))
        ratios = [
            hub / ((before + later) / 2) for hub, before, later in zip(hub_p50s, echoes, echoes[1:])
        ]
        print(
            f"{'':10} games={games}: {len(ratios)} runs, move p50 ÷ mean of the commit echoes "
            f"around it: {', '.join(f'{r:.2f}' for r in ratios)} (median "
            f"{statistics.median(ratios):.2f}x); move p50 {statistics.median(hub_p50s):.2f} ms, "
            f"commit echo p50 {statistics.median(echoes):.2f} ms (medians; echoes "
            f"{', '.join(f'{e:.2f}' for e in echoes)})",
            flush=True,
        )


async def busy_echo_calibration(
    port: int, games: int, args: argparse.Namespace, plain: list[float]
) -> None:
    """``--echo-busy-us``: how much of a server's CPU while its commit is in flight shows in
    the round trip on this machine. The commit echo burns that much CPU right after handing
    each commit to the database; on a machine whose idle cores wake slowly the database
    backend is then often scheduled on the busy core, and the work adds to the commit instead
    of overlapping it (docs/benchmarks.md, "Honest baselines")."""
    for busy_us in args.echo_busy_us:
        rtts = await echo_round_trips(
            f"ws://127.0.0.1:{port}/busy/{busy_us}", games, min(args.seconds, 10), args.think_ms
        )
        added = 1000 * (percentile(rtts, 0.5) - percentile(plain, 0.5))
        print(
            f"{'':10} commit echo with {busy_us} µs of CPU while each commit is in flight: "
            f"p50 {percentile(rtts, 0.5):.2f} ms ({added:+.0f} µs over the plain commit echo)",
            flush=True,
        )


async def run_idle(hub: Process, count: int) -> float:
    url = f"ws://127.0.0.1:{hub.port}/ws"
    await asyncio.sleep(1)
    before = rss_kib(hub.popen.pid)
    sockets = await open_many(url, count, batch=500, login=True)
    await asyncio.sleep(2)
    after = rss_kib(hub.popen.pid)
    await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)
    return (after - before) / count


async def bench_backend(backend: str, args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(dir=args.sqlite_dir) as workdir:
        if backend == "postgresql":
            database_url = await create_database("bench_load")
        else:
            database_url = f"sqlite+aiosqlite:///{Path(workdir) / 'bench.sqlite3'}"
        profile = f"{args.profile_hub}.{backend}" if args.profile_hub else None
        hub = await start_hub(database_url, Path(workdir), profile, args.full_gc_every)
        echo = await start_echo()
        # The commit echo writes to the hub's PostgreSQL database, or to a SQLite file of its
        # own next to the hub's (SQLite has one writer per file).
        commit_url = database_url
        if backend == "sqlite":
            commit_url = f"sqlite+aiosqlite:///{Path(workdir) / 'echo.sqlite3'}"
        commit_echo = await start_echo(commit_url)
        against: Process | None = None
        against_url = None
        try:
            print(f"\n== {backend}: hub pid {hub.popen.pid}, echo pid {echo.popen.pid}")
            if args.storm:
                await run_storm(hub, database_url, args)
                return
            if args.interleave:
                hubs = [("this tree", hub)]
                if args.against:
                    # Its own database: a hub takes over the running games of its node.
                    against_url = await create_database("bench_load")
                    against_dir = Path(workdir) / "against"
                    against_dir.mkdir()
                    against = await start_hub(
                        against_url, against_dir, None, args.full_gc_every, Path(args.against)
                    )
                    hubs.append((args.against, against))
                for games in args.games:
                    await interleaved_ratio(hubs, commit_echo.port, games, args)
                return
            # (games, hub p50, commit echo p50 before it) per run; --repeat alternates them.
            runs: list[tuple[int, float, float]] = []
            for games, _ in [(g, r) for g in args.games for r in range(args.repeat)]:
                # N clients for N games: the hub's own concurrency (one move in flight per game).
                echo_rtts = await echo_round_trips(
                    f"ws://127.0.0.1:{echo.port}", games, min(args.seconds, 10), args.think_ms
                )
                commit_rtts = await echo_round_trips(
                    f"ws://127.0.0.1:{commit_echo.port}",
                    games,
                    min(args.seconds, 10),
                    args.think_ms,
                )
                if args.echo_busy_us and not any(run[0] == games for run in runs):
                    await busy_echo_calibration(commit_echo.port, games, args, commit_rtts)
                gc.collect()  # the clients' own full collection, outside any measurement
                ramp_s = args.ramp_s if args.ramp_s is not None else max(1.0, games / 100)
                stats, per_conn = await run_games(
                    hub,
                    games,
                    args.seconds,
                    args.think_ms,
                    args.max_plies,
                    ramp_s,
                    args.census,
                    args.observers,
                    args.idle_during,
                )
                observed = (
                    f"observers got {stats.observed / max(stats.moves, 1):.2f} events per move, "
                    if args.observers
                    else ""
                )
                print(
                    f"{backend:10} games={games:5} think={args.think_ms:g}ms "
                    f"move rtt p50={percentile(stats.rtts_ms, 0.5):.2f}ms p99={percentile(stats.rtts_ms, 0.99):.2f}ms "
                    f"| echo p50={percentile(echo_rtts, 0.5):.2f}ms p99={percentile(echo_rtts, 0.99):.2f}ms "
                    f"| commit echo p50={percentile(commit_rtts, 0.5):.2f}ms "
                    f"p99={percentile(commit_rtts, 0.99):.2f}ms "
                    f"(move p50 = {percentile(stats.rtts_ms, 0.5) / percentile(commit_rtts, 0.5):.2f}x) "
                    f"| {stats.moves_per_s:.0f} moves/s, {stats.moves} moves, {stats.games} games, "
                    f"{observed}"
                    f"cpu hub {100 * stats.hub_cpu:.0f}% "
                    f"({1000 * stats.hub_cpu / max(stats.moves_per_s, 1e-9):.2f} ms/move) "
                    f"clients {100 * stats.client_cpu:.0f}% load {os.getloadavg()[0]:.1f} "
                    f"| rss/conn {per_conn:.1f} KiB | errors {stats.errors or 'none'}",
                    flush=True,
                )
                runs.append((games, percentile(stats.rtts_ms, 0.5), percentile(commit_rtts, 0.5)))
                print_lag(stats.connect_lag, stats.lag)
                if stats.lag.get("phases_us"):
                    print_phases(stats.lag["phases_us"], stats.trips)
                if stats.slow:
                    # When the slow round trips happened: one stall, or spread over the run?
                    by_second: dict[int, int] = {}
                    for at, _ in stats.slow:
                        by_second[int(at)] = by_second.get(int(at), 0) + 1
                    busiest = sorted(by_second.items(), key=lambda item: -item[1])[:8]
                    print(
                        f"{'':10} {len(stats.slow)} round trips over 20 ms in "
                        f"{len(by_second)} of {int(args.seconds)} seconds; busiest (second: count) "
                        + ", ".join(f"{sec}: {count}" for sec, count in sorted(busiest)),
                        flush=True,
                    )
            if args.repeat > 1:
                await summarise_repeats(runs, commit_echo.port, args)
            if args.idle:
                per_idle = await run_idle(hub, args.idle)
                print(
                    f"{backend:10} idle={args.idle}: {per_idle:.1f} KiB per idle connection (server RSS)",
                    flush=True,
                )
        finally:
            hub.stop()
            echo.stop()
            commit_echo.stop()
            if against is not None:
                against.stop()
            if backend == "postgresql":
                await drop_database(database_url)
            if against_url is not None:
                await drop_database(against_url)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--backend", nargs="+", default=["sqlite"], choices=["sqlite", "postgresql"]
    )
    parser.add_argument("--games", nargs="*", type=int, default=[10, 100])
    parser.add_argument("--seconds", type=float, default=15.0, help="length of each game run")
    parser.add_argument("--think-ms", type=float, default=0.0, help="mean think time per move")
    parser.add_argument("--max-plies", type=int, default=60)
    parser.add_argument(
        "--ramp-s", type=float, help="spread the first seeks over this long (default: games/100)"
    )
    parser.add_argument(
        "--idle", type=int, default=0, help="idle connections to open after the games (0: skip)"
    )
    parser.add_argument(
        "--idle-during",
        type=int,
        default=0,
        help="idle guests connected and logged in before the players, open during the games",
    )
    parser.add_argument(
        "--full-gc-every",
        type=float,
        help="the hub's timed collection interval in seconds (full_gc_interval_s; default: the "
        "server's), so that a short run meets as many as a long one would",
    )
    parser.add_argument(
        "--phases",
        action="store_true",
        help="where a move's round trip goes inside the hub (move_phases.py: medians by phase)",
    )
    parser.add_argument(
        "--observers",
        action="store_true",
        help="one spectator per game: every move goes to both players and an observer",
    )
    parser.add_argument(
        "--sqlite-dir",
        help="where the SQLite file goes (e.g. /dev/shm: no fsync cost, to isolate the disk)",
    )
    parser.add_argument(
        "--profile-hub",
        help="profile the hub (cProfile) during each measurement window, writing FILE.<backend>",
    )
    parser.add_argument(
        "--census",
        action="store_true",
        help="after each run (and again once every client has closed), count the hub's tracked "
        "objects by type, time its timed collection and a whole-heap one, and count the "
        "cyclic garbage that freezing kept",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="measure echoes and hub this many times in turn (and the commit echo once more at "
        "the end); each hub run is compared with the commit echoes just before and after it",
    )
    parser.add_argument(
        "--interleave",
        type=float,
        metavar="S",
        help="only the ratio of the hub's move p50 to the commit echo's, measured in turns of "
        "S seconds each for --seconds of each (closed loop; see interleaved_ratio)",
    )
    parser.add_argument(
        "--against",
        metavar="TREE",
        help="with --interleave: a second hub, from another checkout of the project, takes "
        "its turn after this tree's in every round (interleave.py)",
    )
    parser.add_argument(
        "--echo-busy-us",
        nargs="*",
        type=int,
        default=[],
        help="also time the commit echo burning this many µs of CPU while each commit is in "
        "flight: how much of a server's work during its commit the round trip shows",
    )
    parser.add_argument(
        "--storm",
        type=int,
        default=0,
        metavar="N",
        help="a reconnect storm (storm.py): N registered players resume their sessions within "
        "--storm-within seconds, a fifth of them (2 x the largest --games) the players of "
        "running games, who re-join them with their last version",
    )
    parser.add_argument("--storm-within", type=float, default=10.0, metavar="T")
    parser.add_argument(
        "--storm-one-process",
        action="store_true",
        help="the storm's idle logins in the same process as the timed players (as before "
        "f543bdd: the players' round trips then also wait for that loop)",
    )
    parser.add_argument("--storm-logins", metavar="FILE", help=argparse.SUPPRESS)
    parser.add_argument("--echo-server", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--commit-echo-server", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phases:
        os.environ["BENCH_PHASES"] = "1"  # the hub's probe (move_phases.py), inherited
    if args.interleave:
        # Each hub runs its own tree's probe: an older one does not sample the CPU, so neither
        # does this one (docs/benchmarks.md, "The probe's CPU sampling and the
        # interleaved round trip").
        os.environ["BENCH_PROBE_CPU"] = "0"
    if args.echo_server:
        await echo_main(args.echo_server)
        return
    if args.storm_logins:
        raise_fd_limit()
        gc.set_threshold(*TIMED_GC_THRESHOLDS)
        await logins_main(args.storm_logins)
        return
    if args.commit_echo_server:
        port, database_url = args.commit_echo_server
        await commit_echo_main(int(port), database_url)
        return
    limit = raise_fd_limit()
    # The clients are the measuring instrument: a pause of their own would be timed as the
    # server's latency. With Python's default collector, full collections of 2,000 client
    # sockets paused this process for tens of milliseconds; use the server's timed policy.
    gc.set_threshold(*TIMED_GC_THRESHOLDS)
    loop = type(asyncio.get_running_loop()).__module__.split(".")[0]
    print(
        f"open-file limit {limit}; python {sys.version.split()[0]}; cpus {os.cpu_count()}; "
        f"json {JSON_LIBRARY}; event loop {loop}; load average {os.getloadavg()[0]:.1f}"
    )
    for backend in args.backend:
        await bench_backend(backend, args)


def run() -> None:
    try:
        import uvloop
    except ImportError:
        asyncio.run(main())
    else:
        uvloop.run(main())


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        run()

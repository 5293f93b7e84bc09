"""Scale-out benchmark: the same load on one hub process and on two, in the same run.

Run by hand (never in CI)::

    .venv/bin/python bench/bench_cluster.py                       # 100 and 400 games, 20 s each
    .venv/bin/python bench/bench_cluster.py --games 200 --seconds 30 --think-ms 200
    # a hub of two killed, its players' reconnect storm onto the survivor
    .venv/bin/python bench/bench_cluster.py --storm-after-kill 2000 --games 200 --think-ms 3000

Each configuration is a real topology started by ``scripts/cluster.py``'s ``LocalCluster`` on a
fresh PostgreSQL database, with the clients connecting through HAProxy (Debian's ``haproxy``
from ``config/haproxy.cfg``, the docker-compose balancer):

* ``1 process``: one hub, no Redis — the single-process path (in-process bus);
* ``1 process + Redis``: one hub in cluster mode (leases, registry, presence in Redis) — what the
  cluster layer costs by itself;
* ``2 processes + Redis``: two hubs behind HAProxy; a seek pairs with the waiting seek on its
  node, so about half of the games have their players on different nodes.

The clients are ``bench/bench_load.py``'s: 2N guests seek the same Mini-Shogi game, play random
legal moves with a think time, time **send → ack** (the ack comes after the move's commit), and
seek again after each game. Reported per configuration: committed moves per second, ack round trip
p50/p99, the CPU used by the hubs, by HAProxy and by the client process (shares of one core), and
the server side's CPU per committed move (hubs + HAProxy, in CPU-milliseconds): on a busy shared
machine that figure is steadier than the rates. The client runs in one process on the same
machine, so it competes with the hubs for CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench"), str(ROOT / "scripts"), str(ROOT / "tests")]

# bench/ and scripts/ each have a ``processes`` module: the bench's modules bind theirs first,
# then scripts/cluster.py (through scripts/haproxy.py) imports its own under that name.
import storm_cluster  # noqa: E402
from load_clients import (  # noqa: E402
    Player,
    Stats,
    login_guest,
    open_many,
    percentile,
)
from processes import cpu_seconds, raise_fd_limit  # noqa: E402

del sys.modules["processes"]
sys.path.insert(0, str(ROOT / "scripts"))
from cluster import LocalCluster  # noqa: E402
from support import create_database, drop_database  # noqa: E402

HUB_ENV = {
    "HUB_LOG_LEVEL": "WARNING",
    "HUB_RATE_LIMIT_PER_S": "1000",
    "HUB_RATE_LIMIT_BURST": "1000",
    "HUB_SEND_QUEUE_LIMIT": "1024",
}


@dataclass(frozen=True)
class Topology:
    name: str
    hubs: int
    redis: bool


TOPOLOGIES = (
    Topology("1 process", 1, False),
    Topology("1 process + Redis", 1, True),
    Topology("2 processes + Redis", 2, True),
)


@dataclass
class Result:
    topology: Topology
    games: int
    stats: Stats
    hub_cpu: list[float]
    haproxy_cpu: float

    @property
    def cpu_ms_per_move(self) -> float:
        """CPU-milliseconds of the hubs and HAProxy per committed move."""
        cores = sum(self.hub_cpu) + self.haproxy_cpu  # shares of one core, while measured
        return 1000 * cores / self.stats.moves_per_s if self.stats.moves_per_s else float("nan")


async def measure(
    cluster: LocalCluster, games: int, seconds: float, think_ms: float, max_plies: int
) -> tuple[Stats, list[float], float]:
    """2N players through HAProxy; moves and round trips measured for ``seconds`` after a
    ramp-up and a warm-up. Returns the stats, each hub's and HAProxy's share of one core."""
    sockets = await open_many(cluster.url, 2 * games)
    await asyncio.gather(*(login_guest(ws) for ws in sockets))
    stats = Stats()
    ramp_s = 2.0
    now = time.monotonic()
    measure_from = now + ramp_s + 2.0
    until = measure_from + seconds
    players = [
        Player(ws, random.Random(i), think_ms, max_plies, stats) for i, ws in enumerate(sockets)
    ]
    tasks = [
        asyncio.create_task(p.run(now + ramp_s * i / len(players), measure_from, until))
        for i, p in enumerate(players)
    ]
    await asyncio.sleep(max(0.0, measure_from - time.monotonic()))
    pids = [hub.child.pid for hub in cluster.hubs if hub.child.pid is not None]
    hub_before = [cpu_seconds(pid) for pid in pids]
    haproxy_pid = cluster.proxy.child.pid
    assert haproxy_pid is not None
    haproxy_before = cpu_seconds(haproxy_pid)
    client_before = cpu_seconds(os.getpid())
    start = time.perf_counter()
    await asyncio.sleep(max(0.0, until - time.monotonic()))
    elapsed = time.perf_counter() - start
    hub_cpu = [(cpu_seconds(pid) - b) / elapsed for pid, b in zip(pids, hub_before)]
    haproxy_cpu = (cpu_seconds(haproxy_pid) - haproxy_before) / elapsed
    stats.client_cpu = (cpu_seconds(os.getpid()) - client_before) / elapsed
    stats.hub_cpu = sum(hub_cpu)
    stats.moves_per_s = stats.moves / elapsed
    await stats.stop_players(tasks)
    await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)
    return stats, hub_cpu, haproxy_cpu


async def run_one(topology: Topology, games: int, args: argparse.Namespace) -> Result:
    database = await create_database("bench_cluster")
    env = dict(HUB_ENV)
    if not topology.redis:
        env["HUB_REDIS_URL"] = ""
    cluster = LocalCluster(
        hubs=topology.hubs,
        database_url=database,
        redis_url=None,
        env=env,
        hub_argv=args.hub_argv.split() if args.hub_argv else (sys.executable, "-m", "server"),
        check_interval="2s",  # docker-compose's
    )
    try:
        await cluster.start()
        stats, hub_cpu, haproxy_cpu = await measure(
            cluster, games, args.seconds, args.think_ms, args.max_plies
        )
    finally:
        await cluster.stop()
        await drop_database(database)
    return Result(topology, games, stats, hub_cpu, haproxy_cpu)


def report(results: list[Result]) -> str:
    lines = [
        "| topology | games | moves/s | ack p50 | ack p99 | hub CPU | HAProxy CPU "
        "| CPU ms/move | client CPU | errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        s = r.stats
        cpus = " + ".join(f"{c:.0%}" for c in r.hub_cpu)
        errors = ", ".join(f"{k}: {v}" for k, v in sorted(s.errors.items())) or "none"
        lines.append(
            f"| {r.topology.name} | {r.games} | {s.moves_per_s:,.0f} | "
            f"{percentile(s.rtts_ms, 0.5):.1f} ms | {percentile(s.rtts_ms, 0.99):.1f} ms | "
            f"{cpus} | {r.haproxy_cpu:.0%} | {r.cpu_ms_per_move:.2f} | {s.client_cpu:.0%} "
            f"| {errors} |"
        )
    return "\n".join(lines)


async def storm_run(args: argparse.Namespace) -> None:
    """``--storm-after-kill N`` (``storm_cluster.py``)."""
    database = await create_database("bench_storm")
    log_dir = storm_cluster.log_dir()
    env, pattern = storm_cluster.probe_env(log_dir)
    cluster = LocalCluster(
        hubs=2,
        database_url=database,
        redis_url=None,
        env=env,
        # --hub-argv: another tree's bench/hub_probe.py (its server against this client)
        hub_argv=args.hub_argv.split() if args.hub_argv else storm_cluster.hub_argv(),
        check_interval="2s",  # docker-compose's
        log_dir=log_dir,
    )
    cluster.probe_file = pattern  # type: ignore[attr-defined]
    print(f"logs in {log_dir}", flush=True)
    try:
        await cluster.start()
        if args.clients_nice:
            # The clients only (the cluster's processes are started): in a deployment the
            # players are not on the hubs' machine; here they share its two cores.
            os.nice(args.clients_nice)
            print(f"the clients run at nice {args.clients_nice}", flush=True)
        await storm_cluster.storm_after_kill(
            cluster, args.storm_after_kill, args.games[0], args.think_ms
        )
    finally:
        await cluster.stop()
        await drop_database(database)


async def main_async(args: argparse.Namespace) -> None:
    raise_fd_limit()
    if args.storm_after_kill:
        await storm_run(args)
        return
    results = []
    for games in args.games:
        for topology in TOPOLOGIES:
            print(f"{topology.name}, {games} games ...", flush=True)
            results.append(await run_one(topology, games, args))
    print(report(results))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--games", type=int, nargs="+", default=[100, 400])
    parser.add_argument("--seconds", type=float, default=20.0, help="measured time per run")
    parser.add_argument("--think-ms", type=float, default=100.0, help="mean think time")
    parser.add_argument("--max-plies", type=int, default=60, help="resign after this many")
    parser.add_argument("--hub-argv", default="", help="hub command (default: python -m server)")
    parser.add_argument(
        "--storm-after-kill",
        type=int,
        default=0,
        metavar="N",
        help="instead: N registered players on two hubs, 2 x --games of them playing; one hub "
        "is killed and its players reconnect through HAProxy to the other (storm_cluster.py)",
    )
    parser.add_argument(
        "--clients-nice",
        type=int,
        default=0,
        metavar="N",
        help="with --storm-after-kill: the bench's clients run at this nice value once the "
        "cluster has started (the hubs, HAProxy, PostgreSQL and Redis keep theirs)",
    )
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()

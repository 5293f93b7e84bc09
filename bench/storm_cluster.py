"""``bench_cluster.py --storm-after-kill N``: the reconnect storm (``bench_load.py --storm``)
onto a cluster.

Two hubs (``bench/hub_probe.py``: ``python -m server`` plus the loop-lag probe) behind HAProxy
(``scripts/cluster.py``'s ``LocalCluster``, ``config/haproxy.cfg``), Redis and a fresh
PostgreSQL database. N registered players with session tokens (``storm.seed_players``) connect
through HAProxy: 2G of them play G Mini-Shogi games at a move per ``--think-ms``
(``storm_players.GamePlayer``), the others log in and stay idle. Once every game has played a while,
the survivor's probe window opens and the other hub is killed (SIGKILL: no lease released, no
goodbye): every player it served loses its connection and reconnects through HAProxy (which
sends them to the survivor), resumes its session and re-joins its game with the last version
it saw; the survivor takes the dead hub's games over when their leases expire. A refused move
(``node_unavailable``, ``busy`` … while a game changes hands) is sent again.

The window closes 2 s after the last of them is back, once every running game has had a move
acknowledged since the kill. Reported: the survivor's loop lag over the
window (the storm's connect phase and the takeover included), its own CPU between two wake-ups,
the reconnections' login round trips, the running games' move round trips during the window,
and the chaos run's first invariant (``chaos.py``): every acknowledged move is in the database.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checkout import ROOT
from load_clients import percentile, reconnect_failure
from processes import cpu_seconds, probe_report
from storm import SETTLE_S, seed_players
from storm_players import GamePlayer, StormStats, resume
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from server.store import Store

STORM_HUB_ENV = {
    "HUB_LOG_LEVEL": "WARNING",
    "HUB_LEASE_TTL_MS": "3000",
    "HUB_PRESENCE_TTL_MS": "3000",
    "HUB_RECONNECT_GRACE_S": "600",
    "HUB_RATE_LIMIT_PER_S": "1000",
    "HUB_RATE_LIMIT_BURST": "1000",
    "HUB_SEND_QUEUE_LIMIT": "4096",
}
"""The chaos run's lease and presence times (a takeover within seconds), a grace long enough
that no game is claimed while its players come back."""


@dataclass
class _Signalled:
    """What ``processes.probe_report`` needs of a hub: its probe file and a way to signal it."""

    probe_file: Path
    pid: int

    @property
    def popen(self) -> _Signalled:
        return self

    def send_signal(self, signum: int) -> None:
        os.kill(self.pid, signum)


class IdlePlayer:
    """A registered player logged in and idle; reconnects (through HAProxy) when its
    connection is lost, each reconnection's login timed into the stats."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token
        self.ws: ClientConnection | None = None
        self.reconnections = 0

    async def run(self, stats: StormStats) -> None:
        first = True  # a first login that fails is tried again too (a task that died
        # there would hold up the bench's wait for every idle player for ever)
        while True:
            if self.ws is not None:
                await self.ws.wait_closed()
            while True:
                try:
                    self.ws, _ = await resume(self.url, self.token, None if first else stats)
                    break
                except (
                    OSError,
                    ConnectionClosed,
                    InvalidHandshake,
                    TimeoutError,
                    RuntimeError,
                ) as error:
                    stats.error(("first " if first else "") + reconnect_failure(error))
                    await asyncio.sleep(0.2)
            self.reconnections += 0 if first else 1
            first = False


async def storm_after_kill(cluster: Any, count: int, games: int, think_ms: float) -> dict[str, Any]:
    """The run (module docstring) on a started two-hub ``LocalCluster`` whose hubs run
    ``hub_probe.py`` with ``BENCH_PROBE_FILE`` holding ``{node}``; prints its report."""
    url = cluster.url
    survivor, victim = cluster.hubs
    tokens = await seed_players(cluster.database_url, count)
    stats = StormStats()
    in_games = min(2 * games, count)
    gamers = [
        GamePlayer(url, token, random.Random(i), think_ms)
        for i, token in enumerate(tokens[:in_games])
    ]
    for p in gamers:
        p.reconnect_on_close = True
        p.stats = stats
    idle = [IdlePlayer(url, token) for token in tokens[in_games:]]
    until = time.monotonic() + 3600.0
    tasks = [asyncio.create_task(p.run(until, stats)) for p in gamers]
    # The idle players log in 500 at a time: the storm is the reconnection, not this.
    for start in range(0, len(idle), 500):
        batch = idle[start : start + 500]
        tasks += [asyncio.create_task(p.run(stats)) for p in batch]
        batch_deadline = time.monotonic() + 120.0  # HAProxy's maxconn is a limit too
        while sum(1 for p in batch if p.ws is not None) < len(batch):
            if time.monotonic() > batch_deadline:
                missing = sum(1 for p in idle if p.ws is None)
                print(f"  {missing:,} idle players could not log in (HAProxy full?)", flush=True)
                break
            await asyncio.sleep(0.1)
        if (start // 500) % 4 == 3:
            print(f"  {start + len(batch):,} idle players logged in", flush=True)
    deadline = time.monotonic() + 120.0
    while sum(1 for p in gamers if p.game is not None) < in_games - 1:
        if time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    await asyncio.sleep(max(5.0, 3 * think_ms / 1000))
    stats.logins_ms.clear()
    stats.connects_ms.clear()
    errors_before = dict(stats.errors)
    stats.errors.clear()
    paired = sum(1 for p in gamers if p.game is not None)
    probe_path = Path(str(cluster.probe_file).replace("{node}", survivor.node_id))
    target = _Signalled(probe_path, survivor.child.pid)
    on_victim = (await victim.health() or {}).get("connections", 0)
    on_survivor = (await survivor.health() or {}).get("connections", 0)
    before = len(stats.moves)
    await probe_report(target, signal.SIGUSR1, "window")  # the window starts now
    cpu_before = cpu_seconds(survivor.child.pid)
    load_before = os.getloadavg()[0]
    window_start = time.monotonic()
    at_kill = {p.game for p in gamers if p.game is not None}
    await victim.kill()
    logins_before = sum(p.logins for p in gamers) + sum(p.reconnections for p in idle)
    # Everyone back: as many logins as the victim had connections (a connection cut while
    # logging in counts again), and the quiet settles.
    deadline = window_start + 120.0
    stalled: set[str | None] = set()
    while time.monotonic() < deadline:
        back = sum(p.logins for p in gamers) + sum(p.reconnections for p in idle) - logins_before
        # ... and every game running at the kill, unless it ended, has had a move acknowledged
        # since (its owner alive or its takeover done). Games started since are not waited
        # for (reported below when none of their moves was acknowledged).
        moved = {p.game for p in gamers if p.last_ack_at >= window_start}
        stalled = {p.game for p in gamers if p.game in at_kill} - moved
        quiet = time.monotonic() - max(stats.last_login, window_start) > SETTLE_S
        if back >= on_victim and not stalled and quiet:
            break
        await asyncio.sleep(0.1)
    last_login = max(stats.last_login, window_start)
    lag = await probe_report(target, signal.SIGUSR1, "window")
    health = await survivor.health() or {}
    elapsed = time.monotonic() - window_start
    survivor_cpu = (cpu_seconds(survivor.child.pid) - cpu_before) / elapsed
    window_end = time.monotonic()
    during = [rtt for at, rtt in stats.moves[before:] if window_start <= at <= window_end]
    earlier = [rtt for _, rtt in stats.moves[:before]]
    died = [t.exception() for t in tasks if t.done() and not t.cancelled() and t.exception()]
    if died:
        print(f"  client tasks that died: {len(died)}: {died[:3]!r}", flush=True)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    sockets = [p.ws for p in [*gamers, *idle] if p.ws is not None]
    await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)
    acked = {move for p in gamers for move in p.acked}
    lost = await lost_moves(cluster.database_url, acked)
    print(
        f"storm after a kill: {count:,} players through HAProxy on 2 hubs ({on_survivor:,} on "
        f"the survivor, {on_victim:,} on the killed hub), {in_games:,} of them in {paired // 2:,} "
        f"running games at a move per {think_ms / 1000:g} s; the killed hub's players came back "
        f"to the survivor within {last_login - window_start:.1f} s ({len(stats.logins_ms):,} "
        f"logins, {stats.rejoined:,} re-joined games, {stats.snapshots} snapshots, "
        f"{stats.moved_on_rejoin} re-joins with the move and nothing new); load average "
        f"{load_before:.1f} → {os.getloadavg()[0]:.1f}, the survivor's cpu {100 * survivor_cpu:.0f}%",
        flush=True,
    )
    print(
        f"  login round trip (resume → hello) p50 {percentile(stats.logins_ms, 0.5):.1f} ms p99 "
        f"{percentile(stats.logins_ms, 0.99):.1f} ms; connect → hello p50 "
        f"{percentile(stats.connects_ms, 0.5):.1f} ms p99 {percentile(stats.connects_ms, 0.99):.1f} ms",
        flush=True,
    )
    print(
        f"  running games' move round trip during the window (refusals retried: counted from the "
        f"first try) p50 {percentile(during, 0.5):.2f} ms p99 {percentile(during, 0.99):.2f} ms "
        f"max {max(during, default=float('nan')):.1f} ms ({len(during):,} moves); before it p50 "
        f"{percentile(earlier, 0.5):.2f} ms p99 {percentile(earlier, 0.99):.2f} ms",
        flush=True,
    )
    print(
        f"  the survivor's loop lag from the kill to {SETTLE_S:g} s after the last login "
        f"({lag['seconds']:.1f} s): max {lag['lag_max_ms']:.1f} ms, p99.9 {lag['lag_p999_ms']:.1f} "
        f"ms, p99 {lag['lag_p99_ms']:.1f} ms, {lag['lags_over_50ms']} wake-ups over 50 ms (its own "
        f"CPU between two wake-ups: max {lag['busy_max_ms']:.1f} ms, {lag['busy_over_50ms']} over "
        "50 ms); longest collection by generation (wall; CPU): "
        + ", ".join(
            f"{g}: {v['max_ms']:.1f}; {v['max_cpu_ms']:.1f} ms ({v['count']}x)"
            for g, v in lag["gc"].items()
        ),
        flush=True,
    )
    if stalled:
        print(
            f"  running games with no move acknowledged since the kill when the window closed "
            f"(after {elapsed:.0f} s): {len(stalled)} (the hub's log says why)",
            flush=True,
        )
        for game in sorted(stalled, key=str)[:5]:  # what its players were waiting for
            views = [
                f"{p.side or '?'}: ply {p.ply}, {'to move' if p.turn == p.side else 'waiting'}"
                f"{', move in flight' if p.sent_at is not None else ''}"
                f"{', joining' if p.joining else ''}, {p.logins} logins"
                for p in gamers
                if p.game == game
            ]
            print(f"    {game}: " + "; ".join(views), flush=True)
    unmoved = {p.game for p in gamers if p.game is not None and p.game not in at_kill} - {
        p.game for p in gamers if p.last_ack_at >= window_start
    }
    if unmoved:
        print(
            f"  games started after the kill without a move acknowledged when the window "
            f"closed: {len(unmoved)} of "
            f"{len({p.game for p in gamers if p.game is not None} - at_kill)}",
            flush=True,
        )
        for game in sorted(unmoved, key=str)[:3]:
            views = [
                f"{p.side or '?'}: ply {p.ply}, {'to move' if p.turn == p.side else 'waiting'}"
                f"{', move in flight' if p.sent_at is not None else ''}, {p.logins} logins"
                for p in gamers
                if p.game == game
            ]
            print(f"    {game}: " + "; ".join(views), flush=True)
    await describe_games(cluster.database_url, gamers, sorted(stalled | unmoved, key=str)[:6])
    cluster_report = health.get("cluster", {})
    print(
        f"  the survivor: {cluster_report.get('taken_over')} games taken over, a player's "
        f"unfinished game looked up (logins, seeks) {cluster_report.get('player_game_lookups')}",
        flush=True,
    )
    print(
        f"  acknowledged moves: {len(acked):,}, missing from the database: {len(lost)}"
        f" | refusals and errors: {stats.errors or 'none'} (before the kill: "
        f"{errors_before or 'none'})",
        flush=True,
    )
    return {"lag": lag, "lost": lost, "stats": stats}


async def lost_moves(
    database_url: str, acked: set[tuple[str, int, str]]
) -> list[tuple[str, int, str]]:
    """The acknowledged moves that are not in the database (``chaos.py``'s first invariant)."""
    async with Store.from_url(database_url, pool_size=2) as store:
        stored = {}
        for game_id in {game for game, _, _ in acked}:
            game = await store.get_game(game_id)
            stored[game_id] = [] if game is None else [m.uci for m in game.moves]
    return sorted(
        (game, ply, uci)
        for game, ply, uci in acked
        if len(stored[game]) < ply or stored[game][ply - 1] != uci
    )


async def describe_games(database_url: str, gamers: list[GamePlayer], games: list[Any]) -> None:
    """What the store says of some games, and what their players last received."""
    async with Store.from_url(database_url, pool_size=2) as store:
        for game_id in games:
            game = await store.get_game(game_id)
            where = "not stored" if game is None else f"{game.status}, {len(game.moves)} moves"
            print(f"    {game_id}: stored {where}", flush=True)
            for p in gamers:
                if p.game == game_id:
                    print(f"      {p.side}: " + " | ".join(p.recent), flush=True)


def probe_env(log_dir: Path) -> tuple[dict[str, str], Path]:
    """The hubs' extra environment for the probe, and the probe files' pattern."""
    pattern = log_dir / "probe-{node}.jsonl"
    return {**STORM_HUB_ENV, "BENCH_PROBE_FILE": str(pattern)}, pattern


def hub_argv() -> tuple[str, ...]:
    return (sys.executable, str(ROOT / "bench" / "hub_probe.py"))


def log_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="hub-storm-cluster-"))

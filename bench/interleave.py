"""``bench_load.py --interleave S``: hubs and the commit echo take turns, slice by slice.

The ratio target (the hub's p50 within 1.5x the commit echo's) is measured this way. Each hub's
games and the commit echo move in turns of ``S`` seconds for ``--seconds`` of each, closed loop
with ``--think-ms``: a hub's players move only while their gate is open (a player that waited
for it thinks again first, so that the moves do not come in a burst), the echo's clients only
while every gate is shut. A drift of the machine over the run then weighs on all alike, slice by
slice (separate runs ten seconds apart drifted by ±10 % here).

With ``--against TREE`` a second hub, from another checkout of the project, takes its turn
after the first one in every round: the same clients, the same database server, the same
commit echo slices. A change too small to tell apart from the drift between separate runs
(a few per cent; the same code measured 1.43× and 1.53× in two runs ten minutes apart) is
then compared within one run, and the report adds the ratio of the two hubs' p50s and the
median of their per-round ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import signal
import statistics
import time

from load_clients import EchoClients, Player, Stats, describe, open_many, percentile, print_phases
from processes import Process, probe_report


class HubTurns:
    """One hub's players, gated; the round trips of each of its slices."""

    def __init__(
        self, label: str, hub: Process, players: list[Player], stats: Stats, gate: asyncio.Event
    ) -> None:
        self.label = label
        self.hub = hub
        self.players = players
        self.stats = stats
        self.gate = gate
        self.slices: list[list[float]] = []
        self.tasks: list[asyncio.Task[None]] = []

    @classmethod
    async def open(cls, label: str, hub: Process, games: int, args: argparse.Namespace) -> HubTurns:
        sockets = await open_many(f"ws://127.0.0.1:{hub.port}/ws", 2 * games, login=True)
        stats = Stats()
        gate = asyncio.Event()
        players = [
            Player(ws, random.Random(i), args.think_ms, args.max_plies, stats, gate=gate)
            for i, ws in enumerate(sockets)
        ]
        return cls(label, hub, players, stats, gate)

    def start(self, start: float, ramp_s: float, horizon: float) -> None:
        self.gate.set()
        self.tasks = [
            asyncio.create_task(p.run(start + ramp_s * i / len(self.players), start, horizon))
            for i, p in enumerate(self.players)
        ]

    async def turn(self, seconds: float) -> None:
        taken = len(self.stats.rtts_ms)
        self.gate.set()
        await asyncio.sleep(seconds)
        self.gate.clear()
        await asyncio.sleep(0.05)  # the moves in flight land (not counted: the gate is shut)
        self.slices.append(self.stats.rtts_ms[taken:])

    async def stop(self) -> None:
        for player in self.players:
            player.until = time.monotonic()  # the players resign their games and stop
        self.gate.set()
        await asyncio.wait(self.tasks, timeout=30)
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*(p.ws.close() for p in self.players), return_exceptions=True)

    @property
    def all(self) -> list[float]:
        return [rtt for part in self.slices for rtt in part]


def pair_ratios(a: list[list[float]], b: list[list[float]]) -> list[float]:
    """The ratios of the p50s of consecutive slices of ``a`` and ``b``."""
    return [percentile(x, 0.5) / percentile(y, 0.5) for x, y in zip(a, b, strict=False) if x and y]


async def interleaved_ratio(
    hubs: list[tuple[str, Process]], commit_echo_port: int, games: int, args: argparse.Namespace
) -> None:
    """See the module docstring; ``hubs``: (label, process), the first one is the tree's own."""
    turns = [await HubTurns.open(label, hub, games, args) for label, hub in hubs]
    echo = await EchoClients.open(f"ws://127.0.0.1:{commit_echo_port}", games, args.phases)
    start = time.monotonic()
    slices = max(1, round(args.seconds / args.interleave))
    horizon = start + 3.0 + (1.5 + len(turns)) * slices * args.interleave + games + 60
    ramp_s = args.ramp_s if args.ramp_s is not None else max(1.0, games / 100)
    for hub_turns in turns:
        hub_turns.start(start, ramp_s, horizon)
    await asyncio.sleep(ramp_s + 3.0)  # games under way, caches warm
    own = turns[0]
    if args.phases:
        await probe_report(own.hub, signal.SIGUSR1, "window")  # the hub's marks start now
    echo_slices: list[list[float]] = []
    for hub_turns in turns[1:]:
        hub_turns.gate.clear()
    for _ in range(slices):
        for hub_turns in turns:
            await hub_turns.turn(args.interleave)
        echo_slices.append(await echo.slice(args.interleave, args.think_ms))
    if args.phases:
        window = await probe_report(own.hub, signal.SIGUSR1, "window")
        if window.get("phases_us"):
            print_phases(window["phases_us"], own.stats.trips)
        print(f"{'':10} the commit echo, median µs: " + describe(echo.way_in_and_out()))
    for hub_turns in turns:
        await hub_turns.stop()
    await echo.close()
    echo_all = [rtt for part in echo_slices for rtt in part]
    echo_p50 = percentile(echo_all, 0.5)
    for hub_turns in turns:
        pairs = pair_ratios(hub_turns.slices, echo_slices)
        hub_p50 = percentile(hub_turns.all, 0.5)
        name = "" if len(turns) == 1 else f" ({hub_turns.label})"
        print(
            f"{'':10} games={games}{name}: interleaved {slices} × {args.interleave:g} s each: "
            f"move p50 {hub_p50:.3f} ms ({len(hub_turns.all)} moves), commit echo p50 "
            f"{echo_p50:.3f} ms ({len(echo_all)} round trips) → {hub_p50 / echo_p50:.2f}x; "
            f"slice pairs: median {statistics.median(pairs):.2f}x, range "
            f"{min(pairs):.2f}–{max(pairs):.2f}x; errors {hub_turns.stats.errors or 'none'}",
            flush=True,
        )
    for other in turns[1:]:
        pairs = pair_ratios(own.slices, other.slices)
        print(
            f"{'':10} games={games}: {own.label} / {other.label}: move p50 "
            f"{percentile(own.all, 0.5) / percentile(other.all, 0.5):.3f}; per round: median "
            f"{statistics.median(pairs):.3f}, range {min(pairs):.3f}–{max(pairs):.3f}",
            flush=True,
        )

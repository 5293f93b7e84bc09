"""Review floods against running games (the review-read limits of 4a2bfca and 63fb166,
2026-12-07): the players' move acknowledgements and the hub's loop lag while anonymous clients
ask, many times a second, for a stored 240-ply Dai Shogi game.

Run by hand (never in CI)::

    .venv/bin/python bench/abuse_reads.py                      # this tree's hub
    .venv/bin/python bench/abuse_reads.py --tree /tmp/before   # another checkout's hub
    .venv/bin/python bench/abuse_reads.py --no-limits          # the cache and the gate only

The hub (``hub_probe.py`` of the tree, a temporary SQLite file, the settings' defaults) gets a
finished 240-ply Dai Shogi game and an unfinished one (its first 200 plies) in its store;
``--players`` guests then play Mini-Shogi games against each other (a move every ~50 ms of
think time each). For each scenario, a flood of ``GET /api/games/{id}`` — the finished game's
review (measured before the limits: 27 a second took every move acknowledgement from 4 ms to
690 ms), or ``?ply=N`` of the unfinished game (never cached: each one a replay) — runs at a
fixed rate for ``--seconds``, from one address or spread over several (127.0.0.x), while the
players' acknowledgements are timed and the hub's loop-lag probe is read. Printed per scenario:
the flood's answers (200 / 429 / other), the players' acknowledgement p50 / p99 / max, the
loop lag p99 / max, the hub's CPU and the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import tempfile
import time
from collections import Counter
from pathlib import Path

import aiohttp
from checkout import ROOT
from load_clients import Player, Stats, login_guest, percentile
from processes import cpu_seconds, probe_report, raise_fd_limit, start_hub
from websockets.asyncio.client import connect

from server.rules import Game, MoveRecord, get_variant
from server.rules.time_control import Fischer
from server.store import Store

PLIES = 240
SCENARIOS = [  # (name, what, requests per second, addresses)
    ("no flood", "finished", 0, 1),
    ("finished game, 30/s, 1 address", "finished", 30, 1),
    ("finished game, 300/s, 1 address", "finished", 300, 1),
    ("finished game, 300/s, 8 addresses", "finished", 300, 8),
    ("unfinished game ?ply=N, 30/s, 1 address", "unfinished", 30, 1),
    ("unfinished game ?ply=N, 300/s, 8 addresses", "unfinished", 300, 8),
]


def dai_game(seed: int) -> Game:
    game = Game(get_variant("daishogi"))
    rng = random.Random(seed)
    while game.ply < PLIES and game.outcome() is None:
        game.play(rng.choice(game.legal_moves()))
    return game


async def store_games(url: str) -> tuple[str, str]:
    """A finished 240-ply Dai Shogi game and an unfinished one (its first 200 plies)."""
    game = await asyncio.to_thread(dai_game, 1)
    store = Store.from_url(url)
    ids = []
    try:
        for plies, finished in ((game.ply, True), (200, False)):
            game_id = await store.create_game(
                variant="daishogi",
                start_fen=game.variant.start_fen,
                time_control=Fischer.from_seconds(600, 10),
                first_name="a",
                second_name="b",
            )
            await store.start_game(game_id)
            moves = list(zip(game.moves, game.displays, strict=True))[:plies]
            await store.append_moves(
                [(game_id, MoveRecord(i, m, d, 1000, 10)) for i, (m, d) in enumerate(moves, 1)]
            )
            if finished:
                await store.finish_game(
                    game_id, "1-0", "resignation", plies=game.ply, final_fen=game.fen()
                )
            ids.append(game_id)
    finally:
        await store.close()
    return ids[0], ids[1]


async def flood(
    port: int, path: str, rate: float, addresses: int, until: float, unfinished: bool
) -> Counter[str]:
    """``rate`` requests a second of ``path`` (``?ply=N`` varying if ``unfinished``), spread
    over ``addresses`` source addresses, until ``until``; returns the answers by status."""
    seen: Counter[str] = Counter()
    if rate <= 0:
        await asyncio.sleep(max(0.0, until - time.monotonic()))
        return seen
    sessions = [
        aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(local_addr=(f"127.0.0.{1 + i}", 0), limit=0),
            timeout=aiohttp.ClientTimeout(total=60),
        )
        for i in range(addresses)
    ]
    tasks: set[asyncio.Task[None]] = set()

    async def one(session: aiohttp.ClientSession, url: str) -> None:
        try:
            async with session.get(url) as answer:
                await answer.read()
                seen[str(answer.status)] += 1
        except (aiohttp.ClientError, TimeoutError) as error:
            seen[type(error).__name__] += 1

    try:
        sent = 0
        started = time.monotonic()
        while time.monotonic() < until:
            url = f"http://127.0.0.1:{port}{path}"
            if unfinished:
                url += f"?ply={sent % 200}"
            task = asyncio.create_task(one(sessions[sent % addresses], url))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            sent += 1
            await asyncio.sleep(max(0.0, started + sent / rate - time.monotonic()))
        if tasks:
            await asyncio.wait(tasks, timeout=60)
    finally:
        for session in sessions:
            await session.close()
    return seen


async def scenario(
    port: int, hub_pid: int, hub: object, name: str, path: str, rate: float, addresses: int,
    unfinished: bool, players: int, seconds: float,
) -> None:  # fmt: skip
    stats = Stats()
    url = f"ws://127.0.0.1:{port}/ws"
    sockets = [await connect(url, max_size=None) for _ in range(players)]
    for ws in sockets:
        await login_guest(ws)
    now = time.monotonic()
    start_at, measure_from, until = now, now + 2.0, now + 2.0 + seconds
    clients = [Player(ws, random.Random(i), 50, 400, stats) for i, ws in enumerate(sockets)]
    runs = [asyncio.create_task(c.run(start_at, measure_from, until)) for c in clients]
    await asyncio.sleep(measure_from - time.monotonic())
    await probe_report(hub, signal.SIGUSR1, "window")  # type: ignore[arg-type]
    cpu_before = cpu_seconds(hub_pid)
    answers = await flood(port, path, rate, addresses, until, unfinished)
    lag = await probe_report(hub, signal.SIGUSR1, "window")  # type: ignore[arg-type]
    cpu = (cpu_seconds(hub_pid) - cpu_before) / max(0.001, time.monotonic() - measure_from)
    await asyncio.wait(runs, timeout=30)
    for ws in sockets:
        await ws.close()
    acks = sorted(stats.rtts_ms)
    print(
        f"{name:<45} answers {dict(sorted(answers.items()))}; move acks n={len(acks)} "
        f"p50 {percentile(acks, 0.5):.1f} p99 {percentile(acks, 0.99):.1f} max "
        f"{(acks[-1] if acks else 0):.1f} ms; loop lag p99 {lag['lag_p99_ms']:.1f} max "
        f"{lag['lag_max_ms']:.1f} ms; hub CPU {cpu:.0%}; load {os.getloadavg()[0]:.1f}",
        flush=True,
    )


async def main(args: argparse.Namespace) -> None:
    raise_fd_limit()
    if args.no_limits:
        for key in ("READS", "REPLAYS"):
            os.environ[f"HUB_REVIEW_{key}_PER_S"] = "100000"
            os.environ[f"HUB_REVIEW_{key}_BURST"] = "100000"
    with tempfile.TemporaryDirectory() as workdir:
        url = f"sqlite+aiosqlite:///{Path(workdir) / 'hub.sqlite3'}"
        hub = await start_hub(url, Path(workdir), None, None, args.tree)
        try:
            await asyncio.sleep(3)  # start-up's own work (the rules' tables) is over
            finished, unfinished = await store_games(url)
            print(f"{args.tree}: {args.players} players, {args.seconds:g} s per scenario")
            chosen = [SCENARIOS[i] for i in args.scenarios] if args.scenarios else SCENARIOS
            for name, what, rate, addresses in chosen:
                game = finished if what == "finished" else unfinished
                await scenario(
                    hub.port, hub.popen.pid, hub, name, f"/api/games/{game}", rate, addresses,
                    what == "unfinished", args.players, args.seconds,
                )  # fmt: skip
        finally:
            hub.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose hub runs")
    parser.add_argument("--no-limits", action="store_true", help="lift the read limits")
    parser.add_argument(
        "--scenarios", type=int, nargs="*", help="indexes into SCENARIOS (default: all)"
    )
    asyncio.run(main(parser.parse_args()))

"""Analysis throughput: positions analysed per second by one worker slot (one core), per variant.

Starts a hub (SQLite in a temporary directory) and one real worker process (``--slots 1``),
stores a seeded random game of ``--plies`` moves per variant, requests its analysis over HTTP
(``POST /api/game/{id}/analysis``) with the variant's default move time, or a fixed
``--depth``, and times request → done (the job queue's handler signals it). Prints one line
per variant: positions, seconds, positions per second, the per-position overhead over the
move time.

    python bench/bench_analysis.py [--plies 20] [--depth N] [--variants minishogi,daishogi]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from processes import start_worker, stop_worker

from server.app import App
from server.config import Settings
from server.rules import Game, MoveRecord, get_variant
from server.rules.time_control import Fischer
from server.store.jobs import Job
from server.transport.analysis_api import DEFAULT_MOVETIME_MS

KEY = "bench-worker-key-0123456789"
VARIANTS = ("minishogi", "shoshogi", "wildcastle", "spartan", "daishogi")


async def store_game(app: App, variant: str, plies: int, seed: int) -> str:
    v = get_variant(variant)
    game = Game(v)
    rng = random.Random(seed)
    while game.ply < plies and game.outcome() is None:
        game.play(rng.choice(game.legal_moves()))
    game_id = await app.store.create_game(
        variant=variant, start_fen=v.start_fen, time_control=Fischer(300_000, 0),
        first_name="a", second_name="b",
    )
    await app.store.start_game(game_id)
    await app.store.append_moves(
        [(game_id, MoveRecord(i, m, d, 1000, 10)) for i, (m, d) in enumerate(zip(game.moves, game.displays), 1)]
    )
    await app.store.finish_game(game_id, "1-0", "resignation", plies=game.ply, final_fen=game.fen())
    return game_id


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            port=0, database_url=f"sqlite+aiosqlite:///{Path(tmp) / 'hub.sqlite3'}",
            worker_keys=KEY, journal_dir=str(Path(tmp) / "journal"), fishnet_poll_s=1,
        )
        app = App(settings)
        await app.start()
        done: dict[str, asyncio.Event] = {}

        async def seen(job: Job, entries: list[dict[str, Any]], finished: bool) -> None:
            if finished and job.game_id in done:
                done[job.game_id].set()

        app.jobs.on_analysis(seen)
        worker = start_worker(app.port, KEY, Path(tmp), "--slots", "1", "--nice", "0")
        try:
            print(f"{'variant':<11} {'limit':>10} {'positions':>9} {'seconds':>8} {'pos/s':>6} {'overhead ms':>11}")
            # Analyses are registered players' (docs/engines.md); one at a time, each done first.
            identity = await app.accounts.register("bencher", "correct horse battery")
            auth = {"Authorization": f"Bearer {identity.token}"}
            async with aiohttp.ClientSession(headers=auth) as http:
                for variant in args.variants.split(","):
                    game_id = await store_game(app, variant, args.plies, 1)
                    done[game_id] = asyncio.Event()
                    limits: dict[str, int] = (
                        {"depth": args.depth} if args.depth else {"movetime_ms": DEFAULT_MOVETIME_MS[variant]}
                    )
                    started = time.monotonic()
                    url = f"http://127.0.0.1:{app.port}/api/game/{game_id}/analysis"
                    async with http.post(url, json=limits) as answer:
                        view = await answer.json()
                        assert answer.status == 202, view
                    await asyncio.wait_for(done[game_id].wait(), 1800)
                    seconds = time.monotonic() - started
                    total = view["progress"]["total"]
                    limit = f"d{args.depth}" if args.depth else f"{limits['movetime_ms']}ms"
                    overhead = (
                        "-" if args.depth else f"{seconds * 1000 / total - limits['movetime_ms']:.0f}"
                    )
                    print(f"{variant:<11} {limit:>10} {total:>9} {seconds:>8.1f} {total / seconds:>6.2f} {overhead:>11}")
        finally:
            stop_worker(worker)
            await app.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plies", type=int, default=20)
    parser.add_argument("--depth", type=int, default=0)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()

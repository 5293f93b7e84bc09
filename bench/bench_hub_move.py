"""The hub's per-move rules work, before and after a change: run against two checkouts in turn.

Run by hand (never in CI)::

    .venv/bin/python bench/bench_hub_move.py --root /path/to/other/checkout --rounds 3
    .venv/bin/python bench/bench_hub_move.py --variant spartan --variant minishogi

Plays seeded random games (moves drawn from the sorted legal list, so every checkout plays
the same games), then times what the hub does for each move — ``Game.play(uci)``,
``Game.fen()``, ``Game.legal_moves()`` — as process CPU time, the best of ``--rounds`` passes
over all games. ``--root`` (default: this checkout) is the tree whose ``server.rules`` is
timed; the other tree is timed by running this script again with its ``--root``, alternately,
so that both see the same machine load.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
from pathlib import Path

STRETCHES = ((1, 40), (41, 80), (81, 120), (121, 200))
GAMES = {"minishogi": 30, "shoshogi": 30, "wildcastle": 30, "spartan": 30, "daishogi": 10}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("--variant", action="append", choices=sorted(GAMES))
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--plies", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    sys.path.insert(0, args.root)
    from server.rules import Game, get_variant  # the checkout under test

    clock = time.process_time_ns
    print(f"root {args.root}")
    print("| variant | moves | hub move mean | median | medians by stretch (plies 1–40/41–80/81–120/121–200) |")
    print("|---|---:|---:|---:|---|")
    for name in args.variant or sorted(GAMES):
        variant = get_variant(name)
        rng = random.Random(args.seed)
        games = []
        for _ in range(GAMES[name]):
            start = variant.random_start_fen(rng)
            game = Game(variant, start)
            while game.ply < args.plies and game.outcome() is None:
                game.play(rng.choice(game.legal_moves()))
            games.append((start, list(game.moves)))
        best: list[int] | None = None
        for _ in range(args.rounds):
            gc.collect()
            spent_all = []
            for start, moves in games:
                game = Game(variant, start)
                for uci in moves:
                    t0 = clock()
                    game.play(uci)
                    game.fen()
                    game.legal_moves()
                    spent_all.append(clock() - t0)
            if best is None or sum(spent_all) < sum(best):
                best = spent_all
        assert best is not None
        plies = [i + 1 for _, moves in games for i in range(len(moves))]
        by_stretch = []
        for first, last in STRETCHES:
            xs = [t for t, ply in zip(best, plies) if first <= ply <= last]
            by_stretch.append(f"{statistics.median(xs) / 1000:.0f}" if xs else "–")
        print(
            f"| {name} | {len(best)} | {sum(best) / len(best) / 1000:.1f} µs |"
            f" {statistics.median(best) / 1000:.1f} µs | {' / '.join(by_stretch)} µs |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

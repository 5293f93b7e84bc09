"""Dai Shogi move-check speed: ``Game.play`` per move over seeded random games.

Run by hand (never in CI)::

    .venv/bin/python bench/bench_dai.py
    .venv/bin/python bench/bench_dai.py --games 40 --seed 7 --max-plies 400

The games are played first (half the moves chosen among captures when there are any, so Lion
fights happen), then replayed while timing:

* **move check**: ``Game.play(uci)`` on a fresh position (parse, validate against the legal
  list, apply, display notation, repetition and outcome), the hub's cost per incoming move,
  as wall time and as process CPU time. Target: at most 1 ms on average.
* **generation**: ``Position.pseudo_legal_moves()`` with the Lion hook, and on the same
  boards with a copy of the variant without the hook: the difference is the hook's cost.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from server.rules import Game, Position, get_variant


def random_games(games: int, seed: int, max_plies: int) -> list[list[str]]:
    """Seeded playouts from the start position, stopped at the game's end or ``max_plies``."""
    variant = get_variant("daishogi")
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        game = Game(variant)
        while game.outcome() is None and game.ply < max_plies:
            pos = game.position
            moves = pos.legal_moves()
            captures = [m for m in moves if pos.is_capture(m)]
            pool = captures if captures and rng.random() < 0.5 else moves
            game.play(pos.uci(rng.choice(pool)))
        out.append(list(game.moves))
    return out


def time_play(games: list[list[str]]) -> tuple[list[float], list[float], list[str]]:
    """µs per ``Game.play`` call as wall time and as this process's CPU time (the latter is
    not inflated when other programs load the machine), and the FEN before each move."""
    variant = get_variant("daishogi")
    wall, cpu = time.perf_counter_ns, time.process_time_ns
    walls: list[float] = []
    cpus: list[float] = []
    fens: list[str] = []
    for moves in games:
        game = Game(variant)
        for uci in moves:
            fens.append(game.fen())
            w0, c0 = wall(), cpu()
            game.play(uci)
            c1, w1 = cpu(), wall()
            walls.append((w1 - w0) / 1000)
            cpus.append((c1 - c0) / 1000)
    return walls, cpus, fens


def time_generation(fens: list[str], rounds: int = 3) -> tuple[float, float]:
    """Mean CPU µs of pseudo_legal_moves with and without the Lion hook on the same boards,
    the best of ``rounds`` interleaved rounds."""
    variant = get_variant("daishogi")
    bare = dataclasses.replace(variant, special_moves=None)
    cpu = time.process_time_ns
    boards = {v: [Position.from_fen(v, fen) for fen in fens] for v in (variant, bare)}
    best = {variant: float("inf"), bare: float("inf")}
    for _ in range(rounds):
        for v, positions in boards.items():
            t0 = cpu()
            for pos in positions:
                pos.pseudo_legal_moves()
            best[v] = min(best[v], (cpu() - t0) / len(positions) / 1000)
    return best[variant], best[bare]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20, help="random games (default 20)")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--max-plies", type=int, default=300)
    args = parser.parse_args(argv)
    games = random_games(args.games, args.seed, args.max_plies)
    gc.collect()
    walls, cpus, fens = time_play(games)
    with_hook, without_hook = time_generation(fens)
    multi = sum(1 for moves in games for m in moves if "," in m or m == "@@@@")
    print(f"daishogi: {len(games)} games, {len(fens)} moves ({multi} multi-leg or pass)")
    for label, times in (("wall", walls), ("cpu", cpus)):
        times.sort()
        print(
            f"move check (Game.play) {label} µs: mean {statistics.fmean(times):.0f}"
            f"  median {statistics.median(times):.0f}  p95 {times[int(0.95 * (len(times) - 1))]:.0f}"
            f"  max {times[-1]:.0f}"
        )
    print(
        f"pseudo_legal_moves µs: {with_hook:.0f} with the Lion hook, {without_hook:.0f} without"
        f" (hook {with_hook - without_hook:.0f})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

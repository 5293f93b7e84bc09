"""Tournament core speed: an arena pairing wave, a Swiss round by each Dutch library, and how
often the two libraries agree.

Run by hand (never in CI)::

    .venv/bin/python bench/bench_tournament.py               # all
    .venv/bin/python bench/bench_tournament.py --only arena

* **arena wave**: :func:`server.hub.tournament.arena.pair_wave` over N waiting players (random
  ratings, ranks, last opponents): the whole wave and its slowest chunk (the longest the
  adapter would block if it ran chunk by chunk), CPU time, best of ``--repeat``;
* **swiss**: a simulated Swiss of 100 players × 9 rounds paired by caissify-pairings: time per
  round (median, max), and the same rounds' inputs given to pairing-core's ``dutch-2026`` with
  a 200,000-step budget: time, and rounds it could not pair within the budget;
* **agreement**: generated tournaments of 5–100 players, with withdrawals and late entries,
  each round given to both libraries: equal pairings, different ones, pairing-core gave up.
"""

from __future__ import annotations

import argparse
import logging
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "hub" / "tournament"))

from tournament_support import pair_core_2026, simulate_swiss  # noqa: E402

from server.hub.tournament import arena  # noqa: E402
from server.hub.tournament.arena import Waiting, pair_wave  # noqa: E402
from server.hub.tournament.swiss import DutchInput, pair_dutch  # noqa: E402

logging.disable(logging.WARNING)


def waiting(n: int, seed: int) -> list[Waiting]:
    rng = random.Random(seed)
    ids = [f"p{i}" for i in range(n)]
    last = {ids[i]: ids[i ^ 1] for i in range(n - n % 2) if rng.random() < 0.5}
    return [Waiting(p, i + 1, rng.randint(800, 2800), last.get(p), rng.randint(-2, 2)) for i, p in enumerate(ids)]


def bench_arena(repeat: int) -> None:
    print("arena wave (CPU ms)      players  whole wave  slowest chunk")
    for n in (10, 50, 100, 300, 1000, 2000):
        best = float("inf")
        players = waiting(n, n)
        for _ in range(repeat):
            t = time.process_time()
            pairs = pair_wave(players, others_playing=True)
            best = min(best, time.process_time() - t)
        chunk_times = []
        for start in range(0, n, arena.PAIRING_CHUNK):
            part = players[start : start + arena.PAIRING_CHUNK + arena.PAIRING_CHUNK // 2]
            t = time.process_time()
            pair_wave(part, others_playing=True)
            chunk_times.append(time.process_time() - t)
        assert len(pairs) == n // 2
        print(f"{'':25}{n:7d}  {best * 1000:10.1f}  {max(chunk_times) * 1000:13.1f}")


def bench_swiss(players: int, rounds: int) -> None:
    ours: list[float] = []
    theirs: list[float] = []
    gave_up = 0

    def on_round(data: DutchInput, _sim: object) -> None:
        nonlocal gave_up
        t = time.process_time()
        pair_dutch(data)
        ours.append(time.process_time() - t)
        t = time.process_time()
        if pair_core_2026(data, max_steps=200_000) is None:
            gave_up += 1
        theirs.append(time.process_time() - t)

    simulate_swiss(7, players, rounds, on_round=on_round)
    print(f"swiss {players} players x {rounds} rounds (CPU s per round)")
    print(f"  caissify-pairings: median {statistics.median(ours):.3f}  max {max(ours):.3f}  total {sum(ours):.2f}")
    print(f"  pairing-core:      median {statistics.median(theirs):.3f}  max {max(theirs):.3f}  total {sum(theirs):.2f}  gave up {gave_up}/{len(theirs)}")


def bench_agreement(tournaments: int) -> None:
    counts = {"equal": 0, "different": 0, "gave_up": 0}
    sizes = [5, 6, 7, 8, 10, 12, 16, 20, 30, 50, 100]

    def on_round(data: DutchInput, _sim: object) -> None:
        ours, theirs = pair_dutch(data), pair_core_2026(data, max_steps=200_000)
        if theirs is None:
            counts["gave_up"] += 1
        elif ours is not None and {frozenset(g) for g in ours[0]} == {frozenset(g) for g in theirs[0]} and ours[1] == theirs[1]:
            counts["equal"] += 1
        else:
            counts["different"] += 1

    for seed in range(tournaments):
        n = sizes[seed % len(sizes)]
        simulate_swiss(seed, n, min(7, n // 2), churn=0.05 if seed % 2 else 0.0, on_round=on_round)
    print(f"agreement over {tournaments} tournaments (rounds): {counts}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=["arena", "swiss", "agreement"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tournaments", type=int, default=22)
    args = parser.parse_args()
    if args.only in (None, "arena"):
        bench_arena(args.repeat)
    if args.only in (None, "swiss"):
        bench_swiss(100, 9)
    if args.only in (None, "agreement"):
        bench_agreement(args.tournaments)


if __name__ == "__main__":
    main()

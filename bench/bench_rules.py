"""Rules-engine speed: move checks, legal-move lists and perft, next to pyffish's per-call cost.

Run by hand (never in CI)::

    .venv/bin/python bench/bench_rules.py                 # every variant
    .venv/bin/python bench/bench_rules.py --variant minishogi --games 100

For each variant the script first plays seeded random games (all positions, moves and
timings are reproducible from ``--seed``), then measures on exactly those games:

* **move check**: ``Game.play(uci)`` on a position whose legal moves have not been generated:
  parse + validate + apply + decide the outcome (what the hub does for every incoming move);
* **legal list**: ``Game.legal_moves()`` after that move (what the hub sends to clients);
* **pyffish**: one ``pyffish.legal_moves(variant, fen, [])`` call on the same positions
  (only for variants Fairy-Stockfish knows), timed game by game right after the engine
  played that game, so that both see the same machine load;
* **hub move**: what the hub does for each move, ``Game.play(uci)`` then ``Game.fen()`` and
  ``Game.legal_moves()`` (the FEN and the legal list sent with the move event), and its
  median by stretch of the game (plies 1–40, 41–80, 81–120, 121–200) to show that the cost
  per move stays flat with the game's length;
* **pyffish setup**: one ``pyffish.get_fen(variant, fen, [])`` on the same positions: the
  same per-call work as ``legal_moves`` (variant and position set up from the FEN) without
  the move generation, so ``pyffish call − pyffish setup`` is what Fairy-Stockfish spends
  generating moves; the ``×`` ratio compares a whole pyffish call, setup included;
* **perft**: leaf nodes per second of a perft from the start position and from a few
  positions taken from the random games.

Times are CPU time of this process (``time.process_time_ns``), so that other work on a
shared machine counts as little as possible; on an idle machine they equal wall time. Each
measurement runs ``--repeat`` times: the table shows the best time of each kind, and as
``×`` the median over the runs of (pyffish call time / move-check time).
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
from dataclasses import dataclass

import checkout  # noqa: F401  (this checkout's server on sys.path)

from server.rules import VARIANT_NAMES, Game, Position, get_variant

try:
    import pyffish
except ImportError:  # the bench still runs without the oracle
    pyffish = None

# Perft depths: (from the start, from sampled positions). Chosen so each run takes seconds.
PERFT_DEPTHS: dict[str, tuple[int, int]] = {
    "minishogi": (4, 3),
    "shoshogi": (3, 2),
    "wildcastle": (3, 2),
    "spartan": (3, 2),
    "daishogi": (2, 2),
}
MAX_PLIES = 200
# CPU time of this process: the machine is shared, and wall time would count other work.
clock = time.process_time_ns


# Stretches of a game (first and last ply) for the hub-move medians.
STRETCHES = ((1, 40), (41, 80), (81, 120), (121, 200))


@dataclass
class Row:
    variant: str
    plies: int
    check_us: float
    legal_us: float
    ffish_us: float | None
    ratio: float | None
    perft_nodes: int
    perft_nps: float
    hub_us: float = 0.0
    hub_by_stretch: tuple[float | None, ...] = ()
    setup_us: float | None = None


def random_games(name: str, games: int, seed: int) -> list[tuple[str, list[str]]]:
    """``games`` seeded random playouts: (start FEN, moves) each, stopped at the game's end."""
    variant = get_variant(name)
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        start = variant.random_start_fen(rng)
        game = Game(variant, start)
        while game.outcome() is None and game.ply < MAX_PLIES:
            game.play(rng.choice(game.legal_moves()))
        out.append((start, list(game.moves)))
    return out


def time_moves(
    name: str, games: list[tuple[str, list[str]]], samples: int
) -> tuple[float, float, float | None, list[str]]:
    """Mean µs of ``Game.play``, of ``Game.legal_moves`` after it, and of one
    ``pyffish.legal_moves`` call (None if FSF lacks the variant); the FENs met.

    The legal-move lists are timed in a pass of their own, so that the move check never
    finds a list cached by the previous ply. pyffish is timed game by game right after the
    engine played that game (on every k-th position, ``samples`` in all), so that both see
    the same load on a shared machine.
    """
    variant = get_variant(name)
    per_game: list[list[str]] = []
    for start, moves in games:
        game = Game(variant, start)
        fens = []
        for uci in moves:
            fens.append(game.fen())
            game.play(uci)
        per_game.append(fens)
    total = sum(len(f) for f in per_game)
    step = max(1, total // max(1, samples))
    ffish = pyffish is not None and name in pyffish.variants()
    play_ns = ffish_ns = ffish_calls = 0
    for (start, moves), fens in zip(games, per_game):
        game = Game(variant, start)
        t0 = clock()
        for uci in moves:
            game.play(uci)
        play_ns += clock() - t0
        if ffish:
            chosen = fens[::step]
            t0 = clock()
            for fen in chosen:
                pyffish.legal_moves(name, fen, [])
            ffish_ns += clock() - t0
            ffish_calls += len(chosen)
    setup_ns = setup_calls = 0
    if ffish:
        for fens in per_game:
            chosen = fens[::step]
            t0 = clock()
            for fen in chosen:
                pyffish.get_fen(name, fen, [])
            setup_ns += clock() - t0
            setup_calls += len(chosen)
    legal_ns = 0
    for start, moves in games:
        game = Game(variant, start)
        for uci in moves:
            game.play(uci)
            t0 = clock()
            game.legal_moves()
            legal_ns += clock() - t0
    plies = max(1, total)
    ffish_us = ffish_ns / ffish_calls / 1000 if ffish_calls else None
    setup_us = setup_ns / setup_calls / 1000 if setup_calls else None
    return (
        play_ns / plies / 1000,
        legal_ns / plies / 1000,
        ffish_us,
        setup_us,
        [f for fens in per_game for f in fens],
    )


def time_hub_moves(name: str, games: list[tuple[str, list[str]]]) -> tuple[float, list[float | None]]:
    """Mean µs of the hub's per-move rules work (``Game.play``, ``Game.fen``,
    ``Game.legal_moves``), and its median in each of ``STRETCHES``."""
    variant = get_variant(name)
    times: list[list[int]] = [[] for _ in STRETCHES]
    total = count = 0
    for start, moves in games:
        game = Game(variant, start)
        for uci in moves:
            t0 = clock()
            game.play(uci)
            game.fen()
            game.legal_moves()
            spent = clock() - t0
            total += spent
            count += 1
            for i, (first, last) in enumerate(STRETCHES):
                if first <= game.ply <= last:
                    times[i].append(spent)
    medians = [statistics.median(t) / 1000 if t else None for t in times]
    return total / max(1, count) / 1000, medians


def perft(position: Position, depth: int) -> int:
    """Leaf count of the legal-move tree (bulk-counted at the last ply)."""
    moves = position.legal_moves()
    if depth <= 1:
        return len(moves) if depth == 1 else 1
    return sum(perft(position.play(m), depth - 1) for m in moves)


def time_perft(name: str, fens: list[str], rng: random.Random) -> tuple[int, float]:
    """Leaf nodes and nodes/s over a start perft and three perfts from sampled positions."""
    variant = get_variant(name)
    start_depth, mid_depth = PERFT_DEPTHS.get(name, (2, 2))
    jobs = [(variant.start_fen, start_depth)]
    mid = [f for f in fens[len(fens) // 10 :]] or fens
    jobs += [(fen, mid_depth) for fen in rng.sample(mid, min(3, len(mid)))]
    nodes = 0
    elapsed = 0
    for fen, depth in jobs:
        position = Position.from_fen(variant, fen)
        t0 = clock()
        nodes += perft(position, depth)
        elapsed += clock() - t0
    return nodes, nodes / (elapsed / 1e9)


def bench(name: str, games: int, seed: int, samples: int, repeat: int) -> Row:
    """Each measurement ``repeat`` times: the best (least disturbed) time of each kind, and
    the median of the runs' pyffish/engine ratios."""
    played = random_games(name, games, seed)
    runs = []
    for _ in range(repeat):
        rng = random.Random(seed)
        gc.collect()
        check_us, legal_us, ffish_us, setup_us, fens = time_moves(name, played, samples)
        hub_us, by_stretch = time_hub_moves(name, played)
        nodes, nps = time_perft(name, fens, rng)
        runs.append(
            Row(
                name, len(fens), check_us, legal_us, ffish_us, None, nodes, nps,
                hub_us, tuple(by_stretch), setup_us,
            )
        )
    ffish = [r.ffish_us for r in runs if r.ffish_us is not None]
    setups = [r.setup_us for r in runs if r.setup_us is not None]
    ratios = [r.ffish_us / r.check_us for r in runs if r.ffish_us is not None]
    best_hub = min(runs, key=lambda r: r.hub_us)
    return Row(
        name,
        runs[0].plies,
        min(r.check_us for r in runs),
        min(r.legal_us for r in runs),
        min(ffish) if ffish else None,
        statistics.median(ratios) if ratios else None,
        runs[0].perft_nodes,
        max(r.perft_nps for r in runs),
        best_hub.hub_us,
        best_hub.hub_by_stretch,
        min(setups) if setups else None,
    )


def table(rows: list[Row]) -> str:
    head = (
        "variant",
        "plies",
        "move check µs",
        "legal list µs",
        "pyffish call µs",
        "pyffish setup µs",
        "×",
        "perft nodes",
        "perft nodes/s",
        "hub move µs",
        "median by stretch µs",
    )
    lines = [head]
    for r in rows:
        ratio = f"{r.ratio:.0f}" if r.ratio else "-"
        ffish = f"{r.ffish_us:.0f}" if r.ffish_us else "-"
        setup = f"{r.setup_us:.0f}" if r.setup_us else "-"
        stretches = " / ".join("-" if m is None else f"{m:.0f}" for m in r.hub_by_stretch)
        lines.append(
            (
                r.variant,
                str(r.plies),
                f"{r.check_us:.1f}",
                f"{r.legal_us:.1f}",
                ffish,
                setup,
                ratio,
                str(r.perft_nodes),
                f"{r.perft_nps:,.0f}",
                f"{r.hub_us:.1f}",
                stretches,
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    out = []
    for n, line in enumerate(lines):
        out.append(
            " | ".join(
                cell.ljust(w) if i == 0 else cell.rjust(w)
                for i, (cell, w) in enumerate(zip(line, widths))
            )
        )
        if n == 0:
            out.append("-+-".join("-" * w for w in widths))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--variant", action="append", choices=VARIANT_NAMES, help="repeatable; default: all"
    )
    parser.add_argument(
        "--games", type=int, default=60, help="random games per variant (default 60)"
    )
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument(
        "--samples", type=int, default=400, help="positions timed with pyffish (default 400)"
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per measurement, best kept (default 3)"
    )
    args = parser.parse_args(argv)
    rows = [
        bench(name, args.games, args.seed, args.samples, args.repeat)
        for name in (args.variant or VARIANT_NAMES)
    ]
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

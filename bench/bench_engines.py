"""Engines through our adjudicator: matches (engine vs engine, level n vs n+1) and analysis speed.

    python bench/bench_engines.py levels VARIANT N [--against M] [--games G] [--max-plies P] [--clock 60000+1000]
        [--set-level ENGINE:N=DEPTH/MS]…  (a level's depth cap and move time, tried in-process)
    python bench/bench_engines.py match VARIANT ENGINE_A ENGINE_B [--level L] [--games G]
    python bench/bench_engines.py analysis VARIANT [--plies P] [--movetime MS] [--depth D]
    python bench/bench_engines.py movetime VARIANT [--levels 1,8] [--moves N] [--clocks 300000+3000,900000+10000,none]
    python bench/bench_engines.py beginner VARIANT [--level 1] [--careful] [--games G] [--max-plies P]

``beginner``: level L (default 1) against :class:`novice.Novice`, a beginner's stand-in (a
mate in one, free pieces, else mostly random); points are the novice's.

Every move goes through :meth:`Computer.best_move`, so an engine move our rules refuse is
counted (``fallbacks``) and never played. Colours alternate; a game still going after
``--max-plies`` is adjudicated by a 1 s search of its final position (a win at ±300 cp or a
mate, "1-0 adj"), else counts as a draw ("unfinished"). Prints one JSON line per run (a match:
scores, results, fallbacks, time and depth reached per move of each side).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

import checkout  # noqa: F401  (this checkout's server on sys.path)
from load_clients import percentile

from server.rules import Game, get_variant
from server.worker.computer import Computer


async def play(
    white: Computer,
    black: Computer,
    levels: tuple[int, int],
    variant: str,
    max_plies: int,
    seed: int,
    clock: tuple[int, int] | None = None,
    depths: tuple[list[int], list[int]] | None = None,
    opening_plies: int = 0,
) -> tuple[str, list[float], list[float], int]:
    """One game; the result from the first player's view, the move times of each side.
    ``clock``: (main ms, increment ms) for each side, kept like a server would (a flag fall
    loses). ``depths``: filled with the depth each side's engine reached on each move (a
    level bound by time may reach no deeper than the level below). ``opening_plies``: the game
    opens with that many random legal moves (from ``seed``), not counted as either side's."""
    from server.worker.search import EngineClock

    v = get_variant(variant)
    remaining = [clock[0], clock[0]] if clock else None
    rng = random.Random(seed)
    start = v.random_start_fen(rng) if v.start_fen_generator is not None else None
    game = Game(v, start)
    times: tuple[list[float], list[float]] = ([], [])
    while game.ply < opening_plies and game.outcome() is None:
        game.play(rng.choice(game.legal_moves()))
    while game.ply < max_plies:
        if game.outcome() is not None:
            break
        side = game.position.turn
        computer, level = (white, levels[0]) if side == 0 else (black, levels[1])
        t = time.perf_counter()
        engine_clock = None
        if clock and remaining:
            engine_clock = EngineClock(remaining[side], remaining[1 - side], clock[1], 0, side == 0)
        answer = await computer.best_move(game, level, engine_clock)
        elapsed = time.perf_counter() - t
        times[side].append(elapsed)
        if depths is not None and answer.result is not None and answer.result.depth:
            depths[side].append(answer.result.depth)
        assert answer.move is not None
        if clock and remaining:
            remaining[side] -= int(elapsed * 1000)
            if remaining[side] < 0:
                return ("0-1 time" if side == 0 else "1-0 time"), times[0], times[1], game.ply
            remaining[side] += clock[1]
        game.play(answer.move)
    outcome = game.outcome()
    if outcome is not None:
        return outcome.result(), times[0], times[1], game.ply
    # unfinished at the ply cap: adjudicated by a 1 s search of the final position (>= 3 pawns)
    entry = await white.analyse(game, game.ply, 1000, None)
    score = entry.score if entry is not None else {"cp": 0}
    if score.get("mate") or abs(score.get("cp", 0)) >= ADJUDICATE_CP:
        first_wins = score.get("mate", score.get("cp", 0)) > 0
        return ("1-0 adj" if first_wins else "0-1 adj"), times[0], times[1], game.ply
    return "unfinished", times[0], times[1], game.ply


ADJUDICATE_CP = 300


def pct(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile, 0 for no values (the report is JSON, which has no NaN)."""
    return percentile(values, q, empty=0.0)


def depth_summary(depths: list[int]) -> dict[str, float]:
    """The depth an engine reported, over the moves it searched (slips and fallbacks aside)."""
    if not depths:
        return {}
    return {
        "mean": round(statistics.mean(depths), 1),
        "p5": pct(depths, 0.05),
        "p50": pct(depths, 0.5),
        "p95": pct(depths, 0.95),
    }


async def match(
    variant: str,
    a: dict[str, Any],
    b: dict[str, Any],
    games: int,
    max_plies: int,
    clock: tuple[int, int] | None = None,
    opening_plies: int = 0,
    opening_seed: int = 0,
) -> dict[str, Any]:
    """``a`` and ``b``: {"engine": name or None, "level": n}; points are a's. ``a`` may be
    {"novice": seed, "level": 0}: the beginner's stand-in (:mod:`novice`). With
    ``opening_plies``, games 2k and 2k+1 open with the same random moves, each side playing
    each colour once: two levels bound by depth play the same game every time otherwise."""
    cb = Computer(engines={variant: b["engine"]} if b.get("engine") else {})
    ca: Any
    if "novice" in a:
        from novice import Novice

        ca = Novice(random.Random(a["novice"]), cb, careful=a.get("careful", False))
    else:
        ca = Computer(engines={variant: a["engine"]} if a.get("engine") else {})
    score = {"a": 0.0, "b": 0.0}
    results = []
    ta: list[float] = []
    tb: list[float] = []
    plies = []
    da: list[int] = []
    db: list[int] = []
    try:
        for g in range(games):
            a_first = g % 2 == 0
            white, black = (ca, cb) if a_first else (cb, ca)
            levels = (a["level"], b["level"]) if a_first else (b["level"], a["level"])
            game_depths: tuple[list[int], list[int]] = ([], [])
            result, t1, t2, n = await play(
                white,
                black,
                levels,
                variant,
                max_plies,
                seed=opening_seed + g // 2 if opening_plies else g,
                clock=clock,
                depths=game_depths,
                opening_plies=opening_plies,
            )
            (ta, tb)[0 if a_first else 1].extend(t1)
            (tb, ta)[0 if a_first else 1].extend(t2)
            (da, db)[0 if a_first else 1].extend(game_depths[0])
            (db, da)[0 if a_first else 1].extend(game_depths[1])
            plies.append(n)
            results.append(result)
            # one line per game on stderr: a long match shows how far it is
            print(
                json.dumps({"game": g + 1, "a_first": a_first, "result": result, "plies": n}),
                file=sys.stderr,
                flush=True,
            )
            if result.split()[0] in ("1-0", "0-1"):
                winner_first = result.startswith("1-0")
                score["a" if winner_first == a_first else "b"] += 1
            else:
                score["a"] += 0.5
                score["b"] += 0.5
        return {
            "variant": variant,
            "a": a,
            "b": b,
            "games": games,
            "clock": clock,
            "opening_plies": opening_plies,
            "opening_seed": opening_seed,
            "score_a": score["a"],
            "score_b": score["b"],
            "results": results,
            "plies_mean": statistics.mean(plies),
            "fallbacks_a": {f"{k[0]}/{k[1]}": n for k, n in ca.fallbacks.items()},
            "fallbacks_b": {f"{k[0]}/{k[1]}": n for k, n in cb.fallbacks.items()},
            "restarts": dict(ca.restarts + cb.restarts),
            "move_ms_a": {"p50": round(pct(ta, 0.5) * 1000), "p95": round(pct(ta, 0.95) * 1000)},
            "move_ms_b": {"p50": round(pct(tb, 0.5) * 1000), "p95": round(pct(tb, 0.95) * 1000)},
            "depth_a": depth_summary(da),
            "depth_b": depth_summary(db),
        }
    finally:
        await ca.close()
        await cb.close()


async def analysis(
    variant: str, plies: int, movetime: int | None, depth: int | None
) -> dict[str, Any]:
    computer = Computer()
    try:
        rng = random.Random(1)
        game = Game(get_variant(variant))
        while game.ply < plies and game.legal_moves():
            answer = await computer.best_move(game, 1)
            assert answer.move is not None
            game.play(answer.move if rng.random() < 0.8 else rng.choice(game.legal_moves()))
        await computer.analyse(game, 0, 50, None)  # start-up out of the measure
        t = time.perf_counter()
        done = 0
        depths = []
        for ply in range(game.ply + 1):
            entry = await computer.analyse(game, ply, movetime, depth)
            if entry is not None:
                done += 1
                depths.append(entry.depth)
        elapsed = time.perf_counter() - t
        return {
            "variant": variant,
            "engine": computer.dialect(variant).engine,
            "plies": done,
            "movetime_ms": movetime,
            "depth": depth,
            "seconds": round(elapsed, 2),
            "plies_per_s_per_core": round(done / elapsed, 2),
            "depth_mean": round(statistics.mean(depths), 1) if depths else 0,
        }
    finally:
        await computer.close()


async def movetimes(
    variant: str, levels: list[int], moves: int, clocks: list[tuple[int, int] | None]
) -> dict[str, Any]:
    """Time per move at each level on each Fischer clock ((main ms, increment ms); None: no
    clock), in the positions of one level-1 self-play game, each searched as if the clock were
    full. Its first two positions are each side's first move (searched at most
    ``FIRST_MOVE_MS``, the clock not running yet): reported apart (``first``), the others as
    ``p50``/``p95``/``max``."""
    from server.worker.search import EngineClock

    computer = Computer()
    try:
        game = Game(get_variant(variant))
        positions: list[list[str]] = []
        while len(positions) < moves and game.legal_moves():
            positions.append(list(game.moves))
            answer = await computer.best_move(game, 1)
            assert answer.move is not None
            game.play(answer.move)
        out: dict[str, Any] = {"variant": variant, "engine": computer.dialect(variant).engine}
        for clock in clocks:
            name = f"{clock[0] // 60_000}+{clock[1] // 1000}" if clock else "unclocked"
            for level in levels:
                first: list[int] = []
                later: list[float] = []
                for moves_so_far in positions:
                    g = Game(get_variant(variant))
                    for m in moves_so_far:
                        g.play(m)
                    engine_clock = (
                        EngineClock(clock[0], clock[0], clock[1], 0, g.position.turn == 0)
                        if clock
                        else None
                    )
                    t = time.perf_counter()
                    answer = await computer.best_move(g, level, engine_clock)
                    took = time.perf_counter() - t
                    if g.ply < 2:
                        first.append(round(took * 1000))
                    else:
                        later.append(took)
                    assert answer.move in g.legal_moves()
                out[f"{name} L{level}"] = {
                    "first": first,
                    "p50": round(pct(later, 0.5) * 1000),
                    "p95": round(pct(later, 0.95) * 1000),
                    "max": round(max(later, default=0) * 1000),
                    "n": len(later),
                }
        out["fallbacks"] = {f"{k[0]}/{k[1]}": n for k, n in computer.fallbacks.items()}
        return out
    finally:
        await computer.close()


def set_level(spec: str) -> None:
    """Replace one level's depth cap and move time in this process (``hachu:5=5/1000``), to
    measure a ladder before it goes into :mod:`server.worker.levels`."""
    from dataclasses import replace

    from server.worker.levels import LEVELS

    engine, _, rest = spec.partition(":")
    level, _, limits = rest.partition("=")
    depth, _, ms = limits.partition("/")
    old = LEVELS[engine][int(level)]
    LEVELS[engine][int(level)] = replace(
        old, depth=int(depth) if depth else None, movetime_ms=int(ms) if ms else None
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    lv = sub.add_parser("levels")
    lv.add_argument("variant")
    lv.add_argument("level", type=int)
    lv.add_argument(
        "--against",
        type=int,
        default=None,
        metavar="M",
        help="level M instead of N against N+1 (a step of several levels)",
    )
    mt = sub.add_parser("match")
    mt.add_argument("variant")
    mt.add_argument("engine_a")
    mt.add_argument("engine_b")
    mt.add_argument("--level", type=int, default=8)
    bg = sub.add_parser("beginner")
    bg.add_argument("variant")
    bg.add_argument("--level", type=int, default=1)
    bg.add_argument("--careful", action="store_true", help="the novice keeps its pieces safe")
    for p in (lv, mt, bg):
        p.add_argument(
            "--set-level",
            action="append",
            default=[],
            metavar="ENGINE:N=DEPTH/MS",
            help="try another depth cap / move time for a level, e.g. hachu:5=5/1000",
        )
        p.add_argument("--games", type=int, default=4)
        p.add_argument("--max-plies", type=int, default=200)
        p.add_argument(
            "--random-plies",
            type=int,
            default=0,
            help="open each pair of games (one per colour) with this many random moves",
        )
        p.add_argument("--opening-seed", type=int, default=0, help="the first pair's opening")
        p.add_argument(
            "--clock",
            default=None,
            metavar="MAIN_MS+INC_MS",
            help="play on a clock, e.g. 60000+1000",
        )
    an = sub.add_parser("analysis")
    an.add_argument("variant")
    an.add_argument("--plies", type=int, default=20)
    an.add_argument("--movetime", type=int, default=None)
    an.add_argument("--depth", type=int, default=None)
    mv = sub.add_parser("movetime")
    mv.add_argument("variant")
    mv.add_argument("--levels", default="1,8")
    mv.add_argument("--moves", type=int, default=10)
    mv.add_argument(
        "--clocks",
        default="60000+1000",
        help="comma-separated MAIN_MS+INC_MS clocks, 'none' for no clock (e.g. 300000+3000,none)",
    )
    args = parser.parse_args()
    for spec in getattr(args, "set_level", []):
        set_level(spec)
    clock = None
    if getattr(args, "clock", None):
        main_ms, _, inc_ms = args.clock.partition("+")
        clock = (int(main_ms), int(inc_ms or 0))
    if args.cmd == "levels":
        out = asyncio.run(
            match(
                args.variant,
                {"level": args.level + 1},
                {"level": args.level if args.against is None else args.against},
                args.games,
                args.max_plies,
                clock,
                args.random_plies,
                args.opening_seed,
            )
        )
    elif args.cmd == "match":
        a = {"engine": args.engine_a, "level": args.level}
        b = {"engine": args.engine_b, "level": args.level}
        out = asyncio.run(
            match(
                args.variant,
                a,
                b,
                args.games,
                args.max_plies,
                clock,
                args.random_plies,
                args.opening_seed,
            )
        )
    elif args.cmd == "beginner":
        novice = {"novice": 1, "level": 0, "careful": args.careful}
        out = asyncio.run(
            match(args.variant, novice, {"level": args.level}, args.games, args.max_plies, clock)
        )
    elif args.cmd == "movetime":
        levels = [int(x) for x in args.levels.split(",")]
        clocks = [
            None if spec == "none" else (int(spec.partition("+")[0]), int(spec.partition("+")[2] or 0))
            for spec in args.clocks.split(",")
        ]
        out = asyncio.run(movetimes(args.variant, levels, args.moves, clocks))
    else:
        out = asyncio.run(analysis(args.variant, args.plies, args.movetime, args.depth))
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()

"""An engine starved of CPU, as on a loaded machine: does a level keep its depth, and its clock?

    python bench/bench_starved.py [--variant daishogi] [--level 4] [--duty 0.05] [--warmup 60]
                                  [--moves 30] [--clock-ms 300000]

The engine runs behind a wrapper that lets it have ``duty`` of each 100 ms (SIGCONT, then
SIGSTOP for the rest): what a worker at ``nice 10`` gets on 2 cores at load ~15 (a few per
cent of a core), without loading the machine for anyone else. A level-1 self-play game gives
``warmup`` plies (unstarved); then ``moves`` plies are played at ``level`` through
:meth:`Computer.best_move` on a fixed clock, counting fallbacks per variant and reason,
restarts, the depth each move reached and its wall time. Prints one JSON line. Run it with
``PYTHONPATH`` naming the tree to measure (the previous commit's: ``git archive``).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from server.rules import Game, get_variant
from server.worker.computer import Computer
from server.worker.dialects import PROGRAMS, EngineProgram
from server.worker.search import EngineClock

PERIOD_S = 0.1
WRAPPER = """#!{python}
import signal, subprocess, sys, threading, time
engine = subprocess.Popen([{path!r}], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
def pump(src, dst):
    for line in iter(src.readline, b""):
        dst.write(line)
        dst.flush()
    dst.close()
threading.Thread(target=pump, args=(engine.stdout, sys.stdout.buffer), daemon=True).start()
def throttle():
    while engine.poll() is None:
        engine.send_signal(signal.SIGCONT)
        time.sleep({on})
        if engine.poll() is None:
            engine.send_signal(signal.SIGSTOP)
        time.sleep({off})
threading.Thread(target=throttle, daemon=True).start()
pump(sys.stdin.buffer, engine.stdin)
engine.send_signal(signal.SIGCONT)
engine.wait()
"""


def starved(engine: str, duty: float, workdir: Path) -> EngineProgram:
    program = PROGRAMS[engine]
    script = workdir / f"{engine}-starved"
    on = PERIOD_S * duty
    script.write_text(
        WRAPPER.format(python=sys.executable, path=program.path, on=on, off=PERIOD_S - on)
    )
    script.chmod(0o755)
    return EngineProgram(program.key, str(script), program.protocol, program.mate_score)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    variant = get_variant(args.variant)
    game = Game(variant)
    with tempfile.TemporaryDirectory() as tmp:
        fast = Computer()
        engine = fast.dialect(args.variant).engine
        slow = Computer(programs={engine: starved(engine, args.duty, Path(tmp))})
        times: list[float] = []
        depths: collections.Counter[int] = collections.Counter()
        try:
            while game.ply < args.warmup and game.legal_moves():
                answer = await fast.best_move(game, 1)
                assert answer.move is not None
                game.play(answer.move)
            for _ in range(args.moves):
                if not game.legal_moves():
                    break
                clock = EngineClock(args.clock_ms, args.clock_ms, 0, 0, game.position.turn == 0)
                started = time.monotonic()
                answer = await slow.best_move(game, args.level, clock)
                times.append(time.monotonic() - started)
                assert answer.move in game.legal_moves()
                depths[answer.result.depth if answer.result is not None else -1] += 1
                game.play(answer.move)
        finally:
            await fast.close()
            await slow.close()
    times.sort()
    return {
        "variant": args.variant,
        "engine": engine,
        "level": args.level,
        "duty": args.duty,
        "plies": f"{args.warmup}+{len(times)}",
        "clock_ms": args.clock_ms,
        "fallbacks": {f"{v}/{r}": n for (v, r), n in slow.fallbacks.items()},
        "restarts": dict(slow.restarts),
        "depths": dict(sorted(depths.items())),
        "wall_ms": {
            "p50": round(statistics.median(times) * 1000),
            "p95": round(times[int(0.95 * (len(times) - 1))] * 1000),
            "max": round(times[-1] * 1000),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="daishogi")
    parser.add_argument("--level", type=int, default=4)
    parser.add_argument("--duty", type=float, default=0.05)
    parser.add_argument("--warmup", type=int, default=60)
    parser.add_argument("--moves", type=int, default=30)
    parser.add_argument("--clock-ms", type=int, default=300_000)
    print(json.dumps(asyncio.run(run(parser.parse_args()))))


if __name__ == "__main__":
    main()

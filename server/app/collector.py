"""The garbage collector's policy for a long-running server (see
:func:`tune_garbage_collector`; measured in docs/benchmarks.md, "Load")."""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Callable

from server.rules import VARIANTS

logger = logging.getLogger("server")


SLOW_GC_S = 0.1


def _report_slow_collections() -> Callable[[str, dict[str, int]], None]:
    """A ``gc.callbacks`` hook that logs garbage collections pausing the loop for 100 ms or more."""
    started = 0.0

    def callback(phase: str, info: dict[str, int]) -> None:
        nonlocal started
        if phase == "start":
            started = time.perf_counter()
            return
        paused = time.perf_counter() - started
        if paused >= SLOW_GC_S:
            logger.warning(
                "garbage collection of generation %d paused the server for %.0f ms (%d collected)",
                info["generation"],
                paused * 1000,
                info["collected"],
            )

    return callback


GC_THRESHOLDS = (5_000, 20, 100)

#: With full collections on a timer: every second young collection also collects the middle
#: generation, so no collection scans more than two young collections' survivors (a move's
#: event, record and position live as long as the game, so nearly every object counted
#: survives: with thresholds 5,000 / 20 a middle collection scanned 110,000+ objects and paused
#: about 100 ms); the old-generation threshold is one no count reaches.
TIMED_GC_THRESHOLDS = (1_000, 1, 2**31 - 1)


def tune_garbage_collector(full_interval_s: float = 0.0) -> None:
    """Keep the cyclic garbage collector's pauses short and rare in a long-running server.

    Everything built at start (variant tables, modules, the store's metadata) lives as long as
    the process, so it is frozen out of the collector's scans (a full collection of it alone
    took about 200 ms). The thresholds are raised so that the short-lived objects of each move
    die before the collector ever promotes them: with the defaults, 1,000 games paused the
    server for 100–450 ms in full collections every few seconds (docs/benchmarks.md, "Load").

    A full collection scans every live object: with 1,000 games in play that is a pause of a
    few hundred milliseconds, and left to itself the collector runs one whenever the old
    generation has grown by a quarter, every 20–60 s at a few hundred moves per second. With
    ``full_interval_s`` > 0 it never starts one by itself; :func:`collect_fully_forever` runs
    one every ``full_interval_s`` seconds instead. Game state is freed by reference counting
    when a game ends (it holds no reference cycles), so what waits for the timer is only the
    cyclic garbage of closed connections and finished tasks.

    Collections that pause for 100 ms or more are logged.

    The rules engine's step tables are built first, for every variant, so that they are frozen
    with the rest: built on first use they would be scanned by every full collection (Dai
    Shogi's alone are over 300,000 objects; building all of them takes about a second).
    """
    for variant in VARIANTS.values():
        variant.t.build_steps()
    gc.collect()
    gc.freeze()
    if full_interval_s > 0:
        gc.set_threshold(*TIMED_GC_THRESHOLDS)
    else:
        gc.set_threshold(*GC_THRESHOLDS)
    gc.callbacks.append(_report_slow_collections())


async def collect_fully_forever(interval_s: float) -> None:
    """Run a full garbage collection every ``interval_s`` seconds (see tune_garbage_collector)."""
    while True:
        await asyncio.sleep(interval_s)
        gc.collect()

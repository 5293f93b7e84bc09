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
    """Keep the cyclic garbage collector's pauses short in a long-running server.

    Everything built at start (variant tables, modules, the store's metadata) lives as long as
    the process, so it is frozen out of the collector's scans (``gc.freeze()``; a full
    collection of it alone took about 200 ms). The rules engine's step tables are built first,
    for every variant, so that they are frozen with the rest (Dai Shogi's alone are over
    300,000 objects; building all of them takes about a second).

    With ``full_interval_s`` > 0 the collector never starts a full collection by itself (the
    old generation's threshold is one no count reaches, the young ones are small: no automatic
    collection scans more than a few thousand objects); :func:`collect_and_freeze_forever`
    runs one every ``full_interval_s`` seconds and then freezes what survived it, so each
    timed collection scans only what arrived since the previous one (docs/benchmarks.md,
    "Garbage collection"). Otherwise Python's own schedule runs, with thresholds
    raised so that a move's short-lived objects die before they are promoted.

    Collections that pause for 100 ms or more are logged. :func:`server.app.main.serve` calls this
    before it listens: a second of start-up work must not hold up the first clients.
    """
    for variant in VARIANTS.values():
        variant.t.build_steps()
    gc.collect()
    gc.freeze()
    logger.info(
        "start-up work done: step tables of %d variants built, %d objects frozen",
        len(VARIANTS),
        gc.get_freeze_count(),
    )
    if full_interval_s > 0:
        gc.set_threshold(*TIMED_GC_THRESHOLDS)
    else:
        gc.set_threshold(*GC_THRESHOLDS)
    gc.callbacks.append(_report_slow_collections())


def collect_and_freeze() -> int:
    """One timed collection: a full collection of the objects not frozen yet, then freeze the
    survivors; returns the number of unreachable objects found.

    Freezing is safe for what outlives it as long as it dies by reference counting, which is
    how the server's long-lived state dies: game state holds no reference cycles
    (tests/hub/test_hub_memory.py), a closed connection lets go of the cycles it made
    (tests/transport/test_transport_memory.py). A cycle whose objects were frozen alive is
    never collected unless :func:`gc.unfreeze` runs first (``unfreeze_interval_s`` of
    :func:`collect_and_freeze_forever`); ``bench/hub_probe.py``'s census measures that leak.
    """
    found = gc.collect()
    gc.freeze()
    return found


#: A timed collection also runs as soon as this many young collections have happened since
#: the previous one. Each young collection comes after 1,000 more tracked objects were made
#: than freed (``TIMED_GC_THRESHOLDS``), so this bounds what a timed collection scans to
#: about this many thousand objects, however fast objects arrive: in a reconnect storm, a
#: thousand logins a second each leaving fifty-odd tracked objects made the once-a-second
#: collection scan over 100,000 objects and pause the server 100–400 ms (before 4d9ac60,
#: 2026-11-27). At 12, a timed collection during a 1,000-player arena's waves with 6,000
#: connections used up to 13 ms of CPU in one turn; at 4, about a third (each object is still
#: scanned about once before it is frozen, so the collections' total CPU is unchanged).
BURST_YOUNG_COLLECTIONS = 4

#: How often the timer checks for a burst (a wake-up costs a few microseconds).
BURST_POLL_S = 0.02


class YoungCollections:
    """A ``gc.callbacks`` hook counting the young (generation 0 and 1) collections."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] < 2:
            self.count += 1


async def collect_and_freeze_forever(
    interval_s: float,
    unfreeze_interval_s: float = 0.0,
    on_collected: Callable[[], None] | None = None,
) -> None:
    """Run :func:`collect_and_freeze` every ``interval_s`` seconds, and sooner when
    :data:`BURST_YOUNG_COLLECTIONS` young collections have happened since the previous one (a
    burst of new long-lived objects: a reconnect storm). With ``unfreeze_interval_s`` > 0, at
    most that often the whole heap is unfrozen first, so that the collection scans all of it
    (a pause of hundreds of milliseconds with thousands of games and connections, but no
    cyclic garbage outlives it). ``on_collected`` is called after each timed collection."""
    young = YoungCollections()
    gc.callbacks.append(young)
    try:
        unfrozen_at = collected_at = time.monotonic()
        while True:
            await asyncio.sleep(min(interval_s, BURST_POLL_S))
            now = time.monotonic()
            if now - collected_at < interval_s and young.count < BURST_YOUNG_COLLECTIONS:
                continue
            if unfreeze_interval_s > 0 and now - unfrozen_at >= unfreeze_interval_s:
                unfrozen_at = now
                gc.unfreeze()
            collect_and_freeze()
            young.count = 0
            collected_at = time.monotonic()
            if on_collected is not None:
                on_collected()
    finally:
        gc.callbacks.remove(young)

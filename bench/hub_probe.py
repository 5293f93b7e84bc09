"""The hub as ``python -m server`` runs it, plus two instruments for ``bench_load.py``.

Run by hand or by ``bench_load.py`` (never in CI)::

    BENCH_PROBE_FILE=/tmp/probe.json .venv/bin/python bench/hub_probe.py

* **Loop-lag probe**: a task that asks to wake up every ``PROBE_INTERVAL_S`` and records how
  late it woke. Whatever holds the event loop — a garbage collection, a slow callback, a burst
  of messages — shows as lag, so the largest lag is the longest stall any player could have
  felt. Each collection's pause is recorded too (``gc.callbacks``), to tell collections from
  other stalls, and the hub's own CPU time between two wake-ups (``time.thread_time``), to
  tell its own work from waiting for a core on a shared machine (``BENCH_PROBE_CPU=0``: not
  sampled; ``bench_load.py --interleave`` sets it, so that its hubs are measured alike).
* **Signals**: ``SIGUSR1`` writes the samples gathered since the previous ``SIGUSR1`` to
  ``BENCH_PROBE_FILE`` (JSON) and starts a new window (with ``BENCH_PROFILE=FILE``, each
  window also runs under cProfile and its statistics go to ``FILE``: start-up and shutdown
  stay out of the profile); ``SIGUSR2`` writes a census of the
  objects the collector tracks (by type, and per generation), times one timed collection as
  the server's timer runs it (a full collection of what is not frozen, then ``gc.freeze()``),
  and measures what freezing leaks: it unfreezes the heap and counts the cyclic garbage a
  whole-heap collection finds (see ``Probe.dump_census``).
* ``BENCH_STALL_HANDLES`` set: each callback the loop runs is timed (its CPU), and each window's
  report lists the turns that used over 30 ms (``long_turns``: the turn's CPU, its number of
  callbacks, their CPU summed by name — a task's coroutine, where it stopped and the task's
  name — and the five longest): what holds the loop in the long turns. It costs two CPU
  readings per callback, so its windows' lag figures are not the plain probe's.
* ``BENCH_PHASES`` set: each window's report also holds the median time from a move frame to
  each phase of its round trip inside the hub (``move_phases.py``).

The probe costs a wake-up every 5 ms (well under 1 % of a core).
"""

from __future__ import annotations

import asyncio
import collections
import cProfile
import gc
import json
import logging
import os
import signal
import time
from collections.abc import Mapping
from pathlib import Path

import checkout  # noqa: F401  (this checkout's server on sys.path)
from move_phases import MovePhases  # patches the server only if installed (BENCH_PHASES)

from server.app.collector import collect_and_freeze
from server.app.main import run_loop, serve
from server.config import load_settings

PROBE_INTERVAL_S = 0.005


class Probe:
    def __init__(self, path: Path, profile_path: str | None = None) -> None:
        self.path = path
        self.profile_path = profile_path
        self.profiler: cProfile.Profile | None = None
        self.lags: list[float] = []
        self.busy: list[float] = []
        """The hub's own CPU time between two wake-ups: on a shared machine a wake-up is
        also late when the process waited for a core, which this tells apart."""
        self.collections: list[tuple[int, float, float]] = []  # (generation, pause s, CPU s)
        self.window_start = time.monotonic()
        self._gc_started = (0.0, 0.0)
        self.phases: MovePhases | None = None  # BENCH_PHASES: where the moves' time goes
        self.timing_handles = False
        self.turn_handles: list[tuple[float, asyncio.Handle]] = []
        self.long_turns: list[tuple[float, int, object, object]] = []
        """BENCH_STALL_HANDLES: the turns that used over 30 ms of CPU, their callbacks by name."""

    def install_handle_timer(self) -> None:
        """Time each callback the loop runs (its CPU); a turn's callbacks are kept by name."""
        import asyncio.events

        probe = self
        run = asyncio.events.Handle._run

        def timed_run(handle: asyncio.Handle) -> None:
            before = time.thread_time()
            run(handle)
            probe.turn_handles.append((time.thread_time() - before, handle))

        asyncio.events.Handle._run = timed_run  # type: ignore[method-assign]

    def note_turn(self, busy: float) -> None:
        handles, self.turn_handles = self.turn_handles, []
        if busy < 0.03:
            return
        by_name: collections.Counter[str] = collections.Counter()
        counts: collections.Counter[str] = collections.Counter()
        for cost, handle in handles:
            name = _handle_name(handle)
            by_name[name] += cost
            counts[name] += 1
        self.long_turns.append(
            (
                round(1000 * busy, 1),
                len(handles),
                [(n, round(1000 * c, 1), counts[n]) for n, c in by_name.most_common(8)],
                sorted(((round(1000 * c, 1), _handle_name(h)) for c, h in handles), reverse=True)[
                    :5
                ],
            )
        )

    def on_gc(self, phase: str, info: dict[str, int]) -> None:
        # Wall time is the pause players feel; the thread's CPU time is the collector's own
        # work (on a shared machine the wall time also counts the time the process waited for
        # a core).
        if phase == "start":
            self._gc_started = (time.perf_counter(), time.thread_time())
        else:
            wall, cpu = self._gc_started
            self.collections.append(
                (info["generation"], time.perf_counter() - wall, time.thread_time() - cpu)
            )

    async def run(self) -> None:
        if os.environ.get("BENCH_PROBE_CPU", "1") == "0":
            # Lag only: the interleaved ratio's hubs (``--interleave``) are measured alike,
            # whichever tree's probe each runs (a CPU reading is a system call, ~6 µs here).
            while True:
                before = time.perf_counter()
                await asyncio.sleep(PROBE_INTERVAL_S)
                self.lags.append(time.perf_counter() - before - PROBE_INTERVAL_S)
        while True:
            before, cpu_before = time.perf_counter(), time.thread_time()
            await asyncio.sleep(PROBE_INTERVAL_S)
            self.lags.append(time.perf_counter() - before - PROBE_INTERVAL_S)
            self.busy.append(time.thread_time() - cpu_before)
            if self.timing_handles:
                self.note_turn(self.busy[-1])

    def dump_window(self) -> None:
        lags = sorted(self.lags)
        busy = sorted(self.busy)
        n, m = len(lags), len(busy)
        pauses: dict[int, list[float]] = {0: [], 1: [], 2: []}
        cpu: dict[int, list[float]] = {0: [], 1: [], 2: []}
        for generation, pause, work in self.collections:
            pauses[generation].append(pause)
            cpu[generation].append(work)
        report: dict[str, object] = {
            "seconds": time.monotonic() - self.window_start,
            "samples": n,
            "lag_max_ms": 1000 * lags[-1] if n else None,
            "lag_p999_ms": 1000 * lags[min(n - 1, int(0.999 * n))] if n else None,
            "lag_p99_ms": 1000 * lags[min(n - 1, int(0.99 * n))] if n else None,
            "lags_over_50ms": sum(1 for lag in lags if lag > 0.05),
            # The longest the hub's own work held the loop (its CPU between two wake-ups).
            "busy_max_ms": 1000 * max(self.busy, default=0.0),
            "busy_p999_ms": 1000 * busy[min(m - 1, int(0.999 * m))] if m else None,
            "busy_p99_ms": 1000 * busy[min(m - 1, int(0.99 * m))] if m else None,
            "busy_over_50ms": sum(1 for busy in self.busy if busy > 0.05),
            "gc": {
                str(g): {
                    "count": len(p),
                    "max_ms": 1000 * max(p, default=0.0),
                    "max_cpu_ms": 1000 * max(cpu[g], default=0.0),
                }
                for g, p in pauses.items()
            },
        }
        if self.profiler is not None and self.profile_path:
            self.profiler.disable()
            self.profiler.dump_stats(self.profile_path)
        if self.profile_path:
            self.profiler = cProfile.Profile()
            self.profiler.enable()
        if self.phases is not None:
            report["phases_us"] = self.phases.report()
        if self.long_turns:
            report["long_turns"] = sorted(self.long_turns, key=lambda t: -t[0])[:60]
            self.long_turns = []
        self._write("window", report)
        self.lags.clear()
        self.busy.clear()
        self.collections.clear()
        self.window_start = time.monotonic()

    def dump_census(self) -> None:
        """Count the tracked objects (not frozen) by type; time one timed collection as the
        server's timer runs it (``collect_and_freeze``); then measure the leak that freezing
        costs: unfreeze everything and count the tracked objects a full collection of the whole
        heap frees (objects that died in reference cycles after being frozen alive; tuples and
        dicts apart, which it may only stop tracking), and time that whole-heap collection
        too (what a full collection cost before freezing)."""
        objects = gc.get_objects()
        by_type = collections.Counter(type(o).__qualname__ for o in objects)
        per_generation = [len(gc.get_objects(g)) for g in range(3)]
        frozen = gc.get_freeze_count()
        del objects
        started = time.perf_counter()
        collect_and_freeze()
        timed_ms = 1000 * (time.perf_counter() - started)
        gc.unfreeze()
        # What the whole-heap collection frees, by type (a count of gc.garbage under
        # DEBUG_SAVEALL would miss the cycles that a generator's finalizer breaks).
        before = _types(gc.get_objects())
        started = time.perf_counter()
        gc.collect()
        whole_ms = 1000 * (time.perf_counter() - started)
        gone = before - _types(gc.get_objects())
        # A whole-heap collection also stops tracking the tuples and dicts it finds holding
        # only atoms: those leave the count without being freed, so they are set apart.
        untracked = {name: gone.pop(name, 0) for name in ("builtins.tuple", "builtins.dict")}
        leaked = gone
        whole_heap = sum(before.values())
        gc.freeze()
        self._write(
            "census",
            {
                "tracked": sum(per_generation),
                "per_generation": per_generation,
                "frozen": frozen,
                "top_types": by_type.most_common(25),
                "timed_collection_ms": timed_ms,
                "whole_heap_objects": whole_heap,
                "whole_heap_collection_ms": whole_ms,
                "frozen_garbage": sum(leaked.values()),
                "frozen_garbage_types": leaked.most_common(12),
                "tuples_dicts_untracked_or_freed": untracked,
            },
        )

    def _write(self, kind: str, report: Mapping[str, object]) -> None:
        with self.path.open("a") as out:
            out.write(json.dumps({"kind": kind, **report}) + "\n")


def _handle_name(handle: asyncio.Handle) -> str:
    callback = getattr(handle, "_callback", None)
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        coro = owner.get_coro()
        frame = getattr(coro, "cr_frame", None)
        where = f"@{frame.f_code.co_filename.rsplit('/', 2)[-1]}:{frame.f_lineno}" if frame else ""
        name = owner.get_name()
        named = "" if name.startswith("Task-") else f" [{name}]"
        return f"task {getattr(coro, '__qualname__', coro)}{where}{named}"
    if owner is not None:
        return f"{type(owner).__name__}.{getattr(callback, '__name__', callback)}"
    return str(getattr(callback, "__qualname__", callback))


def _types(objects: list[object]) -> collections.Counter[str]:
    return collections.Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in objects)


async def main() -> None:
    settings = load_settings()
    # "{node}" in the file's name: each hub of a cluster (same environment) writes its own.
    path = os.environ.get("BENCH_PROBE_FILE", "probe.jsonl")
    path = path.replace("{node}", os.environ.get("HUB_NODE_ID", "hub"))
    probe = Probe(Path(path), os.environ.get("BENCH_PROFILE"))
    gc.callbacks.append(probe.on_gc)
    if os.environ.get("BENCH_PHASES"):
        probe.phases = MovePhases()
        probe.phases.install()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, probe.dump_window)
    loop.add_signal_handler(signal.SIGUSR2, probe.dump_census)
    task = asyncio.create_task(probe.run(), name="loop-lag-probe")
    if os.environ.get("BENCH_STALL_HANDLES"):
        probe.timing_handles = True
        probe.install_handle_timer()
    try:
        await serve(settings)
    finally:
        task.cancel()


if __name__ == "__main__":
    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    run_loop(main())  # the server's own loop (server.transport.loop; uvloop if installed)

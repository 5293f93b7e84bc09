"""The server's garbage-collector policy (server.app.collector): a timed collection frees the
cyclic garbage of what is not frozen yet and freezes the survivors, so that the next one scans
only what arrived since."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

import pytest

from server.app.collector import (
    BURST_YOUNG_COLLECTIONS,
    TIMED_GC_THRESHOLDS,
    YoungCollections,
    collect_and_freeze,
    collect_and_freeze_forever,
)


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


@pytest.fixture
def restore_freezing() -> Iterator[None]:
    frozen_before = gc.get_freeze_count()
    try:
        yield
    finally:
        if gc.get_freeze_count() != frozen_before:
            gc.unfreeze()


def cycle() -> Node:
    a, b = Node(), Node()
    a.other, b.other = b, a
    return a


def test_timed_collection_frees_cycles_and_freezes_the_survivors(restore_freezing: None) -> None:
    kept = cycle()
    dropped = weakref.ref(cycle())
    assert dropped() is not None  # a cycle: reference counting alone does not free it
    collect_and_freeze()
    assert dropped() is None
    assert gc.get_freeze_count() > 0
    # The survivor is frozen: no generation the collector scans holds it any more.
    assert not any(o is kept for g in range(3) for o in gc.get_objects(g))
    # What arrives afterwards is scanned (and collected) by the next timed collection.
    late = cycle()
    assert any(o is late for o in gc.get_objects())
    late_ref = weakref.ref(late)
    del late
    collect_and_freeze()
    assert late_ref() is None


def test_a_cycle_frozen_alive_is_freed_only_after_unfreezing(restore_freezing: None) -> None:
    kept = cycle()
    ref = weakref.ref(kept)
    collect_and_freeze()
    del kept  # now cyclic garbage, but frozen
    collect_and_freeze()
    assert ref() is not None  # the leak the census of bench/hub_probe.py measures
    gc.unfreeze()
    gc.collect()
    assert ref() is None


@pytest.fixture
def timed_thresholds() -> Iterator[None]:
    """The server's thresholds with timed collections (each young collection after 1,000
    more tracked objects made than freed)."""
    before = gc.get_threshold()
    gc.set_threshold(*TIMED_GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def test_young_collections_are_counted(timed_thresholds: None) -> None:
    young = YoungCollections()
    gc.callbacks.append(young)
    try:
        gc.collect(0)
        gc.collect(1)
        assert young.count == 2
        gc.collect()  # a full collection is not a young one
        assert young.count == 2
        kept = [Node() for _ in range(5_000)]  # over 1,000 new tracked objects, five times
        assert young.count >= 2 + 4
    finally:
        gc.callbacks.remove(young)
    assert len(kept) == 5_000


async def test_a_burst_of_new_objects_brings_the_timed_collection_forward(
    restore_freezing: None, timed_thresholds: None
) -> None:
    """A reconnect storm's burst of long-lived objects: the timed collection comes after
    BURST_YOUNG_COLLECTIONS young collections, long before its interval (an hour here), so
    that it never scans much more than that many thousand objects."""
    collected = asyncio.Event()
    task = asyncio.create_task(collect_and_freeze_forever(3600.0, on_collected=collected.set))
    try:
        await asyncio.sleep(0)  # the task's first step: it starts counting young collections
        frozen = gc.get_freeze_count()
        # Three tracked objects per cycle (two nodes, one dict): over 1,000 new tracked
        # objects BURST_YOUNG_COLLECTIONS times, at the least.
        kept = [cycle() for _ in range(1_000 * BURST_YOUNG_COLLECTIONS)]
        await collected.wait()
        assert gc.get_freeze_count() > frozen
        assert not any(o is kept[-1] for o in gc.get_objects())  # frozen
    finally:
        task.cancel()

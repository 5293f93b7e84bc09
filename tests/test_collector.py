"""The server's garbage-collector policy (server.app.collector): a timed collection frees the
cyclic garbage of what is not frozen yet and freezes the survivors, so that the next one scans
only what arrived since."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from server.app.collector import collect_and_freeze


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

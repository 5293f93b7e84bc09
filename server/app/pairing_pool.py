"""The process pool the tournament director pairs in (a large arena wave, every Swiss round:
docs/tournaments.md, "Scale"), off the hub's event loop and its GIL."""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor

__all__ = ["pairing_pool"]

HUB_CHECK_S = 0.5
"""How often the pairing worker looks whether its hub is still there."""


def pairing_pool() -> ProcessPoolExecutor:
    """One worker process. forkserver, not fork: a child forked from the hub's threaded
    process (the default executor, aiosqlite, a browser driver in the tests) may inherit a lock
    or the interpreter's state mid-update from another thread and die or hang. The worker
    exits once the hub is gone (:func:`_exit_with_hub`)."""
    return ProcessPoolExecutor(
        max_workers=1,
        mp_context=multiprocessing.get_context("forkserver"),
        initializer=_exit_with_hub,
        initargs=(os.getpid(),),
    )


def _exit_with_hub(hub: int) -> None:
    """In the pairing worker: exit once the hub (process ``hub``) is gone. A hub killed
    outright (SIGKILL) cannot shut its pool down, and the worker would wait on its call queue
    for ever (it holds both ends of it), keeping the forkserver alive too (it serves until its
    last child ends) and the hub's stderr open."""

    def watch() -> None:
        while True:
            time.sleep(HUB_CHECK_S)
            try:
                os.kill(hub, 0)  # no signal sent: does the process exist?
            except OSError:  # no such process, or another user's (the hub's pid reused)
                os._exit(0)

    threading.Thread(target=watch, name="hub-watch", daemon=True).start()

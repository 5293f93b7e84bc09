"""``python -m server``: read the settings, run one hub process until SIGINT or SIGTERM.

:func:`main` parses the command line and loads the settings; :func:`serve` builds the
:class:`~server.app.App`, prepares it, tunes the garbage collector, listens, and stops
gracefully at a signal; :func:`run_loop` runs a coroutine on the hub's event loop (uvloop when
installed).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Coroutine, Sequence
from typing import Any

from server.app import App
from server.app.collector import collect_and_freeze_forever, tune_garbage_collector
from server.config import ConfigError, Settings, load_settings
from server.transport.loop import new_event_loop

__all__ = ["main", "run_loop", "serve"]

logger = logging.getLogger("server")


async def serve(settings: Settings) -> None:
    """Run until SIGINT or SIGTERM, then shut down gracefully."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signum, stop.set)
    app = App(settings)
    await app.prepare()
    # Before listening: building every variant's step tables and freezing the start-up heap
    # hold the loop for a second or more (several on a busy machine); done after, the first
    # clients' opening handshakes waited for it, and timed out under load.
    tune_garbage_collector(settings.full_gc_interval_s)
    await app.listen()
    collector = None
    if settings.full_gc_interval_s > 0:
        collector = asyncio.create_task(
            collect_and_freeze_forever(
                settings.full_gc_interval_s, settings.gc_unfreeze_interval_s
            ),
            name="full-gc",
        )
    try:
        await stop.wait()
        logger.info("shutting down")
    finally:
        if collector is not None:
            collector.cancel()
        await app.stop()


def run_loop(main: Coroutine[Any, Any, None]) -> None:
    """Run ``main`` on the hub's event loop: uvloop's if installed, else asyncio's with at most
    a few hundred sockets handled per turn (:mod:`server.transport.loop`)."""
    try:
        import uvloop
    except ImportError:
        with asyncio.Runner(loop_factory=new_event_loop) as runner:
            runner.run(main)
    else:  # pragma: no cover - optional speed-up
        uvloop.run(main)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m server [--config FILE]``: load the settings and serve."""
    parser = argparse.ArgumentParser(prog="python -m server", description="Run the game hub.")
    parser.add_argument("--config", help="TOML settings file (default: config/default.toml)")
    args = parser.parse_args(argv)
    try:
        settings = load_settings(args.config)
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        run_loop(serve(settings))
    except ConfigError as error:  # found while starting (the engine workers' key file)
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0

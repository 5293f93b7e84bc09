"""``python -m server.worker --url http://127.0.0.1:8080 --key-file data/worker.key``

Environment instead of flags: ``HUB_WORKER_URL``, ``HUB_WORKER_KEY`` or
``HUB_WORKER_KEY_FILE``, ``HUB_WORKER_SLOTS``, ``HUB_WORKER_NICE``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from dataclasses import replace
from pathlib import Path

from .dialects import PROGRAMS
from .worker import Worker, WorkerConfig


def parse_args(argv: list[str] | None = None) -> WorkerConfig:
    env = os.environ
    parser = argparse.ArgumentParser(
        prog="python -m server.worker", description="Engine worker (fishnet-style)"
    )
    parser.add_argument("--url", default=env.get("HUB_WORKER_URL", "http://127.0.0.1:8080"))
    parser.add_argument("--key", default=env.get("HUB_WORKER_KEY"))
    parser.add_argument("--key-file", default=env.get("HUB_WORKER_KEY_FILE", "data/worker.key"))
    parser.add_argument(
        "--slots",
        type=int,
        default=int(env.get("HUB_WORKER_SLOTS", "0")) or None,
        help="searches at once (default: one per core)",
    )
    parser.add_argument(
        "--nice",
        type=int,
        default=int(env.get("HUB_WORKER_NICE", "10")),
        help="scheduling niceness added to the worker and its engines",
    )
    parser.add_argument("--name", default=None)
    parser.add_argument(
        "--engine",
        action="append",
        default=[],
        metavar="VARIANT=ENGINE",
        help="use another engine for a variant (e.g. minishogi=sjaakii)",
    )
    parser.add_argument(
        "--program",
        action="append",
        default=[],
        metavar="ENGINE=PATH",
        help="run an engine from another binary, same protocol (e.g. hachu=/opt/hachu/hachu)",
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    key = args.key
    if not key:
        try:
            key = Path(args.key_file).read_text().strip()
        except OSError as exc:
            parser.error(f"no worker key: {exc}")
    config = WorkerConfig(url=args.url, key=key, nice=args.nice)
    if args.slots:
        config.slots = args.slots
    if args.name:
        config.name = args.name
    for item in args.engine:
        variant, _, engine = item.partition("=")
        config.engines[variant] = engine
    for item in args.program:
        engine, _, path = item.partition("=")
        if engine not in PROGRAMS or not path:
            parser.error(f"--program {item!r}: ENGINE=PATH, ENGINE one of {', '.join(PROGRAMS)}")
        config.programs[engine] = replace(PROGRAMS[engine], path=path)
    return config


async def _main(config: WorkerConfig) -> None:
    if config.nice:
        os.nice(config.nice)  # the worker and the engines it starts (they inherit it)
        config.nice = 0
    worker = Worker(config)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, worker.stop)
    await worker.run()


def main(argv: list[str] | None = None) -> None:
    config = parse_args(argv)
    asyncio.run(_main(config))
    sys.exit(0)


if __name__ == "__main__":
    main()

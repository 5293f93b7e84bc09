"""A burst of guest logins against an idle hub: what the garbage collector does during it.

Run by hand (never in CI)::

    .venv/bin/python bench/login_burst.py 4000                 # this tree's hub
    .venv/bin/python bench/login_burst.py 4000 --tree /tmp/before  # another checkout's hub

The hub (``hub_probe.py`` of the tree, on a temporary SQLite file) is left alone for 8 s after
start, then N guests connect and log in, 500 at a time; the probe's window runs from the first
login to 3 s after the last. Printed: the full collections in the window (count, longest wall
time and the collector's own CPU), the longest young collection's CPU, the hub's own CPU
between two wake-ups, the loop lag, the hub's CPU and the load average. The collector's CPU
is the figure that compares on a loaded machine (docs/benchmarks.md, "Reconnect storm").
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import tempfile
import time
from pathlib import Path

from load_clients import open_many
from processes import ROOT, cpu_seconds, probe_report, raise_fd_limit, start_hub


async def main(count: int, tree: Path) -> None:
    raise_fd_limit()
    with tempfile.TemporaryDirectory() as workdir:
        url = f"sqlite+aiosqlite:///{Path(workdir) / 'hub.sqlite3'}"
        hub = await start_hub(url, Path(workdir), None, None, tree)
        try:
            ws_url = f"ws://127.0.0.1:{hub.port}/ws"
            await asyncio.sleep(8)  # start-up's own work (the rules' tables) is over
            await probe_report(hub, signal.SIGUSR1, "window")
            cpu_before, started = cpu_seconds(hub.popen.pid), time.monotonic()
            sockets = await open_many(ws_url, count, batch=500, login=True)
            took = time.monotonic() - started
            await asyncio.sleep(3)
            lag = await probe_report(hub, signal.SIGUSR1, "window")
            full, young = lag["gc"]["2"], max(lag["gc"]["0"]["max_cpu_ms"], lag["gc"]["1"]["max_cpu_ms"])
            print(
                f"{tree}: {count:,} guest logins in {took:.1f} s; hub CPU "
                f"{cpu_seconds(hub.popen.pid) - cpu_before:.1f} s; full collections "
                f"{full['count']}, longest {full['max_ms']:.1f} ms wall / {full['max_cpu_ms']:.1f} "
                f"ms CPU; longest young collection {young:.1f} ms CPU; the hub's own CPU between "
                f"two wake-ups at most {lag['busy_max_ms']:.1f} ms; loop lag max "
                f"{lag['lag_max_ms']:.1f} ms; load average {os.getloadavg()[0]:.1f}",
                flush=True,
            )
            await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)
        finally:
            hub.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("count", type=int)
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose hub runs")
    args = parser.parse_args()
    asyncio.run(main(args.count, args.tree))

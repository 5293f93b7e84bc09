"""The processes of the benches: the hub (with its probe), the echoes, engine workers, the
benches' own client processes, and what a bench reads of them (``/proc``, the probe's
reports)."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checkout import ROOT

BENCH_LOAD = Path(__file__).resolve().parent / "bench_load.py"


def raise_fd_limit() -> int:
    """Raise the soft open-file limit to the hard limit; return it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ------------------------------------------------------------------ processes


@dataclass
class Process:
    popen: subprocess.Popen[bytes]
    port: int
    probe_file: Path | None = None

    def stop(self) -> None:
        self.popen.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(30)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()


def _raise_limit_in_child() -> None:
    raise_fd_limit()


async def start_echo(commit_to: str | None = None) -> Process:
    """The bare echo, or with ``commit_to`` (a database URL) the commit echo."""
    port = free_port()
    command = [sys.executable, str(BENCH_LOAD), "--echo-server", str(port)]
    if commit_to is not None:
        command = [sys.executable, str(BENCH_LOAD), "--commit-echo-server", str(port), commit_to]
    popen = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        preexec_fn=_raise_limit_in_child,
    )
    assert popen.stdout is not None
    line = await asyncio.to_thread(popen.stdout.readline)
    assert line.strip() == b"ready", line
    return Process(popen, port)


async def start_hub(
    database_url: str,
    workdir: Path,
    profile: str | None = None,
    full_gc_every: float | None = None,
    root: Path = ROOT,
    poll_s: float = 0.1,
) -> Process:
    """``python -m server`` with the probe (``bench/hub_probe.py``) of the tree ``root``; its
    port is polled every ``poll_s`` until it accepts."""
    port = free_port()
    probe_file = workdir / "probe.jsonl"
    env = {
        "BENCH_PROBE_FILE": str(probe_file),
        # Every bench client is 127.0.0.1: the per-address limits are raised for its crowds
        # (the environment may set them: bench/abuse_connections.py keeps the defaults).
        "HUB_MAX_CONNECTIONS_PER_ADDRESS": "100000",
        "HUB_MAX_QUEUED_PER_ADDRESS": "100000",
        **os.environ,
        "PYTHONPATH": str(root),
        "HUB_PORT": str(port),
        "HUB_ICS_PORT": "0",
        "HUB_DATABASE_URL": database_url,
        "HUB_LOG_LEVEL": "WARNING",
        "HUB_NODE_ID": "bench",
        # Bench clients play as fast as the think time allows and open many sockets at once.
        "HUB_RATE_LIMIT_PER_S": "1000",
        "HUB_RATE_LIMIT_BURST": "1000",
        "HUB_SEND_QUEUE_LIMIT": "1024",
        "HUB_REGISTRATIONS_PER_ADDRESS_PER_HOUR": "100000",  # every player registers from here
    }
    if full_gc_every is not None:
        env["HUB_FULL_GC_INTERVAL_S"] = str(full_gc_every)  # the server's timed collections
    command = [
        sys.executable,
        os.environ.get("BENCH_HUB_SCRIPT", str(root / "bench" / "hub_probe.py")),
    ]
    if profile:
        env["BENCH_PROFILE"] = profile  # each measurement window, under cProfile
    popen = subprocess.Popen(command, cwd=workdir, env=env, preexec_fn=_raise_limit_in_child)
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            if popen.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the hub did not start") from None
            await asyncio.sleep(poll_s)
    return Process(popen, port, probe_file)


async def probe_report(hub: Process, signum: int, kind: str) -> dict[str, Any]:
    """Signal the hub's probe (``bench/hub_probe.py``) and read the report it writes."""
    assert hub.probe_file is not None
    seen = hub.probe_file.read_text().count("\n") if hub.probe_file.exists() else 0
    hub.popen.send_signal(signum)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        lines = hub.probe_file.read_text().splitlines() if hub.probe_file.exists() else []
        if len(lines) > seen:
            report: dict[str, Any] = json.loads(lines[-1])
            assert report["kind"] == kind, report
            return report
        await asyncio.sleep(0.01)
    raise RuntimeError("the hub's probe did not answer")


class ChildProcess:
    """A Python process of the bench's own clients (a crowd on a core of its own: one process
    cannot make the load and time it too), speaking one protocol over its stdin and stdout: it
    prints ``ready`` once set up, then one JSON line each time it is asked (a line on its
    stdin) or finishes (its stdin closed)."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self.popen = popen

    @classmethod
    async def start(cls, what: str, *argv: str) -> ChildProcess:
        """``python argv…``, once it printed ``ready`` (``what`` names it in the error)."""
        popen = subprocess.Popen(
            [sys.executable, *argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert popen.stdout is not None
        line = await asyncio.to_thread(popen.stdout.readline)
        if line.strip() != b"ready":
            popen.kill()
            popen.wait()
            raise RuntimeError(f"{what} failed to start: {line!r}")
        return cls(popen)

    def tell(self, line: str) -> None:
        """One line to the process."""
        assert self.popen.stdin is not None
        self.popen.stdin.write(f"{line}\n".encode())
        self.popen.stdin.flush()

    async def answer(self, timeout: float | None = None) -> Any:
        """The next JSON line it prints."""
        assert self.popen.stdout is not None
        read = asyncio.to_thread(self.popen.stdout.readline)
        line = await (read if timeout is None else asyncio.wait_for(read, timeout))
        return json.loads(line)

    async def finish(self) -> Any:
        """Close its stdin (it stops) and return the JSON line it prints last, if any."""
        assert self.popen.stdin is not None and self.popen.stdout is not None
        self.popen.stdin.close()
        line = await asyncio.to_thread(self.popen.stdout.readline)
        await asyncio.to_thread(self.popen.wait, 30)
        return json.loads(line) if line.strip() else None

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
        self.popen.wait()


def stall_summary(window: dict[str, Any]) -> dict[str, Any]:
    """The headline figures of a probe window (:func:`probe_report`): the largest lag, its
    99.9th and 99th percentiles, the lags over 50 ms."""
    return {k: window.get(k) for k in ("lag_max_ms", "lag_p999_ms", "lag_p99_ms", "lags_over_50ms")}


def start_worker(port: int, key: str, workdir: Path, *extra: str) -> subprocess.Popen[bytes]:
    """An engine worker (``python -m server.worker``, the real engines) on the hub's port,
    logging to ``workdir/worker.log``, in its own session (its engines go with it)."""
    with (workdir / "worker.log").open("ab") as log:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "server.worker",
                "--url",
                f"http://127.0.0.1:{port}",
                "--key",
                key,
                "--name",
                "bench",
                *extra,
            ],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=log,
            stderr=log,
            start_new_session=True,
        )


def stop_worker(worker: subprocess.Popen[bytes]) -> None:
    """SIGTERM (it gives its job back), then SIGKILL to its session if it lingers."""
    worker.send_signal(signal.SIGTERM)
    try:
        worker.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(worker.pid, signal.SIGKILL)

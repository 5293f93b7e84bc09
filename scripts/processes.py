"""Child processes of the local topology (``scripts/cluster.py``): free ports, a process with
its output in a log file, and HTTP probes, usable from any event loop."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import subprocess
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT_S = 30.0
"""How long a child may take to come up."""


def free_port() -> int:
    """A TCP port that was free a moment ago (the kernel's choice for port 0)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Child:
    """One child process with its output in a log file.

    Built on :class:`subprocess.Popen`, not asyncio's subprocesses, so a cluster started in one
    event loop (a module-scoped test fixture) can be stopped or killed from another.
    """

    def __init__(self, name: str, argv: Sequence[str], env: Mapping[str, str], log_dir: Path):
        self.name = name
        self.argv = list(argv)
        self.env = dict(env)
        self.log_path = log_dir / f"{name}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def start(self) -> None:
        if self.running:
            raise RuntimeError(f"{self.name} is already running")
        self._log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            self.argv,
            cwd=ROOT,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=self._log,
            start_new_session=True,  # a Ctrl-C meant for the launcher reaches them via stop()
        )

    async def wait(self, timeout: float | None = None) -> None:
        """Wait for the process to end (polling: usable from any event loop).

        :raises TimeoutError: still running after ``timeout`` seconds.
        """
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while self.running:
            if deadline is not None and loop.time() > deadline:
                raise TimeoutError(f"{self.name} is still running")
            await asyncio.sleep(0.02)
        self._close_log()

    async def signal(self, signum: int) -> None:
        """Send ``signum`` and wait for the process to end."""
        if self.process is None:
            return
        if self.running:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signum)
        await self.wait()

    async def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM (graceful), then SIGKILL after ``timeout`` seconds."""
        if not self.running:
            self._close_log()
            return
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGTERM)
        try:
            await self.wait(timeout)
        except TimeoutError:
            await self.signal(signal.SIGKILL)

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


async def http_status(url: str, timeout: float = 1.0) -> int | None:
    """The HTTP status of ``GET url``, or None if nothing answered."""

    def get() -> int | None:
        try:
            with urllib.request.urlopen(url, timeout=timeout) as answer:
                return int(answer.status)
        except urllib.error.HTTPError as error:
            return int(error.code)
        except (OSError, ValueError):
            return None

    return await asyncio.to_thread(get)

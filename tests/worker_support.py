"""Engine worker processes for tests: ``python -m server.worker`` with the real engines, against
a live server on its public port (the test servers' worker key: :data:`TEST_WORKER_KEY`)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST_WORKER_KEY = "test-worker-key-0123456789"
"""The engine workers' key of the test servers (``worker_keys``)."""


@dataclass
class WorkerProcess:
    process: asyncio.subprocess.Process
    log: Path

    @classmethod
    async def start(
        cls, port: int, log: Path, name: str, *extra: str, tmpdir: Path | None = None
    ) -> WorkerProcess:
        """``tmpdir``: the worker's temporary directory (``TMPDIR``), else the test's own."""
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        if tmpdir is not None:
            env["TMPDIR"] = str(tmpdir)
        handle = log.open("ab")
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "server.worker",
                "--url",
                f"http://127.0.0.1:{port}",
                "--key",
                TEST_WORKER_KEY,
                "--slots",
                "1",
                "--name",
                name,
                *extra,
                cwd=ROOT,
                env=env,
                stdout=handle,
                stderr=handle,
                start_new_session=True,
            )
        finally:
            handle.close()
        return cls(process, log)

    async def stop(self) -> None:
        """SIGTERM (the worker gives its job back), SIGKILL to the group if it lingers."""
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), 15)
            except TimeoutError:
                self.kill()
                await self.process.wait()
        self.kill()  # the engines it started, if any are left

    def kill(self) -> None:
        """SIGKILL the worker and everything in its process group (its engines)."""
        with suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)


StartWorker = Callable[..., Awaitable[WorkerProcess]]
"""The ``start_worker`` fixture (tests/transport/conftest.py): ``start_worker(app, name,
*flags)`` starts a worker process on the app's port, stopped after the test."""

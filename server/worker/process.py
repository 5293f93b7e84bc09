"""An engine as a child process: lines in, lines out, every read bounded in length and time.

The protocol drivers (:mod:`.cecp`, :mod:`.uci`) sit on this. A line longer than
:data:`MAX_LINE` or an engine that stops answering raises :class:`EngineError`; the caller
then kills the process (:meth:`EngineProcess.kill`) and starts a new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import Sequence

__all__ = [
    "MAX_LINE",
    "EngineCrashed",
    "EngineError",
    "EngineHung",
    "EngineProcess",
    "EngineRefused",
]

log = logging.getLogger(__name__)

MAX_LINE = 64 * 1024
"""The longest line read from an engine (bytes): a longer one is a protocol error."""


class EngineError(Exception):
    """The engine broke the protocol, died or stopped answering."""


class EngineCrashed(EngineError):
    """The engine process ended (or closed its output)."""


class EngineRefused(EngineError):
    """The engine refused the position or a move of it (its rules differ from ours): a
    restart would not help."""


class EngineHung(EngineError):
    """The engine did not answer within its deadline."""


class EngineProcess:
    """One running engine program. ``nice`` lowers its scheduling priority."""

    def __init__(self, argv: Sequence[str], nice: int = 0, name: str | None = None) -> None:
        self.argv = list(argv)
        self.nice = nice
        self.name = name or os.path.basename(self.argv[0])
        self._proc: asyncio.subprocess.Process | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.returncode is None

    async def start(self) -> None:
        nice = self.nice

        def lower_priority() -> None:  # runs in the child, before exec
            if nice:
                os.nice(nice)

        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                limit=MAX_LINE,
                preexec_fn=lower_priority if nice else None,
                start_new_session=True,  # a Ctrl-C to the worker is the worker's to handle
            )
        except OSError as exc:  # not installed (scripts/system-deps.sh), not executable
            raise EngineCrashed(f"cannot start {self.argv[0]}: {exc}") from None
        log.debug("%s started, pid %s", self.name, self._proc.pid)

    def send(self, *lines: str) -> None:
        """Write command lines (no newline in them); a dead engine raises EngineCrashed."""
        proc = self._proc
        if proc is None or proc.stdin is None or proc.returncode is not None:
            raise EngineCrashed(f"{self.name} is not running")
        for line in lines:
            if "\n" in line or "\r" in line:
                raise ValueError(f"a command line may not contain a line break: {line!r}")
            log.debug("%s < %s", self.name, line)
        try:
            proc.stdin.write("".join(line + "\n" for line in lines).encode())
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise EngineCrashed(f"{self.name}: {exc}") from None

    async def readline(self, deadline: float) -> str:
        """The next line, by ``deadline`` (``time.monotonic()``), without its line break."""
        proc = self._proc
        if proc is None or proc.stdout is None:
            raise EngineCrashed(f"{self.name} is not running")
        timeout = deadline - time.monotonic()
        if timeout <= 0:
            raise EngineHung(f"{self.name} did not answer in time")
        try:
            raw = await asyncio.wait_for(proc.stdout.readline(), timeout)
        except TimeoutError:
            raise EngineHung(f"{self.name} did not answer in time") from None
        except (ValueError, asyncio.LimitOverrunError):
            raise EngineError(f"{self.name} wrote a line longer than {MAX_LINE} bytes") from None
        if not raw:
            raise EngineCrashed(f"{self.name} ended (exit status {proc.returncode})")
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        log.debug("%s > %s", self.name, line)
        return line

    async def kill(self) -> None:
        """Stop the process now (SIGKILL) and reap it."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # its own session: a wrapper's children too
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()

    async def close(self, command: str | None, grace: float = 1.0) -> None:
        """Ask the engine to quit with ``command``; kill it if it has not ended in ``grace`` s."""
        proc = self._proc
        if proc is None:
            return
        if command and proc.returncode is None:
            with contextlib.suppress(EngineError):
                self.send(command)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), grace)
        await self.kill()

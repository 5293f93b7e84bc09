"""Helpers of the bus and cluster tests: Redis URL, polling, a throwaway redis-server.

The shared Redis on 127.0.0.1:6379 (or ``HUB_TEST_REDIS_URL``) is never stopped; outage
tests start their own throwaway ``redis-server`` on a free port and kill that one.
"""

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from redis.asyncio import Redis
from support import wait_until

from server.bus import Bus, Cluster

__all__ = ["REDIS_URL", "Inbox", "ThrowawayRedis", "delete_prefixed", "wait_until"]

REDIS_URL = os.environ.get("HUB_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")

BusFactory = Callable[[], Awaitable[Bus]]
ClusterFactory = Callable[[], Cluster]


async def delete_prefixed(url: str, prefix: str) -> None:
    """Delete every key of ``url`` starting with ``prefix``."""
    client = Redis.from_url(url)
    try:
        keys = [key async for key in client.scan_iter(match=f"{prefix}*", count=500)]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()


class Inbox:
    """A handler that records what it receives."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, bytes]] = []

    def __call__(self, channel: str, message: bytes) -> None:
        self.messages.append((channel, message))

    @property
    def payloads(self) -> list[bytes]:
        return [message for _, message in self.messages]


class ThrowawayRedis:
    """A private ``redis-server`` process that a test may kill, freeze and restart."""

    def __init__(self, directory: Path) -> None:
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._directory = directory
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        executable = shutil.which("redis-server")
        if executable is None:
            pytest.fail("redis-server is not installed")
        self._process = subprocess.Popen(
            [
                executable,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self._directory),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(500):
            if self._answers_ping():
                return
            if self._process.poll() is not None:
                pytest.fail(f"redis-server on port {self.port} exited at start")
            time.sleep(0.01)
        pytest.fail(f"redis-server on port {self.port} did not start")

    def kill(self) -> None:
        """SIGKILL: the server dies without closing anything itself."""
        assert self._process is not None
        self._process.send_signal(signal.SIGKILL)
        self._process.wait()
        self._process = None

    def freeze(self) -> None:
        assert self._process is not None
        self._process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        assert self._process is not None
        self._process.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self._process is not None:
            self._process.send_signal(signal.SIGCONT)
            self.kill()

    def _answers_ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as conn:
                conn.sendall(b"PING\r\n")
                return conn.recv(16).startswith(b"+PONG")
        except OSError:
            return False


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port

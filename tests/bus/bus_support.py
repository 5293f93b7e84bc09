"""Helpers of the bus and cluster tests: Redis URL, polling, time that passes on demand for
the cluster state, a throwaway redis-server.

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
from support import FakeClock, wait_until

from server.bus import Bus, Cluster, InProcessClusterState

__all__ = [
    "REDIS_URL",
    "ClusterFactory",
    "FakeClock",
    "Inbox",
    "ThrowawayRedis",
    "delete_prefixed",
    "wait_until",
]

REDIS_URL = os.environ.get("HUB_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")

BusFactory = Callable[[], Awaitable[Bus]]


# Time passing for the keys of one prefix: every key with an expiry (PX) gets ARGV[2] ms
# nearer to it; those it reaches are deleted, as Redis would once their time is up. Keys
# without an expiry are untouched. One script, so no other command sees half of it. KEYS is
# fine here: a test's prefix holds a handful of keys.
_ELAPSE = """
local d = tonumber(ARGV[2])
for _, key in ipairs(redis.call('KEYS', ARGV[1] .. '*')) do
  local left = redis.call('PTTL', key)
  if left > 0 then
    if left <= d then redis.call('DEL', key) else redis.call('PEXPIRE', key, left - d) end
  end
end
return 1
"""


class ClusterFactory:
    """Makes cluster handles (one per simulated node) over one shared state, in this
    process's memory or in Redis under ``prefix``, and lets time pass for that state
    (:meth:`elapse`) instead of sleeping through real TTLs."""

    def __init__(self, backend: str, prefix: str) -> None:
        self.backend = backend
        self.prefix = prefix
        self.clock = FakeClock()
        self._state = InProcessClusterState(clock=self.clock)
        self.clusters: list[Cluster] = []

    def __call__(self) -> Cluster:
        if self.backend == "memory":
            cluster = Cluster.in_process(self._state)
        else:
            cluster = Cluster.redis(REDIS_URL, prefix=self.prefix)
        self.clusters.append(cluster)
        return cluster

    async def elapse(self, ms: int) -> None:
        """Let ``ms`` milliseconds pass for every lease, claim and heartbeat: the fake clock
        of the in-process state moves on; in Redis, every expiry under the prefix is brought
        ``ms`` nearer (PEXPIRE), and what it reaches is gone, as if the time had passed."""
        if self.backend == "memory":
            self.clock.advance(ms / 1000)
            return
        client = Redis.from_url(REDIS_URL)
        try:
            await client.eval(_ELAPSE, 0, self.prefix, ms)  # type: ignore[misc]
        finally:
            await client.aclose()

    async def close(self) -> None:
        for cluster in self.clusters:
            await cluster.close()


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
            time.sleep(0.01)  # polling a process being started (a sync fixture: no loop)
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

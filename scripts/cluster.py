#!/usr/bin/env python3
"""Start the docker-compose topology as local processes: N hubs behind one port.

    .venv/bin/python scripts/cluster.py --hubs 2 --port 8000
    .venv/bin/python scripts/cluster.py --hubs 3 --own-redis --database-url postgresql+asyncpg://...

What runs (each a child process, logs in ``--log-dir``):

* the database migrations, once (``python -m server.store.migrate upgrade``), so that the hubs
  do not race to migrate a fresh database;
* optionally a private ``redis-server`` on a free port (``--own-redis``; the cluster tests use
  one so they can stop and restart it), else the Redis at ``--redis-url``;
* ``--hubs`` hub processes (``python -m server``) on free ports, with ``HUB_NODE_ID=hub1…``,
  ``HUB_PORT``, ``HUB_ICS_PORT``, ``HUB_DATABASE_URL``, ``HUB_REDIS_URL``, ``HUB_BUS_PREFIX`` and any extra
  ``--env NAME=VALUE``;
* Debian's ``haproxy`` on ``--port`` (websockets) and ``--ics-port`` (the ICS text interface)
  in front of them, started from the same ``config/haproxy.cfg`` docker-compose uses
  (``scripts/haproxy.py``);
* ``--workers`` engine workers (``python -m server.worker``, docs/engines.md) pulling the
  computer's jobs through HAProxy with the hubs' worker key (``HUB_WORKER_KEYS``, generated for
  the run unless ``--env HUB_WORKER_KEYS=…`` names one). A worker on another machine needs only
  the public port and the key.

The same classes are the test harness: ``tests/cluster`` imports :class:`LocalCluster` to start
real processes, kill a hub with SIGKILL, restart Redis, and so on.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from haproxy import HAProxy
from processes import ROOT, START_TIMEOUT_S, Child, free_port, http_status

DEFAULT_DATABASE_URL = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


class RedisServer:
    """A private ``redis-server`` (no persistence) that can be stopped and started again."""

    def __init__(self, log_dir: Path, port: int | None = None) -> None:
        self.port = port or free_port()
        self.ics_port = free_port()
        argv = [
            "redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
            "--save", "", "--appendonly", "no",
        ]  # fmt: skip
        self.child = Child("redis", argv, os.environ, log_dir)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self) -> None:
        self.child.start()
        deadline = asyncio.get_running_loop().time() + START_TIMEOUT_S
        while not await self._pong():
            if not self.child.running:
                raise RuntimeError(f"redis-server failed:\n{self.child.log_tail()}")
            if asyncio.get_running_loop().time() > deadline:
                raise RuntimeError("redis-server did not answer PING")
            await asyncio.sleep(0.05)

    async def _pong(self) -> bool:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        except OSError:
            return False
        try:
            writer.write(b"PING\r\n")
            await writer.drain()
            return (await asyncio.wait_for(reader.readline(), 1.0)).startswith(b"+PONG")
        except (OSError, TimeoutError):
            return False
        finally:
            writer.close()

    async def stop(self) -> None:
        await self.child.stop()

    async def kill(self) -> None:
        await self.child.signal(signal.SIGKILL)


PG_BIN = Path(os.environ.get("HUB_PG_BIN", "/usr/lib/postgresql/15/bin"))


class PostgresServer:
    """A private PostgreSQL server (its own data directory and port) that can be stopped,
    killed and started again — never the shared one.

    The PostgreSQL binaries refuse to run as root, so they run as the ``postgres`` user
    (``setpriv``) when this process is root. The data directory is a fresh temporary directory,
    removed by :meth:`remove`. ``fsync`` is off: the server is restarted or killed, never the
    machine.
    """

    def __init__(self, log_dir: Path, port: int | None = None) -> None:
        self.port = port or free_port()
        self.data_dir = Path(tempfile.mkdtemp(prefix="hub-pg-"))
        self._as_postgres: list[str] = []
        if os.geteuid() == 0:
            self._as_postgres = [
                "setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--",
            ]  # fmt: skip
            shutil.chown(self.data_dir, "postgres", "postgres")
        argv = [
            *self._as_postgres, str(PG_BIN / "postgres"), "-D", str(self.data_dir),
            "-p", str(self.port), "-h", "127.0.0.1", "-k", str(self.data_dir),
            "-c", "fsync=off", "-c", "max_connections=200",
        ]  # fmt: skip
        self.child = Child(f"postgres-{self.port}", argv, {**os.environ, "LC_ALL": "C"}, log_dir)
        self._initialised = False

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/{database}"

    async def start(self) -> None:
        """Start it (creating the cluster the first time) and wait until it accepts queries."""
        if not self._initialised:
            argv = [
                *self._as_postgres, str(PG_BIN / "initdb"), "-D", str(self.data_dir),
                "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync",
            ]  # fmt: skip
            done = await asyncio.to_thread(
                subprocess.run, argv, capture_output=True, env={**os.environ, "LC_ALL": "C"}
            )
            if done.returncode != 0:
                raise RuntimeError(f"initdb failed: {done.stderr.decode(errors='replace')}")
            self._initialised = True
        self.child.start()
        deadline = asyncio.get_running_loop().time() + START_TIMEOUT_S
        while not await self._ready():
            if not self.child.running:
                raise RuntimeError(f"postgres failed:\n{self.child.log_tail()}")
            if asyncio.get_running_loop().time() > deadline:
                raise RuntimeError("postgres did not accept connections")
            await asyncio.sleep(0.05)

    async def _ready(self) -> bool:
        import asyncpg  # the test and bench environments have it; the launcher may not

        try:
            connection = await asyncpg.connect(
                host="127.0.0.1", port=self.port, user="postgres", database="postgres", timeout=2
            )
        except (OSError, asyncpg.PostgresError, TimeoutError):
            return False
        await connection.close()
        return True

    async def create_database(self, name: str) -> str:
        """``CREATE DATABASE name``; returns its SQLAlchemy URL."""
        import asyncpg

        connection = await asyncpg.connect(
            host="127.0.0.1", port=self.port, user="postgres", database="postgres"
        )
        try:
            await connection.execute(f'CREATE DATABASE "{name}"')
        finally:
            await connection.close()
        return self.url(name)

    async def stop(self) -> None:
        """Fast shutdown (SIGINT): clients are disconnected, the data is kept."""
        await self.child.signal(signal.SIGINT)

    async def kill(self) -> None:
        """SIGKILL: a crash; it recovers from its WAL at the next start."""
        await self.child.signal(signal.SIGKILL)
        await self._wait_for_backends()

    async def restart(self) -> None:
        await self.stop()
        await self.start()

    async def _wait_for_backends(self) -> None:
        # Backends outlive a killed postmaster briefly; the next start refuses to run with them.
        pid_file = self.data_dir / "postmaster.pid"
        for _ in range(500):
            done = await asyncio.to_thread(
                subprocess.run, ["pgrep", "-f", str(self.data_dir)], capture_output=True
            )
            if done.returncode != 0:
                break
            await asyncio.sleep(0.02)
        pid_file.unlink(missing_ok=True)

    async def remove(self) -> None:
        """Stop it (if running) and delete its data directory."""
        if self.child.running:
            await self.stop()
        shutil.rmtree(self.data_dir, ignore_errors=True)


class Hub:
    """One hub process (``python -m server``) of the cluster."""

    def __init__(
        self,
        node_id: str,
        env: Mapping[str, str],
        log_dir: Path,
        argv: Sequence[str] = (sys.executable, "-m", "server"),
    ) -> None:
        self.node_id = node_id
        self.port = free_port()
        self.ics_port = free_port()
        hub_env = {
            **env,
            "HUB_NODE_ID": node_id,
            "HUB_PORT": str(self.port),
            "HUB_ICS_PORT": str(self.ics_port),
        }
        self.child = Child(node_id, argv, hub_env, log_dir)

    @property
    def url(self) -> str:
        """The hub's own websocket URL (bypassing HAProxy)."""
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def health_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/healthz"

    async def start(self, wait: bool = True) -> None:
        self.child.start()
        if wait:
            await self.wait_healthy()

    async def wait_healthy(self, timeout: float = START_TIMEOUT_S) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while await http_status(self.health_url) != 200:
            if not self.child.running:
                raise RuntimeError(f"hub {self.node_id} exited:\n{self.child.log_tail()}")
            if asyncio.get_running_loop().time() > deadline:
                raise RuntimeError(f"hub {self.node_id} is not healthy:\n{self.child.log_tail()}")
            await asyncio.sleep(0.1)

    async def health(self) -> dict[str, Any] | None:
        """The hub's ``/healthz`` report, or None if it does not answer."""

        def get() -> dict[str, Any] | None:
            try:
                with urllib.request.urlopen(self.health_url, timeout=1.0) as answer:
                    report: dict[str, Any] = json.loads(answer.read())
                    return report
            except urllib.error.HTTPError as error:
                report = json.loads(error.read() or b"{}")
                return report
            except (OSError, ValueError):
                return None

        return await asyncio.to_thread(get)

    async def stop(self) -> None:
        await self.child.stop()

    async def kill(self) -> None:
        """SIGKILL: the hub dies without any goodbye (no lease release, no node_down)."""
        await self.child.signal(signal.SIGKILL)


def hub_servers(hubs: Sequence[Hub]) -> dict[str, list[str]]:
    """The local servers of each backend of ``config/haproxy.cfg``: the hubs' public ports
    (websockets; the HTTP API), and their ICS ports (health-checked on the hub's HTTP port)."""
    return {
        "hubs": [f"{hub.node_id} 127.0.0.1:{hub.port}" for hub in hubs],
        "api_hubs": [f"api{i} 127.0.0.1:{hub.port}" for i, hub in enumerate(hubs, 1)],
        "ics_hubs": [
            f"ics{i} 127.0.0.1:{hub.ics_port} port {hub.port}" for i, hub in enumerate(hubs, 1)
        ],
    }


class LocalCluster:
    """Redis (own or given), N hubs and HAProxy, started and stopped together.

    :param database_url: the shared database (PostgreSQL; migrated before the hubs start).
    :param redis_url: a running Redis; ``None`` starts a private ``redis-server``.
    :param prefix: the ``HUB_BUS_PREFIX`` of every hub (isolates clusters sharing one Redis).
    :param env: extra ``HUB_*`` settings for every hub (e.g. short leases in tests).
    :param hub_argv: the command of a hub process (default ``python -m server``).
    :param check_interval: HAProxy's health check interval (see :class:`HAProxy`).
    """

    def __init__(
        self,
        *,
        hubs: int = 2,
        database_url: str = DEFAULT_DATABASE_URL,
        redis_url: str | None = DEFAULT_REDIS_URL,
        prefix: str | None = None,
        env: Mapping[str, str] | None = None,
        port: int = 0,
        ics_port: int = 0,
        check_interval: str = "250ms",
        log_dir: Path | None = None,
        hub_argv: Sequence[str] = (sys.executable, "-m", "server"),
        workers: int = 0,
    ) -> None:
        if hubs < 1:
            raise ValueError("a cluster needs at least one hub")
        self.log_dir = log_dir or Path(tempfile.mkdtemp(prefix="hub-cluster-"))
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.database_url = database_url
        self.redis = RedisServer(self.log_dir) if redis_url is None else None
        self.redis_url = self.redis.url if self.redis is not None else str(redis_url)
        self.prefix = prefix if prefix is not None else f"cluster-{secrets.token_hex(4)}:"
        hub_env = {
            **os.environ,
            "HUB_DATABASE_URL": database_url,
            "HUB_REDIS_URL": self.redis_url,
            "HUB_BUS_PREFIX": self.prefix,
            "HUB_HOST": "127.0.0.1",
            "HUB_ICS_PORT": "0",  # several hubs on one machine: no shared fixed ICS port
            "HUB_WORKER_KEYS": secrets.token_urlsafe(24),
            # HAProxy connects from 127.0.0.1 and names each client in a PROXY header
            # (config/haproxy.cfg); every local client is 127.0.0.1 too, so its per-address
            # limits are raised for the tests' and benchmarks' crowds of clients.
            "HUB_TRUSTED_PROXIES": "127.0.0.1",
            "HUB_MAX_CONNECTIONS_PER_ADDRESS": "100000",
            "HUB_ICS_MAX_CONNECTIONS_PER_ADDRESS": "100000",
            "HUB_MAX_QUEUED_PER_ADDRESS": "100000",
            **(env or {}),
        }
        self.hubs = [Hub(f"hub{i + 1}", hub_env, self.log_dir, hub_argv) for i in range(hubs)]
        self.proxy = HAProxy(hub_servers(self.hubs), self.log_dir, port, ics_port, check_interval)
        worker_key = hub_env["HUB_WORKER_KEYS"].split(",")[0].strip()
        self.workers = [
            Child(
                f"worker{i + 1}",
                [sys.executable, "-m", "server.worker", "--name", f"worker{i + 1}",
                 "--url", f"http://127.0.0.1:{self.proxy.port}"],
                # The key by environment: a random key may begin with "-", which argparse
                # takes for an option after "--key" (a worker failed to start so, 1 run in ~64),
                # and the environment keeps it out of the process list.
                {**os.environ, "HUB_WORKER_KEY": worker_key},
                self.log_dir,
            )
            for i in range(workers)
        ]  # fmt: skip

    @property
    def url(self) -> str:
        """The public websocket URL (through HAProxy)."""
        return self.proxy.url

    async def migrate(self) -> None:
        argv = [sys.executable, "-m", "server.store.migrate", "upgrade", "--url", self.database_url]
        done = await asyncio.to_thread(
            subprocess.run, argv, cwd=ROOT, capture_output=True, timeout=120
        )
        if done.returncode != 0:
            output = (done.stdout + done.stderr).decode(errors="replace")
            raise RuntimeError(f"migration failed:\n{output}")

    async def start(self) -> None:
        try:
            if self.redis is not None:
                await self.redis.start()
            await self.migrate()
            await asyncio.gather(*(hub.start() for hub in self.hubs))
            await self.proxy.start()
            for worker in self.workers:
                worker.start()
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        await asyncio.gather(*(worker.stop() for worker in self.workers))
        await self.proxy.stop()
        await asyncio.gather(*(hub.stop() for hub in self.hubs))
        if self.redis is not None:
            await self.redis.stop()

    def logs(self) -> str:
        """The tail of every child's log, for a failing test's report."""
        children = [hub.child for hub in self.hubs] + [self.proxy.child, *self.workers]
        if self.redis is not None:
            children.append(self.redis.child)
        return "\n".join(f"--- {c.name} ({c.log_path})\n{c.log_tail()}" for c in children)

    async def __aenter__(self) -> LocalCluster:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()


async def _serve(args: argparse.Namespace) -> None:
    extra = dict(item.split("=", 1) for item in args.env)
    cluster = LocalCluster(
        hubs=args.hubs,
        database_url=args.database_url,
        redis_url=None if args.own_redis else args.redis_url,
        prefix=args.prefix,
        env=extra,
        port=args.port,
        ics_port=args.ics_port,
        log_dir=Path(args.log_dir) if args.log_dir else None,
        workers=args.workers,
    )
    await cluster.start()
    print(f"cluster up: {cluster.url}, ICS on port {cluster.proxy.ics_port}", flush=True)
    print(f"  logs in {cluster.log_dir}", flush=True)
    for hub in cluster.hubs:
        print(f"  {hub.node_id}: {hub.url}  pid {hub.child.pid}", flush=True)
    for worker in cluster.workers:
        print(f"  {worker.name}: pid {worker.pid}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        print("stopping", flush=True)
        await cluster.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--hubs", type=int, default=2, help="number of hub processes")
    parser.add_argument("--port", type=int, default=8000, help="public websocket port")
    parser.add_argument("--ics-port", type=int, default=5000, help="public ICS port")
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--redis-url", default=DEFAULT_REDIS_URL)
    parser.add_argument("--own-redis", action="store_true", help="start a private redis-server")
    parser.add_argument("--prefix", default="hub:", help="HUB_BUS_PREFIX of the hubs")
    parser.add_argument("--env", action="append", default=[], help="extra NAME=VALUE for hubs")
    parser.add_argument("--log-dir", default=None, help="where the children's logs go")
    parser.add_argument("--workers", type=int, default=1, help="engine workers (0: none)")
    args = parser.parse_args(argv)
    if any("=" not in item for item in args.env):
        parser.error("--env takes NAME=VALUE")
    asyncio.run(_serve(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())

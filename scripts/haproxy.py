"""Debian's ``haproxy`` in front of local hubs, from the ``config/haproxy.cfg`` docker-compose
uses: :func:`haproxy_config` puts the local servers in, :class:`HAProxy` runs it and waits until
every server passed its health check."""

from __future__ import annotations

import asyncio
import os
import resource
import shutil
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path

from processes import ROOT, START_TIMEOUT_S, Child, free_port, http_status

HAPROXY_CFG = ROOT / "config" / "haproxy.cfg"


def haproxy_binary() -> str:
    """The ``haproxy`` program (Debian installs it in /usr/sbin, often not on a user's PATH).

    :raises RuntimeError: it is not installed.
    """
    found = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/usr/local/sbin")
    if found is None:
        raise RuntimeError("haproxy is not installed (scripts/system-deps.sh installs it)")
    return found


def haproxy_config(servers: Mapping[str, Sequence[str]], stats_socket: Path) -> str:
    """``config/haproxy.cfg`` for local hubs: the ``server`` lines of each backend (the
    docker-compose replicas) replaced by ``servers[backend]`` (each one ``server`` line's
    arguments: name, address, options), and a stats socket added to ``global`` so that a
    launcher can see when the health checks pass. Everything else (balancing, checks,
    timeouts) is the file's, as operators run it.

    :raises ValueError: ``servers`` does not name exactly the backends with ``server`` lines.
    """
    lines: list[str] = []
    section: list[str] = []
    replaced: set[str] = set()
    for line in HAPROXY_CFG.read_text().splitlines():
        words = line.split()
        if words and not line[0].isspace() and not words[0].startswith("#"):
            section = words
        if section[:1] == ["backend"] and words[:1] == ["server"]:
            backend = section[1]
            if backend not in servers:
                raise ValueError(f"no local servers for backend {backend} of {HAPROXY_CFG}")
            if backend not in replaced:
                lines += [f"    server {server}" for server in servers[backend]]
                replaced.add(backend)
            continue
        lines.append(line)
        if words == ["global"]:
            lines.append(f"    stats socket {stats_socket} level user")
    if replaced != set(servers):
        raise ValueError(f"{HAPROXY_CFG} has no backend(s) {sorted(set(servers) - replaced)}")
    return "\n".join(lines) + "\n"


def haproxy_maxconn() -> int:
    """The most connections haproxy can take here: each needs two file descriptors, and an
    unprivileged process cannot raise its limit (docker-compose's default is 20,000)."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard == resource.RLIM_INFINITY:
        return 20_000
    return max(100, min(20_000, (hard - 100) // 2))


class HAProxy:
    """Debian's ``haproxy`` in front of the hubs, from ``config/haproxy.cfg``.

    :param servers: each backend's ``server`` lines (see :func:`haproxy_config`).
    :param port: the public websocket port (a free one if 0).
    :param ics_port: the public port of the ICS text interface (a free one if 0).
    :param check_interval: the health check interval, an HAProxy time (``2s`` in production;
        short here so that a dead hub leaves the rotation quickly).
    """

    def __init__(
        self,
        servers: Mapping[str, Sequence[str]],
        log_dir: Path,
        port: int = 0,
        ics_port: int = 0,
        check_interval: str = "250ms",
    ) -> None:
        self.port = port or free_port()
        self.ics_port = ics_port or free_port()
        self.stats_socket = log_dir / "haproxy.sock"
        self.config_path = log_dir / "haproxy.cfg"
        self.servers = [line.split()[0] for lines in servers.values() for line in lines]
        self.config_path.write_text(haproxy_config(servers, self.stats_socket))
        env = {
            **os.environ,
            "HUB_PROXY_BIND": f"127.0.0.1:{self.port}",
            "HUB_PROXY_ICS_BIND": f"127.0.0.1:{self.ics_port}",
            "HUB_PROXY_CHECK_INTER": check_interval,
            "HUB_PROXY_MAXCONN": str(haproxy_maxconn()),
        }
        argv = [haproxy_binary(), "-db", "-f", str(self.config_path)]
        self.child = Child("haproxy", argv, env, log_dir)

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    async def start(self, up: Sequence[str] | None = None) -> None:
        """Start haproxy and wait until its port answers and the servers ``up`` (default all)
        passed their health checks.

        :raises RuntimeError: haproxy exited, or did not get there in time.
        """
        self.child.start()
        await self.wait_states(dict.fromkeys(self.servers if up is None else up, "UP"))
        health = f"http://127.0.0.1:{self.port}/proxy-health"
        await self._until(lambda: _is_ok(health), "its port to answer")

    async def wait_states(self, wanted: Mapping[str, str]) -> None:
        """Wait until each server in ``wanted`` has that status (``UP``, ``DOWN``)."""

        async def reached() -> bool:
            states = await self.server_states()
            return all(states.get(name) == status for name, status in wanted.items())

        await self._until(reached, f"servers {dict(wanted)}")

    async def server_states(self) -> dict[str, str]:
        """Each server's status (first word: ``UP``, ``DOWN``, ``MAINT``…), from the stats
        socket; empty while haproxy is not listening on it. Server names are unique across
        the backends."""
        try:
            reader, writer = await asyncio.open_unix_connection(str(self.stats_socket))
        except OSError:
            return {}
        try:
            writer.write(b"show stat\n")
            await writer.drain()
            text = (await asyncio.wait_for(reader.read(), 5.0)).decode()
        except (OSError, TimeoutError):
            return {}
        finally:
            writer.close()
        rows = [line.split(",") for line in text.splitlines() if line]
        if not rows or not rows[0][0].startswith("# "):
            return {}
        header = [rows[0][0][2:], *rows[0][1:]]
        server, status = header.index("svname"), header.index("status")
        return {
            row[server]: row[status].split()[0]
            for row in rows[1:]
            if row[server] not in ("BACKEND", "FRONTEND")
        }

    async def _until(self, condition: Callable[[], Awaitable[bool]], what: str) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + START_TIMEOUT_S
        while not await condition():
            if not self.child.running:
                raise RuntimeError(f"haproxy exited:\n{self.child.log_tail()}")
            if loop.time() > deadline:
                raise RuntimeError(f"haproxy: no {what} in time:\n{self.child.log_tail()}")
            await asyncio.sleep(0.02)

    async def stop(self) -> None:
        await self.child.stop()


async def _is_ok(url: str) -> bool:
    return await http_status(url) == 200

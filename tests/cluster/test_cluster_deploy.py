"""The deployment files: docker-compose.yml (checked by ``docker-compose config`` when the
binary is installed, and structurally with PyYAML always), the HAProxy configuration, the
Dockerfile and config/cluster.toml; and the local TCP proxy (server/proxy.py) with real
sockets."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from server.config import load_settings
from server.proxy import TcpProxy, parse_address

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"


def compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return document


@pytest.mark.skipif(shutil.which("docker-compose") is None, reason="docker-compose not installed")
def test_docker_compose_config_accepts_the_file() -> None:
    done = subprocess.run(
        ["docker-compose", "-f", str(COMPOSE), "config", "--quiet"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    services = subprocess.run(
        ["docker-compose", "-f", str(COMPOSE), "config", "--services"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert set(services.stdout.split()) == {"postgres", "redis", "migrate", "hub1", "hub2", "proxy"}


def test_compose_has_the_topology_with_health_checks() -> None:
    services = compose()["services"]
    assert services["postgres"]["image"].startswith("postgres:15")
    assert services["redis"]["image"].startswith("redis:7")
    for name in ("postgres", "redis", "hub1", "hub2", "proxy"):
        assert services[name]["healthcheck"]["test"], name
    hubs = [services["hub1"], services["hub2"]]
    assert {hub["environment"]["HUB_NODE_ID"] for hub in hubs} == {"hub1", "hub2"}
    for hub in hubs:
        env = hub["environment"]
        assert hub["build"] == "."
        assert "@postgres:5432/" in env["HUB_DATABASE_URL"]
        assert env["HUB_REDIS_URL"].startswith("redis://redis:6379")
        assert env["HUB_CONFIG"] == "/app/config/cluster.toml"
        assert "./config:/app/config:ro" in hub["volumes"]
        assert "healthz" in " ".join(hub["healthcheck"]["test"])
        depends = hub["depends_on"]
        assert depends["postgres"]["condition"] == "service_healthy"
        assert depends["redis"]["condition"] == "service_healthy"
        assert depends["migrate"]["condition"] == "service_completed_successfully"
    proxy = services["proxy"]
    assert proxy["ports"] == ["8080:8080", "5000:5000"]
    assert "./config/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro" in proxy["volumes"]
    assert {name: dep["condition"] for name, dep in proxy["depends_on"].items()} == {
        "hub1": "service_healthy",
        "hub2": "service_healthy",
    }
    assert services["migrate"]["command"][-1] == "upgrade"


def test_haproxy_balances_websockets_over_both_hubs_checked_on_healthz() -> None:
    lines = [line.split() for line in (ROOT / "config" / "haproxy.cfg").read_text().splitlines()]
    words = [line for line in lines if line and not line[0].startswith("#")]
    servers = {line[1]: line[2] for line in words if line[0] == "server"}
    assert servers == {
        "hub1": "hub1:8080",
        "hub2": "hub2:8080",
        "ics1": "hub1:5000",  # the ICS text interface, plain TCP
        "ics2": "hub2:5000",
    }
    assert ["http-check", "send", "meth", "GET", "uri", "/healthz"] in words
    assert ["bind", ":8080"] in words
    assert any(line[:2] == ["timeout", "tunnel"] for line in words)  # websockets stay open
    assert any(line[0] == "default-server" and "check" in line for line in words)


def test_the_image_and_the_replica_settings() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert dockerfile.startswith("#") and "FROM python:3.11-slim" in dockerfile
    assert "pip install" in dockerfile and '"-m", "server"' in dockerfile
    hub_env = {k: str(v) for k, v in compose()["services"]["hub1"]["environment"].items()}
    hub_env["HUB_CONFIG"] = str(ROOT / "config" / "cluster.toml")
    settings = load_settings(env=hub_env)
    assert settings.uses_redis and settings.node_id == "hub1"
    assert (settings.host, settings.port) == ("0.0.0.0", 8080)
    assert settings.database_url.startswith("postgresql+asyncpg://")


# --- the local TCP proxy ------------------------------------------------------------------------


class Backend:
    """A tiny server: ``GET /healthz`` answers ``status``; anything else is echoed, prefixed
    with the backend's name."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.status = 200
        self.server: asyncio.Server | None = None
        self.port = 0
        self.writers: list[asyncio.StreamWriter] = []

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()
        for writer in self.writers:
            writer.close()
        await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.append(writer)
        with contextlib.suppress(OSError):
            first = await reader.readline()
            if first.startswith(b"GET /healthz"):
                writer.write(f"HTTP/1.1 {self.status} X\r\nContent-Length: 0\r\n\r\n".encode())
                await writer.drain()
                writer.close()
                return
            while first:
                writer.write(f"{self.name}:".encode() + first)
                await writer.drain()
                first = await reader.readline()
        writer.close()


@pytest.fixture
async def backends() -> AsyncIterator[list[Backend]]:
    started = [Backend("a"), Backend("b")]
    for backend in started:
        await backend.start()
    yield started
    for backend in started:
        with contextlib.suppress(Exception):
            await backend.stop()


async def through(proxy: TcpProxy) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", proxy.port)


async def echo(connection: tuple[asyncio.StreamReader, asyncio.StreamWriter], text: str) -> str:
    reader, writer = connection
    writer.write(text.encode() + b"\n")
    await writer.drain()
    return (await asyncio.wait_for(reader.readline(), 5)).decode().strip()


async def test_the_proxy_spreads_connections_and_skips_unhealthy_backends(
    backends: list[Backend],
) -> None:
    proxy = TcpProxy(
        "127.0.0.1", 0, [("127.0.0.1", b.port) for b in backends], check_interval_s=0.05
    )
    await proxy.start()
    try:
        one, two = await through(proxy), await through(proxy)
        answers = {await echo(one, "hi"), await echo(two, "hi")}
        assert answers == {"a:hi", "b:hi"}  # fewest connections first
        backends[0].status = 503
        await asyncio.sleep(0.3)
        three = await through(proxy)
        assert await echo(three, "x") == "b:x"
        assert await echo(one, "still") in ("a:still", "b:still")  # open tunnels are kept
    finally:
        await proxy.close()


async def test_a_dead_backend_closes_its_clients_and_leaves_rotation(
    backends: list[Backend],
) -> None:
    proxy = TcpProxy("127.0.0.1", 0, [("127.0.0.1", b.port) for b in backends], check_interval_s=5)
    await proxy.start()
    try:
        connections = [await through(proxy), await through(proxy)]
        names = [(await echo(c, "hi")).split(":")[0] for c in connections]
        victim = connections[names.index("a")]
        await backends[0].stop()
        assert await asyncio.wait_for(victim[0].read(), 5) == b""  # closed, like the hub
        # The health check is 5 s away: the refused connection alone takes it out of rotation.
        for _ in range(3):
            assert await echo(await through(proxy), "again") == "b:again"
    finally:
        await proxy.close()


def test_parse_address() -> None:
    assert parse_address("localhost:80") == ("localhost", 80)
    assert parse_address("[::1]:8080") == ("::1", 8080)
    for bad in ("localhost", ":80", "host:x", "host:70000"):
        with pytest.raises(ValueError):
            parse_address(bad)

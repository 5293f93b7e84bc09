"""The deployment files: docker-compose.yml (checked by ``docker-compose config``, which
scripts/system-deps.sh installs and whose absence fails the test, and structurally with PyYAML),
the HAProxy configuration, the Dockerfile and config/cluster.toml; and HAProxy started from
config/haproxy.cfg the way scripts/cluster.py starts it for tests and benchmarks, in front of real
websocket servers."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from http import HTTPStatus
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from cluster_support import HAProxy, free_port, haproxy_binary, haproxy_config
from websockets.asyncio.client import connect
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.http11 import Request, Response

from server.config import ConfigError, load_settings
from server.transport.addresses import ProxyHeader, parse_proxy_header

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
    assert set(services.stdout.split()) == {
        "postgres",
        "redis",
        "migrate",
        "hub1",
        "hub2",
        "proxy",
        "worker",
    }


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
        assert hub["build"] == {"context": ".", "target": "hub"}
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
    # the engine worker: its own image (the engines), through the proxy, with the hubs' key
    worker = services["worker"]
    assert worker["build"] == {"context": ".", "target": "worker"}
    assert worker["environment"]["HUB_WORKER_URL"] == "http://proxy:8080"
    assert worker["environment"]["HUB_WORKER_KEY"] == hubs[0]["environment"]["HUB_WORKER_KEYS"]
    assert worker["depends_on"]["proxy"]["condition"] == "service_healthy"


def test_no_default_secret_the_hubs_generate_the_workers_key() -> None:
    """With HUB_WORKER_KEYS unset, no published key (the default before 309c9b9,
    ``change-this-worker-key-0000``) may be used: the hubs generate one into a shared volume,
    the worker reads it there."""
    text = COMPOSE.read_text()
    defaults = re.findall(r"\$\{(\w+):-([^}]*)\}", text)
    assert defaults and all(value == "" for name, value in defaults if "KEY" in name), defaults
    assert "change-this" not in text
    services = compose()["services"]
    hubs, worker = [services["hub1"], services["hub2"]], services["worker"]
    assert "workerkey" in compose()["volumes"]
    for hub in hubs:
        assert hub["environment"]["HUB_WORKER_KEY_FILE"] == "/app/keys/worker.key"
        assert "workerkey:/app/keys" in hub["volumes"]
    assert worker["environment"]["HUB_WORKER_KEY_FILE"] == "/app/keys/worker.key"
    assert worker["volumes"] == ["workerkey:/app/keys:ro"]
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "chown hub /app/data /app/keys" in dockerfile  # the volume starts owned by the user
    # The hub's own check: a placeholder or a short key stops it at start, with the reason.
    for bad in ("change-this-worker-key-0000", "short", "a-changeme-key-0123"):
        with pytest.raises(ConfigError, match="worker_keys"):
            load_settings(env={"HUB_WORKER_KEYS": bad})
    done = subprocess.run(
        [sys.executable, "-m", "server"],
        cwd=ROOT,
        env={**os.environ, "HUB_WORKER_KEYS": "change-this-worker-key-0000", "HUB_PORT": "0"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "is a placeholder" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_haproxy_balances_websockets_over_both_hubs_checked_on_healthz() -> None:
    lines = [line.split() for line in (ROOT / "config" / "haproxy.cfg").read_text().splitlines()]
    words = [line for line in lines if line and not line[0].startswith("#")]
    servers = {line[1]: line[2] for line in words if line[0] == "server"}
    assert servers == {
        "hub1": "hub1:8080",
        "hub2": "hub2:8080",
        "api1": "hub1:8080",  # the HTTP API (routed by path), same hubs, same port
        "api2": "hub2:8080",
        "ics1": "hub1:5000",  # the ICS text interface, plain TCP
        "ics2": "hub2:5000",
    }
    assert ["http-check", "send", "meth", "GET", "uri", "/healthz"] in words
    assert ["bind", '"${HUB_PROXY_BIND}"'] in words
    assert ["presetenv", "HUB_PROXY_BIND", ":8080"] in words  # docker-compose's ports
    assert ["bind", '"${HUB_PROXY_ICS_BIND}"'] in words
    assert ["presetenv", "HUB_PROXY_ICS_BIND", ":5000"] in words
    assert any(line[:2] == ["timeout", "tunnel"] for line in words)  # websockets stay open
    assert any(line[0] == "default-server" and "check" in line for line in words)


def test_the_image_and_the_replica_settings() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert dockerfile.startswith("#") and "FROM python:3.11-slim" in dockerfile
    assert "pip install" in dockerfile and '"-m", "server"' in dockerfile
    assert "FROM base AS worker" in dockerfile and "sjaakii hachu fairy-stockfish" in dockerfile
    assert dockerfile.rstrip().endswith('CMD ["python", "-m", "server"]')  # the default: a hub
    hub_env = {k: str(v) for k, v in compose()["services"]["hub1"]["environment"].items()}
    hub_env["HUB_CONFIG"] = str(ROOT / "config" / "cluster.toml")
    # docker-compose's interpolation of ${HUB_WORKER_KEYS:-default}: the default
    default_key = hub_env["HUB_WORKER_KEYS"].removesuffix("}").split(":-", 1)[1]
    hub_env["HUB_WORKER_KEYS"] = default_key
    settings = load_settings(env=hub_env)
    assert settings.uses_redis and settings.node_id == "hub1"
    assert (settings.host, settings.port) == ("0.0.0.0", 8080)
    assert settings.database_url.startswith("postgresql+asyncpg://")
    assert default_key == "" and settings.worker_key_list == ()  # the key file's, generated
    assert settings.worker_key_file == "/app/keys/worker.key"
    # The hubs believe the PROXY header of the proxy's fixed address only.
    proxy = compose()["services"]["proxy"]["networks"]["default"]["ipv4_address"]
    assert settings.trusted_proxies == proxy


# --- HAProxy from config/haproxy.cfg, as scripts/cluster.py starts it ------------------------


class ProxiedConnection(ServerConnection):
    """A websocket server's connection that first reads HAProxy's PROXY header, as a hub's
    listener does (``send-proxy-v2`` in config/haproxy.cfg; server/transport/addresses.py)."""

    headers: ClassVar[list[ProxyHeader]] = []
    """The PROXY headers read, by every backend."""

    def data_received(self, data: bytes) -> None:
        if not getattr(self, "_proxy_read", False):
            self._proxy_read = True
            header = parse_proxy_header(data)  # all in the first segment: HAProxy writes it at once
            assert header is not None
            ProxiedConnection.headers.append(header)
            data = data[header.length :]
        super().data_received(data)


class Backend:
    """A tiny websocket server standing for a hub: ``GET /healthz`` answers ``status``; a
    websocket gets the backend's name, then is echoed."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.status = 200
        self.port = free_port()
        self.server: Server | None = None

    async def start(self) -> None:
        self.server = await serve(
            self._echo,
            "127.0.0.1",
            self.port,
            process_request=self._health,
            create_connection=ProxiedConnection,
        )

    async def stop(self) -> None:
        """Close the listening socket and every websocket (like a dying hub)."""
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()

    def _health(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.path == "/healthz":
            return connection.respond(HTTPStatus(self.status), "")
        return None

    async def _echo(self, websocket: ServerConnection) -> None:
        await websocket.send(self.name)
        async for message in websocket:
            await websocket.send(message)


@pytest.fixture
async def backends() -> AsyncIterator[list[Backend]]:
    started = [Backend("hub1"), Backend("hub2")]
    for backend in started:
        await backend.start()
    yield started
    for backend in started:
        with contextlib.suppress(Exception):
            await backend.stop()


@contextlib.asynccontextmanager
async def haproxy(
    backends: list[Backend], log_dir: Path, check_interval: str
) -> AsyncIterator[HAProxy]:
    servers = {
        "hubs": [f"{b.name} 127.0.0.1:{b.port}" for b in backends],
        "api_hubs": [f"api-{b.name} 127.0.0.1:{b.port}" for b in backends],
        "ics_hubs": [],
    }
    proxy = HAProxy(servers, log_dir, check_interval=check_interval)
    try:
        await proxy.start()
        yield proxy
    finally:
        await proxy.stop()
        assert not proxy.child.running


def test_the_local_config_is_the_compose_config_with_local_servers(tmp_path: Path) -> None:
    compose_lines = (ROOT / "config" / "haproxy.cfg").read_text().splitlines()
    servers = {
        "hubs": ["a 127.0.0.1:1001", "b 127.0.0.1:1002"],
        "api_hubs": ["api1 127.0.0.1:1001", "api2 127.0.0.1:1002"],
        "ics_hubs": ["ics1 127.0.0.1:2001 port 1001", "ics2 127.0.0.1:2002 port 1002"],
    }
    local = haproxy_config(servers, tmp_path / "s.sock")
    local_lines = local.splitlines()
    assert [line.split()[1:] for line in local_lines if line.split()[:1] == ["server"]] == [
        line.split() for lines in servers.values() for line in lines
    ]
    assert f"    stats socket {tmp_path / 's.sock'} level user" in local_lines

    def rest(lines: list[str]) -> list[str]:
        return [line for line in lines if line.split()[:1] != ["server"] and "stats" not in line]

    assert rest(local_lines) == rest(compose_lines)  # balancing, checks, timeouts: the same
    config = tmp_path / "haproxy.cfg"
    config.write_text(local)
    done = subprocess.run(
        [haproxy_binary(), "-c", "-f", str(config)], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stdout + done.stderr
    with pytest.raises(ValueError, match="ics_hubs"):
        haproxy_config({"hubs": servers["hubs"], "api_hubs": []}, tmp_path / "s.sock")


async def test_haproxy_spreads_websockets_and_drops_an_unhealthy_backend(
    backends: list[Backend], tmp_path: Path
) -> None:
    async with haproxy(backends, tmp_path, "100ms") as proxy:
        clients = [await connect(proxy.url), await connect(proxy.url)]
        names = [await client.recv() for client in clients]
        assert sorted(names) == ["hub1", "hub2"]  # each to the one with the fewest connections
        # Each connection began with HAProxy's PROXY header naming the client (this test).
        assert any(header.address == "127.0.0.1" for header in ProxiedConnection.headers)
        on_hub1 = clients[names.index("hub1")]
        backends[0].status = 503  # hub1's database went away
        await proxy.wait_states({"hub1": "DOWN"})
        # Its websockets are closed (their clients reconnect), new ones go to hub2 only.
        await asyncio.wait_for(on_hub1.wait_closed(), 5)
        for _ in range(3):
            async with connect(proxy.url) as again:
                assert await again.recv() == "hub2"
        backends[0].status = 200
        await proxy.wait_states({"hub1": "UP"})


async def test_a_dead_backend_loses_its_clients_and_its_new_connections_go_elsewhere(
    backends: list[Backend], tmp_path: Path
) -> None:
    # Health checks every 30 s: only the failed connects take the dead backend out.
    async with haproxy(backends, tmp_path, "30s") as proxy:
        clients = [await connect(proxy.url), await connect(proxy.url)]
        names = [await client.recv() for client in clients]
        assert sorted(names) == ["hub1", "hub2"]
        victim = clients[names.index("hub1")]
        await backends[0].stop()
        await asyncio.wait_for(victim.wait_closed(), 5)  # closed, like a killed hub's
        for _ in range(3):  # retried on hub2 (redispatch), though hub1 still counts as up
            async with connect(proxy.url) as again:
                assert await again.recv() == "hub2"
                await again.send("ping")
                assert await again.recv() == "ping"

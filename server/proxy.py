"""A small TCP load balancer: several hub processes behind one port, without a container engine.

``scripts/cluster.py`` (and the cluster tests) put it in front of local hub processes, where
``docker-compose.yml`` uses HAProxy. It is deliberately protocol-agnostic — it copies bytes, so
websockets, ``/healthz`` and the review API all pass through — and sits outside the server's
layers (it imports nothing of ``server``)::

    python -m server.proxy --listen 127.0.0.1:8000 \\
        --backend 127.0.0.1:8101 --backend 127.0.0.1:8102

* **Health**: every ``--check-interval`` seconds each backend gets ``GET /healthz``; only a
  ``200`` answer keeps it in rotation. A backend that refuses a client's connection is taken out
  at once (a killed hub is noticed by the first client that tries it, not a check later).
* **Balancing**: a new client goes to the healthy backend with the fewest open connections
  (ties in turn), like HAProxy's ``leastconn``: websockets are long-lived.
* **Failure**: when either side of a proxied connection closes or breaks, both are closed, so
  a client whose hub died sees its socket close and reconnects — through this port, to a live
  hub.

Once listening it prints one line of JSON to stdout, ``{"listening": <port>}`` (useful with
``--listen 127.0.0.1:0``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["Backend", "TcpProxy", "main", "parse_address"]

logger = logging.getLogger("server.proxy")

CONNECT_TIMEOUT_S = 2.0
CHUNK = 64 * 1024


def parse_address(text: str) -> tuple[str, int]:
    """``"host:port"`` → ``(host, port)``.

    >>> parse_address("127.0.0.1:8080")
    ('127.0.0.1', 8080)

    :raises ValueError: without a port, or with a port outside 0-65535.
    """
    host, sep, port_text = text.rpartition(":")
    if not sep or not host or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ValueError(f"expected host:port, got {text!r}")
    return host.strip("[]"), int(port_text)


@dataclass
class Backend:
    """One hub process behind the proxy."""

    host: str
    port: int
    healthy: bool = False
    connections: int = 0
    picked: int = field(default=0, repr=False)

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


class TcpProxy:
    """Listens on ``host:port`` and spreads connections over ``backends`` (see the module docstring)."""

    def __init__(
        self,
        host: str,
        port: int,
        backends: Sequence[tuple[str, int]],
        *,
        check_interval_s: float = 0.5,
        health_path: str = "/healthz",
    ) -> None:
        if not backends:
            raise ValueError("the proxy needs at least one backend")
        if check_interval_s <= 0:
            raise ValueError("check_interval_s must be positive")
        self.host = host
        self.port = port
        self.backends = [Backend(h, p) for h, p in backends]
        self._interval = check_interval_s
        self._health_path = health_path
        self._server: asyncio.Server | None = None
        self._checker: asyncio.Task[None] | None = None
        self._pipes: set[asyncio.Task[None]] = set()
        self._turn = 0

    async def start(self) -> None:
        """Check every backend once, then listen and keep checking in the background."""
        await self.check_all()
        self._server = await asyncio.start_server(self._on_client, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        self._checker = asyncio.create_task(self._check_forever(), name="proxy-health")

    async def close(self) -> None:
        """Stop listening and cut every proxied connection."""
        if self._checker is not None:
            self._checker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._checker
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._pipes):
            task.cancel()
        if self._pipes:
            await asyncio.wait(set(self._pipes))

    # --- health -----------------------------------------------------------------------------

    async def check_all(self) -> None:
        await asyncio.gather(*(self._check(backend) for backend in self.backends))

    async def _check_forever(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            await self.check_all()

    async def _check(self, backend: Backend) -> None:
        healthy = await self._probe(backend)
        if healthy != backend.healthy:
            logger.info("backend %s is %s", backend.address, "up" if healthy else "down")
        backend.healthy = healthy

    async def _probe(self, backend: Backend) -> bool:
        """Whether ``GET <health_path>`` answers 200 within the check interval."""
        request = (
            f"GET {self._health_path} HTTP/1.1\r\nHost: {backend.address}\r\n"
            "Connection: close\r\n\r\n"
        ).encode()
        writer: asyncio.StreamWriter | None = None
        try:
            async with asyncio.timeout(max(self._interval, 1.0)):
                reader, writer = await asyncio.open_connection(backend.host, backend.port)
                writer.write(request)
                await writer.drain()
                status_line = await reader.readline()
        except (OSError, TimeoutError):
            return False
        finally:
            if writer is not None:
                writer.close()
        parts = status_line.split()
        return len(parts) >= 2 and parts[1] == b"200"

    # --- proxying ---------------------------------------------------------------------------

    def _candidates(self) -> list[Backend]:
        """Healthy backends, fewest connections first; ties in turn."""
        healthy = [b for b in self.backends if b.healthy]
        self._turn += 1
        count = len(self.backends)
        return sorted(
            healthy,
            key=lambda b: (b.connections, (self.backends.index(b) - self._turn) % count),
        )

    async def _on_client(
        self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._pipes.add(task)
        try:
            await self._serve(client_reader, client_writer)
        finally:
            self._pipes.discard(task)
            client_writer.close()

    async def _serve(
        self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter
    ) -> None:
        for backend in self._candidates():
            try:
                async with asyncio.timeout(CONNECT_TIMEOUT_S):
                    reader, writer = await asyncio.open_connection(backend.host, backend.port)
            except (OSError, TimeoutError):
                logger.info("backend %s refused a client: out of rotation", backend.address)
                backend.healthy = False
                continue
            backend.connections += 1
            try:
                await _pipe_both(client_reader, client_writer, reader, writer)
            finally:
                backend.connections -= 1
                writer.close()
            return
        logger.warning("no healthy backend for a client")


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError, ConnectionError):
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()


async def _pipe_both(
    client_reader: asyncio.StreamReader,
    client_writer: asyncio.StreamWriter,
    backend_reader: asyncio.StreamReader,
    backend_writer: asyncio.StreamWriter,
) -> None:
    """Copy both ways until either side closes; then close both (the caller closes them)."""
    upstream = asyncio.create_task(_copy(client_reader, backend_writer))
    downstream = asyncio.create_task(_copy(backend_reader, client_writer))
    try:
        await asyncio.wait([upstream, downstream], return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (upstream, downstream):
            task.cancel()
        await asyncio.wait([upstream, downstream])


async def _run(args: argparse.Namespace) -> None:
    host, port = parse_address(args.listen)
    proxy = TcpProxy(
        host,
        port,
        [parse_address(b) for b in args.backend],
        check_interval_s=args.check_interval,
    )
    await proxy.start()
    print(json.dumps({"listening": proxy.port}), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        await proxy.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m server.proxy", description="TCP load balancer in front of hub processes."
    )
    parser.add_argument("--listen", required=True, help="host:port to listen on (port 0: any)")
    parser.add_argument(
        "--backend", action="append", required=True, help="host:port of a hub (repeat)"
    )
    parser.add_argument(
        "--check-interval", type=float, default=0.5, help="seconds between health checks"
    )
    parser.add_argument("--log-level", default="WARNING")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        asyncio.run(_run(args))
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Helpers every test package shares: the test PostgreSQL server, fresh databases on it, and a
TCP forwarder that simulates a database outage.

The suite runs against the real PostgreSQL at ``VARIANT_HUB_TEST_PG_URL`` (default: the local
server's ``test`` database, user ``postgres``, trust auth). Tests isolate their data in a
database (:func:`create_database`) or a schema of their own, and drop it afterwards.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import asyncpg
from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from server.config import Settings

__all__ = [
    "PG_URL",
    "REDIS_URL",
    "WAIT_S",
    "FakeClock",
    "TcpForwarder",
    "copy_sqlite_database",
    "create_database",
    "drop_database",
    "node_settings",
    "pg_dsn",
    "poll",
    "wait_until",
]

PG_URL = os.environ.get(
    "VARIANT_HUB_TEST_PG_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)
"""The SQLAlchemy URL of the test PostgreSQL database."""


REDIS_URL = os.environ.get("HUB_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
"""The test Redis, which the cluster's nodes share."""


def node_settings(node_id: str, database: str, prefix: str, **overrides: Any) -> Settings:
    """The settings of an in-process cluster node ``node_id`` on ``database`` and the test
    Redis under the bus prefix ``prefix``: any ports, quiet logs, cheap password hashing."""
    options: dict[str, Any] = {
        "port": 0,
        "ics_port": 0,
        "node_id": node_id,
        "database_url": database,
        "redis_url": REDIS_URL,
        "bus_prefix": prefix,
        "log_level": "WARNING",
        "argon2_time_cost": 1,
        "argon2_memory_kib": 8,
        "argon2_parallelism": 1,
    }
    return Settings(**{**options, **overrides})


def pg_dsn(url: str = PG_URL) -> str:
    """The asyncpg DSN of a SQLAlchemy URL."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


async def create_database(prefix: str = "test", *, template: str | None = None) -> str:
    """A new PostgreSQL database named ``<prefix>_<random>``; its SQLAlchemy URL. Empty, or a
    copy of the database of the URL ``template`` (which nothing may be connected to), e.g.
    one already migrated: copying it costs a fraction of running every migration."""
    name = f"{prefix}_{uuid.uuid4().hex[:16]}"
    copy = f' TEMPLATE "{make_url(template).database}"' if template else ""
    connection = await asyncpg.connect(pg_dsn())
    try:
        await connection.execute(f'CREATE DATABASE "{name}"{copy}')
    finally:
        await connection.close()
    return make_url(PG_URL).set(database=name).render_as_string(hide_password=False)


async def drop_database(url: str) -> None:
    """Drop the database of ``url`` (made by :func:`create_database`), connections and all."""
    connection = await asyncpg.connect(pg_dsn())
    try:
        await connection.execute(f'DROP DATABASE IF EXISTS "{make_url(url).database}" WITH (FORCE)')
    finally:
        await connection.close()


def copy_sqlite_database(template: Path, path: Path) -> None:
    """Put a copy of the closed SQLite database ``template`` (one file: a cleanly closed WAL
    database has no side files) at the new ``path``, readable by its owner only, as the
    server makes its own (0600)."""
    assert not any(
        template.with_name(template.name + side).exists() for side in ("-wal", "-journal")
    )
    with (
        template.open("rb") as source,
        os.fdopen(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600), "wb") as target,
    ):
        shutil.copyfileobj(source, target)


@contextmanager
def counting_commits(engine: AsyncEngine) -> Iterator[list[int]]:
    """Counts the COMMITs ``engine`` really issues while the block runs (one item each)."""
    commits: list[int] = []

    def on_commit(_connection: Any) -> None:
        commits.append(1)

    event.listen(engine.sync_engine, "commit", on_commit)
    try:
        yield commits
    finally:
        event.remove(engine.sync_engine, "commit", on_commit)


class TcpForwarder:
    """Forwards TCP connections to a target (the database server); :meth:`cut` drops them all
    and refuses new ones until :meth:`restore`, on the same port: a database outage, without
    touching the shared server."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.port = 0
        self._server: asyncio.Server | None = None
        self._pipes: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._silenced: set[asyncio.StreamWriter] = set()
        self._flowing = asyncio.Event()
        self._flowing.set()

    @classmethod
    def to(cls, url: str) -> TcpForwarder:
        """A forwarder to the server of the SQLAlchemy URL ``url``."""
        target = make_url(url)
        return cls(target.host or "127.0.0.1", target.port or 5432)

    def url(self, url: str) -> str:
        """``url`` (a SQLAlchemy URL of the target) going through this forwarder."""
        return make_url(url).set(port=self.port).render_as_string(hide_password=False)

    async def start(self) -> None:
        """Listen (on a free port the first time)."""
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    def freeze(self) -> None:
        """Stop forwarding without closing anything (a network that silently drops traffic):
        every open connection goes silent for good, both ways (what it carries is discarded,
        no reset), and new connections are accepted but held unanswered until :meth:`thaw`."""
        self._silenced |= self._writers
        self._flowing.clear()

    def thaw(self) -> None:
        """Forward new connections again (those held meanwhile go through); the connections
        silenced by :meth:`freeze` stay silent."""
        self._flowing.set()

    async def cut(self) -> None:
        """Stop listening and abort every forwarded connection."""
        self._flowing.set()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for writer in list(self._writers):
            writer.transport.abort()
        for pipe in list(self._pipes):
            pipe.cancel()
        await asyncio.gather(*self._pipes, return_exceptions=True)
        self._writers.clear()
        self._silenced.clear()

    async def restore(self) -> None:
        """Listen again after a :meth:`cut`, on the same port."""
        await self.start()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self._flowing.wait()
        if self._server is None:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self._writers |= {writer, up_writer}
        for source, sink in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.get_running_loop().create_task(self._pipe(source, sink))
            self._pipes.add(task)
            task.add_done_callback(self._pipes.discard)

    async def _pipe(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        try:
            while data := await source.read(65536):
                if sink in self._silenced:
                    continue
                sink.write(data)
                await sink.drain()
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            sink.transport.abort()
            self._writers.discard(sink)


class FakeClock:
    """A monotonic clock in seconds that moves only when told (:meth:`advance`)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        assert seconds >= 0
        self.now += seconds


class SteppedClock:
    """Milliseconds since the epoch that move only when told (``now`` is set or advanced): a
    hub's time and wall clock at once (``App(clock=...)``), for correspondence deadlines."""

    def __init__(self, start_ms: int = 1_796_000_000_000) -> None:
        self.now = start_ms

    def __call__(self) -> int:
        return self.now


WAIT_S = 10.0
"""How long the tests' waits give a condition before failing."""

T = TypeVar("T")


async def wait_until(predicate: Callable[[], bool], timeout: float = WAIT_S) -> None:
    """Poll ``predicate`` until it holds (an event the test cannot await directly); fail the
    test after ``timeout`` seconds. The tests' polling helper for what they can read at once
    (:func:`poll` for what takes a query)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        await asyncio.sleep(0.005)  # polling: with poll, the tests' only wait by the clock


async def poll(
    probe: Callable[[], Awaitable[T]],
    done: Callable[[T], bool] = bool,
    timeout: float = WAIT_S,
    interval: float = 0.02,
) -> T:
    """Call the async ``probe`` (a database query, an HTTP request, a command) until ``done``
    holds of its answer; return that answer. Fail the test after ``timeout`` seconds, showing
    the last answer."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        answer = await probe()
        if done(answer):
            return answer
        if loop.time() > deadline:
            raise AssertionError(f"not done within {timeout}s; last answer: {answer!r:.300}")
        await asyncio.sleep(interval)  # polling, as in wait_until

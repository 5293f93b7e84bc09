"""Engine construction for PostgreSQL (asyncpg) and SQLite (aiosqlite).

Both the repository and the migrations build their engines here so that a
database behaves the same whoever opens it:

* PostgreSQL: ``pool_pre_ping`` so a connection killed by a database restart is
  replaced at checkout instead of failing the next call; a connect timeout so an
  unreachable server fails fast; an optional schema (``search_path``) so
  several stores (tests, tenants) can share one database.
* SQLite: WAL journal (readers never block the writer), foreign keys enforced,
  and SQLAlchemy emits ``BEGIN`` itself instead of the sqlite3 module's legacy
  implicit transactions. Writing transactions start with ``BEGIN IMMEDIATE`` so
  two writers queue on the busy timeout instead of deadlocking on a lock
  upgrade; read-only transactions use a plain (deferred) ``BEGIN``. The file holds
  password hashes: it is created readable by its owner only (:func:`private_sqlite_file`).
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry

__all__ = [
    "DEFAULT_URL",
    "create_engine",
    "is_unavailable",
    "private_sqlite_file",
    "sqlite_path",
    "writing",
]

#: The embedded database used when no URL is configured (relative to the working directory).
DEFAULT_URL = "sqlite+aiosqlite:///data/hub.sqlite3"

#: Execution option marking a connection whose next transaction will write.
_WRITE_OPTION = "variant_hub_write"

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def sqlite_path(url: str | URL) -> Path | None:
    """The database file of a SQLite URL, or None for other backends.

    :raises ValueError: for an in-memory SQLite database, which a pool of
        connections cannot share safely.
    """
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return None
    database = parsed.database or ""
    if database in ("", ":memory:") or "mode=memory" in str(parsed):
        raise ValueError("in-memory SQLite is not supported: use a database file")
    return Path(database)


SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")
"""What SQLite keeps beside a database file (they hold its data too)."""


def private_sqlite_file(path: Path | None, *, make_directory: bool = False) -> None:
    """Make the database file at ``path`` readable and writable by its owner only (0600),
    creating it empty if missing; its WAL and journal files (which SQLite creates with the
    database file's mode) and any left from an older start lose their group and other bits
    too. ``make_directory``: create a missing directory, 0700. Nothing happens when the
    directory does not exist (the first connection then fails, saying so).
    """
    if path is None:
        return
    if make_directory and not path.parent.exists():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not path.parent.is_dir():
        return
    # O_EXCL: a file created here never exists with a wider mode, not even for a moment.
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    for file in (path, *(path.with_name(path.name + side) for side in SQLITE_SIDE_FILES)):
        try:
            mode = file.stat().st_mode
            if mode & 0o077:
                file.chmod(mode & 0o700)
        except (FileNotFoundError, PermissionError):
            continue  # absent, or another user's (SQLite will say what it can do with it)


def create_engine(
    url: str | URL,
    *,
    schema: str | None = None,
    pool_size: int = 10,
    connect_timeout: float = 5.0,
    sqlite_busy_timeout: float = 30.0,
    sqlite_foreign_keys: bool = True,
) -> AsyncEngine:
    """An async engine for a ``postgresql+asyncpg://`` or ``sqlite+aiosqlite://`` URL.

    :param schema: PostgreSQL only: the schema to work in (becomes the
        connection's ``search_path``). Must be a plain lower-case identifier.
    :param sqlite_foreign_keys: migrations turn this off, because SQLite's
        batch migrations recreate tables and a ``DROP TABLE`` with foreign keys
        enforced would cascade into the child tables.
    :raises ValueError: for an unsupported backend, a bad schema name, or a
        schema with SQLite.
    """
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "postgresql":
        return _postgresql_engine(parsed, schema, pool_size, connect_timeout)
    if backend == "sqlite":
        if schema is not None:
            raise ValueError("schemas are a PostgreSQL feature; SQLite uses one file per store")
        private_sqlite_file(sqlite_path(parsed))  # also refuses in-memory databases
        return _sqlite_engine(parsed, pool_size, sqlite_busy_timeout, sqlite_foreign_keys)
    raise ValueError(f"unsupported database backend {backend!r}: use postgresql or sqlite")


def _postgresql_engine(
    url: URL, schema: str | None, pool_size: int, connect_timeout: float
) -> AsyncEngine:
    if url.get_driver_name() != "asyncpg":
        raise ValueError("PostgreSQL URLs must use the asyncpg driver: postgresql+asyncpg://")
    connect_args: dict[str, object] = {"timeout": connect_timeout}
    if schema is not None:
        if not _SCHEMA_NAME.fullmatch(schema):
            raise ValueError(f"invalid schema name {schema!r}")
        connect_args["server_settings"] = {"search_path": schema}
    return create_async_engine(
        url,
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_pre_ping=True,
        connect_args=connect_args,
    )


def _sqlite_engine(
    url: URL, pool_size: int, busy_timeout: float, foreign_keys: bool
) -> AsyncEngine:
    if url.get_driver_name() != "aiosqlite":
        raise ValueError("SQLite URLs must use the aiosqlite driver: sqlite+aiosqlite://")
    engine = create_async_engine(
        url,
        pool_size=pool_size,
        max_overflow=0,
        connect_args={"timeout": busy_timeout},
    )

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
        # Take over transaction control from the sqlite3 module (see module docstring).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            # FULL: the WAL is synced at every commit, so an acknowledged move
            # survives a power cut too (NORMAL would only survive a process crash).
            # Group commit (MoveWriter) makes the sync cheap per move.
            cursor.execute("PRAGMA synchronous=FULL")
            cursor.execute(f"PRAGMA foreign_keys={'ON' if foreign_keys else 'OFF'}")
        finally:
            cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(connection: Connection) -> None:
        if connection.get_execution_options().get(_WRITE_OPTION):
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            connection.exec_driver_sql("BEGIN")

    return engine


async def writing(connection: AsyncConnection) -> AsyncConnection:
    """Mark *connection* so its next transaction takes SQLite's write lock at BEGIN."""
    return await connection.execution_options(**{_WRITE_OPTION: True})


def is_unavailable(error: BaseException) -> bool:
    """Whether *error* means the database is unreachable rather than that it refused a statement.

    DB-API ``OperationalError``/``InterfaceError`` (connection lost, server
    shutting down, SQLite file locked or unopenable), PostgreSQL's "cannot connect
    now" codes (the server shutting down or starting up), invalidated connections,
    pool timeouts, and socket errors raised by the driver while connecting.
    """
    if isinstance(error, sa_exc.DBAPIError):
        return (
            error.connection_invalidated
            or isinstance(error, (sa_exc.OperationalError, sa_exc.InterfaceError))
            or _unavailable_sqlstate(getattr(error.orig, "sqlstate", None))
        )
    return isinstance(error, (OSError, TimeoutError, sa_exc.TimeoutError))


def _unavailable_sqlstate(sqlstate: object) -> bool:
    """PostgreSQL's codes for a server that cannot serve now: connection exceptions (class 08)
    and operator intervention — shutting down, starting up, crash recovery (57P01 … 57P03).
    asyncpg raises them as plain errors (``CannotConnectNowError``, ``AdminShutdownError``), not
    as the DB-API ``OperationalError`` the other drivers use."""
    return isinstance(sqlstate, str) and (
        sqlstate.startswith("08") or sqlstate in ("57P01", "57P02", "57P03")
    )

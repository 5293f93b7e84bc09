"""Fixtures for the storage tests: real PostgreSQL and SQLite databases, isolated per test.

Tests see plain values: ``backend`` ("sqlite" | "postgresql"), ``db_url``,
``db_schema`` (PostgreSQL schema or None), ``open_store`` (a factory of
stores on the test's database), ``store`` (one open store), and the
factories ``make_player`` and ``make_game``.

PostgreSQL: every test gets a fresh schema in the ``test`` database (dropped
afterwards), so tests can run next to each other and next to other suites.
SQLite: every test gets a database file in its ``tmp_path`` (migrated: a copy of the
session's migrated file, ``migrated_sqlite`` in tests/conftest.py).
Override the server with ``VARIANT_HUB_TEST_PG_URL``.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import pytest
import support
from support import PG_URL

from server.rules.time_control import Fischer, TimeControl
from server.store import Store
from server.store.engine import sqlite_path
from server.store.migrate import upgrade_to_head

BACKENDS = ("sqlite", "postgresql")
BLITZ = Fischer(180_000, 2_000)
START_FEN = "rbsgk/4p/5/P4/KGSBR[-] w 0 1"


@dataclass(frozen=True)
class Database:
    """Where one test's database lives."""

    backend: str
    url: str
    schema: str | None

    def store(self) -> Store:
        return Store.from_url(self.url, schema=self.schema)


async def _drop_schema(schema: str) -> None:
    connection = await asyncpg.connect(support.pg_dsn())
    try:
        await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await connection.close()


@pytest.fixture(params=BACKENDS)
async def empty_database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    """An empty database (no tables) on each backend."""
    if request.param == "sqlite":
        yield Database("sqlite", f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite3'}", None)
        return
    schema = f"store_test_{uuid.uuid4().hex[:16]}"
    connection = await asyncpg.connect(support.pg_dsn())
    try:
        await connection.execute(f'CREATE SCHEMA "{schema}"')
    finally:
        await connection.close()
    try:
        yield Database("postgresql", PG_URL, schema)
    finally:
        await _drop_schema(schema)


@pytest.fixture
async def database(empty_database: Database, migrated_sqlite: Path) -> Database:
    """A database migrated to the newest revision (on SQLite a copy of the session's migrated
    file, which saves running every migration for each test)."""
    path = sqlite_path(empty_database.url)
    if path is not None:
        support.copy_sqlite_database(migrated_sqlite, path)
    else:
        await upgrade_to_head(empty_database.url, schema=empty_database.schema)
    return empty_database


@pytest.fixture
async def store(database: Database) -> AsyncIterator[Store]:
    async with database.store() as opened:
        yield opened


@pytest.fixture
def backend(database: Database) -> str:
    return database.backend


@pytest.fixture
def db_url(database: Database) -> str:
    return database.url


@pytest.fixture
def db_schema(database: Database) -> str | None:
    return database.schema


@pytest.fixture
async def open_store(database: Database) -> AsyncIterator[Callable[[], Store]]:
    """Opens extra stores (separate engines and pools) on the test's database."""
    opened: list[Store] = []

    def factory() -> Store:
        opened.append(database.store())
        return opened[-1]

    yield factory
    for extra in opened:
        await extra.close()


@pytest.fixture
def make_player(store: Store) -> Callable[[str], Awaitable[int]]:
    async def create(name: str) -> int:
        return (await store.create_player(name, f"hash-of-{name}")).id

    return create


@pytest.fixture
def make_game(store: Store) -> Callable[..., Awaitable[str]]:
    """``await make_game(first_name=..., rated=..., start=True, ...)`` returns a new game's id."""

    async def create(
        *,
        first_name: str = "alice",
        second_name: str = "bob",
        first_player_id: int | None = None,
        second_player_id: int | None = None,
        variant: str = "minishogi",
        rated: bool = False,
        time_control: TimeControl = BLITZ,
        start: bool = True,
    ) -> str:
        game_id = await store.create_game(
            variant=variant,
            start_fen=START_FEN,
            time_control=time_control,
            first_name=first_name,
            second_name=second_name,
            first_player_id=first_player_id,
            second_player_id=second_player_id,
            rated=rated,
        )
        if start:
            await store.start_game(game_id)
        return game_id

    return create


@pytest.fixture
def empty_db(empty_database: Database) -> tuple[str, str, str | None]:
    """(backend, url, schema) of an empty database, for the migration tests."""
    return empty_database.backend, empty_database.url, empty_database.schema


@pytest.fixture
def pg_dsn() -> str:
    """asyncpg DSN of the test PostgreSQL server (for side connections in tests)."""
    return support.pg_dsn()


@pytest.fixture
async def pg_schema() -> AsyncIterator[str]:
    """A fresh PostgreSQL schema at the newest revision (for PostgreSQL-only tests)."""
    schema = f"store_test_{uuid.uuid4().hex[:16]}"
    try:
        await upgrade_to_head(PG_URL, schema=schema)  # creates the schema
        yield schema
    finally:
        await _drop_schema(schema)


@pytest.fixture
def pg_url() -> str:
    return PG_URL

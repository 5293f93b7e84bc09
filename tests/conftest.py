"""Suite-wide options. ``--long`` runs the long sweeps: differential tests against Fairy-Stockfish
and the bad-input fuzz runs (minutes to hours)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from support import create_database, drop_database

from server.store.migrate import upgrade_to_head

T = TypeVar("T")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--long", action="store_true", default=False, help="run the long sweeps (differential tests, fuzzing)")


@pytest.fixture(scope="session")
def long_sweep(request: pytest.FixtureRequest) -> bool:
    """True when the suite runs with ``--long``: differential tests use many more games, fuzz
    tests many more frames."""
    return bool(request.config.getoption("--long"))


@pytest.fixture
def no_automatic_collection() -> Iterator[None]:
    """The collector runs only when the test asks (memory tests inspect what it finds)."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def _run_apart(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` on an event loop of its own, in another thread: the session fixtures
    below are set up between tests, and must not touch the test thread's loop."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite database file at the newest revision, migrated once per session. Apps that
    need a fresh database get a copy (``support.copy_sqlite_database``) instead of running
    every migration again (0.1-0.2 s each, hundreds of times a run); they still run
    ``upgrade_to_head`` at start, which finds the copy at head. The migrations themselves are
    proven from an empty database by tests/store/test_store_migrations.py."""
    path = tmp_path_factory.mktemp("migrated") / "template.sqlite3"
    _run_apart(upgrade_to_head(f"sqlite+aiosqlite:///{path}"))
    return path


@pytest.fixture(scope="session")
def migrated_postgresql() -> Iterator[str]:
    """The URL of a PostgreSQL database at the newest revision, migrated once per session and
    dropped at its end: apps' fresh databases are copies of it (``create_database(...,
    template=...)``). Nothing connects to it after the migration (a template must be idle)."""
    url = _run_apart(create_database("migrated_template"))
    try:
        _run_apart(upgrade_to_head(url))
        yield url
    finally:
        _run_apart(drop_database(url))

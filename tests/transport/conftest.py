"""Fixtures for the transport tests: the real server on port 0, real websocket clients.

``start_app(backend="sqlite" | "postgresql", **settings)`` starts a whole :class:`App` (hub,
store, bus, websocket server) and stops it after the test. SQLite databases live in the test's
``tmp_path``; on PostgreSQL every app gets a fresh database (``CREATE DATABASE``), dropped after
the test. Either is a copy of the session's migrated database (``migrated_sqlite``,
``migrated_postgresql`` in tests/conftest.py). Override the server with ``VARIANT_HUB_TEST_PG_URL``. ``open_client(app)`` opens a
websocket client (closed after the test).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from ics_support import IcsClient, OpenIcs
from support import copy_sqlite_database, create_database, drop_database
from worker_support import StartWorker, WorkerProcess
from ws_support import (
    Client,
    OpenClient,
    StartApp,
    settings_for,
)

from server.app import App


@pytest.fixture
async def start_app(
    tmp_path: Path, migrated_sqlite: Path, migrated_postgresql: str
) -> AsyncIterator[StartApp]:
    apps: list[App] = []
    databases: list[str] = []

    async def start(
        backend: str = "sqlite",
        *,
        database_url: str | None = None,
        ics: bool = False,
        app_options: dict[str, Any] | None = None,
        clock: Callable[[], int] | None = None,
        **overrides: Any,
    ) -> App:
        if database_url is None:
            # A copy of the session's migrated database: the app's own migration at start
            # finds it at head (running them all would cost 0.1-0.2 s per app).
            if backend == "postgresql":
                database_url = await create_database("transport_test", template=migrated_postgresql)
                databases.append(database_url)
            else:
                path = tmp_path / f"hub{len(apps)}.sqlite3"
                copy_sqlite_database(migrated_sqlite, path)
                database_url = f"sqlite+aiosqlite:///{path}"
        overrides.setdefault("journal_dir", str(tmp_path / f"journal{len(apps)}"))
        # ics=True: the ICS listener on a free port (settings' ics_port 0 means "off").
        # clock: the test's own time (ms since the epoch) for the hub and the stored instants.
        app = App(
            settings_for(database_url, **overrides),
            ics_listen=0 if ics else None,
            clock=clock,
            **(app_options or {}),
        )
        await app.start()
        apps.append(app)
        return app

    yield start
    for app in reversed(apps):
        await app.stop()
    for url in databases:
        await drop_database(url)


@pytest.fixture
async def open_client() -> AsyncIterator[OpenClient]:
    clients: list[Client] = []

    async def open_(app: App, name: str = "", **kwargs: Any) -> Client:
        client = await Client.open(app.url, name, **kwargs)
        clients.append(client)
        return client

    yield open_
    for client in clients:
        await client.close()


@pytest.fixture
async def ics_guest() -> AsyncIterator[OpenIcs]:
    """``ics_guest(app)``: a telnet guest logged in on the app's ICS port (closed afterwards)."""
    clients: list[IcsClient] = []

    async def open_(app: App) -> IcsClient:
        client = await IcsClient.guest(app)
        clients.append(client)
        return client

    yield open_
    for client in clients:
        await client.close()


@pytest.fixture
async def start_worker(tmp_path: Path) -> AsyncIterator[StartWorker]:
    """Engine workers (``python -m server.worker``, real engines), stopped afterwards; each
    logs to ``<tmp_path>/<name>.log``."""
    workers: list[WorkerProcess] = []

    async def start(app: App, name: str = "w1", *extra: str) -> WorkerProcess:
        worker = await WorkerProcess.start(app.port, tmp_path / f"{name}.log", name, *extra)
        workers.append(worker)
        return worker

    yield start
    for worker in workers:
        await worker.stop()

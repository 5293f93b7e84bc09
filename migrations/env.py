"""Alembic environment for PostgreSQL (asyncpg) and SQLite (aiosqlite).

Two ways in:

* from :mod:`server.store.migrate`, which opens an async connection itself and
  hands its synchronous face over in ``config.attributes["connection"]``
  (``AsyncConnection.run_sync``), so migrations run inside a running event loop;
* from the ``alembic`` command line, where this file opens the async engine and
  runs the migrations through ``connection.run_sync``.

The URL comes from ``config.attributes["url"]``, ``-x url=...``,
``$HUB_DATABASE_URL`` or ``sqlalchemy.url`` in ``alembic.ini``, in that
order; ``-x schema=...`` picks a PostgreSQL schema. Every migration runs in
batch mode (``render_as_batch``) so SQLite can alter tables by recreating them.
"""

from __future__ import annotations

import asyncio
import os
from logging.config import fileConfig

from alembic import context
from sqlalchemy.engine import Connection

from server.store.engine import create_engine, writing
from server.store.metadata import metadata

config = context.config
if config.config_file_name is not None and "connection" not in config.attributes:
    fileConfig(config.config_file_name)

x_arguments = context.get_x_argument(as_dictionary=True)


def database_url() -> str:
    url = (
        config.attributes.get("url")
        or x_arguments.get("url")
        or os.environ.get("HUB_DATABASE_URL")
        or config.get_main_option("sqlalchemy.url")
    )
    if not url:
        raise RuntimeError("no database URL: pass -x url=... or set HUB_DATABASE_URL")
    return url


def run_migrations(connection: Connection) -> None:
    schema = config.attributes.get("schema") or x_arguments.get("schema")
    if schema is not None and connection.dialect.name == "postgresql":
        # The name was validated by create_engine (a plain identifier).
        connection.exec_driver_sql(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=True,
        compare_type=True,
        compare_server_default=True,
    )
    with context.begin_transaction():
        context.run_migrations()


async def run_async_migrations() -> None:
    schema = config.attributes.get("schema") or x_arguments.get("schema")
    engine = create_engine(database_url(), schema=schema, pool_size=1, sqlite_foreign_keys=False)
    try:
        async with engine.connect() as connection:
            connection = await writing(connection)
            async with connection.begin():
                await connection.run_sync(run_migrations)
    finally:
        await engine.dispose()


def run_migrations_offline() -> None:
    context.configure(
        url=database_url(),
        target_metadata=metadata,
        literal_binds=True,
        render_as_batch=True,
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
elif "connection" in config.attributes:
    run_migrations(config.attributes["connection"])
else:
    asyncio.run(run_async_migrations())

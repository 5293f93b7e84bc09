"""Apply the alembic migrations in ``migrations/`` from code or the command line.

The server upgrades its embedded SQLite database at start::

    await upgrade_to_head("sqlite+aiosqlite:///data/hub.sqlite3")

From a shell (``--url`` defaults to ``$HUB_DATABASE_URL``, then the
embedded SQLite file)::

    python -m server.store.migrate upgrade [--url URL] [--schema NAME]
    python -m server.store.migrate downgrade [--url URL] [--schema NAME]
    python -m server.store.migrate current [--url URL] [--schema NAME]

``alembic`` itself works too (``alembic upgrade head``, ``alembic revision
--autogenerate -m ...``) with the ``alembic.ini`` at the repository root.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy.engine import Connection

from server.store.engine import (
    DEFAULT_URL,
    create_engine,
    is_unavailable,
    private_sqlite_file,
    sqlite_path,
    writing,
)
from server.store.errors import StoreUnavailableError

__all__ = [
    "MIGRATIONS_DIR",
    "URL_ENVIRONMENT_VARIABLE",
    "alembic_config",
    "current_revision",
    "downgrade_to_base",
    "main",
    "upgrade_to_head",
]

#: The alembic script directory (``migrations/`` at the repository root).
MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"
URL_ENVIRONMENT_VARIABLE = "HUB_DATABASE_URL"


def alembic_config(url: str, *, schema: str | None = None) -> Config:
    """An alembic configuration for *url* that does not touch logging.

    ``migrations/env.py`` reads the URL and schema from ``config.attributes``.
    """
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["url"] = url
    config.attributes["schema"] = schema
    return config


async def upgrade_to_head(url: str = DEFAULT_URL, *, schema: str | None = None) -> None:
    """Bring the database at *url* to the newest revision.

    Creates what the database lives in when missing: a SQLite file's
    directory (0700) and file (0600), or the PostgreSQL *schema*.

    :raises StoreUnavailableError: if the database cannot be reached.
    """
    private_sqlite_file(sqlite_path(url), make_directory=True)
    await _run(url, schema, lambda config: command.upgrade(config, "head"))


async def downgrade_to_base(url: str = DEFAULT_URL, *, schema: str | None = None) -> None:
    """Undo every migration: drops all of the store's tables and their data.

    :raises StoreUnavailableError: if the database cannot be reached.
    """
    await downgrade_to("base", url, schema=schema)


async def downgrade_to(revision: str, url: str = DEFAULT_URL, *, schema: str | None = None) -> None:
    """Undo the migrations after *revision* (``"base"``: all of them).

    :raises StoreUnavailableError: if the database cannot be reached.
    """
    await _run(url, schema, lambda config: command.downgrade(config, revision))


async def current_revision(url: str = DEFAULT_URL, *, schema: str | None = None) -> str | None:
    """The revision the database is at, or None for an empty database."""
    revision: list[str | None] = []

    def read(connection: Connection) -> None:
        revision.append(MigrationContext.configure(connection).get_current_revision())

    await _on_connection(url, schema, read)
    return revision[0]


async def _run(url: str, schema: str | None, action: Callable[[Config], None]) -> None:
    def run(connection: Connection) -> None:
        config = alembic_config(url, schema=schema)
        config.attributes["connection"] = connection
        action(config)

    await _on_connection(url, schema, run)


async def _on_connection(
    url: str, schema: str | None, action: Callable[[Connection], None]
) -> None:
    # Foreign keys off on SQLite: batch migrations recreate tables (see engine.create_engine).
    engine = create_engine(url, schema=schema, pool_size=1, sqlite_foreign_keys=False)
    try:
        async with engine.connect() as connection:
            connection = await writing(connection)
            async with connection.begin():
                await connection.run_sync(action)
    except Exception as error:
        if is_unavailable(error):
            raise StoreUnavailableError(f"database unavailable: {error}") from error
        raise
    finally:
        await engine.dispose()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m server.store.migrate", description="Apply or undo database migrations."
    )
    parser.add_argument("action", choices=("upgrade", "downgrade", "current"))
    parser.add_argument(
        "--url",
        default=os.environ.get(URL_ENVIRONMENT_VARIABLE, DEFAULT_URL),
        help=f"database URL (default: ${URL_ENVIRONMENT_VARIABLE} or {DEFAULT_URL})",
    )
    parser.add_argument("--schema", default=None, help="PostgreSQL schema to work in")
    args = parser.parse_args(argv)
    try:
        if args.action == "upgrade":
            asyncio.run(upgrade_to_head(args.url, schema=args.schema))
        elif args.action == "downgrade":
            asyncio.run(downgrade_to_base(args.url, schema=args.schema))
        print(asyncio.run(current_revision(args.url, schema=args.schema)) or "base (empty)")
    except (StoreUnavailableError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

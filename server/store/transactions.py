"""What every part of the store shares: the engine and one transaction per call.

:class:`Transactions` is the base of the store's parts (``players.py``, ``ratings.py``,
``games.py``, ``queries.py``), which :class:`~server.store.repository.Store` combines.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.sql import Executable

from server.store.engine import is_unavailable, writing
from server.store.errors import StoreError, StoreUnavailableError, UnknownPlayerError
from server.store.pg_direct import PgDirect

__all__ = ["Transactions", "dialect_insert", "integrity_kind"]


def integrity_kind(error: IntegrityError) -> Literal["unique", "foreign_key", "other"]:
    """Which constraint an IntegrityError broke, from the driver's error code."""
    original = error.orig
    sqlstate = getattr(original, "sqlstate", None)  # asyncpg
    if sqlstate == "23505":
        return "unique"
    if sqlstate == "23503":
        return "foreign_key"
    name = getattr(original, "sqlite_errorname", None)  # sqlite3 (Python 3.11+)
    if name in ("SQLITE_CONSTRAINT_PRIMARYKEY", "SQLITE_CONSTRAINT_UNIQUE"):
        return "unique"
    if name == "SQLITE_CONSTRAINT_FOREIGNKEY":
        return "foreign_key"
    return "other"


def dialect_insert(dialect: str) -> Callable[..., Any]:
    """The dialect's ``INSERT`` construct, which has ``ON CONFLICT`` (PostgreSQL or SQLite)."""
    return postgresql.insert if dialect == "postgresql" else sqlite.insert


class Transactions:
    """The engine of one database and its transactions (see the module docstring)."""

    def __init__(self, engine: AsyncEngine, *, direct: PgDirect | None = None) -> None:
        self._engine = engine
        self._dialect = engine.dialect.name
        # PostgreSQL: moves, and games' creations and plain ends, skip SQLAlchemy (see
        # server.store.pg_direct).
        self._direct = direct

    @property
    def engine(self) -> AsyncEngine:
        return self._engine

    @asynccontextmanager
    async def _transaction(self, *, write: bool) -> AsyncIterator[AsyncConnection]:
        """One transaction, committed when the block ends without error.

        Connection failures (at connect, during a statement or at commit) are
        re-raised as :class:`StoreUnavailableError`; every other error passes
        through unchanged after the rollback.
        """
        try:
            async with self._engine.connect() as connection:
                if write:
                    connection = await writing(connection)
                async with connection.begin():
                    yield connection
        except StoreError:
            raise
        except Exception as error:
            if is_unavailable(error):
                raise StoreUnavailableError(f"database unavailable: {error}") from error
            raise

    async def _write_for_player(self, statement: Executable, player_id: int) -> None:
        """Run a write that refers to ``player_id`` in a transaction of its own.

        :raises UnknownPlayerError: if no player has this id.
        """
        try:
            async with self._transaction(write=True) as connection:
                await connection.execute(statement)
        except IntegrityError as error:
            if integrity_kind(error) != "foreign_key":
                raise
            raise UnknownPlayerError(f"no player with id {player_id}") from error

"""Move inserts on PostgreSQL straight through asyncpg: the hot write path.

A move is acknowledged only after its commit, so the commit path is the floor of every move's
round trip. Through SQLAlchemy's async engine one batch costs a pool checkout (with its
pre-ping), ``BEGIN``, the ``INSERT``, ``COMMIT`` and a reset on return: about 1.2 ms and
0.7 ms of CPU for a one-move batch here. asyncpg's ``executemany`` runs the same insert, all
rows or none, in one implicit transaction: about 0.4 ms and 0.15 ms of CPU (measured with
``bench/bench_store.py``-style loops on this machine; see docs/benchmarks.md); a batch of one
move goes as a plain ``execute`` of the same statement, cheaper still.

:class:`PgMoveAppender` keeps a few connections of its own (no pool: asyncpg's pool resets a
connection on every release, one more round trip). Errors keep the store's contract: a refused
row raises SQLAlchemy's :class:`~sqlalchemy.exc.IntegrityError` (so
:class:`~server.store.writer.MoveWriter` retries the batch row by row and names the bad row),
and a lost or unreachable server raises :class:`StoreUnavailableError` after dropping the
connection, so the next batch connects afresh.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import asyncpg
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import IntegrityError

from server.store.errors import StoreUnavailableError
from server.store.records import MOVE_COLUMNS, GameMove, move_row

__all__ = ["PgMoveAppender"]

INSERT_MOVES = (
    f"INSERT INTO game_moves ({', '.join(MOVE_COLUMNS)})"
    f" VALUES ({', '.join(f'${n}' for n in range(1, len(MOVE_COLUMNS) + 1))})"
)

#: What a connection that failed under us raises (asyncpg's own, and socket-level errors).
_CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    TimeoutError,
    asyncpg.InterfaceError,
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,  # shutdown, crash, "cannot connect now"
)


class PgMoveAppender:
    """Inserts batches of moves into ``game_moves`` over connections of its own.

    :param url: the store's ``postgresql+asyncpg://`` URL.
    :param schema: the schema the store works in (``search_path``), if any.
    :param connect_timeout: seconds before connecting gives up.
    """

    def __init__(
        self, url: str | URL, *, schema: str | None = None, connect_timeout: float = 5.0
    ) -> None:
        parsed = make_url(url)
        self._dsn = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
        self._settings = {"search_path": schema} if schema is not None else {}
        self._timeout = connect_timeout
        self._idle: list[asyncpg.Connection] = []

    async def append_moves(self, moves: Sequence[GameMove]) -> None:
        """Insert ``moves`` (already checked by the store) in one transaction: all or none.

        :raises sqlalchemy.exc.IntegrityError: a row was refused (duplicate ply, unknown game).
        :raises StoreUnavailableError: the database is unreachable or the connection broke;
            nothing of the batch is stored (a lost ``COMMIT`` reply is the one ambiguity, as on
            any connection: a retry then meets the stored rows as duplicates).
        """
        if not moves:
            return
        rows = [move_row(game_id, move) for game_id, move in moves]
        connection = await self._acquire()
        try:
            if len(rows) == 1:
                # The usual batch when the server is not busy: a plain execute is one Bind and
                # Execute, and costs the database about 80 µs less than executemany's pipeline
                # (bench/bench_store.py, docs/benchmarks.md "Storage").
                await connection.execute(INSERT_MOVES, *rows[0])
            else:
                await connection.executemany(INSERT_MOVES, rows)
        except asyncpg.IntegrityConstraintViolationError as error:
            self._release(connection)
            raise IntegrityError(INSERT_MOVES, None, error) from error
        except _CONNECTION_ERRORS as error:
            await _discard(connection)
            raise StoreUnavailableError(f"database unavailable: {error}") from error
        except BaseException:
            connection.terminate()  # cancelled mid-statement: its state is unknown
            raise
        self._release(connection)

    async def close(self) -> None:
        """Close the idle connections; later calls reconnect."""
        idle, self._idle = self._idle, []
        for connection in idle:
            await _discard(connection)

    async def _acquire(self) -> asyncpg.Connection:
        while self._idle:
            connection = self._idle.pop()
            if not connection.is_closed():  # the server may have ended it while it sat idle
                return connection
        try:
            return await asyncpg.connect(
                self._dsn, timeout=self._timeout, server_settings=self._settings
            )
        except (*_CONNECTION_ERRORS, asyncpg.PostgresError) as error:
            raise StoreUnavailableError(f"database unavailable: {error}") from error

    def _release(self, connection: asyncpg.Connection) -> None:
        if connection.is_closed():
            return
        self._idle.append(connection)


async def _discard(connection: asyncpg.Connection) -> None:
    try:
        await asyncio.wait_for(connection.close(), timeout=1.0)
    except Exception:  # a broken connection may fail to close politely
        connection.terminate()

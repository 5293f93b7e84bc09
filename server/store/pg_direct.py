"""The store's hot writes on PostgreSQL straight through asyncpg: moves, a game's creation
and end, and a session's resumption (a login: thousands at once when players reconnect).

A move is acknowledged only after its commit, so the commit path is the floor of every move's
round trip. Through SQLAlchemy's async engine one batch costs a pool checkout (with its
pre-ping), ``BEGIN``, the ``INSERT``, ``COMMIT`` and a reset on return: about 1.2 ms and
0.7 ms of CPU for a one-move batch here. asyncpg's ``executemany`` runs the same insert, all
rows or none, in one implicit transaction: about 0.4 ms and 0.15 ms of CPU (measured with
``bench/bench_store.py``-style loops on this machine; see docs/benchmarks.md, "Storage"); a
batch of one move goes as a plain ``execute`` of the same statement, cheaper still.

A game's creation and its end are one statement each as well, and the hub writes both for every
game: through SQLAlchemy each cost about 0.9–1.1 ms of CPU and 1.6 ms, and the creations alone
were 5–10 % of the hub's CPU at 1,000 games of some 15 plies (docs/benchmarks.md,
"Where the round trip goes outside the hub"); here each is one ``INSERT`` or ``UPDATE`` in an
implicit transaction, about 70 µs of CPU and 0.36 ms (``bench/bench_game_rows.py``, removed
since; at commit 4b4af56). Only the plain cases take this path:
the end of an unrated game, and any abort. An end that changes no row — a rated game (its
ratings change in the same transaction, which stays with SQLAlchemy), an unknown game, one
already over — is left to the caller's full path, which rates it or tells why it failed.

:class:`PgDirect` keeps a few connections of its own (no pool: asyncpg's pool resets a
connection on every release, one more round trip): as many as the move writer has flushers,
plus at most ``game_connections`` for games' rows, whose writes queue for one (a thousand
players paired at once must neither open a thousand connections nor hold up the moves).

Errors keep the store's contract: a refused row raises SQLAlchemy's
:class:`~sqlalchemy.exc.IntegrityError` (so :class:`~server.store.writer.MoveWriter` retries
the batch row by row and names the bad row, and the store maps the constraint to its own
errors), and a lost or unreachable server raises :class:`StoreUnavailableError` after dropping
the connection, so the next call connects afresh.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from typing import TypeVar

import asyncpg
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import IntegrityError

from server.rules.record import UNFINISHED_STATUSES
from server.store.errors import StoreUnavailableError
from server.store.records import MOVE_COLUMNS, GameMove, move_row
from server.store.schema import SWEPT_INDEX_WHERE

__all__ = ["PgDirect"]

_T = TypeVar("_T")

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


#: ``UNFINISHED_STATUSES`` as SQL (fixed words of ``GameStatus``, never input, so inlined).
_UNFINISHED_WORDS = ", ".join(f"'{status}'" for status in UNFINISHED_STATUSES)
UNFINISHED = f"status IN ({_UNFINISHED_WORDS})"
#: A game's end changes its row only while the game runs (``$1`` is its id).
_RUNNING = f" WHERE id = $1 AND {UNFINISHED}"
FINISH_UNRATED = (
    "UPDATE games SET status = 'finished', result = $2, termination = $3, finished_at = $4,"
    " plies = $5, final_fen = $6" + _RUNNING + " AND NOT rated"
)
ABORT = (
    "UPDATE games SET status = 'aborted', termination = $2, finished_at = $3, plies = $4,"
    " final_fen = $5" + _RUNNING
)
#: A session's resumption in one statement: its last use refreshed, and its player with every
#: rating (``$1`` the token's hash, ``$2`` now); no row, no such session. Through SQLAlchemy
#: it took two transactions (the session and player, then the ratings) and about 4 ms of the
#: hub's CPU: a reconnect storm's logins queued behind them (docs/benchmarks.md, "Reconnect
#: storm").
RESUME_SESSION = (
    # A session last used before $3 has ended: deleted, and no row (both parts of the
    # statement see the same snapshot, so the UPDATE skips it by its own condition).
    "WITH gone AS (DELETE FROM sessions WHERE token_hash = $1 AND last_seen < $3),"
    " s AS (UPDATE sessions SET last_seen = $2 WHERE token_hash = $1 AND last_seen >= $3"
    " RETURNING player_id)"
    " SELECT p.id, p.name, p.password_hash, p.created_at, p.bot,"
    " r.variant, r.speed, r.rating, r.deviation, r.volatility, r.games"
    " FROM s JOIN players p ON p.id = s.player_id"
    " LEFT JOIN ratings r ON r.player_id = p.id ORDER BY r.variant, r.speed"
)


#: The unfinished games and their players: three columns found by the ``status`` index, where
#: the store's listing (:meth:`~server.store.queries.GameQueries.list_games`) reads whole rows,
#: counts each running game's moves and looks both players' bot flags up. A cluster node lists
#: them every second or so, and a reconnect storm's logins ask a player's. The
#: correspondence games between two registered players are left out (no node holds them until
#: they are used, docs/correspondence.md "Memory"): the partial index ``ix_games_swept`` holds
#: exactly the rows listed, so the query's work does not grow with their number.
UNFINISHED_GAMES = (
    "SELECT id, first_player_id, second_player_id, speed = 'correspondence'"
    f" FROM games WHERE {SWEPT_INDEX_WHERE}"
)
#: A registered player's unfinished real-time games (``$1`` its store id), newest first, ``$2``
#: at most (its correspondence games do not take its one real-time slot).
UNFINISHED_GAMES_OF = (
    f"SELECT id FROM games WHERE {UNFINISHED} AND speed <> 'correspondence'"
    " AND (first_player_id = $1 OR second_player_id = $1)"
    " ORDER BY created_at DESC, id DESC LIMIT $2"
)


class PgDirect:
    """Writes moves and games' creations and ends over connections of its own.

    :param url: the store's ``postgresql+asyncpg://`` URL.
    :param schema: the schema the store works in (``search_path``), if any.
    :param connect_timeout: seconds before connecting gives up.
    :param game_connections: most games' writes in flight at once (the rest wait their turn).
    :param login_connections: most sessions' resumptions in flight at once (likewise).
    """

    def __init__(
        self,
        url: str | URL,
        *,
        schema: str | None = None,
        connect_timeout: float = 5.0,
        game_connections: int = 4,
        login_connections: int = 4,
    ) -> None:
        parsed = make_url(url)
        self._dsn = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
        self._settings = {"search_path": schema} if schema is not None else {}
        self._timeout = connect_timeout
        self._idle: list[asyncpg.Connection] = []
        self._login_idle: list[asyncpg.Connection] = []
        """Connections for sessions' resumptions only: their commits do not wait for the
        write-ahead log's flush (``synchronous_commit`` off). All such a commit holds is a
        session's ``last_seen``, which a database crash may set back by a fraction of a
        second; waiting for the flush made every login queue behind the disk."""
        self._health_idle: list[asyncpg.Connection] = []
        """The health check's connection (:meth:`ping`), so that it never waits behind the
        others' work."""
        self._inserts: dict[tuple[str, ...], str] = {}
        """``INSERT INTO games`` by its columns."""
        self._game_slots = asyncio.Semaphore(game_connections)
        self._login_slots = asyncio.Semaphore(login_connections)

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
        if len(rows) == 1:
            # The usual batch when the server is not busy: a plain execute is one Bind and
            # Execute, and costs the database about 80 µs less than executemany's pipeline
            # (bench/bench_store.py, docs/benchmarks.md "Storage").
            await self._run(INSERT_MOVES, lambda c: c.execute(INSERT_MOVES, *rows[0]))
        else:
            await self._run(INSERT_MOVES, lambda c: c.executemany(INSERT_MOVES, rows))

    async def insert_game(self, values: Mapping[str, object]) -> None:
        """Insert one ``games`` row of already checked ``values`` (column name → value).

        :raises sqlalchemy.exc.IntegrityError: refused (a used id, an unknown player).
        :raises StoreUnavailableError: as :meth:`append_moves`.
        """
        columns = tuple(values)
        statement = self._inserts.get(columns)
        if statement is None:
            places = ", ".join(f"${n}" for n in range(1, len(columns) + 1))
            statement = f"INSERT INTO games ({', '.join(columns)}) VALUES ({places})"
            self._inserts[columns] = statement
        await self._game_write(statement, tuple(values.values()))

    async def finish_unrated(
        self,
        game_id: str,
        result: str,
        termination: str,
        finished_at: datetime,
        plies: int | None,
        final_fen: str | None,
    ) -> bool:
        """Store the result of a running unrated game; False (nothing written) for any other
        game: a rated one, an unknown one, one already over."""
        arguments = (game_id, result, termination, finished_at, plies, final_fen)
        return await self._game_write(FINISH_UNRATED, arguments) == "UPDATE 1"

    async def abort(
        self,
        game_id: str,
        termination: str,
        finished_at: datetime,
        plies: int | None,
        final_fen: str | None,
    ) -> bool:
        """End a running game without result; False (nothing written) for an unknown game or
        one already over."""
        arguments = (game_id, termination, finished_at, plies, final_fen)
        return await self._game_write(ABORT, arguments) == "UPDATE 1"

    async def resume_session(
        self, token_hash: str, now: datetime, oldest: datetime
    ) -> list[asyncpg.Record]:
        """:data:`RESUME_SESSION`'s rows: one per rating of the session's player (one with
        null rating columns if they have none); none for an unknown token or a session last
        used before ``oldest`` (which is deleted).

        :raises StoreUnavailableError: as :meth:`append_moves`.
        """
        return await self._login_fetch(RESUME_SESSION, token_hash, now, oldest)

    async def unfinished_games(self) -> list[asyncpg.Record]:
        """:data:`UNFINISHED_GAMES`' rows, on a games' connection.

        :raises StoreUnavailableError: as :meth:`append_moves`.
        """
        async with self._game_slots:
            rows: list[asyncpg.Record] = await self._run(
                UNFINISHED_GAMES, lambda c: c.fetch(UNFINISHED_GAMES)
            )
            return rows

    async def unfinished_games_of(self, player_id: int, limit: int) -> list[str]:
        """:data:`UNFINISHED_GAMES_OF`' ids, on a login connection (a login asks it).

        :raises StoreUnavailableError: as :meth:`append_moves`.
        """
        return [row[0] for row in await self._login_fetch(UNFINISHED_GAMES_OF, player_id, limit)]

    async def _login_fetch(self, statement: str, *arguments: object) -> list[asyncpg.Record]:
        """A query of a login's, once one of the ``login_connections`` is free."""
        async with self._login_slots:
            rows: list[asyncpg.Record] = await self._run(
                statement, lambda c: c.fetch(statement, *arguments), self._login_idle
            )
            return rows

    async def _game_write(self, statement: str, arguments: tuple[object, ...]) -> str:
        """Run a game row's statement once one of the ``game_connections`` is free; returns
        its status (``"UPDATE 1"`` …)."""
        async with self._game_slots:
            return await self._run(statement, lambda c: c.execute(statement, *arguments))

    async def _run(
        self,
        statement: str,
        call: Callable[[asyncpg.Connection], Awaitable[_T]],
        idle: list[asyncpg.Connection] | None = None,
    ) -> _T:
        """``call`` on a connection of our own (from ``idle``, the login connections, or the
        others), with the store's errors (module docstring)."""
        if idle is None:
            idle = self._idle
        connection = await self._acquire(idle)
        try:
            outcome = await call(connection)
        except asyncpg.IntegrityConstraintViolationError as error:
            self._release(connection, idle)
            raise IntegrityError(statement, None, error) from error
        except _CONNECTION_ERRORS as error:
            await _discard(connection)
            raise StoreUnavailableError(f"database unavailable: {error}") from error
        except BaseException:
            connection.terminate()  # cancelled mid-statement: its state is unknown
            raise
        self._release(connection, idle)
        return outcome

    async def ping(self) -> None:
        """``SELECT 1`` on the health check's own connection. Through the pool, a ping queued
        behind a reconnect storm's logins timed out, HAProxy took the hub that was serving them
        for down and cut all its connections (docs/benchmarks.md, "The cluster storm after a kill").

        :raises StoreUnavailableError: the database is unreachable.
        """
        await self._run("SELECT 1", lambda c: c.fetchval("SELECT 1"), self._health_idle)

    async def close(self) -> None:
        """Close the idle connections; later calls reconnect."""
        idle, self._idle = self._idle, []
        idle += self._login_idle + self._health_idle
        self._login_idle = []
        self._health_idle = []
        for connection in idle:
            await _discard(connection)

    async def _acquire(self, idle: list[asyncpg.Connection]) -> asyncpg.Connection:
        while idle:
            connection = idle.pop()
            if not connection.is_closed():  # the server may have ended it while it sat idle
                return connection
        settings = self._settings
        if idle is self._login_idle:
            settings = {**settings, "synchronous_commit": "off"}
        try:
            return await asyncpg.connect(self._dsn, timeout=self._timeout, server_settings=settings)
        except (*_CONNECTION_ERRORS, asyncpg.PostgresError) as error:
            raise StoreUnavailableError(f"database unavailable: {error}") from error

    def _release(self, connection: asyncpg.Connection, idle: list[asyncpg.Connection]) -> None:
        if connection.is_closed():
            return
        idle.append(connection)


async def _discard(connection: asyncpg.Connection) -> None:
    try:
        await asyncio.wait_for(connection.close(), timeout=1.0)
    except Exception:  # a broken connection may fail to close politely
        connection.terminate()

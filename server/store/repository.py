"""The repository: every read and write the server does on its database.

>>> store = Store.from_url("postgresql+asyncpg://postgres@127.0.0.1/hub")  # doctest: +SKIP
>>> game_id = await store.create_game(variant="minishogi", ...)           # doctest: +SKIP

All methods are coroutines and each runs in one transaction of its own. A
database that cannot be reached raises :class:`StoreUnavailableError`; nothing
is ever dropped silently.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import secrets
import string
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any, Literal, NoReturn, Self, cast

from sqlalchemy import Row, and_, delete, insert, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.sql.elements import ColumnElement

from server.hub.glicko2 import SPEEDS, Rating, Speed, rate_game, speed_class
from server.rules.record import (
    GameInfo,
    GamePage,
    GameRecord,
    GameStatus,
    MoveRecord,
    ResultCode,
    TimeControl,
)
from server.store.engine import DEFAULT_URL, create_engine, is_unavailable, writing
from server.store.errors import (
    DuplicateMoveError,
    GameStateError,
    NameTakenError,
    StoreError,
    StoreUnavailableError,
    UnknownGameError,
    UnknownPlayerError,
)
from server.store.pg_moves import PgMoveAppender
from server.store.records import (
    FIRST_PLAYER_SCORE,
    MOVE_COLUMNS,
    GameMove,
    Player,
    PlayerRating,
    RatingUpdate,
    check_game_id,
    check_move,
    check_result,
    check_text,
    move_row,
    utc_now,
)
from server.store.schema import (
    GAME_ID_LENGTH,
    NAME_LENGTH,
    PASSWORD_HASH_LENGTH,
    TERMINATION_LENGTH,
    VARIANT_LENGTH,
    game_moves,
    games,
    players,
    ratings,
    sessions,
)

__all__ = ["Store", "new_game_id"]

_GAME_ID_ALPHABET = string.digits + string.ascii_letters
_ACTIVE: tuple[GameStatus, ...] = ("created", "started")
_MAX_PAGE = 500
_ID_ATTEMPTS = 5


def new_game_id() -> str:
    """A random game id: 8 characters from ``[0-9A-Za-z]``."""
    return "".join(secrets.choice(_GAME_ID_ALPHABET) for _ in range(GAME_ID_LENGTH))


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _integrity_kind(error: IntegrityError) -> Literal["unique", "foreign_key", "other"]:
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


class Store:
    """Players, login sessions, ratings, games and moves in one database.

    Build it with :meth:`from_url` (or around an existing engine) and
    :meth:`close` it when done; it is also an async context manager. The
    schema must exist: see :mod:`server.store.migrate`.
    """

    def __init__(self, engine: AsyncEngine, *, moves: PgMoveAppender | None = None) -> None:
        self._engine = engine
        self._dialect = engine.dialect.name
        # PostgreSQL: batches of moves skip SQLAlchemy (see server.store.pg_moves).
        self._moves = moves

    @classmethod
    def from_url(
        cls,
        url: str = DEFAULT_URL,
        *,
        schema: str | None = None,
        pool_size: int = 10,
        connect_timeout: float = 5.0,
        sqlite_busy_timeout: float = 30.0,
    ) -> Store:
        """A store on ``postgresql+asyncpg://...`` or ``sqlite+aiosqlite:///file``.

        See :func:`server.store.engine.create_engine` for the parameters.
        Connecting is lazy: an unreachable database shows at the first call.
        """
        engine = create_engine(
            url,
            schema=schema,
            pool_size=pool_size,
            connect_timeout=connect_timeout,
            sqlite_busy_timeout=sqlite_busy_timeout,
        )
        moves = None
        if engine.dialect.name == "postgresql":
            moves = PgMoveAppender(url, schema=schema, connect_timeout=connect_timeout)
        return cls(engine, moves=moves)

    @property
    def engine(self) -> AsyncEngine:
        return self._engine

    async def close(self) -> None:
        """Close all pooled connections."""
        if self._moves is not None:
            await self._moves.close()
        await self._engine.dispose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

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

    async def ping(self) -> None:
        """Round-trip to the database.

        :raises StoreUnavailableError: if it cannot be reached.
        """
        async with self._transaction(write=False) as connection:
            await connection.execute(select(1))

    # --- players ------------------------------------------------------------------------------

    async def create_player(self, name: str, password_hash: str) -> Player:
        """Register a player.

        :raises NameTakenError: if the name exists in any letter case.
        :raises ValueError: for an empty or over-long name or hash.
        """
        check_text("name", name, NAME_LENGTH)
        check_text("password hash", password_hash, PASSWORD_HASH_LENGTH)
        # Lower-casing may lengthen a name ("İ" becomes two code points).
        check_text("lower-case name", name.lower(), NAME_LENGTH)
        now = utc_now()
        statement = (
            insert(players)
            .values(name=name, name_key=name.lower(), password_hash=password_hash, created_at=now)
            .returning(players.c.id)
        )
        try:
            async with self._transaction(write=True) as connection:
                player_id = (await connection.execute(statement)).scalar_one()
        except IntegrityError as error:
            if _integrity_kind(error) != "unique":
                raise
            raise NameTakenError(name) from error
        return Player(id=player_id, name=name, password_hash=password_hash, created_at=now)

    async def player_by_name(self, name: str) -> Player | None:
        """The player with this name, compared case-insensitively."""
        return await self._player_where(players.c.name_key == name.lower())

    async def player_by_id(self, player_id: int) -> Player | None:
        return await self._player_where(players.c.id == player_id)

    async def _player_where(self, condition: ColumnElement[bool]) -> Player | None:
        async with self._transaction(write=False) as connection:
            row = (await connection.execute(select(players).where(condition))).one_or_none()
        return None if row is None else _player(row)

    # --- sessions -----------------------------------------------------------------------------

    async def create_session(self, player_id: int) -> str:
        """A new login token for the player (only its hash is stored).

        :raises UnknownPlayerError: if no player has this id.
        """
        token = secrets.token_urlsafe(32)
        now = utc_now()
        statement = insert(sessions).values(
            token_hash=_token_hash(token), player_id=player_id, created_at=now, last_seen=now
        )
        try:
            async with self._transaction(write=True) as connection:
                await connection.execute(statement)
        except IntegrityError as error:
            if _integrity_kind(error) != "foreign_key":
                raise
            raise UnknownPlayerError(f"no player with id {player_id}") from error
        return token

    async def session_player(
        self, token: str, *, max_idle: timedelta | None = None
    ) -> Player | None:
        """The player a token logs in, or None; refreshes the session's ``last_seen``.

        With *max_idle*, a session unused for longer is deleted and None returned.
        """
        key = _token_hash(token)
        now = utc_now()
        async with self._transaction(write=True) as connection:
            if max_idle is not None:
                await connection.execute(
                    delete(sessions).where(
                        sessions.c.token_hash == key, sessions.c.last_seen < now - max_idle
                    )
                )
            player_id = (
                await connection.execute(
                    update(sessions)
                    .where(sessions.c.token_hash == key)
                    .values(last_seen=now)
                    .returning(sessions.c.player_id)
                )
            ).scalar_one_or_none()
            if player_id is None:
                return None
            row = (await connection.execute(select(players).where(players.c.id == player_id))).one()
        return _player(row)

    async def delete_session(self, token: str) -> bool:
        """Log a token out. Returns whether it existed."""
        async with self._transaction(write=True) as connection:
            result = await connection.execute(
                delete(sessions).where(sessions.c.token_hash == _token_hash(token))
            )
        return cast(int, result.rowcount) > 0

    async def delete_player_sessions(self, player_id: int) -> int:
        """Log a player out everywhere. Returns how many sessions ended."""
        async with self._transaction(write=True) as connection:
            result = await connection.execute(
                delete(sessions).where(sessions.c.player_id == player_id)
            )
        return cast(int, result.rowcount)

    # --- ratings ------------------------------------------------------------------------------

    async def get_rating(self, player_id: int, variant: str, speed: Speed) -> PlayerRating:
        """The player's rating in one pool; the default rating if they have never played in it."""
        found = await self.get_ratings([player_id], variant, speed)
        return found[player_id]

    async def get_ratings(
        self, player_ids: Iterable[int], variant: str, speed: Speed
    ) -> dict[int, PlayerRating]:
        """Ratings of several players in one pool (for a seek list), defaults included."""
        _check_speed(speed)
        wanted = set(player_ids)
        result = {
            player_id: PlayerRating(player_id, variant, speed, Rating(), 0) for player_id in wanted
        }
        if not wanted:
            return result
        async with self._transaction(write=False) as connection:
            rows = await connection.execute(
                select(ratings).where(
                    ratings.c.player_id.in_(wanted),
                    ratings.c.variant == variant,
                    ratings.c.speed == speed,
                )
            )
            for row in rows:
                result[row.player_id] = _player_rating(row)
        return result

    async def player_ratings(self, player_id: int) -> list[PlayerRating]:
        """All pools a player has a stored rating in, by variant then speed."""
        async with self._transaction(write=False) as connection:
            rows = await connection.execute(
                select(ratings)
                .where(ratings.c.player_id == player_id)
                .order_by(ratings.c.variant, ratings.c.speed)
            )
            return [_player_rating(row) for row in rows]

    async def set_rating(self, rating: PlayerRating) -> None:
        """Store a rating (insert or replace), e.g. for an administrator's correction.

        :raises UnknownPlayerError: if no player has this id.
        """
        _check_speed(rating.speed)
        check_text("variant", rating.variant, VARIANT_LENGTH)
        values = {
            "player_id": rating.player_id,
            "variant": rating.variant,
            "speed": rating.speed,
            "rating": rating.rating.rating,
            "deviation": rating.rating.deviation,
            "volatility": rating.rating.volatility,
            "games": rating.games,
        }
        dialect_insert = postgresql.insert if self._dialect == "postgresql" else sqlite.insert
        statement = dialect_insert(ratings).values(values)
        statement = statement.on_conflict_do_update(
            index_elements=[ratings.c.player_id, ratings.c.variant, ratings.c.speed],
            set_={
                key: statement.excluded[key]
                for key in ("rating", "deviation", "volatility", "games")
            },
        )
        try:
            async with self._transaction(write=True) as connection:
                await connection.execute(statement)
        except IntegrityError as error:
            if _integrity_kind(error) != "foreign_key":
                raise
            raise UnknownPlayerError(f"no player with id {rating.player_id}") from error

    # --- games --------------------------------------------------------------------------------

    async def create_game(
        self,
        *,
        variant: str,
        start_fen: str,
        time_control: TimeControl,
        first_name: str,
        second_name: str,
        first_player_id: int | None = None,
        second_player_id: int | None = None,
        rated: bool = False,
        game_id: str | None = None,
        started: bool = False,
    ) -> str:
        """Store a new game (status ``created``) and return its id.

        A random id is drawn unless *game_id* is given. Guests have no player
        id; only games between two different registered players can be rated.
        With *started* the game is stored already started (as :meth:`start_game`
        would mark it), in the same transaction: one commit instead of two.

        :raises ValueError: for malformed arguments or a rated game with a guest.
        :raises UnknownPlayerError: if a player id does not exist.
        :raises GameStateError: if the given *game_id* is already used.
        """
        check_text("variant", variant, VARIANT_LENGTH)
        check_text("start position", start_fen, 10_000)
        check_text("first player's name", first_name, NAME_LENGTH)
        check_text("second player's name", second_name, NAME_LENGTH)
        if not isinstance(time_control, TimeControl):
            raise ValueError("time_control must be a TimeControl")
        if rated and (first_player_id is None or second_player_id is None):
            raise ValueError("a rated game needs two registered players")
        if rated and first_player_id == second_player_id:
            raise ValueError("a player cannot play a rated game against themselves")
        if game_id is not None:
            check_game_id(game_id)
        values: dict[str, Any] = {
            "variant": variant,
            "start_fen": start_fen,
            "speed": speed_class(
                time_control.base_ms,
                time_control.increment_ms,
                time_control.byoyomi_ms,
                time_control.periods,
            ),
            "first_player_id": first_player_id,
            "second_player_id": second_player_id,
            "first_name": first_name,
            "second_name": second_name,
            "clock_kind": time_control.kind,
            "base_ms": time_control.base_ms,
            "increment_ms": time_control.increment_ms,
            "byoyomi_ms": time_control.byoyomi_ms,
            "periods": time_control.periods,
            "rated": rated,
            "status": "created",
            "created_at": utc_now(),
        }
        if started:
            values["status"] = "started"
            values["started_at"] = values["created_at"]
        for _ in range(_ID_ATTEMPTS):
            values["id"] = game_id or new_game_id()
            try:
                async with self._transaction(write=True) as connection:
                    await connection.execute(insert(games).values(values))
                return cast(str, values["id"])
            except IntegrityError as error:
                kind = _integrity_kind(error)
                if kind == "foreign_key":
                    raise UnknownPlayerError("a player id of this game does not exist") from error
                if kind != "unique":
                    raise
                if game_id is not None:
                    raise GameStateError(game_id, "already stored", "create") from error
                # A random id collided: draw another.
        raise StoreError(f"no free game id after {_ID_ATTEMPTS} random draws")

    async def start_game(self, game_id: str) -> None:
        """Mark a created game as started (now).

        :raises UnknownGameError: if there is no such game.
        :raises GameStateError: unless the game is ``created``.
        """
        check_game_id(game_id)
        async with self._transaction(write=True) as connection:
            result = await connection.execute(
                update(games)
                .where(games.c.id == game_id, games.c.status == "created")
                .values(status="started", started_at=utc_now())
            )
            if result.rowcount == 0:
                await _raise_not_changeable(connection, game_id, "start")

    async def abort_game(
        self,
        game_id: str,
        termination: str = "abort",
        *,
        plies: int | None = None,
        final_fen: str | None = None,
    ) -> None:
        """End a game without result (and without rating changes).

        :raises UnknownGameError: if there is no such game.
        :raises GameStateError: if the game is already finished or aborted.
        """
        check_game_id(game_id)
        check_text("termination", termination, TERMINATION_LENGTH)
        _check_final(plies, final_fen)
        async with self._transaction(write=True) as connection:
            result = await connection.execute(
                update(games)
                .where(games.c.id == game_id, games.c.status.in_(_ACTIVE))
                .values(
                    status="aborted",
                    termination=termination,
                    finished_at=utc_now(),
                    plies=plies,
                    final_fen=final_fen,
                )
            )
            if result.rowcount == 0:
                await _raise_not_changeable(connection, game_id, "abort")

    async def finish_game(
        self,
        game_id: str,
        result: ResultCode,
        termination: str,
        *,
        plies: int | None = None,
        final_fen: str | None = None,
    ) -> RatingUpdate | None:
        """Store a game's result and, for a rated game, both players' new ratings.

        The result, the rating updates and the rating snapshots on the game are
        one transaction: either all are stored or none. Rating rows are locked
        in player-id order, so concurrent finishes of games sharing a player
        neither lose an update nor deadlock.

        :param plies: number of moves played, for listings.
        :param final_fen: the final position, for listings.
        :returns: the rating changes of a rated game, None otherwise.
        :raises ValueError: for a malformed result or termination.
        :raises UnknownGameError: if there is no such game.
        :raises GameStateError: if the game is already finished or aborted.
        """
        check_game_id(game_id)
        code = check_result(result)
        check_text("termination", termination, TERMINATION_LENGTH)
        _check_final(plies, final_fen)
        async with self._transaction(write=True) as connection:
            row = (
                await connection.execute(
                    update(games)
                    .where(games.c.id == game_id, games.c.status.in_(_ACTIVE))
                    .values(
                        status="finished",
                        result=code,
                        termination=termination,
                        finished_at=utc_now(),
                        plies=plies,
                        final_fen=final_fen,
                    )
                    .returning(
                        games.c.rated,
                        games.c.variant,
                        games.c.speed,
                        games.c.first_player_id,
                        games.c.second_player_id,
                    )
                )
            ).one_or_none()
            if row is None:
                await _raise_not_changeable(connection, game_id, "finish")
            first_id, second_id = row.first_player_id, row.second_player_id
            if not row.rated or first_id is None or second_id is None:
                return None
            change = await self._rate(
                connection, row.variant, row.speed, first_id, second_id, FIRST_PLAYER_SCORE[code]
            )
            await connection.execute(
                update(games)
                .where(games.c.id == game_id)
                .values(
                    first_rating_before=round(change.first_before.rating),
                    first_rating_after=round(change.first_after.rating),
                    second_rating_before=round(change.second_before.rating),
                    second_rating_after=round(change.second_after.rating),
                )
            )
            return change

    async def _rate(
        self,
        connection: AsyncConnection,
        variant: str,
        speed: str,
        first_id: int,
        second_id: int,
        first_score: float,
    ) -> RatingUpdate:
        """Apply one rated game to both rating rows, inside the caller's transaction."""
        default = Rating()
        dialect_insert = postgresql.insert if self._dialect == "postgresql" else sqlite.insert
        await connection.execute(
            dialect_insert(ratings)
            .values(
                [
                    {
                        "player_id": player_id,
                        "variant": variant,
                        "speed": speed,
                        "rating": default.rating,
                        "deviation": default.deviation,
                        "volatility": default.volatility,
                        "games": 0,
                    }
                    for player_id in sorted((first_id, second_id))
                ]
            )
            .on_conflict_do_nothing()
        )
        rows = await connection.execute(
            select(ratings)
            .where(
                ratings.c.player_id.in_((first_id, second_id)),
                ratings.c.variant == variant,
                ratings.c.speed == speed,
            )
            .order_by(ratings.c.player_id)
            .with_for_update()
        )
        before = {row.player_id: _player_rating(row) for row in rows}
        first, second = before[first_id], before[second_id]
        first_after, second_after = rate_game(first.rating, second.rating, first_score)
        for old, new in ((first, first_after), (second, second_after)):
            await connection.execute(
                update(ratings)
                .where(
                    ratings.c.player_id == old.player_id,
                    ratings.c.variant == variant,
                    ratings.c.speed == speed,
                )
                .values(
                    rating=new.rating,
                    deviation=new.deviation,
                    volatility=new.volatility,
                    games=ratings.c.games + 1,
                )
            )
        return RatingUpdate(first.rating, first_after, second.rating, second_after)

    # --- moves --------------------------------------------------------------------------------

    async def append_move(self, game_id: str, move: MoveRecord) -> None:
        """Persist one move of game ``game_id``; returns after it is committed.

        The store checks the move's shape, not its legality nor the game's
        status: the hub is the authority on both. A move without ``played_at``
        is stored as played now.

        :raises DuplicateMoveError: if the game already has a move at this ply.
        :raises UnknownGameError: if there is no such game.
        """
        check_move(game_id, move)
        try:
            async with self._transaction(write=True) as connection:
                await connection.execute(insert(game_moves), [_move_values(game_id, move)])
        except IntegrityError as error:
            kind = _integrity_kind(error)
            if kind == "unique":
                raise DuplicateMoveError(game_id, move.ply) from error
            if kind == "foreign_key":
                raise UnknownGameError(game_id) from error
            raise

    async def append_moves(self, moves: Sequence[GameMove]) -> None:
        """Persist several ``(game id, move)`` in one transaction (one executemany): all or none.

        :raises sqlalchemy.exc.IntegrityError: if any row is refused (a
            duplicate ply, an unknown game); the caller cannot tell which row,
            so :class:`~server.store.writer.MoveWriter` retries row by row.
        """
        for game_id, move in moves:
            check_move(game_id, move)
        if not moves:
            return
        if self._moves is not None:
            await self._moves.append_moves(moves)
            return
        async with self._transaction(write=True) as connection:
            await connection.execute(insert(game_moves), [_move_values(*m) for m in moves])

    async def retract_moves(self, game_id: str, from_ply: int) -> int:
        """Delete the moves at ``from_ply`` and after (a takeback). Returns how many went."""
        check_game_id(game_id)
        if not isinstance(from_ply, int) or from_ply < 1:
            raise ValueError(f"from_ply must be an integer >= 1, got {from_ply!r}")
        async with self._transaction(write=True) as connection:
            result = await connection.execute(
                delete(game_moves).where(
                    game_moves.c.game_id == game_id, game_moves.c.ply >= from_ply
                )
            )
        return cast(int, result.rowcount)

    # --- reading games ------------------------------------------------------------------------

    async def get_game(self, game_id: str) -> GameRecord | None:
        """A game with its moves, or None."""
        check_game_id(game_id)
        async with self._transaction(write=False) as connection:
            row = (
                await connection.execute(select(games).where(games.c.id == game_id))
            ).one_or_none()
            if row is None:
                return None
            move_rows = await connection.execute(
                select(game_moves).where(game_moves.c.game_id == game_id).order_by(game_moves.c.ply)
            )
            moves = tuple(_stored_move(move) for move in move_rows)
        return GameRecord(**_game_fields(row), moves=moves)

    async def load_unfinished_games(self) -> list[GameRecord]:
        """Games still ``created`` or ``started``, oldest first, with moves and clock state.

        For restart recovery: see :func:`server.store.records.clock_state`.
        """
        active = games.c.status.in_(_ACTIVE)
        async with self._transaction(write=False) as connection:
            game_rows = (
                await connection.execute(
                    select(games).where(active).order_by(games.c.created_at, games.c.id)
                )
            ).all()
            move_rows = await connection.execute(
                select(game_moves)
                .join(games, games.c.id == game_moves.c.game_id)
                .where(active)
                .order_by(game_moves.c.game_id, game_moves.c.ply)
            )
            moves: dict[str, list[MoveRecord]] = {}
            for move in move_rows:
                moves.setdefault(move.game_id, []).append(_stored_move(move))
        return [
            GameRecord(**_game_fields(row), moves=tuple(moves.get(row.id, ()))) for row in game_rows
        ]

    async def list_games(
        self,
        *,
        player_id: int | None = None,
        player_name: str | None = None,
        variant: str | None = None,
        result: ResultCode | None = None,
        status: GameStatus | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> GamePage:
        """Games newest first (by creation time), filtered, one page at a time.

        :param player_id: games of this registered player, on either side.
        :param player_name: games of a player by name (guests included), on either side.
        :param since: created at or after (aware datetime).
        :param until: created before (aware datetime).
        :param limit: page size, 1 to 500.
        :param cursor: ``next_cursor`` of the previous page.
        :raises ValueError: for a bad limit, result, naive datetime or cursor.
        """
        if not 1 <= limit <= _MAX_PAGE:
            raise ValueError(f"limit must be between 1 and {_MAX_PAGE}, got {limit}")
        conditions: list[ColumnElement[bool]] = []
        if player_id is not None:
            conditions.append(
                or_(games.c.first_player_id == player_id, games.c.second_player_id == player_id)
            )
        if player_name is not None:
            conditions.append(
                or_(games.c.first_name == player_name, games.c.second_name == player_name)
            )
        if variant is not None:
            conditions.append(games.c.variant == variant)
        if result is not None:
            conditions.append(games.c.result == check_result(result))
        if status is not None:
            if status not in ("created", "started", "finished", "aborted"):
                raise ValueError(f"unknown game status {status!r}")
            conditions.append(games.c.status == status)
        if since is not None:
            conditions.append(games.c.created_at >= _aware(since))
        if until is not None:
            conditions.append(games.c.created_at < _aware(until))
        if cursor is not None:
            after_created, after_id = _decode_cursor(cursor)
            conditions.append(
                or_(
                    games.c.created_at < after_created,
                    and_(games.c.created_at == after_created, games.c.id < after_id),
                )
            )
        statement = (
            select(games)
            .where(*conditions)
            .order_by(games.c.created_at.desc(), games.c.id.desc())
            .limit(limit + 1)
        )
        async with self._transaction(write=False) as connection:
            rows = (await connection.execute(statement)).all()
        page = [GameInfo(**_game_fields(row)) for row in rows[:limit]]
        next_cursor = _encode_cursor(page[-1]) if len(rows) > limit else None
        return GamePage(page, next_cursor)


# --- helpers ------------------------------------------------------------------------------------


async def _raise_not_changeable(connection: AsyncConnection, game_id: str, action: str) -> NoReturn:
    status = (
        await connection.execute(select(games.c.status).where(games.c.id == game_id))
    ).scalar_one_or_none()
    if status is None:
        raise UnknownGameError(game_id)
    raise GameStateError(game_id, status, action)


def _check_final(plies: int | None, final_fen: str | None) -> None:
    if plies is not None and (not isinstance(plies, int) or plies < 0):
        raise ValueError(f"plies must be an integer >= 0, got {plies!r}")
    if final_fen is not None:
        check_text("final position", final_fen, 10_000)


def _check_speed(speed: str) -> None:
    if speed not in SPEEDS:
        raise ValueError(f"speed must be one of {', '.join(SPEEDS)}, got {speed!r}")


def _aware(moment: datetime) -> datetime:
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"naive datetime {moment!r}: pass an aware datetime")
    return moment


def _encode_cursor(game: GameInfo) -> str:
    raw = f"{game.created_at.isoformat()}|{game.id}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        created, game_id = raw.split("|")
        moment = datetime.fromisoformat(created)
        check_game_id(game_id)
        # In UTC, as the query compares; a forged offset at the edge of the calendar overflows.
        return _aware(moment).astimezone(UTC), game_id
    except (ValueError, OverflowError, binascii.Error, UnicodeDecodeError) as error:
        raise ValueError(f"invalid cursor {cursor!r}") from error


def _player(row: Row[Any]) -> Player:
    return Player(
        id=row.id, name=row.name, password_hash=row.password_hash, created_at=row.created_at
    )


def _player_rating(row: Row[Any]) -> PlayerRating:
    return PlayerRating(
        player_id=row.player_id,
        variant=row.variant,
        speed=row.speed,
        rating=Rating(row.rating, row.deviation, row.volatility),
        games=row.games,
    )


def _move_values(game_id: str, move: MoveRecord) -> dict[str, Any]:
    return dict(zip(MOVE_COLUMNS, move_row(game_id, move), strict=True))


def _stored_move(row: Row[Any]) -> MoveRecord:
    return MoveRecord(
        row.ply,
        row.uci,
        row.display,
        row.clock_ms,
        row.spent_ms,
        row.periods_left,
        row.created_at,
    )


def _game_fields(row: Row[Any]) -> dict[str, Any]:
    return {
        "id": row.id,
        "variant": row.variant,
        "start_fen": row.start_fen,
        "speed": row.speed,
        "time_control": TimeControl(
            kind=row.clock_kind,
            base_ms=row.base_ms,
            increment_ms=row.increment_ms,
            byoyomi_ms=row.byoyomi_ms,
            periods=row.periods,
        ),
        "rated": bool(row.rated),
        "status": row.status,
        "result": row.result,
        "termination": row.termination,
        "plies": row.plies,
        "final_fen": row.final_fen,
        "first_player_id": row.first_player_id,
        "second_player_id": row.second_player_id,
        "first_name": row.first_name,
        "second_name": row.second_name,
        "created_at": row.created_at,
        "started_at": row.started_at,
        "finished_at": row.finished_at,
        "first_rating_before": row.first_rating_before,
        "first_rating_after": row.first_rating_after,
        "second_rating_before": row.second_rating_before,
        "second_rating_after": row.second_rating_after,
    }

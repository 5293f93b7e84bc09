"""The store's reads of games: one game with its moves, the unfinished ones, listings."""

from __future__ import annotations

import base64
import binascii
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Row, and_, case, func, literal, or_, select, text, union_all
from sqlalchemy.sql.elements import ColumnElement

from server.hub.identity import COMPUTER
from server.rules.fen import empty_hand_spelled
from server.rules.record import (
    GAME_STATUSES,
    UNFINISHED_STATUSES,
    GameInfo,
    GamePage,
    GameRecord,
    GameStatus,
    MoveRecord,
    ResultCode,
    UnfinishedGame,
)
from server.store.records import check_game_id, check_result, control_of_columns
from server.store.schema import SWEPT_INDEX_WHERE, ColumnValues, game_moves, games, players
from server.store.transactions import Transactions

__all__ = ["GameQueries"]

_MAX_PAGE = 500


class GameQueries(Transactions):
    """Games read back as the shared :mod:`server.rules.record` records."""

    async def get_game(self, game_id: str) -> GameRecord | None:
        """A game with its moves, or None."""
        check_game_id(game_id)
        async with self._transaction(write=False) as connection:
            row = (
                await connection.execute(
                    select(games, *_bot_columns()).where(games.c.id == game_id)
                )
            ).one_or_none()
            if row is None:
                return None
            move_rows = await connection.execute(
                select(game_moves).where(game_moves.c.game_id == game_id).order_by(game_moves.c.ply)
            )
            moves = tuple(_stored_move(move) for move in move_rows)
        return GameRecord(**_game_fields(row), moves=moves)

    async def load_unfinished_games(self, *, correspondence: bool = True) -> list[GameRecord]:
        """The unfinished games (``UNFINISHED_STATUSES``), oldest first, with their moves (each
        with its clock) and the players' bot flags (read in the same query), for restart
        recovery (``Lifecycle.restore`` in server.hub.room_lifecycle).

        :param correspondence: include the correspondence games between two registered
            players (without them: a hub loads such a game when it is used, see
            docs/correspondence.md "Memory"; those of the computer, a guest or a bot account
            are included either way)."""
        active: ColumnElement[bool] = games.c.status.in_(UNFINISHED_STATUSES)
        if not correspondence:
            active = and_(active, _kept_in_memory())
        async with self._transaction(write=False) as connection:
            game_rows = (
                await connection.execute(
                    select(games, *_bot_columns())
                    .where(active)
                    .order_by(games.c.created_at, games.c.id)
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

    async def unfinished_games(self) -> list[UnfinishedGame]:
        """Every unfinished game's id and registered players, in no order, but the
        correspondence games between two registered players (no node holds them until they
        are used, docs/correspondence.md "Memory"): one light query (on PostgreSQL straight
        through asyncpg), found by the partial index ``ix_games_swept`` (its rows are exactly
        these), for the cluster's sweep, which lists them every second or so
        (``server.cluster.ownership``)."""
        if self._direct is not None:
            return [UnfinishedGame(*row) for row in await self._direct.unfinished_games()]
        statement = select(
            games.c.id,
            games.c.first_player_id,
            games.c.second_player_id,
            games.c.speed == "correspondence",
        ).where(text(SWEPT_INDEX_WHERE))
        async with self._transaction(write=False) as connection:
            return [UnfinishedGame(*row) for row in await connection.execute(statement)]

    async def unfinished_games_of(self, player_id: int, limit: int = 4) -> list[str]:
        """The ids of the registered player ``player_id``'s unfinished real-time games, newest
        first, at most ``limit`` (a player has one at a time, unless a takeover is pending; its
        correspondence games do not count): a login's lookup when the sweep's listing is not
        fresh."""
        if self._direct is not None:
            return await self._direct.unfinished_games_of(player_id, limit)
        statement = (
            select(games.c.id)
            .where(
                games.c.status.in_(UNFINISHED_STATUSES),
                games.c.speed != "correspondence",
                or_(games.c.first_player_id == player_id, games.c.second_player_id == player_id),
            )
            .order_by(games.c.created_at.desc(), games.c.id.desc())
            .limit(limit)
        )
        async with self._transaction(write=False) as connection:
            return list((await connection.execute(statement)).scalars())

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
        :param player_name: games of players by name, on either side (:func:`_names_matching`:
            part of a registered name in any case, the computer's name likewise, a guest's
            name exactly).
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
            names = _names_matching(player_name)
            conditions.append(or_(games.c.first_name.in_(names), games.c.second_name.in_(names)))
        if variant is not None:
            conditions.append(games.c.variant == variant)
        if result is not None:
            conditions.append(games.c.result == check_result(result))
        if status is not None:
            if status not in GAME_STATUSES:
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
        # ``games.plies`` is written when a game ends; a running game counts its stored moves.
        moves_so_far = (
            select(func.count())
            .select_from(game_moves)
            .where(game_moves.c.game_id == games.c.id)
            .scalar_subquery()
        )
        plies = func.coalesce(games.c.plies, moves_so_far).label("plies")
        statement = (
            select(*(c for c in games.c if c.name != "plies"), plies, *_bot_columns())
            .where(*conditions)
            .order_by(games.c.created_at.desc(), games.c.id.desc())
            .limit(limit + 1)
        )
        async with self._transaction(write=False) as connection:
            rows = (await connection.execute(statement)).all()
        page = [GameInfo(**_game_fields(row)) for row in rows[:limit]]
        next_cursor = _encode_cursor(page[-1]) if len(rows) > limit else None
        return GamePage(page, next_cursor)


def _kept_in_memory() -> ColumnElement[bool]:
    """The unfinished games a hub keeps in memory: all but the correspondence games between
    two registered players, neither of them a bot (those stay cold until used; a bot finds its
    games in its event stream, the hub's list, so they stay loaded)."""
    registered = and_(games.c.first_player_id.is_not(None), games.c.second_player_id.is_not(None))
    bot = (
        select(players.c.id)
        .where(
            players.c.bot,
            or_(
                players.c.id == games.c.first_player_id,
                players.c.id == games.c.second_player_id,
            ),
        )
        .exists()
    )
    return or_(games.c.speed != "correspondence", ~registered, bot)


def _bot_columns() -> tuple[Any, Any]:
    """Whether each player is a bot account (docs/bots.md): the account's flag, read with the
    game rather than copied into it."""
    first, second = (
        select(players.c.bot).where(players.c.id == player).scalar_subquery().label(label)
        for player, label in (
            (games.c.first_player_id, "first_bot"),
            (games.c.second_player_id, "second_bot"),
        )
    )
    return first, second


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


def _game_fields(row: Row[*tuple[Any, ...]]) -> ColumnValues:
    return {
        "id": row.id,
        "variant": row.variant,
        "start_fen": empty_hand_spelled(row.start_fen),
        "speed": row.speed,
        "time_control": control_of_columns(
            row.clock_kind, row.base_ms, row.increment_ms, row.byoyomi_ms, row.periods
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
        # Read with :func:`_bot_columns` where a query selects them.
        "first_bot": bool(row._mapping.get("first_bot", False)),
        "second_bot": bool(row._mapping.get("second_bot", False)),
        "tournament_id": row.tournament_id,
        "tournament_round": row.tournament_round,
        "first_berserk": bool(row.berserk & 1),
        "second_berserk": bool(row.berserk & 2),
    }


#: How many registered names a partial player filter looks for games of (the best matches:
#: the name itself, then names that begin with it, then any name containing it).
NAME_MATCHES = 20


def _names_matching(text: str) -> Any:
    """The names a player filter stands for, as a subquery of at most :data:`NAME_MATCHES`
    registered names plus two constants: registered names containing ``text`` in any case
    (names are case-insensitive, ``name_key`` is the lower-case name; the whole name first,
    then the names beginning with it), the computer's name when it contains ``text`` (the
    computer has no account), and ``text`` as given (a guest's name, matched exactly).

    The scan is over the players table (one short key per account), never the games table:
    the games are then found by their indexed ``first_name`` / ``second_name``, newest first.
    """
    key = text.lower()
    pattern = "%" + key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    rank = case(
        (players.c.name_key == key, 0),
        (players.c.name_key.startswith(key, autoescape=True), 1),
        else_=2,
    )
    registered = (
        select(players.c.name)
        .where(players.c.name_key.like(pattern, escape="\\"))
        .order_by(rank, players.c.name_key)
        .limit(NAME_MATCHES)
    )
    extra = [text]
    if key in COMPUTER.name.lower():
        extra.append(COMPUTER.name)
    # ORDER BY and LIMIT inside a UNION member need their own subquery (SQLite).
    found = select(registered.subquery().c.name)
    return union_all(found, *(select(literal(name)) for name in extra)).subquery().select()

"""The store's games and their moves: created, started, moved, taken back, finished."""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import NoReturn, cast

from sqlalchemy import delete, insert, select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from server.hub import game_ids
from server.hub.glicko2 import speed_of
from server.rules.record import (
    UNFINISHED_STATUSES,
    MoveRecord,
    ResultCode,
)
from server.rules.time_control import Byoyomi, Correspondence, Fischer, TimeControl, Unlimited
from server.store.correspondence_tables import offers
from server.store.errors import (
    DuplicateMoveError,
    GameStateError,
    OfferNotHeldError,
    StoreError,
    UnknownGameError,
    UnknownPlayerError,
)
from server.store.ratings import rate_in
from server.store.records import (
    FIRST_PLAYER_SCORE,
    MOVE_COLUMNS,
    GameMove,
    RatingUpdate,
    check_game_id,
    check_move,
    check_result,
    check_text,
    control_columns,
    move_row,
    utc_now,
)
from server.store.schema import (
    DEADLINE_INDEX_WHERE,
    NAME_LENGTH,
    TERMINATION_LENGTH,
    VARIANT_LENGTH,
    ColumnValues,
    game_moves,
    games,
)
from server.store.transactions import Transactions, integrity_kind

__all__ = ["GameStore", "new_game_id"]

_SECURE = secrets.SystemRandom()
_ID_ATTEMPTS = 5


def new_game_id() -> str:
    """A random game id (:func:`server.hub.game_ids.new_game_id`, drawn from the system's
    secure source)."""
    return game_ids.new_game_id(_SECURE)


class GameStore(Transactions):
    """Writing games and moves; a rated game's end updates both ratings in its transaction."""

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
        tournament: tuple[str, int] | None = None,
        created_at: datetime | None = None,
        consumed_offers: Sequence[str] = (),
        offers_node: str | None = None,
    ) -> str:
        """Store a new game (status ``created``) and return its id.

        ``created_at`` (timezone-aware) is the instant of its creation (and start), by default
        now: a correspondence game's first turn is dated by it after a restart.

        A random id is drawn unless *game_id* is given. Guests have no player
        id; only games between two different registered players can be rated.
        With *started* the game is stored already started (as :meth:`start_game`
        would mark it), in the same transaction: one commit instead of two.
        *tournament* ``(id, round)``: the tournament and round the game belongs to.
        *consumed_offers*: the keys of the stored seeks and challenges (table ``offers``) the
        game answers, deleted in the game's transaction: both are written or neither (a crash
        cannot give back an answered offer, a game not stored leaves its offer open). Only
        rows held by *offers_node* (the ``offers.node`` of this process; ``None``: one
        process, ``node IS NULL``) are deleted, and the game is stored only if every one was:
        the node column fences an offer as a lease fences a game (a node taken for dead whose
        rows another node claimed cannot answer them any more, nor can two games answer one).

        :raises ValueError: for malformed arguments or a rated game with a guest.
        :raises UnknownPlayerError: if a player id does not exist.
        :raises GameStateError: if the given *game_id* is already used.
        :raises OfferNotHeldError: a consumed offer's row is gone or another node's: nothing
            was stored.
        """
        check_text("variant", variant, VARIANT_LENGTH)
        check_text("start position", start_fen, 10_000)
        check_text("first player's name", first_name, NAME_LENGTH)
        check_text("second player's name", second_name, NAME_LENGTH)
        if not isinstance(time_control, Fischer | Byoyomi | Correspondence | Unlimited):
            raise ValueError("time_control must be a TimeControl")
        if rated and (first_player_id is None or second_player_id is None):
            raise ValueError("a rated game needs two registered players")
        if rated and first_player_id == second_player_id:
            raise ValueError("a player cannot play a rated game against themselves")
        if game_id is not None:
            check_game_id(game_id)
        values: ColumnValues = {
            "variant": variant,
            "start_fen": start_fen,
            "speed": speed_of(time_control),
            "first_player_id": first_player_id,
            "second_player_id": second_player_id,
            "first_name": first_name,
            "second_name": second_name,
            **control_columns(time_control),
            "rated": rated,
            "status": "created",
            "created_at": utc_now() if created_at is None else created_at.astimezone(UTC),
        }
        if started:
            values["status"] = "started"
            values["started_at"] = values["created_at"]
        if isinstance(time_control, Correspondence):
            # The first turn runs from the creation (docs/correspondence.md "Memory").
            created = cast(datetime, values["created_at"])
            values["deadline_ms"] = int(created.timestamp() * 1000) + time_control.per_move_ms
        if tournament is not None:
            check_game_id(tournament[0])
            if isinstance(tournament[1], bool) or not isinstance(tournament[1], int):
                raise ValueError("a tournament round must be an integer")
            values["tournament_id"], values["tournament_round"] = tournament
        for _ in range(_ID_ATTEMPTS):
            values["id"] = game_id or new_game_id()
            try:
                if self._direct is not None and not consumed_offers:
                    await self._direct.insert_game(values)
                else:
                    async with self._transaction(write=True) as connection:
                        await connection.execute(insert(games).values(values))
                        if consumed_offers:
                            await _delete_held(connection, consumed_offers, offers_node)
                return cast(str, values["id"])
            except IntegrityError as error:
                kind = integrity_kind(error)
                if kind == "foreign_key":
                    raise UnknownPlayerError("a player id of this game does not exist") from error
                if kind != "unique":
                    raise
                if game_id is not None:
                    raise GameStateError(game_id, "already stored", "create") from error
                # A random id collided: draw another.
        raise StoreError(f"no free game id after {_ID_ATTEMPTS} random draws")

    async def set_game_berserk(self, game_id: str, first: bool, second: bool) -> None:
        """Record who berserked in a (tournament) game: kept with the game for its views and
        for a tournament resumed after a restart.

        :raises UnknownGameError: if there is no such game.
        """
        check_game_id(game_id)
        async with self._transaction(write=True) as connection:
            result = await connection.execute(
                update(games)
                .where(games.c.id == game_id)
                .values(berserk=(1 if first else 0) | (2 if second else 0))
            )
            if result.rowcount == 0:
                raise UnknownGameError(game_id)

    async def tournament_game_ids(self, tournament_id: str) -> list[str]:
        """The ids of the games stored for a tournament, in creation order."""
        check_game_id(tournament_id)
        async with self._transaction(write=False) as connection:
            rows = await connection.execute(
                select(games.c.id)
                .where(games.c.tournament_id == tournament_id)
                .order_by(games.c.created_at, games.c.id)
            )
            return [row.id for row in rows]

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
        if self._direct is not None and await self._direct.abort(
            game_id, termination, utc_now(), plies, final_fen
        ):
            return
        # SQLite, or nothing changed: find out why (raises) in a transaction.
        async with self._transaction(write=True) as connection:
            result = await connection.execute(
                update(games)
                .where(games.c.id == game_id, games.c.status.in_(UNFINISHED_STATUSES))
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
        if self._direct is not None and await self._direct.finish_unrated(
            game_id, code, termination, utc_now(), plies, final_fen
        ):
            return None
        # SQLite, a rated game (its ratings change in the same transaction), or nothing
        # changed (an unknown game, one already over: raises).
        async with self._transaction(write=True) as connection:
            row = (
                await connection.execute(
                    update(games)
                    .where(games.c.id == game_id, games.c.status.in_(UNFINISHED_STATUSES))
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
            change = await rate_in(
                connection,
                self._dialect,
                row.variant,
                row.speed,
                first_id,
                second_id,
                FIRST_PLAYER_SCORE[code],
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

    async def postpone_deadline(self, game_id: str, deadline_ms: int) -> None:
        """Move a running correspondence game's deadline (``games.deadline_ms``, ms since the
        epoch) to ``deadline_ms`` unless it is later already: a new turn's (a move stored).
        Writes of one game landing out of order keep the latest; an unknown or ended game,
        or one without a deadline (unlimited), is left alone."""
        check_game_id(game_id)
        async with self._transaction(write=True) as connection:
            await connection.execute(
                update(games)
                .where(
                    games.c.id == game_id,
                    games.c.status.in_(UNFINISHED_STATUSES),
                    games.c.deadline_ms < deadline_ms,
                )
                .values(deadline_ms=deadline_ms)
            )

    async def due_correspondence(self, now_ms: int, limit: int = 100) -> list[str]:
        """The ids of running games whose stored deadline (``games.deadline_ms``) is at or
        before ``now_ms`` (ms since the epoch), the earliest first, at most ``limit``: one
        read of the partial index, whatever the number of games."""
        statement = (
            select(games.c.id)
            # The index's own predicate, spelled as the index has it (literals), so that the
            # planner uses the partial index whatever the plan's parameters.
            .where(text(DEADLINE_INDEX_WHERE), games.c.deadline_ms <= now_ms)
            .order_by(games.c.deadline_ms)
            .limit(limit)
        )
        async with self._transaction(write=False) as connection:
            return list((await connection.execute(statement)).scalars())

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
            kind = integrity_kind(error)
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
        if self._direct is not None:
            await self._direct.append_moves(moves)
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

    async def save_room_versions(self, versions: Mapping[str, int]) -> None:
        """Keep the last room event version of running games (a hub stopping gracefully).

        Finished or unknown games are skipped. One transaction.
        """
        if not versions:
            return
        async with self._transaction(write=True) as connection:
            for game_id, version in versions.items():
                await connection.execute(
                    update(games)
                    .where(games.c.id == game_id, games.c.status.in_(UNFINISHED_STATUSES))
                    .values(room_version=version)
                )

    async def take_room_version(self, game_id: str) -> int | None:
        """The version :meth:`save_room_versions` kept for ``game_id``, cleared in the same
        transaction (``None`` if there is none): it is valid for one resumption only, since the
        resumed room issues new versions that a later crash would not record."""
        async with self._transaction(write=True) as connection:
            version = (
                await connection.execute(select(games.c.room_version).where(games.c.id == game_id))
            ).scalar_one_or_none()
            if version is not None:
                await connection.execute(
                    update(games).where(games.c.id == game_id).values(room_version=None)
                )
        return None if version is None else int(version)


async def _delete_held(connection: AsyncConnection, keys: Sequence[str], node: str | None) -> None:
    """Delete the offers ``keys`` held by ``node`` (see :meth:`GameStore.create_game`);
    raise :class:`OfferNotHeldError` (the transaction rolls back) unless every one was."""
    held = offers.c.node.is_(None) if node is None else offers.c.node == node
    deleted = set(
        (
            await connection.execute(
                delete(offers).where(offers.c.key.in_(set(keys)), held).returning(offers.c.key)
            )
        ).scalars()
    )
    missing = tuple(dict.fromkeys(key for key in keys if key not in deleted))
    if missing:
        raise OfferNotHeldError(missing)


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


def _move_values(game_id: str, move: MoveRecord) -> ColumnValues:
    return dict(zip(MOVE_COLUMNS, move_row(game_id, move), strict=True))

"""The store's players and their login sessions."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from typing import Any, cast

from sqlalchemy import Row, delete, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.elements import ColumnElement

from server.store.errors import NameTakenError
from server.store.records import Player, check_text, utc_now
from server.store.schema import NAME_LENGTH, PASSWORD_HASH_LENGTH, players, sessions
from server.store.transactions import Transactions, integrity_kind

__all__ = ["PlayerStore"]


class PlayerStore(Transactions):
    """Players (unique names, case-insensitively) and their login sessions."""

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
            if integrity_kind(error) != "unique":
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
        return None if row is None else player_from_row(row)

    # --- sessions -----------------------------------------------------------------------------

    async def create_session(self, player_id: int) -> str:
        """A new login token for the player (only its hash is stored).

        :raises UnknownPlayerError: if no player has this id.
        """
        token = secrets.token_urlsafe(32)
        now = utc_now()
        statement = insert(sessions).values(
            token_hash=token_hash(token), player_id=player_id, created_at=now, last_seen=now
        )
        await self._write_for_player(statement, player_id)
        return token

    async def session_player(
        self, token: str, *, max_idle: timedelta | None = None
    ) -> Player | None:
        """The player a token logs in, or None; refreshes the session's ``last_seen``.

        With *max_idle*, a session unused for longer is deleted and None returned.
        """
        key = token_hash(token)
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
        return player_from_row(row)

    async def delete_session(self, token: str) -> bool:
        """Log a token out. Returns whether it existed."""
        async with self._transaction(write=True) as connection:
            result = await connection.execute(
                delete(sessions).where(sessions.c.token_hash == token_hash(token))
            )
        return cast(int, result.rowcount) > 0

    async def set_password(self, player_id: int, password_hash: str, keep_session: str) -> int:
        """Store a player's new password hash and end their sessions but ``keep_session`` (the
        one the change was made from), in one transaction. Returns how many sessions ended.

        :raises ValueError: an empty or over-long hash.
        """
        check_text("password hash", password_hash, PASSWORD_HASH_LENGTH)
        async with self._transaction(write=True) as connection:
            await connection.execute(
                update(players).where(players.c.id == player_id).values(password_hash=password_hash)
            )
            result = await connection.execute(
                delete(sessions).where(
                    sessions.c.player_id == player_id,
                    sessions.c.token_hash != token_hash(keep_session),
                )
            )
        return cast(int, result.rowcount)

    async def delete_player_sessions(self, player_id: int) -> int:
        """Log a player out everywhere. Returns how many sessions ended."""
        async with self._transaction(write=True) as connection:
            result = await connection.execute(
                delete(sessions).where(sessions.c.player_id == player_id)
            )
        return cast(int, result.rowcount)


def token_hash(token: str) -> str:
    """What the store keeps of a session token: its SHA-256, in hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def player_from_row(row: Row[Any]) -> Player:
    return Player(
        id=row.id,
        name=row.name,
        password_hash=row.password_hash,
        created_at=row.created_at,
        bot=bool(row.bot),
    )

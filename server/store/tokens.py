"""Personal API tokens (the Bot API) and the bot flag of accounts."""

from __future__ import annotations

import hashlib
import secrets
from typing import cast

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from server.store.errors import UnknownPlayerError
from server.store.players import player_from_row
from server.store.records import ApiToken, Player, check_text, utc_now
from server.store.schema import TOKEN_DESCRIPTION_LENGTH, api_tokens, players
from server.store.transactions import Transactions, integrity_kind

__all__ = ["MAX_TOKENS_PER_PLAYER", "TOKEN_PREFIX", "TokenStore", "TooManyTokensError"]

TOKEN_PREFIX = "vhb_"
"""Every API token starts with this (told apart from a session token at a glance)."""
MAX_TOKENS_PER_PLAYER = 20


class TooManyTokensError(Exception):
    """The player already has :data:`MAX_TOKENS_PER_PLAYER` tokens."""


class TokenStore(Transactions):
    """A player's personal API tokens (only their SHA-256 is stored) and the bot flag."""

    async def create_api_token(self, player_id: int, description: str) -> tuple[str, ApiToken]:
        """A new token for the player: (the token, shown once; its listing).

        :raises TooManyTokensError: the player has too many tokens.
        :raises ValueError: an empty or over-long description.
        :raises UnknownPlayerError: no player has this id.
        """
        check_text("description", description, TOKEN_DESCRIPTION_LENGTH)
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        now = utc_now()
        count = (
            select(func.count()).select_from(api_tokens).where(api_tokens.c.player_id == player_id)
        )
        statement = (
            insert(api_tokens)
            .values(
                token_hash=_hash(token),
                player_id=player_id,
                description=description,
                created_at=now,
            )
            .returning(api_tokens.c.id)
        )
        try:
            async with self._transaction(write=True) as connection:
                if (await connection.execute(count)).scalar_one() >= MAX_TOKENS_PER_PLAYER:
                    raise TooManyTokensError(player_id)
                token_id = (await connection.execute(statement)).scalar_one()
        except IntegrityError as error:
            if integrity_kind(error) != "foreign_key":
                raise
            raise UnknownPlayerError(f"no player with id {player_id}") from error
        return token, ApiToken(id=token_id, description=description, created_at=now)

    async def api_tokens(self, player_id: int) -> list[ApiToken]:
        async with self._transaction(write=False) as connection:
            rows = (
                await connection.execute(
                    select(api_tokens)
                    .where(api_tokens.c.player_id == player_id)
                    .order_by(api_tokens.c.id)
                )
            ).all()
        return [
            ApiToken(id=row.id, description=row.description, created_at=row.created_at)
            for row in rows
        ]

    async def revoke_api_token(self, player_id: int, token_id: int) -> bool:
        """Delete one of the player's tokens; whether it existed."""
        async with self._transaction(write=True) as connection:
            result = await connection.execute(
                delete(api_tokens).where(
                    api_tokens.c.id == token_id, api_tokens.c.player_id == player_id
                )
            )
        return cast(int, result.rowcount) > 0

    async def revoke_api_token_value(self, token: str) -> bool:
        """Delete the token itself (whoever holds it revokes it); whether it existed."""
        async with self._transaction(write=True) as connection:
            result = await connection.execute(
                delete(api_tokens).where(api_tokens.c.token_hash == _hash(token))
            )
        return cast(int, result.rowcount) > 0

    async def api_token_player(self, token: str) -> Player | None:
        """The player a token stands for, or None."""
        if not token.startswith(TOKEN_PREFIX):
            return None
        async with self._transaction(write=False) as connection:
            row = (
                await connection.execute(
                    select(players)
                    .join(api_tokens, api_tokens.c.player_id == players.c.id)
                    .where(api_tokens.c.token_hash == _hash(token))
                )
            ).one_or_none()
        return None if row is None else player_from_row(row)

    async def make_bot(self, player_id: int) -> bool:
        """Mark the account as a bot; False if it already was one (or does not exist)."""
        async with self._transaction(write=True) as connection:
            result = await connection.execute(
                update(players)
                .where(players.c.id == player_id, players.c.bot.is_(False))
                .values(bot=True)
            )
        return cast(int, result.rowcount) > 0


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()

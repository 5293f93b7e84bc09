"""The store's ratings: one Glicko-2 rating per player and pool (variant, speed)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Row, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from server.hub.glicko2 import SPEEDS, Rating, Speed, rate_game
from server.store.records import PlayerRating, RatingUpdate, check_text
from server.store.schema import VARIANT_LENGTH, ratings
from server.store.transactions import Transactions, dialect_insert

__all__ = ["RatingStore", "rate_in"]


class RatingStore(Transactions):
    """Reading and correcting ratings; rated games are applied by :func:`rate_in`."""

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
        statement = dialect_insert(self._dialect)(ratings).values(values)
        statement = statement.on_conflict_do_update(
            index_elements=[ratings.c.player_id, ratings.c.variant, ratings.c.speed],
            set_={
                key: statement.excluded[key]
                for key in ("rating", "deviation", "volatility", "games")
            },
        )
        await self._write_for_player(statement, rating.player_id)


async def rate_in(
    connection: AsyncConnection,
    dialect: str,
    variant: str,
    speed: str,
    first_id: int,
    second_id: int,
    first_score: float,
) -> RatingUpdate:
    """Apply one rated game to both rating rows, inside the caller's transaction."""
    default = Rating()
    await connection.execute(
        dialect_insert(dialect)(ratings)
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


def _check_speed(speed: str) -> None:
    if speed not in SPEEDS:
        raise ValueError(f"speed must be one of {', '.join(SPEEDS)}, got {speed!r}")


def _player_rating(row: Row[Any]) -> PlayerRating:
    return PlayerRating(
        player_id=row.player_id,
        variant=row.variant,
        speed=row.speed,
        rating=Rating(row.rating, row.deviation, row.volatility),
        games=row.games,
    )

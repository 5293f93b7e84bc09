"""The players' conditional premoves in correspondence games (table ``premoves``; see
docs/correspondence.md, "Conditional premoves"): one row per game and player, replaced
whole when the player sets them, deleted when cleared or dropped, read back when the game's
room is restored.
"""

from __future__ import annotations

from sqlalchemy import delete, insert, select
from sqlalchemy.exc import IntegrityError

from server.hub.effects import PremovesSet
from server.rules import Side
from server.store.correspondence_tables import premoves
from server.store.errors import UnknownGameError
from server.store.records import utc_now
from server.store.transactions import Transactions, integrity_kind

__all__ = ["PremoveStore"]


class PremoveStore(Transactions):
    """Conditional premoves (see the module docstring)."""

    async def set_premoves(self, record: PremovesSet) -> None:
        """Replace what is stored for ``record``'s game and side with its lines (none: delete).

        :raises UnknownGameError: there is no such game.
        """
        where = (premoves.c.game_id == record.game_id) & (premoves.c.side == int(record.side))
        try:
            async with self._transaction(write=True) as connection:
                await connection.execute(delete(premoves).where(where))
                if record.lines:
                    await connection.execute(
                        insert(premoves).values(
                            game_id=record.game_id,
                            side=int(record.side),
                            from_ply=record.from_ply,
                            lines=[list(line) for line in record.lines],
                            updated_at=utc_now(),
                        )
                    )
        except IntegrityError as error:
            if integrity_kind(error) == "foreign_key":
                raise UnknownGameError(record.game_id) from error
            raise

    async def premoves_of(self, game_id: str) -> list[PremovesSet]:
        """The conditional premoves stored for ``game_id`` (first player's first)."""
        async with self._transaction(write=False) as connection:
            rows = await connection.execute(
                select(premoves.c.side, premoves.c.from_ply, premoves.c.lines)
                .where(premoves.c.game_id == game_id)
                .order_by(premoves.c.side)
            )
            return [
                PremovesSet(game_id, Side(side), from_ply, tuple(tuple(x) for x in lines))
                for side, from_ply, lines in rows
            ]

"""The tournaments' chats in the store (table ``tournament_chat``; docs/tournaments.md, "Chat"):
a line is added once the director has checked it, and a watch reads the tournament's last
lines, oldest first.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError

from server.store.errors import UnknownPlayerError, UnknownTournamentError
from server.store.records import check_text
from server.store.schema import NAME_LENGTH
from server.store.tournament_tables import tournament_chat, tournaments
from server.store.transactions import Transactions, integrity_kind

__all__ = ["CHAT_HISTORY", "StoredChatLine", "TournamentChatStore"]

CHAT_HISTORY = 50
"""The lines a watch is shown: the tournament's last ones."""


@dataclass(frozen=True, slots=True)
class StoredChatLine:
    """A stored line: ``id`` orders a tournament's lines; ``name`` as shown when written."""

    id: int
    tournament_id: str
    at: datetime
    player_id: int
    name: str
    text: str


class TournamentChatStore(Transactions):
    """The lines of the tournaments' chats (see the module docstring)."""

    async def add_tournament_chat_line(
        self, tournament_id: str, *, player_id: int, name: str, text: str, at: datetime
    ) -> StoredChatLine:
        """Store a line (its text checked by the caller: user text, at most 140 characters).

        :raises UnknownTournamentError: no such tournament (or :class:`UnknownPlayerError`:
            no such player).
        :raises ValueError: a malformed name.
        """
        check_text("name", name, NAME_LENGTH)
        try:
            async with self._transaction(write=True) as connection:
                result = await connection.execute(
                    insert(tournament_chat)
                    .values(
                        tournament_id=tournament_id,
                        at=at,
                        player_id=player_id,
                        name=name,
                        text=text,
                    )
                    .returning(tournament_chat.c.id)
                )
                line_id = int(result.scalar_one())
        except IntegrityError as error:
            if integrity_kind(error) != "foreign_key":
                raise
            exists = await self._tournament_exists(tournament_id)
            if not exists:
                raise UnknownTournamentError(tournament_id) from error
            raise UnknownPlayerError(f"no player with id {player_id}") from error
        return StoredChatLine(line_id, tournament_id, at, player_id, name, text)

    async def tournament_chat_lines(
        self, tournament_id: str, *, limit: int = CHAT_HISTORY
    ) -> list[StoredChatLine]:
        """The tournament's last ``limit`` lines, oldest first (none for an unknown id)."""
        async with self._transaction(write=False) as connection:
            rows = await connection.execute(
                select(tournament_chat)
                .where(tournament_chat.c.tournament_id == tournament_id)
                .order_by(tournament_chat.c.id.desc())
                .limit(limit)
            )
            lines = [
                StoredChatLine(row.id, row.tournament_id, row.at, row.player_id, row.name, row.text)
                for row in rows
            ]
        lines.reverse()
        return lines

    async def _tournament_exists(self, tournament_id: str) -> bool:
        async with self._transaction(write=False) as connection:
            found = await connection.execute(
                select(tournaments.c.id).where(tournaments.c.id == tournament_id)
            )
            return found.first() is not None

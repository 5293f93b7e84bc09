"""The repository: every read and write the server does on its database.

>>> store = Store.from_url("postgresql+asyncpg://postgres@127.0.0.1/hub")  # doctest: +SKIP
>>> game_id = await store.create_game(variant="minishogi", ...)           # doctest: +SKIP

All methods are coroutines and each runs in one transaction of its own. A
database that cannot be reached raises :class:`StoreUnavailableError`; nothing
is ever dropped silently. :class:`Store` combines one part per aggregate:
players and sessions (``players.py``), ratings (``ratings.py``), games and
moves (``games.py``), the reads of games (``queries.py``), the engine workers' job
queue (``jobs.py``), computer analyses (``analyses.py``) and tournaments with their events
(``tournaments.py``), notifications (``notify.py``: running games by
turn, e-mail settings and claims), the conditional premoves of correspondence games
(``premoves.py``), the stored correspondence seeks and challenges (``offers.py``), the tournaments' chats (``tournament_chat.py``), on the shared
engine and transactions of ``transactions.py``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Self

from sqlalchemy import select

from server.hub.glicko2 import Rating
from server.store.analyses import AnalysisStore
from server.store.engine import DEFAULT_URL, create_engine
from server.store.games import GameStore, new_game_id
from server.store.jobs import JobStore
from server.store.notify import NotifyStore
from server.store.offers import OfferStore
from server.store.pg_direct import PgDirect
from server.store.players import PlayerStore, token_hash
from server.store.premoves import PremoveStore
from server.store.queries import GameQueries
from server.store.ratings import RatingStore
from server.store.records import Player, PlayerRating, utc_now
from server.store.tokens import TokenStore
from server.store.tournament_chat import TournamentChatStore
from server.store.tournaments import TournamentStore

__all__ = ["Store", "new_game_id"]


class Store(
    PlayerStore,
    TokenStore,
    RatingStore,
    GameStore,
    GameQueries,
    JobStore,
    AnalysisStore,
    TournamentStore,
    TournamentChatStore,
    NotifyStore,
    PremoveStore,
    OfferStore,
):
    """Players, login sessions, ratings, games and moves, engine jobs, analyses and tournaments
    in one database.

    Build it with :meth:`from_url` (or around an existing engine) and
    :meth:`close` it when done; it is also an async context manager. The
    schema must exist: see :mod:`server.store.migrate`.
    """

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
        direct = None
        if engine.dialect.name == "postgresql":
            direct = PgDirect(url, schema=schema, connect_timeout=connect_timeout)
        return cls(engine, direct=direct)

    async def resume_session(
        self, token: str, *, max_idle: timedelta | None = None
    ) -> tuple[Player, list[PlayerRating]] | None:
        """The player a token logs in, with all their ratings (by variant then speed), or
        None; refreshes the session's ``last_seen``. With ``max_idle``, a session unused for
        longer is deleted and None returned (as :meth:`session_player`). What a reconnecting
        client needs: on PostgreSQL one statement
        (:data:`server.store.pg_direct.RESUME_SESSION`), elsewhere :meth:`session_player` then
        :meth:`player_ratings`."""
        if self._direct is None:
            player = await self.session_player(token, max_idle=max_idle)
            if player is None:
                return None
            return player, await self.player_ratings(player.id)
        now = utc_now()
        oldest = now - max_idle if max_idle is not None else datetime.min.replace(tzinfo=UTC)
        rows = await self._direct.resume_session(token_hash(token), now, oldest)
        if not rows:
            return None
        first = rows[0]
        player = Player(
            id=first["id"],
            name=first["name"],
            password_hash=first["password_hash"],
            created_at=first["created_at"],
            bot=first["bot"],
        )
        ratings = [
            PlayerRating(
                player_id=player.id,
                variant=row["variant"],
                speed=row["speed"],
                rating=Rating(row["rating"], row["deviation"], row["volatility"]),
                games=row["games"],
            )
            for row in rows
            if row["variant"] is not None
        ]
        return player, ratings

    async def close(self) -> None:
        """Close all pooled connections."""
        if self._direct is not None:
            await self._direct.close()
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

    async def ping(self) -> None:
        """Round-trip to the database (PostgreSQL: on a connection of its own, not the pool's,
        so a busy pool does not make a health check fail).

        :raises StoreUnavailableError: if it cannot be reached.
        """
        if self._direct is not None:
            await self._direct.ping()
            return
        async with self._transaction(write=False) as connection:
            await connection.execute(select(1))

"""Tables of the game database, declared as SQLAlchemy 2 models: the declarative base (the one
``MetaData`` every table joins, with its naming convention), the column types and lengths the
tables share, and the tables of players, sessions, API tokens, ratings, games and their moves,
engine jobs and analyses.

The tournaments' tables are declared in :mod:`server.store.tournament_tables`, those of
correspondence play (mail notifications, conditional premoves, stored offers) in
:mod:`server.store.correspondence_tables`, on the same base; :mod:`server.store.metadata`
imports them all and is what alembic compares the migrations with.

The models exist to declare the schema (and let alembic compare it with the
migrations); the repository reads and writes through Core statements on the
tables (:data:`players`, :data:`games`, ...), never through ORM sessions.

Design notes:

* Game ids are strings: by default 8 random characters from ``[0-9A-Za-z]``
  (62**8 ~ 2.2e14), lichess style: short enough for URLs, unguessable, and
  chosen without coordination between several hub processes. A caller (the
  hub) may choose its own ids: up to 16 characters from ``[0-9A-Za-z_-]``.
* Player names keep the spelling they were registered with in ``name``; their
  uniqueness is enforced case-insensitively on ``name_key`` (lower case), so
  "Magnus" cannot impersonate "magnus".
* Session tokens are never stored, only their SHA-256 (``token_hash``): a
  leaked database does not leak working logins.
* Games copy both players' names (``first_name``/``second_name``) so games of
  guests, who have no player row, are stored too; the player ids are NULL for
  guests.
* All timestamps are ``TIMESTAMP WITH TIME ZONE`` in UTC. Server defaults use
  the portable ``CURRENT_TIMESTAMP``; the repository nevertheless writes every
  timestamp itself (microsecond precision on both backends, so listings sort
  in creation order even on SQLite).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    false,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from server.hub.game_ids import GAME_ID_MAX_LENGTH
from server.rules.record import UNFINISHED_STATUSES

__all__ = [
    "NAME_LENGTH",
    "TOKEN_DESCRIPTION_LENGTH",
    "AnalysisPlyRow",
    "AnalysisRow",
    "ApiTokenRow",
    "Base",
    "ColumnValues",
    "EngineJobRow",
    "GameMoveRow",
    "GameRow",
    "PlayerRow",
    "RatingRow",
    "SessionRow",
    "UtcDateTime",
    "analyses",
    "analysis_plies",
    "api_tokens",
    "engine_jobs",
    "game_moves",
    "games",
    "players",
    "ratings",
    "sessions",
    "table_of",
]

ColumnValues = dict[str, Any]
"""Column name -> value: what SQLAlchemy's ``insert().values()`` / ``update().values()`` take,
and a row's fields read off as keyword arguments of a record. ``Any`` because SQLAlchemy types
column values so; each value is checked against its column's type by the table."""

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

TOKEN_DESCRIPTION_LENGTH = 100
NAME_LENGTH = 32
VARIANT_LENGTH = 32
TERMINATION_LENGTH = 32
UCI_LENGTH = 32
DISPLAY_LENGTH = 64
PASSWORD_HASH_LENGTH = 255


class UtcDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every backend.

    PostgreSQL stores ``timestamptz``; SQLite has no time zones, so values are
    converted to UTC before they are written and marked UTC when read back.
    Naive datetimes are refused instead of being guessed at.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value!r}: pass an aware datetime")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


NOW = text("CURRENT_TIMESTAMP")


class Base(DeclarativeBase):
    """The base of every table model: its ``metadata`` is the database's one ``MetaData``
    (complete once every table module is imported: :mod:`server.store.metadata`)."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class PlayerRow(Base):
    """A registered player. Guests are not stored."""

    __tablename__ = "players"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    name_key: Mapped[str] = mapped_column(String(NAME_LENGTH), unique=True)
    password_hash: Mapped[str] = mapped_column(String(PASSWORD_HASH_LENGTH))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, server_default=NOW)
    bot: Mapped[bool] = mapped_column(Boolean, server_default=false())
    """Upgraded to a bot account (the Bot API, docs/bots.md); never undone."""


class SessionRow(Base):
    """A login token (stored as its SHA-256 only)."""

    __tablename__ = "sessions"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    player_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("players.id", ondelete="CASCADE"), index=True
    )
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, server_default=NOW)
    last_seen: Mapped[datetime] = mapped_column(UtcDateTime, server_default=NOW)


class ApiTokenRow(Base):
    """A personal API token of a player (the Bot API; stored as its SHA-256 only)."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    player_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("players.id", ondelete="CASCADE"), index=True
    )
    description: Mapped[str] = mapped_column(String(TOKEN_DESCRIPTION_LENGTH))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, server_default=NOW)


DEADLINE_INDEX_WHERE = "deadline_ms IS NOT NULL AND status IN ({})".format(
    ", ".join(f"'{status}'" for status in UNFINISHED_STATUSES)
)
"""The rows of the partial index on ``games.deadline_ms``: running games with a deadline."""

SWEPT_INDEX_WHERE = (
    "status IN ({}) AND (speed <> 'correspondence' OR first_player_id IS NULL"
    " OR second_player_id IS NULL)"
).format(", ".join(f"'{status}'" for status in UNFINISHED_STATUSES))
"""The rows of the partial index ``ix_games_swept``: the running games a cluster's takeover
sweep lists (``Store.unfinished_games``): all but the correspondence games between two
registered players, which no node holds until they are used (docs/correspondence.md "Memory"),
so that the sweep's work does not grow with their number."""

SPEED_CHECK = "speed IN ('bullet', 'blitz', 'rapid', 'classical', 'correspondence')"


class RatingRow(Base):
    """A player's Glicko-2 rating in one pool (variant, speed class)."""

    __tablename__ = "ratings"
    __table_args__ = (CheckConstraint(SPEED_CHECK, name="speed"),)

    player_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("players.id", ondelete="CASCADE"), primary_key=True
    )
    variant: Mapped[str] = mapped_column(String(VARIANT_LENGTH), primary_key=True)
    speed: Mapped[str] = mapped_column(String(16), primary_key=True)
    rating: Mapped[float] = mapped_column(Float)
    deviation: Mapped[float] = mapped_column(Float)
    volatility: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer, server_default=text("0"))


class GameRow(Base):
    """One game: who, what, which clock, and how it ended."""

    __tablename__ = "games"
    __table_args__ = (
        CheckConstraint(SPEED_CHECK, name="speed"),
        CheckConstraint(
            "clock_kind IN ('fischer', 'byoyomi', 'correspondence', 'unlimited')",
            name="clock_kind",
        ),
        CheckConstraint("status IN ('created', 'started', 'finished', 'aborted')", name="status"),
        CheckConstraint("result IS NULL OR result IN ('1-0', '0-1', '1/2-1/2')", name="result"),
        CheckConstraint(
            "base_ms >= 0 AND increment_ms >= 0 AND byoyomi_ms >= 0 AND periods >= 0",
            name="clock_values",
        ),
        Index(None, "first_player_id", "created_at"),
        Index(None, "second_player_id", "created_at"),
        Index(None, "first_name", "created_at"),
        Index(None, "second_name", "created_at"),
        Index(None, "variant", "created_at"),
        Index(None, "created_at", "id"),
        Index(None, "finished_at"),
        Index(None, "status"),
        Index(None, "tournament_id", "tournament_round"),
        # The running correspondence games by deadline (the cold games' timer asks for the
        # due ones); partial, so that ended games never weigh on it.
        Index(
            None,
            "deadline_ms",
            postgresql_where=text(DEADLINE_INDEX_WHERE),
            sqlite_where=text(DEADLINE_INDEX_WHERE),
        ),
        Index(
            "ix_games_swept",
            "id",
            postgresql_where=text(SWEPT_INDEX_WHERE),
            sqlite_where=text(SWEPT_INDEX_WHERE),
        ),
    )

    id: Mapped[str] = mapped_column(String(GAME_ID_MAX_LENGTH), primary_key=True)
    variant: Mapped[str] = mapped_column(String(VARIANT_LENGTH))
    start_fen: Mapped[str] = mapped_column(Text)
    speed: Mapped[str] = mapped_column(String(16))
    first_player_id: Mapped[int | None] = mapped_column(
        Integer, ForeignKey("players.id", ondelete="SET NULL")
    )
    second_player_id: Mapped[int | None] = mapped_column(
        Integer, ForeignKey("players.id", ondelete="SET NULL")
    )
    first_name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    second_name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    clock_kind: Mapped[str] = mapped_column(String(16))
    base_ms: Mapped[int] = mapped_column(BigInteger)
    increment_ms: Mapped[int] = mapped_column(BigInteger)
    byoyomi_ms: Mapped[int] = mapped_column(BigInteger)
    periods: Mapped[int] = mapped_column(Integer)
    rated: Mapped[bool] = mapped_column(Boolean)
    status: Mapped[str] = mapped_column(String(10), server_default=text("'created'"))
    result: Mapped[str | None] = mapped_column(String(7))
    termination: Mapped[str | None] = mapped_column(String(TERMINATION_LENGTH))
    #: Number of moves and final position, recorded when the game ends.
    plies: Mapped[int | None] = mapped_column(Integer)
    final_fen: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, server_default=NOW)
    started_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    first_rating_before: Mapped[int | None] = mapped_column(Integer)
    first_rating_after: Mapped[int | None] = mapped_column(Integer)
    second_rating_before: Mapped[int | None] = mapped_column(Integer)
    second_rating_after: Mapped[int | None] = mapped_column(Integer)
    #: The version of the room's last event when a hub stopped running the game gracefully;
    #: taken (and cleared) by the next hub that resumes it (see Store.take_room_version).
    room_version: Mapped[int | None] = mapped_column(BigInteger)
    #: The tournament the game belongs to and its round (an arena's wave); NULL otherwise.
    tournament_id: Mapped[str | None] = mapped_column(String(GAME_ID_MAX_LENGTH))
    tournament_round: Mapped[int | None] = mapped_column(Integer)
    #: Who berserked (halved their clock) in a tournament game: 1 the first player, 2 the
    #: second, 3 both.
    berserk: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    #: A running correspondence game's deadline in ms since the epoch (the side to move's
    #: turn start + the days per move), kept no earlier than the true one as moves are stored;
    #: NULL for other games (unlimited ones included). See docs/correspondence.md "Memory".
    deadline_ms: Mapped[int | None] = mapped_column(BigInteger)


class GameMoveRow(Base):
    """One move of a game. The primary key (game_id, ply) makes a duplicate or
    racing move impossible at the database."""

    __tablename__ = "game_moves"
    __table_args__ = (
        CheckConstraint("ply >= 1", name="ply"),
        CheckConstraint("clock_ms >= 0 AND spent_ms >= 0", name="times"),
    )

    game_id: Mapped[str] = mapped_column(
        String(GAME_ID_MAX_LENGTH), ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    ply: Mapped[int] = mapped_column(Integer, primary_key=True)
    uci: Mapped[str] = mapped_column(String(UCI_LENGTH))
    display: Mapped[str] = mapped_column(String(DISPLAY_LENGTH))
    clock_ms: Mapped[int] = mapped_column(BigInteger)
    periods_left: Mapped[int | None] = mapped_column(Integer)
    spent_ms: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, server_default=NOW)


JOB_ID_LENGTH = 16
WORKER_LENGTH = 64
OWNER_LENGTH = 64


class EngineJobRow(Base):
    """One job of the engine workers' queue (``server.store.jobs``): a computer's move to find,
    or a stored game to analyse. ``payload`` is the body a worker receives (FISHNET.md),
    ``result`` what workers submitted (partial for an analysis until it is done)."""

    __tablename__ = "engine_jobs"
    __table_args__ = (
        CheckConstraint("kind IN ('move', 'analysis')", name="kind"),
        CheckConstraint("state IN ('queued', 'acquired', 'done')", name="state"),
        CheckConstraint("attempts >= 0", name="attempts"),
        Index(None, "state", "kind", "created_at"),
        Index(None, "game_id", "kind"),
        Index(None, "owner", "served_at"),
    )

    id: Mapped[str] = mapped_column(String(JOB_ID_LENGTH), primary_key=True)
    kind: Mapped[str] = mapped_column(String(10))
    game_id: Mapped[str] = mapped_column(String(GAME_ID_MAX_LENGTH))
    variant: Mapped[str] = mapped_column(String(VARIANT_LENGTH))
    payload: Mapped[Any] = mapped_column(JSON)
    state: Mapped[str] = mapped_column(String(10), server_default=text("'queued'"))
    worker: Mapped[str | None] = mapped_column(String(WORKER_LENGTH))
    lease_until: Mapped[datetime | None] = mapped_column(UtcDateTime)
    attempts: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    result: Mapped[Any | None] = mapped_column(JSON)
    owner: Mapped[str | None] = mapped_column(String(OWNER_LENGTH))
    """Whom the job serves (the hub's player id: the computer's opponent, the analysis'
    requester): jobs are handed out round-robin between owners. None: nobody in particular."""
    served_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    """When a worker last acquired the job (the owner's turn in the round-robin)."""
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, server_default=NOW)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime, server_default=NOW)


def table_of(model: Any) -> Table:
    """The Core table a model declares (what the store's statements use)."""
    return cast(Table, model.__table__)


players = table_of(PlayerRow)
sessions = table_of(SessionRow)
api_tokens = table_of(ApiTokenRow)
ratings = table_of(RatingRow)
games = table_of(GameRow)
game_moves = table_of(GameMoveRow)


ANALYSIS_STATE_CHECK = "state IN ('queued', 'running', 'done', 'failed')"


class AnalysisRow(Base):
    """A computer analysis of one finished game: the request and its progress.

    One per game (as on lichess); a failed one may be requested again."""

    __tablename__ = "analyses"
    __table_args__ = (
        CheckConstraint(ANALYSIS_STATE_CHECK, name="state"),
        CheckConstraint(
            "plies_total >= 0 AND (movetime_ms IS NULL OR movetime_ms > 0)"
            " AND (depth IS NULL OR depth > 0)",
            name="values",
        ),
        Index(None, "state", "created_at"),
        Index(None, "requested_by", "created_at"),
    )

    game_id: Mapped[str] = mapped_column(
        String(GAME_ID_MAX_LENGTH), ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    state: Mapped[str] = mapped_column(String(8))
    requested_by: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    movetime_ms: Mapped[int | None] = mapped_column(Integer)
    depth: Mapped[int | None] = mapped_column(Integer)
    plies_total: Mapped[int] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, server_default=NOW)
    finished_at: Mapped[datetime | None] = mapped_column(UtcDateTime)


class AnalysisPlyRow(Base):
    """The evaluation of one position of an analysed game (first player's view)."""

    __tablename__ = "analysis_plies"
    __table_args__ = (
        CheckConstraint("ply >= 0", name="ply"),
        CheckConstraint("(cp IS NULL) <> (mate IS NULL)", name="score"),
    )

    game_id: Mapped[str] = mapped_column(
        String(GAME_ID_MAX_LENGTH),
        ForeignKey("analyses.game_id", ondelete="CASCADE"),
        primary_key=True,
    )
    ply: Mapped[int] = mapped_column(Integer, primary_key=True)
    cp: Mapped[int | None] = mapped_column(Integer)
    mate: Mapped[int | None] = mapped_column(Integer)
    best: Mapped[str | None] = mapped_column(String(UCI_LENGTH))
    pv: Mapped[str] = mapped_column(Text)
    depth: Mapped[int] = mapped_column(Integer)
    nodes: Mapped[int | None] = mapped_column(BigInteger)
    time_ms: Mapped[int] = mapped_column(Integer)


analyses = table_of(AnalysisRow)
analysis_plies = table_of(AnalysisPlyRow)
engine_jobs = table_of(EngineJobRow)

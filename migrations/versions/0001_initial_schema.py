"""Initial schema: players, sessions, ratings, games, game_moves.

Revision ID: 0001
Revises:
Create Date: 2026-11-22

Tables are created and dropped whole; everything that alters an existing
table (here: its indexes) goes through ``op.batch_alter_table`` so SQLite can
follow later migrations by recreating tables. Column types are spelled out
here rather than imported from ``server.store.schema``, so this revision keeps
meaning what it meant when the models change.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SPEED_CHECK = "speed IN ('bullet', 'blitz', 'rapid', 'classical', 'correspondence')"

GAME_INDEXES = {
    "ix_games_first_player_id_created_at": ["first_player_id", "created_at"],
    "ix_games_second_player_id_created_at": ["second_player_id", "created_at"],
    "ix_games_first_name_created_at": ["first_name", "created_at"],
    "ix_games_second_name_created_at": ["second_name", "created_at"],
    "ix_games_variant_created_at": ["variant", "created_at"],
    "ix_games_created_at_id": ["created_at", "id"],
    "ix_games_finished_at": ["finished_at"],
    "ix_games_status": ["status"],
}


def timestamp(name: str, *, nullable: bool = False, default_now: bool = True) -> sa.Column:
    return sa.Column(
        name,
        sa.DateTime(timezone=True),
        server_default=sa.text("CURRENT_TIMESTAMP") if default_now else None,
        nullable=nullable,
    )


def upgrade() -> None:
    op.create_table(
        "players",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("name_key", sa.String(length=32), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        timestamp("created_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_players")),
        sa.UniqueConstraint("name_key", name=op.f("uq_players_name_key")),
    )
    op.create_table(
        "sessions",
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        timestamp("created_at"),
        timestamp("last_seen"),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name=op.f("fk_sessions_player_id_players"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("token_hash", name=op.f("pk_sessions")),
    )
    with op.batch_alter_table("sessions") as batch_op:
        batch_op.create_index(batch_op.f("ix_sessions_player_id"), ["player_id"], unique=False)

    op.create_table(
        "ratings",
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("variant", sa.String(length=32), nullable=False),
        sa.Column("speed", sa.String(length=16), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("deviation", sa.Float(), nullable=False),
        sa.Column("volatility", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.CheckConstraint(SPEED_CHECK, name=op.f("ck_ratings_speed")),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name=op.f("fk_ratings_player_id_players"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("player_id", "variant", "speed", name=op.f("pk_ratings")),
    )

    op.create_table(
        "games",
        sa.Column("id", sa.String(length=16), nullable=False),
        sa.Column("variant", sa.String(length=32), nullable=False),
        sa.Column("start_fen", sa.Text(), nullable=False),
        sa.Column("speed", sa.String(length=16), nullable=False),
        sa.Column("first_player_id", sa.Integer(), nullable=True),
        sa.Column("second_player_id", sa.Integer(), nullable=True),
        sa.Column("first_name", sa.String(length=32), nullable=False),
        sa.Column("second_name", sa.String(length=32), nullable=False),
        sa.Column("clock_kind", sa.String(length=8), nullable=False),
        sa.Column("base_ms", sa.BigInteger(), nullable=False),
        sa.Column("increment_ms", sa.BigInteger(), nullable=False),
        sa.Column("byoyomi_ms", sa.BigInteger(), nullable=False),
        sa.Column("periods", sa.Integer(), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(length=10), server_default=sa.text("'created'"), nullable=False),
        sa.Column("result", sa.String(length=7), nullable=True),
        sa.Column("termination", sa.String(length=32), nullable=True),
        sa.Column("plies", sa.Integer(), nullable=True),
        sa.Column("final_fen", sa.Text(), nullable=True),
        timestamp("created_at"),
        timestamp("started_at", nullable=True, default_now=False),
        timestamp("finished_at", nullable=True, default_now=False),
        sa.Column("first_rating_before", sa.Integer(), nullable=True),
        sa.Column("first_rating_after", sa.Integer(), nullable=True),
        sa.Column("second_rating_before", sa.Integer(), nullable=True),
        sa.Column("second_rating_after", sa.Integer(), nullable=True),
        sa.CheckConstraint(SPEED_CHECK, name=op.f("ck_games_speed")),
        sa.CheckConstraint("clock_kind IN ('fischer', 'byoyomi')", name=op.f("ck_games_clock_kind")),
        sa.CheckConstraint(
            "status IN ('created', 'started', 'finished', 'aborted')", name=op.f("ck_games_status")
        ),
        sa.CheckConstraint(
            "result IS NULL OR result IN ('1-0', '0-1', '1/2-1/2')", name=op.f("ck_games_result")
        ),
        sa.CheckConstraint(
            "base_ms >= 0 AND increment_ms >= 0 AND byoyomi_ms >= 0 AND periods >= 0",
            name=op.f("ck_games_clock_values"),
        ),
        sa.ForeignKeyConstraint(
            ["first_player_id"], ["players.id"], name=op.f("fk_games_first_player_id_players"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["second_player_id"], ["players.id"], name=op.f("fk_games_second_player_id_players"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_games")),
    )
    with op.batch_alter_table("games") as batch_op:
        for name, columns in GAME_INDEXES.items():
            batch_op.create_index(batch_op.f(name), columns, unique=False)

    op.create_table(
        "game_moves",
        sa.Column("game_id", sa.String(length=16), nullable=False),
        sa.Column("ply", sa.Integer(), nullable=False),
        sa.Column("uci", sa.String(length=32), nullable=False),
        sa.Column("display", sa.String(length=64), nullable=False),
        sa.Column("clock_ms", sa.BigInteger(), nullable=False),
        sa.Column("periods_left", sa.Integer(), nullable=True),
        sa.Column("spent_ms", sa.BigInteger(), nullable=False),
        timestamp("created_at"),
        sa.CheckConstraint("ply >= 1", name=op.f("ck_game_moves_ply")),
        sa.CheckConstraint("clock_ms >= 0 AND spent_ms >= 0", name=op.f("ck_game_moves_times")),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_game_moves_game_id_games"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("game_id", "ply", name=op.f("pk_game_moves")),
    )


def downgrade() -> None:
    op.drop_table("game_moves")
    with op.batch_alter_table("games") as batch_op:
        for name in reversed(GAME_INDEXES):
            batch_op.drop_index(batch_op.f(name))
    op.drop_table("games")
    op.drop_table("ratings")
    with op.batch_alter_table("sessions") as batch_op:
        batch_op.drop_index(batch_op.f("ix_sessions_player_id"))
    op.drop_table("sessions")
    op.drop_table("players")

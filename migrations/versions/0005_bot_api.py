"""The Bot API: personal API tokens (stored hashed) and the bot flag of an account.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-27

``api_tokens`` holds a player's personal tokens for the HTTP API (docs/bots.md), as the SHA-256
of the token only: the token itself is shown once, when created. ``players.bot`` marks an
account upgraded to a bot (``POST /api/bot/account/upgrade``; never undone).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("players") as batch:
        batch.add_column(
            sa.Column("bot", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("description", sa.String(length=100), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name=op.f("fk_api_tokens_player_id_players"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_api_tokens_token_hash")),
    )
    with op.batch_alter_table("api_tokens") as batch:
        batch.create_index(batch.f("ix_api_tokens_player_id"), ["player_id"], unique=False)


def downgrade() -> None:
    op.drop_table("api_tokens")
    with op.batch_alter_table("players") as batch:
        batch.drop_column("bot")

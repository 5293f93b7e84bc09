"""offers: stored correspondence seeks and challenges.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-07

A registered player's correspondence seek or challenge outlives the player's connection and a
restart until it is answered, cancelled or withdrawn (docs/correspondence.md, "Seeks and
challenges"): one row each, keyed by the hub's ``key``; a challenge names its ``target_id``.
Rows go with their players (``ON DELETE CASCADE``); both player columns are indexed (a
player's own offers, and the challenges made to them).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "offers",
        sa.Column("key", sa.String(16), nullable=False),
        sa.Column("kind", sa.String(9), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("target_id", sa.Integer(), nullable=True),
        sa.Column("variant", sa.String(32), nullable=False),
        sa.Column("clock_kind", sa.String(16), nullable=False),
        sa.Column("days", sa.SmallInteger(), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("colour", sa.String(6), nullable=False),
        sa.Column("range_low", sa.Integer(), nullable=True),
        sa.Column("range_high", sa.Integer(), nullable=True),
        sa.Column("manual", sa.Boolean(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.CheckConstraint("kind IN ('seek', 'challenge')", name=op.f("ck_offers_kind")),
        sa.CheckConstraint("(kind = 'seek') = (target_id IS NULL)", name=op.f("ck_offers_target")),
        sa.CheckConstraint(
            "clock_kind IN ('correspondence', 'unlimited')", name=op.f("ck_offers_clock_kind")
        ),
        sa.CheckConstraint("colour IN ('first', 'second', 'random')", name=op.f("ck_offers_colour")),
        sa.CheckConstraint("days >= 0", name=op.f("ck_offers_days")),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name=op.f("fk_offers_player_id_players"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["target_id"],
            ["players.id"],
            name=op.f("fk_offers_target_id_players"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_offers")),
    )
    op.create_index(op.f("ix_offers_player_id"), "offers", ["player_id"], unique=False)
    op.create_index(op.f("ix_offers_target_id"), "offers", ["target_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_offers_target_id"), table_name="offers")
    op.drop_index(op.f("ix_offers_player_id"), table_name="offers")
    op.drop_table("offers")

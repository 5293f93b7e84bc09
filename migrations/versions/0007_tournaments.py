"""tournaments, tournament_events: a tournament's settings and the ordered events it is made of.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-07

A tournament *is* its settings plus its ordered events (docs/tournaments.md): one
``tournaments`` row (the settings as JSON in a versioned layout, the creator, the status, the
next deadline, the hub node running it) and one ``tournament_events`` row per event, numbered
0, 1, 2… by ``seq``. The primary key (tournament_id, seq) makes a duplicate or racing append
impossible at the database. Events go with their tournament (``ON DELETE CASCADE``). Column
types are spelled out (as in 0001).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "tournaments",
        sa.Column("id", sa.String(16), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.Column("created_by", sa.String(32), nullable=True),
        sa.Column("status", sa.String(10), server_default=sa.text("'created'"), nullable=False),
        sa.Column("next_deadline_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("owner", sa.String(64), nullable=True),
        sa.CheckConstraint(
            "status IN ('created', 'started', 'finished')", name=op.f("ck_tournaments_status")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournaments")),
    )
    op.create_index(
        op.f("ix_tournaments_status_created_at"),
        "tournaments",
        ["status", "created_at"],
        unique=False,
    )
    op.create_index(
        op.f("ix_tournaments_next_deadline_at"), "tournaments", ["next_deadline_at"], unique=False
    )
    op.create_table(
        "tournament_events",
        sa.Column("tournament_id", sa.String(16), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("event", sa.JSON(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("seq >= 0", name=op.f("ck_tournament_events_seq")),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_tournament_events_tournament_id_tournaments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("tournament_id", "seq", name=op.f("pk_tournament_events")),
    )


def downgrade() -> None:
    op.drop_table("tournament_events")
    op.drop_index(op.f("ix_tournaments_next_deadline_at"), table_name="tournaments")
    op.drop_index(op.f("ix_tournaments_status_created_at"), table_name="tournaments")
    op.drop_table("tournaments")

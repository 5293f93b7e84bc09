"""engine_jobs.owner and served_at (round-robin between players); analyses by requester.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-06

``engine_jobs.owner`` names whom a job serves (the hub's player id: the computer's opponent in
a move job, the requester of an analysis) and ``served_at`` when a worker last acquired it:
``acquire`` hands jobs out round-robin between owners (the owner served longest ago first), so
one player's jobs never make everybody else's wait behind all of them. The index on
``analyses (requested_by, created_at)`` counts a player's requests of the last 24 hours (the
daily quota) and finds their unfinished one. Existing jobs have no owner (served first, as
before: oldest first).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("engine_jobs") as batch:
        batch.add_column(sa.Column("owner", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("served_at", sa.DateTime(timezone=True), nullable=True))
        batch.create_index(
            batch.f("ix_engine_jobs_owner_served_at"), ["owner", "served_at"], unique=False
        )
    with op.batch_alter_table("analyses") as batch:
        batch.create_index(
            batch.f("ix_analyses_requested_by_created_at"),
            ["requested_by", "created_at"],
            unique=False,
        )


def downgrade() -> None:
    with op.batch_alter_table("analyses") as batch:
        batch.drop_index(batch.f("ix_analyses_requested_by_created_at"))
    with op.batch_alter_table("engine_jobs") as batch:
        batch.drop_index(batch.f("ix_engine_jobs_owner_served_at"))
        batch.drop_column("served_at")
        batch.drop_column("owner")

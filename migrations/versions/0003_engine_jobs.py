"""engine_jobs: the work queue of the engine workers (move and analysis jobs).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-27

A job is a row: queued → acquired (leased to a worker until ``lease_until``) → done. A lease
that runs out returns the job to the queue (the next ``acquire`` takes it), so a worker that
dies mid-job loses nothing; the hub's restart loses nothing either, the queue being here.
``payload`` is the job's body as the worker receives it (FISHNET.md), ``result`` what the
workers submitted (a move; an analysis, partial until done). No foreign key to ``games``: a
running game's row is written behind the hub, and a job may be queued before it lands.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def timestamp(name: str, *, nullable: bool = False) -> sa.Column:
    return sa.Column(
        name,
        sa.DateTime(timezone=True),
        server_default=None if nullable else sa.text("CURRENT_TIMESTAMP"),
        nullable=nullable,
    )


def upgrade() -> None:
    op.create_table(
        "engine_jobs",
        sa.Column("id", sa.String(length=16), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("game_id", sa.String(length=16), nullable=False),
        sa.Column("variant", sa.String(length=32), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column(
            "state", sa.String(length=10), server_default=sa.text("'queued'"), nullable=False
        ),
        sa.Column("worker", sa.String(length=64), nullable=True),
        timestamp("lease_until", nullable=True),
        sa.Column("attempts", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("result", sa.JSON(), nullable=True),
        timestamp("created_at"),
        timestamp("updated_at"),
        sa.CheckConstraint("kind IN ('move', 'analysis')", name=op.f("ck_engine_jobs_kind")),
        sa.CheckConstraint(
            "state IN ('queued', 'acquired', 'done')", name=op.f("ck_engine_jobs_state")
        ),
        sa.CheckConstraint("attempts >= 0", name=op.f("ck_engine_jobs_attempts")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_engine_jobs")),
    )
    with op.batch_alter_table("engine_jobs") as batch_op:
        batch_op.create_index(
            batch_op.f("ix_engine_jobs_state_kind_created_at"),
            ["state", "kind", "created_at"],
            unique=False,
        )
        batch_op.create_index(
            batch_op.f("ix_engine_jobs_game_id_kind"), ["game_id", "kind"], unique=False
        )


def downgrade() -> None:
    op.drop_table("engine_jobs")

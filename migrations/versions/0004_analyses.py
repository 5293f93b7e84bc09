"""analyses, analysis_plies: computer analyses of finished games and their per-ply evaluations.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-27

One ``analyses`` row per analysed game (the request: who, the per-position limits, the number
of positions, the state queued → running → done | failed) and one ``analysis_plies`` row per
evaluated position (ply 0 = the start), scores from the first player's view: centipawns or
moves to mate, exactly one of them. Column types are spelled out (as in 0001). Rows of a game go with the game (``ON DELETE CASCADE``).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "analyses",
        sa.Column("game_id", sa.String(16), nullable=False),
        sa.Column("state", sa.String(8), nullable=False),
        sa.Column("requested_by", sa.String(32), nullable=True),
        sa.Column("movetime_ms", sa.Integer(), nullable=True),
        sa.Column("depth", sa.Integer(), nullable=True),
        sa.Column("plies_total", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "state IN ('queued', 'running', 'done', 'failed')", name=op.f("ck_analyses_state")
        ),
        sa.CheckConstraint(
            "plies_total >= 0 AND (movetime_ms IS NULL OR movetime_ms > 0)"
            " AND (depth IS NULL OR depth > 0)",
            name=op.f("ck_analyses_values"),
        ),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_analyses_game_id_games"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("game_id", name=op.f("pk_analyses")),
    )
    op.create_index(
        op.f("ix_analyses_state_created_at"), "analyses", ["state", "created_at"], unique=False
    )
    op.create_table(
        "analysis_plies",
        sa.Column("game_id", sa.String(16), nullable=False),
        sa.Column("ply", sa.Integer(), nullable=False),
        sa.Column("cp", sa.Integer(), nullable=True),
        sa.Column("mate", sa.Integer(), nullable=True),
        sa.Column("best", sa.String(32), nullable=True),
        sa.Column("pv", sa.Text(), nullable=False),
        sa.Column("depth", sa.Integer(), nullable=False),
        sa.Column("nodes", sa.BigInteger(), nullable=True),
        sa.Column("time_ms", sa.Integer(), nullable=False),
        sa.CheckConstraint("ply >= 0", name=op.f("ck_analysis_plies_ply")),
        sa.CheckConstraint("(cp IS NULL) <> (mate IS NULL)", name=op.f("ck_analysis_plies_score")),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["analyses.game_id"],
            name=op.f("fk_analysis_plies_game_id_analyses"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("game_id", "ply", name=op.f("pk_analysis_plies")),
    )


def downgrade() -> None:
    op.drop_table("analysis_plies")
    op.drop_index(op.f("ix_analyses_state_created_at"), table_name="analyses")
    op.drop_table("analyses")

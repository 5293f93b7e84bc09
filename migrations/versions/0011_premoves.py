"""premoves: the players' conditional premoves in correspondence games.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-07

One row per game and player (the player's ``side``, 0 moves first): ``lines`` is a JSON list
of lines, each a list of moves alternating the opponent's move and the player's reply, from the
position after ``from_ply`` moves (docs/correspondence.md, "Conditional premoves"). Rows of a
game go with the game (``ON DELETE CASCADE``).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "premoves",
        sa.Column("game_id", sa.String(16), nullable=False),
        sa.Column("side", sa.SmallInteger(), autoincrement=False, nullable=False),
        sa.Column("from_ply", sa.Integer(), nullable=False),
        sa.Column("lines", sa.JSON(), nullable=False),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.CheckConstraint("side IN (0, 1)", name=op.f("ck_premoves_side")),
        sa.CheckConstraint("from_ply >= 0", name=op.f("ck_premoves_from_ply")),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_premoves_game_id_games"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("game_id", "side", name=op.f("pk_premoves")),
    )


def downgrade() -> None:
    op.drop_table("premoves")

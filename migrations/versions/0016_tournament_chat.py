"""tournament_chat: the lines of the tournaments' chats.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-07

One row per line (docs/tournaments.md, "Chat"): the tournament, when, who (the player's id,
and the name shown then) and the text (at most 140 characters). ``id`` orders the lines; the
index (tournament_id, id) serves a watch's read of a tournament's last 50. Lines go with their
tournament and with their player (``ON DELETE CASCADE``).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "tournament_chat",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("tournament_id", sa.String(16), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(32), nullable=False),
        sa.Column("text", sa.String(140), nullable=False),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_tournament_chat_tournament_id_tournaments"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name=op.f("fk_tournament_chat_player_id_players"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournament_chat")),
    )
    op.create_index(
        op.f("ix_tournament_chat_tournament_id_id"),
        "tournament_chat",
        ["tournament_id", "id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_tournament_chat_player_id"), "tournament_chat", ["player_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_tournament_chat_player_id"), table_name="tournament_chat")
    op.drop_index(op.f("ix_tournament_chat_tournament_id_id"), table_name="tournament_chat")
    op.drop_table("tournament_chat")

"""games.tournament_id, tournament_round, berserk: a game names its tournament and round.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-07

A tournament's games are ordinary games (docs/tournaments.md); the row says which tournament
and round (an arena's wave) it belongs to, and who berserked (1 the first player, 2 the
second, 3 both), so that the review and export views show them and a director resumed after
a restart reads a game's end that came while none ran. No foreign key: a game outlives
nothing it names, and the tournament's own ``Paired`` event is the authority.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("tournament_id", sa.String(16), nullable=True))
        batch.add_column(sa.Column("tournament_round", sa.Integer(), nullable=True))
        batch.add_column(
            sa.Column("berserk", sa.Integer(), server_default=sa.text("0"), nullable=False)
        )
        batch.create_index(
            batch.f("ix_games_tournament_id_tournament_round"),
            ["tournament_id", "tournament_round"],
            unique=False,
        )


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_index(batch.f("ix_games_tournament_id_tournament_round"))
        batch.drop_column("berserk")
        batch.drop_column("tournament_round")
        batch.drop_column("tournament_id")

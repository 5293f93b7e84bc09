"""games: a partial index on the running games a cluster's takeover sweep lists.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-07

In a cluster no node holds a correspondence game between two registered players until it is
used (docs/correspondence.md "Memory"), so the sweep that takes over a dead node's games lists
all the other running games only (``Store.unfinished_games``). Found through the ``status``
index, the query read and filtered every running correspondence game on each sweep (about a
second of the database's time for 100,000 of them, every third of a lease TTL); the partial
index holds exactly the rows listed, so the sweep's work no longer grows with their number.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_WHERE = (
    "status IN ('created', 'started') AND (speed <> 'correspondence'"
    " OR first_player_id IS NULL OR second_player_id IS NULL)"
)


def upgrade() -> None:
    op.create_index(
        "ix_games_swept",
        "games",
        ["id"],
        postgresql_where=sa.text(_WHERE),
        sqlite_where=sa.text(_WHERE),
    )


def downgrade() -> None:
    op.drop_index("ix_games_swept", table_name="games")

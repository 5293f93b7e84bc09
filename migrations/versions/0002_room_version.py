"""games.room_version: a running game's last room event version, kept across a graceful stop.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-25

A hub that stops gracefully writes, for every game it was running, the version ``v`` of the
room's last event; the next hub to resume the game continues from there, so the versions a
client sees form one gapless sequence across the restart. The value is taken (read and
cleared) when the game is resumed: after a crash there is none, and the resumed room's
versions jump above any that can have been issued.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("room_version", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_column("room_version")

"""games.deadline_ms: a running correspondence game's deadline, indexed (cold rooms).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-07

A correspondence game nobody looks at is not held in a hub's memory (docs/correspondence.md
"Memory"); its deadline lives here instead, in ms since the epoch: the turn start (the last
move's ``game_moves.created_at``, else ``games.started_at``) + the days per move (``base_ms``).
The partial index holds the running games that have one, so that the hub's timer reads the due
ones without scanning. The running correspondence games are filled in from their moves.
"""

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_WHERE = "deadline_ms IS NOT NULL AND status IN ('created', 'started')"


def _ms(moment: datetime) -> int:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("deadline_ms", sa.BigInteger(), nullable=True))
    op.create_index(
        op.f("ix_games_deadline_ms"),
        "games",
        ["deadline_ms"],
        postgresql_where=sa.text(_WHERE),
        sqlite_where=sa.text(_WHERE),
    )
    connection = op.get_bind()
    running = connection.execute(
        sa.text(
            "SELECT g.id, g.base_ms, COALESCE(MAX(m.created_at), g.started_at, g.created_at) "
            "FROM games g LEFT JOIN game_moves m ON m.game_id = g.id "
            "WHERE g.clock_kind = 'correspondence' AND g.status IN ('created', 'started') "
            "GROUP BY g.id, g.base_ms, g.started_at, g.created_at"
        )
    ).all()
    for game_id, base_ms, turn_started in running:
        if isinstance(turn_started, str):  # SQLite: the instant as text
            turn_started = datetime.fromisoformat(turn_started)
        connection.execute(
            sa.text("UPDATE games SET deadline_ms = :deadline WHERE id = :id"),
            {"deadline": _ms(turn_started) + base_ms, "id": game_id},
        )


def downgrade() -> None:
    op.drop_index(op.f("ix_games_deadline_ms"), table_name="games")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("deadline_ms")

"""games.clock_kind: the correspondence kinds ('correspondence', 'unlimited').

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-07

A correspondence game (docs/correspondence.md) keeps its days per move as ``base_ms`` (the
whole allowance of every turn, ``days * 86 400 000``) with the kind ``'correspondence'``; a game
without a clock has the kind ``'unlimited'`` and every clock column 0. ``clock_kind`` widens to
16 characters for them and its check names the four kinds. The instant a turn started, which a
restored correspondence game needs for its deadline, is already stored: ``game_moves.created_at``
of the last move (the recorder stamps it with the instant the move was played), else
``games.started_at``.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_KINDS = "clock_kind IN ('fischer', 'byoyomi', 'correspondence', 'unlimited')"
_OLD_KINDS = "clock_kind IN ('fischer', 'byoyomi')"


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_constraint(op.f("ck_games_clock_kind"), type_="check")
        batch.alter_column(
            "clock_kind", existing_type=sa.String(8), type_=sa.String(16), existing_nullable=False
        )
        batch.create_check_constraint(op.f("ck_games_clock_kind"), _KINDS)


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_constraint(op.f("ck_games_clock_kind"), type_="check")
        batch.alter_column(
            "clock_kind", existing_type=sa.String(16), type_=sa.String(8), existing_nullable=False
        )
        batch.create_check_constraint(op.f("ck_games_clock_kind"), _OLD_KINDS)

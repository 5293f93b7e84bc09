"""mail_settings, mail_sent: e-mail notifications of correspondence games.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-07

A registered player may give an e-mail address and opt in to a mail when it is their turn in a
correspondence game or one ended (docs/correspondence.md, "E-mail"): one ``mail_settings`` row
per player who set anything (the address, the opt-in, the mails sent on the UTC day ``day`` for
the daily cap). ``mail_sent`` keeps when a player was last mailed about a game, so that at most
one mail per (player, game) per hour goes out, across restarts and hubs; ``due_at`` marks a turn
held back by that hour, mailed at its end if it is still the player's turn (indexed: the hubs
look for due ones every minute). Both go with their
player (and ``mail_sent`` with its game): ``ON DELETE CASCADE``. Column types are spelled out
(as in 0001).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "mail_settings",
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("email", sa.String(254), nullable=True),
        sa.Column("opt_in", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("day", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("sent_on_day", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name=op.f("fk_mail_settings_player_id_players"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("player_id", name=op.f("pk_mail_settings")),
    )
    op.create_table(
        "mail_sent",
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.String(16), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name=op.f("fk_mail_sent_player_id_players"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
            name=op.f("fk_mail_sent_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("player_id", "game_id", name=op.f("pk_mail_sent")),
    )
    op.create_index(op.f("ix_mail_sent_due_at"), "mail_sent", ["due_at"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_mail_sent_due_at"), table_name="mail_sent")
    op.drop_table("mail_sent")
    op.drop_table("mail_settings")

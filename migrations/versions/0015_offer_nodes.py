"""offers.node: the cluster node holding a stored seek or challenge.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-07

In a cluster a stored correspondence seek or challenge lives in one node's hub; ``node`` names
it (the node id and a suffix of that process's start), so that the rows of a dead node, or of
a node's earlier life, are claimed by exactly one live process (an ``UPDATE … WHERE node =
<dead>``: each row changes hands once). NULL on one process. Indexed: each process reads its
own rows.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("offers") as batch:
        batch.add_column(sa.Column("node", sa.String(64), nullable=True))
        batch.create_index(batch.f("ix_offers_node"), ["node"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("offers") as batch:
        batch.drop_index(batch.f("ix_offers_node"))
        batch.drop_column("node")

"""A publication's own ``reinit_detached`` rule (SP_REINIT_DETACHED; NULL: ``[snaprepl] reinit_detached``):
whether a detached subscriber's next sync pulls its local changes and reloads it, or fails saying it
needs REPL_INIT_SNAPSHOT.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

REINIT = "1: reload a detached subscriber at its next sync, 0: never (NULL = [snaprepl] reinit_detached)"


def upgrade() -> None:
    with op.batch_alter_table("SYS_SNAPSHOT_PUB") as batch:
        batch.add_column(sa.Column("SP_REINIT_DETACHED", sa.Integer(), nullable=True, comment=REINIT))


def downgrade() -> None:
    with op.batch_alter_table("SYS_SNAPSHOT_PUB") as batch:
        batch.drop_column("SP_REINIT_DETACHED")

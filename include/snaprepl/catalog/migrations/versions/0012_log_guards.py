"""Guards of the log triggers (issue 20, item 2): SNL_GUARD records, per log, what its guard saw (the
triggers' creation times, the table's identity, the events already handled); SS_NEEDS_INIT says why a
subscriber's replica needs REPL_INIT_SNAPSHOT again (a TRUNCATE or a missing trigger on either side).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("SYS_SNAPSHOT_LOG") as batch:
        batch.add_column(
            sa.Column(
                "SNL_GUARD",
                sa.Text(),
                nullable=True,
                comment="JSON: what guards its triggers recorded (trigger times, table identity, events seen)",
            )
        )
    with op.batch_alter_table("SYS_SNAPSHOT_SUB") as batch:
        batch.add_column(
            sa.Column(
                "SS_NEEDS_INIT",
                sa.Text(),
                nullable=True,
                comment="why the replica needs REPL_INIT_SNAPSHOT again (NULL = it does not)",
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("SYS_SNAPSHOT_SUB") as batch:
        batch.drop_column("SS_NEEDS_INIT")
    with op.batch_alter_table("SYS_SNAPSHOT_LOG") as batch:
        batch.drop_column("SNL_GUARD")

"""The foreign-key cascades a snapshot log follows (SNL_CASCADES): the extra triggers a log has on the
tables whose cascades fire no trigger on its table (InnoDB), so DROP SNAPSHOT LOG drops them, and the
cascade paths they cover, compared with the database's at each refresh.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("SYS_SNAPSHOT_LOG") as batch:
        batch.add_column(
            sa.Column(
                "SNL_CASCADES",
                sa.Text,
                nullable=True,
                comment="JSON: triggers on the tables that cascade into it, and the paths",
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("SYS_SNAPSHOT_LOG") as batch:
        batch.drop_column("SNL_CASCADES")

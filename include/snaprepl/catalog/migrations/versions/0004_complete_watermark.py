"""A complete refresh records the log high-water mark its copy started from (SN_COMPLETE_TS): a log
purged before that mark lost only entries the copy already holds, so the next incremental refresh
must not demand another complete refresh (it did when a forced purge used smaller offsets than the
refreshes' tolerance).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("SYS_SNAPSHOT") as batch:
        batch.add_column(
            sa.Column(
                "SN_COMPLETE_TS",
                TIMESTAMP,
                nullable=True,
                comment="log high-water mark (source clock) of the last complete refresh: "
                "log purged before it is not needed",
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("SYS_SNAPSHOT") as batch:
        batch.drop_column("SN_COMPLETE_TS")

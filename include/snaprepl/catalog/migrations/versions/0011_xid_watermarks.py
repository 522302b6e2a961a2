"""Exact watermarks: the transaction-id snapshot a snapshot's log was last read up to (SN_XID_SNAPSHOT),
and a subscription's pull and push (SS_PULL_XIDS, SS_PUSH_XIDS), for PostgreSQL logs that record each
writer's transaction id. NULL: the log is read by SNAPTIME, from the (capped) watermark.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

COMMENT = "source's transaction-id snapshot (pg_snapshot text) the log was last read up to; NULL: by SNAPTIME"


def upgrade() -> None:
    with op.batch_alter_table("SYS_SNAPSHOT") as batch:
        batch.add_column(sa.Column("SN_XID_SNAPSHOT", sa.Text, nullable=True, comment=COMMENT))
    with op.batch_alter_table("SYS_SNAPSHOT_SUB") as batch:
        batch.add_column(sa.Column("SS_PULL_XIDS", sa.Text, nullable=True, comment="subscriber: " + COMMENT))
        batch.add_column(sa.Column("SS_PUSH_XIDS", sa.Text, nullable=True, comment="publisher: " + COMMENT))


def downgrade() -> None:
    with op.batch_alter_table("SYS_SNAPSHOT_SUB") as batch:
        batch.drop_column("SS_PUSH_XIDS")
        batch.drop_column("SS_PULL_XIDS")
    with op.batch_alter_table("SYS_SNAPSHOT") as batch:
        batch.drop_column("SN_XID_SNAPSHOT")

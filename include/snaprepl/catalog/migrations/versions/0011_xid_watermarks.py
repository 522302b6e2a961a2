"""Exact watermarks: the transaction-id snapshot a snapshot's log was last read up to (SN_XID_SNAPSHOT),
for PostgreSQL logs that record each writer's transaction id (pulls and pushes bound their SNAPTIME
watermarks at the oldest open transaction instead). NULL: the log is read by SNAPTIME, from the (capped) watermark.

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


def downgrade() -> None:
    with op.batch_alter_table("SYS_SNAPSHOT") as batch:
        batch.drop_column("SN_XID_SNAPSHOT")

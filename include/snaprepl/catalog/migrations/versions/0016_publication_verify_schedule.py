"""A verify schedule per publication (SP_VERIFY_SCHEDULE): when set, the DAG factory adds a verify DAG
for the publication, one task per subscriber's replica (off by default), as 0013 did per snapshot.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

COMMENT = "Airflow schedule of the replicas' verify DAG (NULL = none)"


def upgrade() -> None:
    with op.batch_alter_table("SYS_SNAPSHOT_PUB") as batch:
        batch.add_column(sa.Column("SP_VERIFY_SCHEDULE", sa.String(100), nullable=True, comment=COMMENT))


def downgrade() -> None:
    with op.batch_alter_table("SYS_SNAPSHOT_PUB") as batch:
        batch.drop_column("SP_VERIFY_SCHEDULE")

"""A verify schedule per snapshot (SN_VERIFY_SCHEDULE): when set, the DAG factory adds a verify DAG
for the snapshot (off by default).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

COMMENT = "Airflow schedule of the verify DAG (NULL = none)"


def upgrade() -> None:
    with op.batch_alter_table("SYS_SNAPSHOT") as batch:
        batch.add_column(sa.Column("SN_VERIFY_SCHEDULE", sa.String(100), nullable=True, comment=COMMENT))


def downgrade() -> None:
    with op.batch_alter_table("SYS_SNAPSHOT") as batch:
        batch.drop_column("SN_VERIFY_SCHEDULE")

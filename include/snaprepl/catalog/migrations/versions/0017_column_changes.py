"""Schema changes a snapshot saw at its source (SN_COLUMN_CHANGES, JSON): columns added to the
destination, columns dropped at the source and kept in the destination with their values, and
columns widened (issue 25, item 3).

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

COMMENT = "JSON: columns added, kept (dropped at the source) and widened, as refreshes found them"


def upgrade() -> None:
    with op.batch_alter_table("SYS_SNAPSHOT") as batch:
        batch.add_column(sa.Column("SN_COLUMN_CHANGES", sa.Text, nullable=True, comment=COMMENT))


def downgrade() -> None:
    with op.batch_alter_table("SYS_SNAPSHOT") as batch:
        batch.drop_column("SN_COLUMN_CHANGES")

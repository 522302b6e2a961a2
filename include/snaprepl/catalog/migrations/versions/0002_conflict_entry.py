"""The conflict ledger names the log entry each conflict came from, so that a sync run again after
being killed records each conflict once, even when the first run had already applied it.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

# MySQL/MariaDB only: microseconds, and one byte per character of server names and row versions
# (keys stay under InnoDB's 3,072 bytes). Other databases get the plain types.
TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
ASCII_IDENT = sa.String(length=255).with_variant(
    mysql.VARCHAR(255, charset="ascii", collation="ascii_bin"), "mysql", "mariadb"
)

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("SYS_SNAPSHOT_CONFLICT") as batch:
        batch.add_column(
            sa.Column(
                "CF_ENTRY",
                ASCII_IDENT,
                nullable=True,
                comment="RLOG_ROWGUID of the incoming log entry: a conflict is recorded once",
            )
        )
        batch.create_unique_constraint("uq_sys_snapshot_conflict_entry", ["CF_ITEM", "CF_ORIGIN", "CF_ENTRY"])


def downgrade() -> None:
    with op.batch_alter_table("SYS_SNAPSHOT_CONFLICT") as batch:
        batch.drop_constraint("uq_sys_snapshot_conflict_entry", type_="unique")
        batch.drop_column("CF_ENTRY")

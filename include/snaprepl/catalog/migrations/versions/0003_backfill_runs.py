"""A backfill refreshes completely once: SYS_REPL_BACKFILL records, per Airflow backfill and
target, the run that did it. SYS_REPL_LEASE_LOG keeps each lease's acquisitions and releases, so
that overlapping runs can be ruled out after the fact.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "SYS_REPL_LEASE_LOG",
        sa.Column("LL_ID", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("LL_LOCK_NAME", sa.String(length=400), nullable=False, comment="the lease (SYS_REPL_LOCK.LOCK_NAME)"),
        sa.Column("LL_RUN_ID", sa.String(length=64), nullable=False),
        sa.Column("LL_HOLDER", sa.String(length=255), nullable=False),
        sa.Column("LL_ACQUIRED_AT", TIMESTAMP, nullable=False),
        sa.Column(
            "LL_RELEASED_AT", TIMESTAMP, nullable=True, comment="NULL while held; when taken over, the takeover's time"
        ),
        sa.PrimaryKeyConstraint("LL_ID"),
    )
    op.create_index("ix_sys_repl_lease_log_name_at", "SYS_REPL_LEASE_LOG", ["LL_LOCK_NAME", "LL_ACQUIRED_AT"])
    op.create_table(
        "SYS_REPL_BACKFILL",
        sa.Column("BF_ID", sa.String(length=64), nullable=False, comment="Airflow backfill id"),
        sa.Column("BF_TARGET", sa.String(length=400), nullable=False, comment="snapshot, or <step>:<item>:<server>"),
        sa.Column("BF_DAG_ID", sa.String(length=250), nullable=False),
        sa.Column(
            "BF_RUN_ID", sa.String(length=250), nullable=False, comment="the backfill run that did the complete refresh"
        ),
        sa.Column("BF_AT", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("BF_ID", "BF_TARGET"),
    )


def downgrade() -> None:
    op.drop_table("SYS_REPL_BACKFILL")
    op.drop_index("ix_sys_repl_lease_log_name_at", table_name="SYS_REPL_LEASE_LOG")
    op.drop_table("SYS_REPL_LEASE_LOG")

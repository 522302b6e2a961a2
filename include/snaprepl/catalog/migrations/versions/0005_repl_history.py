"""SYS_REPL_HISTORY keeps one row per refresh, pull, push and initial load (from the command line or
a DAG, failed and idle ones too), with its rows, outcome, lag and backlog, so that status, the
Replication page and alerts see more than the last run.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "SYS_REPL_HISTORY",
        sa.Column("RH_ID", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column(
            "RH_COPY", sa.String(length=400), nullable=False, comment="snapshot (SN_NAME) or publication item (SP_ITEM)"
        ),
        sa.Column("RH_KIND", sa.String(length=20), nullable=False, comment="incremental, complete, pull, push or init"),
        sa.Column(
            "RH_SERVER", sa.String(length=255), nullable=True, comment="subscriber of a sync step; NULL for snapshots"
        ),
        sa.Column("RH_STARTED", TIMESTAMP, nullable=False),
        sa.Column("RH_ENDED", TIMESTAMP, nullable=False),
        sa.Column("RH_ROWS_IN", sa.BigInteger(), nullable=True, comment="rows read or changes taken"),
        sa.Column("RH_ROWS_OUT", sa.BigInteger(), nullable=True, comment="rows upserted"),
        sa.Column("RH_ROWS_DELETED", sa.BigInteger(), nullable=True),
        sa.Column("RH_CONFLICTS", sa.Integer(), nullable=True),
        sa.Column("RH_OUTCOME", sa.String(length=20), nullable=False, comment="ok, idle or failed"),
        sa.Column("RH_ERROR", sa.Text(), nullable=True, comment="why the run failed (no secrets)"),
        sa.Column(
            "RH_DAG_RUN_ID", sa.String(length=250), nullable=True, comment="Airflow DAG run; NULL from the command line"
        ),
        sa.Column(
            "RH_LAG_SECONDS",
            sa.Float(),
            nullable=True,
            comment="source clock minus the newest applied SNAPTIME at the end; 0 caught up",
        ),
        sa.Column("RH_BACKLOG", sa.BigInteger(), nullable=True, comment="log rows still pending after the run"),
        sa.PrimaryKeyConstraint("RH_ID"),
    )
    op.create_index("ix_sys_repl_history_copy_started", "SYS_REPL_HISTORY", ["RH_COPY", "RH_STARTED"])


def downgrade() -> None:
    op.drop_index("ix_sys_repl_history_copy_started", table_name="SYS_REPL_HISTORY")
    op.drop_table("SYS_REPL_HISTORY")

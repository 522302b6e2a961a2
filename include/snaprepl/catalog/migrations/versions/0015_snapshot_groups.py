"""Snapshot groups (issue 25): SYS_SNAPSHOT_GROUP (a group over a source schema, its schedule and the
consistent point of its last refresh per source) and SYS_SNAPSHOT_GROUP_MEMBER (which snapshots are in
which group; a snapshot is in one group at most).

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def upgrade() -> None:
    op.create_table(
        "SYS_SNAPSHOT_GROUP",
        sa.Column("SG_NAME", sa.String(400), primary_key=True, comment="group: name@dest_conn"),
        sa.Column("SG_DEST_CONN", sa.String(255), nullable=False),
        sa.Column(
            "SG_DEST_SCHEMA", sa.String(255), nullable=False, comment="schema the members' destinations are made in"
        ),
        sa.Column("SG_SOURCE_CONN", sa.String(255), nullable=False),
        sa.Column(
            "SG_SOURCE_SCHEMA", sa.String(255), nullable=False, comment="schema whose tables the group replicates"
        ),
        sa.Column(
            "SG_EXCLUDE",
            sa.Text(),
            nullable=True,
            comment="JSON list of table-name patterns left out (fnmatch, any case)",
        ),
        sa.Column("SG_INCLUDE_NEW", sa.Integer(), nullable=False, comment="1: new source tables join at a refresh"),
        sa.Column(
            "SG_SCHEDULE", sa.String(100), nullable=True, comment="Airflow schedule of the group's DAG (NULL = manual)"
        ),
        sa.Column(
            "SG_POINTS",
            sa.Text(),
            nullable=True,
            comment="JSON {source conn: ISO high-water mark} of the last group refresh",
        ),
        sa.Column("SG_CREATED_AT", TIMESTAMP, nullable=False),
        sa.Column("SG_LAST_REFRESH_AT", TIMESTAMP, nullable=True),
        sa.Column("SG_LAST_STATUS", sa.String(20), nullable=True, comment="running, succeeded or failed"),
        sa.Column("SG_LAST_ERROR", sa.Text(), nullable=True),
        sa.Column(
            "SG_SKIPPED", sa.Text(), nullable=True, comment="JSON {table: why} of source tables not in the group"
        ),
    )
    op.create_table(
        "SYS_SNAPSHOT_GROUP_MEMBER",
        sa.Column(
            "SGM_SNAPSHOT", sa.String(400), primary_key=True, comment="member snapshot (SN_NAME): in one group at most"
        ),
        sa.Column("SGM_GROUP", sa.String(400), nullable=False, comment="its group (SG_NAME)"),
        sa.Column("SGM_ADDED_AT", TIMESTAMP, nullable=False),
    )
    op.create_index("ix_sys_snapshot_group_member_group", "SYS_SNAPSHOT_GROUP_MEMBER", ["SGM_GROUP"])


def downgrade() -> None:
    op.drop_index("ix_sys_snapshot_group_member_group", table_name="SYS_SNAPSHOT_GROUP_MEMBER")
    op.drop_table("SYS_SNAPSHOT_GROUP_MEMBER")
    op.drop_table("SYS_SNAPSHOT_GROUP")

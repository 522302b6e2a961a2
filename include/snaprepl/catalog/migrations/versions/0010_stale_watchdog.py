"""Stale subscribers and the freshness watchdog: a publication's own stale threshold and detach rule
(SP_STALE_AFTER_HOURS, SP_DETACH_STALE; NULL: ``[snaprepl] stale_after_hours`` / ``detach_stale``), when
a subscriber was detached from the publisher's log (SS_DETACHED_AT), and the conditions the watchdog
has alerted on and not yet seen clear (SYS_WATCHDOG).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

STALE = "hours without a successful step before a subscriber is stale (NULL = [snaprepl] stale_after_hours)"
DETACH = "1: detach stale subscribers, 0: never (NULL = [snaprepl] detach_stale)"
DETACHED = "when the subscriber stopped holding the publisher's log purge back (it needs REPL_INIT_SNAPSHOT)"
TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def upgrade() -> None:
    with op.batch_alter_table("SYS_SNAPSHOT_PUB") as batch:
        batch.add_column(sa.Column("SP_STALE_AFTER_HOURS", sa.Integer(), nullable=True, comment=STALE))
        batch.add_column(sa.Column("SP_DETACH_STALE", sa.Integer(), nullable=True, comment=DETACH))
    with op.batch_alter_table("SYS_SNAPSHOT_SUB") as batch:
        batch.add_column(sa.Column("SS_DETACHED_AT", TIMESTAMP, nullable=True, comment=DETACHED))
    op.create_table(
        "SYS_WATCHDOG",
        sa.Column("WD_KEY", sa.String(600), primary_key=True, comment="<condition>:<copy>[:<server>]"),
        sa.Column("WD_CONDITION", sa.String(20), nullable=False, comment="lag, stale, paused or backlog"),
        sa.Column("WD_COPY", sa.String(400), nullable=False, comment="snapshot, publication item or log"),
        sa.Column("WD_SERVER", sa.String(255), nullable=True),
        sa.Column("WD_SINCE", TIMESTAMP, nullable=False, comment="when the condition started"),
        sa.Column("WD_DETAIL", sa.Text(), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("SYS_WATCHDOG")
    with op.batch_alter_table("SYS_SNAPSHOT_SUB") as batch:
        batch.drop_column("SS_DETACHED_AT")
    with op.batch_alter_table("SYS_SNAPSHOT_PUB") as batch:
        batch.drop_column("SP_DETACH_STALE")
        batch.drop_column("SP_STALE_AFTER_HOURS")

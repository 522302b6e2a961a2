"""The SYS_* catalog: snapshots, snapshot logs, servers, publications, subscriptions,
conflict resolvers, replay logs, the conflict ledger and run locks.

Revision ID: 0001
Revises:
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

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


# Over the 60-line limit on purpose: a released migration is a frozen record of the schema it made and never changes.
def upgrade() -> None:
    op.create_table(
        "SYS_REPL_LOCK",
        sa.Column(
            "LOCK_NAME",
            sa.String(length=400),
            nullable=False,
            comment="snapshot:<name>, pull:<item>, push:<item>:<server>, ...",
        ),
        sa.Column("RUN_ID", sa.String(length=64), nullable=False, comment="run holding the lock"),
        sa.Column("HOLDER", sa.String(length=255), nullable=False, comment="host:pid of that run"),
        sa.Column("HEARTBEAT", TIMESTAMP, nullable=False, comment="last sign of life of that run"),
        sa.PrimaryKeyConstraint("LOCK_NAME"),
    )
    op.create_table(
        "SYS_RPLOG",
        sa.Column(
            "TARGET", sa.String(length=400), nullable=False, comment="snapshot (SN_NAME) the entry was applied to"
        ),
        sa.Column("RLOG_ROWGUID", ASCII_IDENT, nullable=False),
        sa.Column("SNAPTIME", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("TARGET", "RLOG_ROWGUID"),
    )
    op.create_index("ix_sys_rplog_target_snaptime", "SYS_RPLOG", ["TARGET", "SNAPTIME"], unique=False)

    op.create_table(
        "SYS_SERVERS",
        sa.Column("SERVER", sa.String(length=255), nullable=False, comment="unique replication name"),
        sa.Column("DB_ADDRESS", sa.String(length=255), nullable=False, comment="Airflow connection id"),
        sa.Column("CREATED_AT", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("SERVER"),
        sa.UniqueConstraint("DB_ADDRESS"),
    )
    op.create_table(
        "SYS_SNAPSHOT",
        sa.Column("SN_NAME", sa.String(length=400), nullable=False, comment="destination table: schema.table@conn_id"),
        sa.Column("SN_QUERY", sa.Text(), nullable=False, comment="query whose result the destination holds"),
        sa.Column(
            "SN_LAST_TS",
            TIMESTAMP,
            nullable=True,
            comment="SNAPTIME of the last log group applied (source clock, UTC)",
        ),
        sa.Column(
            "SN_IS_INCREMENTAL", sa.Integer(), nullable=True, comment="NULL: nonincremental; otherwise incremental"
        ),
        sa.Column(
            "SN_SOURCE_TABLE",
            sa.String(length=400),
            nullable=True,
            comment="incremental: the source table (its SYS_SNAPSHOT_LOG key)",
        ),
        sa.Column("SN_LAST_UPD_BM", sa.Text(), nullable=True, comment="bookmark of an unfinished complete refresh"),
        sa.Column("SN_SOURCE_CONN", sa.String(length=255), nullable=False, comment="connection the query runs on"),
        sa.Column("SN_DEST_CONN", sa.String(length=255), nullable=False),
        sa.Column("SN_DEST_SCHEMA", sa.String(length=255), nullable=False),
        sa.Column("SN_DEST_TABLE", sa.String(length=255), nullable=False),
        sa.Column(
            "SN_COLUMNS",
            sa.Text(),
            nullable=True,
            comment="incremental: JSON list of chosen source columns (NULL = all)",
        ),
        sa.Column(
            "SN_CONDITION", sa.Text(), nullable=True, comment="incremental: WHERE condition in the source dialect"
        ),
        sa.Column("SN_KEY_COLUMNS", sa.Text(), nullable=True, comment="JSON list of the destination's key columns"),
        sa.Column(
            "SN_SCHEDULE",
            sa.String(length=100),
            nullable=True,
            comment="Airflow schedule of the refresh DAG (NULL = manual)",
        ),
        sa.Column("SN_TOLERANCE_MIN", sa.Integer(), nullable=True, comment="tolerance window override in minutes"),
        sa.Column(
            "SN_NEEDS_COMPLETE",
            sa.Text(),
            nullable=True,
            comment="why a complete refresh is required (NULL = not required)",
        ),
        sa.Column("SN_CREATED_AT", TIMESTAMP, nullable=False),
        sa.Column("SN_LAST_REFRESH_AT", TIMESTAMP, nullable=True),
        sa.Column("SN_LAST_REFRESH_KIND", sa.String(length=20), nullable=True, comment="incremental or complete"),
        sa.Column("SN_LAST_STATUS", sa.String(length=20), nullable=True, comment="running, succeeded or failed"),
        sa.Column("SN_LAST_ERROR", sa.Text(), nullable=True),
        sa.Column("SN_LAST_ROWS_UPSERTED", sa.BigInteger(), nullable=True),
        sa.Column("SN_LAST_ROWS_DELETED", sa.BigInteger(), nullable=True),
        sa.Column("SN_LAST_ROWS_COPIED", sa.BigInteger(), nullable=True),
        sa.Column("SN_LAST_DURATION_S", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("SN_NAME"),
        sa.UniqueConstraint("SN_DEST_CONN", "SN_DEST_SCHEMA", "SN_DEST_TABLE", name="uq_sys_snapshot_dest"),
    )
    op.create_table(
        "SYS_SNAPSHOT_CONFLICT",
        sa.Column("CF_ID", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("CF_ITEM", sa.String(length=400), nullable=False),
        sa.Column("CF_TYPE", sa.String(length=1), nullable=False, comment="I (uniqueness), U (update) or D (delete)"),
        sa.Column("CF_ORIGIN", ASCII_IDENT, nullable=False, comment="server the incoming change came from"),
        sa.Column("CF_KEY", sa.Text(), nullable=False, comment="JSON primary key"),
        sa.Column("CF_INCOMING", sa.Text(), nullable=True, comment="JSON row as it came in"),
        sa.Column("CF_CURRENT", sa.Text(), nullable=True, comment="JSON publisher row at the time"),
        sa.Column("CF_RESOLVER", sa.String(length=500), nullable=True, comment="resolver that decided, or 'default'"),
        sa.Column(
            "CF_DECISION", sa.Integer(), nullable=False, comment="1 sub wins, 2 sub wins changed, 3 pub wins, 4 ignore"
        ),
        sa.Column("CF_LOSER", sa.Text(), nullable=True, comment="JSON of the losing row"),
        sa.Column("CF_AT", TIMESTAMP, nullable=False),
        sa.Column("CF_NOTIFIED", sa.Boolean(), nullable=False),
        sa.Column("CF_RUN_ID", sa.String(length=64), nullable=True, comment="sync run that met the conflict"),
        sa.PrimaryKeyConstraint("CF_ID"),
    )
    op.create_index("ix_sys_snapshot_conflict_item_at", "SYS_SNAPSHOT_CONFLICT", ["CF_ITEM", "CF_AT"], unique=False)

    op.create_table(
        "SYS_SNAPSHOT_CR",
        sa.Column("CR_ID", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("CR_TABLE_NAME", sa.String(length=400), nullable=False),
        sa.Column("CR_TYPE", sa.String(length=1), nullable=False, comment="I, U or D"),
        sa.Column("CR_PROC", sa.String(length=500), nullable=False, comment="resolver: package.module:function"),
        sa.Column("CR_ORDER", sa.Integer(), nullable=False),
        sa.Column(
            "CR_CLASS",
            sa.String(length=20),
            nullable=True,
            comment="generated class (min, max, ave, pub_wins, sub_wins) or NULL",
        ),
        sa.Column("CR_COLUMN", sa.String(length=255), nullable=True, comment="column of min, max and ave resolvers"),
        sa.Column("CR_SUFFIX", sa.String(length=255), nullable=True),
        sa.PrimaryKeyConstraint("CR_ID"),
        sa.UniqueConstraint("CR_TABLE_NAME", "CR_TYPE", "CR_ORDER", name="uq_sys_snapshot_cr_order"),
    )
    op.create_table(
        "SYS_SNAPSHOT_LOG",
        sa.Column("SNL_SOURCE", sa.String(length=400), nullable=False, comment="source table: schema.table@conn_id"),
        sa.Column("SNL_RLOG", sa.String(length=255), nullable=False, comment="snapshot log table, beside the source"),
        sa.Column("SNL_RPLOG", sa.String(length=255), nullable=False, comment="replay log table (in this catalog)"),
        sa.Column("SNL_CONN", sa.String(length=255), nullable=False),
        sa.Column("SNL_SCHEMA", sa.String(length=255), nullable=False),
        sa.Column("SNL_TABLE", sa.String(length=255), nullable=False),
        sa.Column("SNL_DIALECT", sa.String(length=20), nullable=False),
        sa.Column("SNL_KEY_COLUMNS", sa.Text(), nullable=False, comment="JSON list of the source's primary key"),
        sa.Column("SNL_OBJECTS", sa.Text(), nullable=False, comment="JSON: names of the log's database objects"),
        sa.Column("SNL_KIND", sa.String(length=20), nullable=False, comment="snapshot, or bidir for publications"),
        sa.Column(
            "SNL_PURGED_BEFORE", TIMESTAMP, nullable=True, comment="entries older than this may have been purged"
        ),
        sa.Column("SNL_LAST_PURGE_AT", TIMESTAMP, nullable=True),
        sa.Column("SNL_CREATED_AT", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("SNL_SOURCE"),
    )
    op.create_table(
        "SYS_SNAPSHOT_PUB",
        sa.Column("SP_ITEM", sa.String(length=400), nullable=False, comment="published table: schema.table@conn_id"),
        sa.Column("SP_TYPE", sa.Integer(), nullable=False, comment="1 = collection of files, 2 = table"),
        sa.Column(
            "SP_LAST_TS",
            TIMESTAMP,
            nullable=True,
            comment="publisher log: last SNAPTIME pushed to every subscriber",
        ),
        sa.Column("SP_SERVER", sa.String(length=255), nullable=False, comment="replication name of the publisher"),
        sa.Column("SP_SCHEDULE", sa.String(length=100), nullable=True),
        sa.Column("SP_LAST_SYNC_AT", TIMESTAMP, nullable=True),
        sa.Column(
            "SP_ROWS_PER_COMMIT",
            sa.Integer(),
            nullable=True,
            comment="rows per commit of syncs (never splitting a SNAPTIME group)",
        ),
        sa.Column("SP_LAST_STATUS", sa.String(length=20), nullable=True),
        sa.Column("SP_LAST_ERROR", sa.Text(), nullable=True),
        sa.Column("SP_CREATED_AT", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("SP_ITEM", "SP_TYPE"),
    )
    op.create_table(
        "SYS_SNAPSHOT_SUB",
        sa.Column("SS_SERVER", sa.String(length=255), nullable=False, comment="replication name of the subscriber"),
        sa.Column("SS_ITEM", sa.String(length=400), nullable=False),
        sa.Column("SS_TYPE", sa.Integer(), nullable=False),
        sa.Column("SS_LAST_PULL_TS", TIMESTAMP, nullable=True, comment="subscriber clock: last SNAPTIME pulled"),
        sa.Column("SS_LAST_PUSH_TS", TIMESTAMP, nullable=True, comment="publisher clock: last SNAPTIME pushed"),
        sa.Column("SS_SCHEMA", sa.String(length=255), nullable=True, comment="schema of the replica on the subscriber"),
        sa.Column("SS_TABLE", sa.String(length=255), nullable=True, comment="name of the replica on the subscriber"),
        sa.Column(
            "SS_INIT_STATE", sa.String(length=20), nullable=True, comment="NULL, running or done (REPL_INIT_SNAPSHOT)"
        ),
        sa.Column("SS_INIT_BM", sa.Text(), nullable=True, comment="bookmark of an unfinished initial copy"),
        sa.Column("SS_LAST_PULL_AT", TIMESTAMP, nullable=True),
        sa.Column("SS_LAST_PUSH_AT", TIMESTAMP, nullable=True),
        sa.Column("SS_LAST_STATUS", sa.String(length=20), nullable=True),
        sa.Column("SS_LAST_ERROR", sa.Text(), nullable=True),
        sa.Column("SS_CREATED_AT", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("SS_SERVER", "SS_ITEM", "SS_TYPE"),
    )
    op.create_table(
        "SYS_URPLOG",
        sa.Column("ITEM", sa.String(length=400), nullable=False),
        sa.Column("SOURCE_SERVER", ASCII_IDENT, nullable=False),
        sa.Column("TARGET_SERVER", ASCII_IDENT, nullable=False),
        sa.Column("RLOG_ROWGUID", ASCII_IDENT, nullable=False),
        sa.Column("SNAPTIME", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("ITEM", "SOURCE_SERVER", "TARGET_SERVER", "RLOG_ROWGUID"),
    )
    op.create_index(
        "ix_sys_urplog_direction_snaptime",
        "SYS_URPLOG",
        ["ITEM", "SOURCE_SERVER", "TARGET_SERVER", "SNAPTIME"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_sys_urplog_direction_snaptime", table_name="SYS_URPLOG")

    op.drop_table("SYS_URPLOG")
    op.drop_table("SYS_SNAPSHOT_SUB")
    op.drop_table("SYS_SNAPSHOT_PUB")
    op.drop_table("SYS_SNAPSHOT_LOG")
    op.drop_table("SYS_SNAPSHOT_CR")
    op.drop_index("ix_sys_snapshot_conflict_item_at", table_name="SYS_SNAPSHOT_CONFLICT")

    op.drop_table("SYS_SNAPSHOT_CONFLICT")
    op.drop_table("SYS_SNAPSHOT")
    op.drop_table("SYS_SERVERS")
    op.drop_index("ix_sys_rplog_target_snaptime", table_name="SYS_RPLOG")

    op.drop_table("SYS_RPLOG")
    op.drop_table("SYS_REPL_LOCK")

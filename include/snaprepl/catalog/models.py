"""The SYS_* catalog tables (docs/semantics.md section 2), as SQLAlchemy Core tables.

Virtuoso's columns keep Virtuoso's names; what snaprepl adds is named in the same style. Times are
naive UTC. ``SN_LAST_TS``, ``SP_LAST_TS``, ``SS_LAST_PULL_TS`` and the replay logs' ``SNAPTIME`` are
on the clock of the database whose log they come from, and are only compared with that clock.

The tables live in the Airflow metadata database, created by ``airflow db migrate`` through
:class:`snaprepl.catalog.db_manager.SnapreplDBManager`. No credentials are ever stored here: only
Airflow connection ids.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects import mysql

NAME = String(400)  # a catalog key: schema.table@conn_id
IDENT = String(255)  # a single identifier, conn id or server name
#: Server names (ASCII by validation) and the row versions made from them. On MySQL and MariaDB one
#: byte per character keeps the replay logs' composite keys under InnoDB's 3,072-byte key limit.
ASCII_IDENT = String(255).with_variant(mysql.VARCHAR(255, charset="ascii", collation="ascii_bin"), "mysql", "mariadb")
#: MySQL's and MariaDB's DATETIME drops microseconds unless told otherwise; SNAPTIMEs need them.
TIMESTAMP = DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")

#: A transaction-id snapshot watermark (PostgreSQL sources, whose logs record each writer's xid).
XIDS_COMMENT = "source's transaction-id snapshot (pg_snapshot text) the log was last read up to; NULL: by SNAPTIME"

#: The Spark connection of a snapshot's or publication's jobs: its type says where they run.
SPARK_CONN_COMMENT = "Airflow connection of its Spark jobs (NULL = [snaprepl] spark_conn_id)"

metadata = MetaData()

SYS_SNAPSHOT = Table(
    "SYS_SNAPSHOT",
    metadata,
    Column("SN_NAME", NAME, primary_key=True, comment="destination table: schema.table@conn_id"),
    Column("SN_QUERY", Text, nullable=False, comment="query whose result the destination holds"),
    Column("SN_LAST_TS", TIMESTAMP, comment="SNAPTIME of the last log group applied (source clock, UTC)"),
    Column("SN_IS_INCREMENTAL", Integer, comment="NULL: nonincremental; otherwise incremental"),
    Column("SN_SOURCE_TABLE", NAME, comment="incremental: the source table (its SYS_SNAPSHOT_LOG key)"),
    Column("SN_LAST_UPD_BM", Text, comment="bookmark of an unfinished complete refresh"),
    Column("SN_SOURCE_CONN", IDENT, nullable=False, comment="connection the query runs on"),
    Column("SN_DEST_CONN", IDENT, nullable=False),
    Column("SN_DEST_SCHEMA", IDENT, nullable=False),
    Column("SN_DEST_TABLE", IDENT, nullable=False),
    Column("SN_COLUMNS", Text, comment="incremental: JSON list of chosen source columns (NULL = all)"),
    Column("SN_CONDITION", Text, comment="incremental: WHERE condition in the source dialect"),
    Column("SN_KEY_COLUMNS", Text, comment="JSON list of the destination's key columns"),
    Column("SN_SCHEDULE", String(100), comment="Airflow schedule of the refresh DAG (NULL = manual)"),
    Column("SN_SPARK_CONN", IDENT, comment=SPARK_CONN_COMMENT),
    Column("SN_VERIFY_SCHEDULE", String(100), comment="Airflow schedule of the verify DAG (NULL = none)"),
    Column("SN_TOLERANCE_MIN", Integer, comment="tolerance window override in minutes"),
    Column("SN_NEEDS_COMPLETE", Text, comment="why a complete refresh is required (NULL = not required)"),
    Column(
        "SN_COMPLETE_TS",
        TIMESTAMP,
        comment="log high-water mark (source clock) of the last complete refresh: log purged before it is not needed",
    ),
    Column("SN_XID_SNAPSHOT", Text, comment=XIDS_COMMENT),
    Column(
        "SN_COLUMN_CHANGES",
        Text,
        comment="JSON: columns added, kept (dropped at the source) and widened, as refreshes found them",
    ),
    Column("SN_CREATED_AT", TIMESTAMP, nullable=False),
    Column("SN_LAST_REFRESH_AT", TIMESTAMP),
    Column("SN_LAST_REFRESH_KIND", String(20), comment="incremental or complete"),
    Column("SN_LAST_STATUS", String(20), comment="running, succeeded or failed"),
    Column("SN_LAST_ERROR", Text),
    Column("SN_LAST_ROWS_UPSERTED", BigInteger),
    Column("SN_LAST_ROWS_DELETED", BigInteger),
    Column("SN_LAST_ROWS_COPIED", BigInteger),
    Column("SN_LAST_DURATION_S", Float),
    UniqueConstraint("SN_DEST_CONN", "SN_DEST_SCHEMA", "SN_DEST_TABLE", name="uq_sys_snapshot_dest"),
)

SYS_SNAPSHOT_LOG = Table(
    "SYS_SNAPSHOT_LOG",
    metadata,
    Column("SNL_SOURCE", NAME, primary_key=True, comment="source table: schema.table@conn_id"),
    Column("SNL_RLOG", IDENT, nullable=False, comment="snapshot log table, beside the source"),
    Column("SNL_RPLOG", IDENT, nullable=False, comment="replay log table (in this catalog)"),
    Column("SNL_CONN", IDENT, nullable=False),
    Column("SNL_SCHEMA", IDENT, nullable=False),
    Column("SNL_TABLE", IDENT, nullable=False),
    Column("SNL_DIALECT", String(20), nullable=False),
    Column("SNL_KEY_COLUMNS", Text, nullable=False, comment="JSON list of the source's primary key"),
    Column("SNL_OBJECTS", Text, nullable=False, comment="JSON: names of the log's database objects"),
    Column("SNL_KIND", String(20), nullable=False, comment="snapshot, or bidir for publications"),
    Column("SNL_PURGED_BEFORE", TIMESTAMP, comment="entries older than this may have been purged"),
    Column("SNL_LAST_PURGE_AT", TIMESTAMP),
    Column("SNL_CREATED_AT", TIMESTAMP, nullable=False),
    Column("SNL_CASCADES", Text, comment="JSON: triggers on the tables that cascade into it, and the paths"),
    Column(
        "SNL_GUARD",
        Text,
        comment="JSON: what guards its triggers recorded (trigger times, table identity, events seen)",
    ),
)

SYS_SERVERS = Table(
    "SYS_SERVERS",
    metadata,
    Column("SERVER", IDENT, primary_key=True, comment="unique replication name"),
    Column("DB_ADDRESS", IDENT, nullable=False, unique=True, comment="Airflow connection id"),
    Column("CREATED_AT", TIMESTAMP, nullable=False),
)

STALE_COMMENT = "hours without a successful step before a subscriber is stale (NULL = [snaprepl] stale_after_hours)"
DETACH_COMMENT = "1: detach stale subscribers, 0: never (NULL = [snaprepl] detach_stale)"
REINIT_COMMENT = "1: reload a detached subscriber at its next sync, 0: never (NULL = [snaprepl] reinit_detached)"
DETACHED_COMMENT = "when the subscriber stopped holding the publisher's log purge back (it needs REPL_INIT_SNAPSHOT)"

SYS_SNAPSHOT_PUB = Table(
    "SYS_SNAPSHOT_PUB",
    metadata,
    Column("SP_ITEM", NAME, primary_key=True, comment="published table: schema.table@conn_id"),
    Column("SP_TYPE", Integer, primary_key=True, comment="1 = collection of files, 2 = table"),
    Column("SP_LAST_TS", TIMESTAMP, comment="publisher log: last SNAPTIME pushed to every subscriber"),
    Column("SP_SERVER", IDENT, nullable=False, comment="replication name of the publisher"),
    Column("SP_SCHEDULE", String(100)),
    Column("SP_SPARK_CONN", IDENT, comment=SPARK_CONN_COMMENT),
    Column("SP_LAST_SYNC_AT", TIMESTAMP),
    Column("SP_ROWS_PER_COMMIT", Integer, comment="rows per commit of syncs (never splitting a SNAPTIME group)"),
    Column("SP_LAST_STATUS", String(20)),
    Column("SP_LAST_ERROR", Text),
    Column("SP_CREATED_AT", TIMESTAMP, nullable=False),
    Column("SP_STALE_AFTER_HOURS", Integer, comment=STALE_COMMENT),
    Column("SP_DETACH_STALE", Integer, comment=DETACH_COMMENT),
    Column("SP_REINIT_DETACHED", Integer, comment=REINIT_COMMENT),
    Column("SP_VERIFY_SCHEDULE", String(100), comment="Airflow schedule of the replicas' verify DAG (NULL = none)"),
)

SYS_SNAPSHOT_SUB = Table(
    "SYS_SNAPSHOT_SUB",
    metadata,
    Column("SS_SERVER", IDENT, primary_key=True, comment="replication name of the subscriber"),
    Column("SS_ITEM", NAME, primary_key=True),
    Column("SS_TYPE", Integer, primary_key=True),
    Column("SS_LAST_PULL_TS", TIMESTAMP, comment="subscriber clock: last SNAPTIME pulled"),
    Column("SS_LAST_PUSH_TS", TIMESTAMP, comment="publisher clock: last SNAPTIME pushed"),
    Column("SS_SCHEMA", IDENT, comment="schema of the replica on the subscriber"),
    Column("SS_TABLE", IDENT, comment="name of the replica on the subscriber"),
    Column("SS_INIT_STATE", String(20), comment="NULL, running or done (REPL_INIT_SNAPSHOT)"),
    Column("SS_INIT_BM", Text, comment="bookmark of an unfinished initial copy"),
    Column("SS_LAST_PULL_AT", TIMESTAMP),
    Column("SS_LAST_PUSH_AT", TIMESTAMP),
    Column("SS_LAST_STATUS", String(20)),
    Column("SS_LAST_ERROR", Text),
    Column("SS_CREATED_AT", TIMESTAMP, nullable=False),
    Column("SS_DETACHED_AT", TIMESTAMP, comment=DETACHED_COMMENT),
    Column("SS_NEEDS_INIT", Text, comment="why the replica needs REPL_INIT_SNAPSHOT again (NULL = it does not)"),
)

SYS_SNAPSHOT_CR = Table(
    "SYS_SNAPSHOT_CR",
    metadata,
    Column("CR_ID", Integer, primary_key=True, autoincrement=True),
    Column("CR_TABLE_NAME", NAME, nullable=False),
    Column("CR_TYPE", String(1), nullable=False, comment="I, U or D"),
    Column("CR_PROC", String(500), nullable=False, comment="resolver: package.module:function"),
    Column("CR_ORDER", Integer, nullable=False),
    Column("CR_CLASS", String(20), comment="generated class (min, max, ave, pub_wins, sub_wins) or NULL"),
    Column("CR_COLUMN", IDENT, comment="column of min, max and ave resolvers"),
    Column("CR_SUFFIX", IDENT),
    UniqueConstraint("CR_TABLE_NAME", "CR_TYPE", "CR_ORDER", name="uq_sys_snapshot_cr_order"),
)

SYS_RPLOG = Table(
    "SYS_RPLOG",
    metadata,
    Column("TARGET", NAME, nullable=False, comment="snapshot (SN_NAME) the entry was applied to"),
    Column("RLOG_ROWGUID", ASCII_IDENT, nullable=False),
    Column("SNAPTIME", TIMESTAMP, nullable=False),
    # In the order refreshes write it (a refresh's SNAPTIMEs come after those already there): its
    # entries go at the end of the one index, not all over a key of random UUIDs (migration 0018).
    PrimaryKeyConstraint("TARGET", "SNAPTIME", "RLOG_ROWGUID", name="pk_sys_rplog"),
    sqlite_with_rowid=False,
)

SYS_URPLOG = Table(
    "SYS_URPLOG",
    metadata,
    Column("ITEM", NAME, primary_key=True),
    Column("SOURCE_SERVER", ASCII_IDENT, primary_key=True),
    Column("TARGET_SERVER", ASCII_IDENT, primary_key=True),
    Column("RLOG_ROWGUID", ASCII_IDENT, primary_key=True),
    Column("SNAPTIME", TIMESTAMP, nullable=False),
    Index("ix_sys_urplog_direction_snaptime", "ITEM", "SOURCE_SERVER", "TARGET_SERVER", "SNAPTIME"),
)

SYS_SNAPSHOT_CONFLICT = Table(
    "SYS_SNAPSHOT_CONFLICT",
    metadata,
    Column("CF_ID", Integer, primary_key=True, autoincrement=True),
    Column("CF_ITEM", NAME, nullable=False),
    Column("CF_TYPE", String(1), nullable=False, comment="I (uniqueness), U (update) or D (delete)"),
    Column("CF_ORIGIN", ASCII_IDENT, nullable=False, comment="server the incoming change came from"),
    Column("CF_KEY", Text, nullable=False, comment="JSON primary key"),
    Column("CF_INCOMING", Text, comment="JSON row as it came in"),
    Column("CF_CURRENT", Text, comment="JSON publisher row at the time"),
    Column("CF_RESOLVER", String(500), comment="resolver that decided, or 'default'"),
    Column("CF_DECISION", Integer, nullable=False, comment="1 sub wins, 2 sub wins changed, 3 pub wins, 4 ignore"),
    Column("CF_LOSER", Text, comment="JSON of the losing row"),
    Column("CF_AT", TIMESTAMP, nullable=False),
    Column("CF_NOTIFIED", Boolean, nullable=False, default=False),
    Column("CF_RUN_ID", String(64), comment="sync run that met the conflict"),
    Column("CF_ENTRY", ASCII_IDENT, comment="RLOG_ROWGUID of the incoming log entry: a conflict is recorded once"),
    Index("ix_sys_snapshot_conflict_item_at", "CF_ITEM", "CF_AT"),
    UniqueConstraint("CF_ITEM", "CF_ORIGIN", "CF_ENTRY", name="uq_sys_snapshot_conflict_entry"),
)

SYS_REPL_LOCK = Table(
    "SYS_REPL_LOCK",
    metadata,
    Column("LOCK_NAME", NAME, primary_key=True, comment="snapshot:<name>, pull:<item>, push:<item>:<server>, ..."),
    Column("RUN_ID", String(64), nullable=False, comment="run holding the lock"),
    Column("HOLDER", IDENT, nullable=False, comment="host:pid of that run"),
    Column("HEARTBEAT", TIMESTAMP, nullable=False, comment="last sign of life of that run"),
)

SYS_REPL_LEASE_LOG = Table(
    "SYS_REPL_LEASE_LOG",
    metadata,
    Column("LL_ID", Integer, primary_key=True, autoincrement=True),
    Column("LL_LOCK_NAME", NAME, nullable=False, comment="the lease (SYS_REPL_LOCK.LOCK_NAME)"),
    Column("LL_RUN_ID", String(64), nullable=False),
    Column("LL_HOLDER", IDENT, nullable=False),
    Column("LL_ACQUIRED_AT", TIMESTAMP, nullable=False),
    Column("LL_RELEASED_AT", TIMESTAMP, comment="NULL while held; when taken over, the takeover's time"),
    Index("ix_sys_repl_lease_log_name_at", "LL_LOCK_NAME", "LL_ACQUIRED_AT"),
)

SYS_REPL_BACKFILL = Table(
    "SYS_REPL_BACKFILL",
    metadata,
    Column("BF_ID", String(64), primary_key=True, comment="Airflow backfill id"),
    Column("BF_TARGET", NAME, primary_key=True, comment="snapshot, or <step>:<item>:<server>"),
    Column("BF_DAG_ID", String(250), nullable=False),
    Column("BF_RUN_ID", String(250), nullable=False, comment="the backfill run that did the complete refresh"),
    Column("BF_AT", TIMESTAMP, nullable=False),
)

SYS_REPL_HISTORY = Table(
    "SYS_REPL_HISTORY",
    metadata,
    Column("RH_ID", Integer, primary_key=True, autoincrement=True),
    Column("RH_COPY", NAME, nullable=False, comment="snapshot (SN_NAME) or publication item (SP_ITEM)"),
    Column("RH_KIND", String(20), nullable=False, comment="incremental, complete, pull, push or init"),
    Column("RH_SERVER", IDENT, comment="subscriber of a sync step; NULL for snapshots"),
    Column("RH_STARTED", TIMESTAMP, nullable=False),
    Column("RH_ENDED", TIMESTAMP, nullable=False),
    Column("RH_ROWS_IN", BigInteger, comment="rows read or changes taken"),
    Column("RH_ROWS_OUT", BigInteger, comment="rows upserted"),
    Column("RH_ROWS_DELETED", BigInteger),
    Column("RH_CONFLICTS", Integer),
    Column("RH_OUTCOME", String(20), nullable=False, comment="ok, idle or failed"),
    Column("RH_ERROR", Text, comment="why the run failed (no secrets)"),
    Column("RH_DAG_RUN_ID", String(250), comment="Airflow DAG run; NULL from the command line"),
    Column("RH_LAG_SECONDS", Float, comment="source clock minus the newest applied SNAPTIME at the end; 0 caught up"),
    Column("RH_BACKLOG", BigInteger, comment="log rows still pending after the run"),
    Index("ix_sys_repl_history_copy_started", "RH_COPY", "RH_STARTED"),
)

#: The freshness watchdog's conditions alerted on and not yet seen clear (alerted when each starts and clears).
SYS_WATCHDOG = Table(
    "SYS_WATCHDOG",
    metadata,
    Column("WD_KEY", String(600), primary_key=True, comment="<condition>:<copy>[:<server>]"),
    Column("WD_CONDITION", String(20), nullable=False, comment="lag, stale, paused or backlog"),
    Column("WD_COPY", NAME, nullable=False, comment="snapshot, publication item or log"),
    Column("WD_SERVER", IDENT),
    Column("WD_SINCE", TIMESTAMP, nullable=False, comment="when the condition started"),
    Column("WD_DETAIL", Text),
)

VERSION_TABLE = "alembic_version_snaprepl"

SYS_DAV_MANIFEST = Table(
    "SYS_DAV_MANIFEST",
    metadata,
    Column("DM_ITEM", NAME, primary_key=True, comment="published collection: /path/@conn_id"),
    Column("DM_SERVER", ASCII_IDENT, primary_key=True, comment="replication name of the side scanned"),
    Column(
        "DM_PATH_KEY",
        String(64).with_variant(mysql.VARCHAR(64, charset="ascii"), "mysql", "mariadb"),
        primary_key=True,
        comment="sha256 of DM_PATH (keeps the key short)",
    ),
    Column("DM_PATH", Text, nullable=False, comment="resource path relative to the collection"),
    Column("DM_ETAG", String(255)),
    Column("DM_SIZE", BigInteger),
    Column("DM_MTIME", String(64)),
    Column("DM_ROWGUID", ASCII_IDENT, nullable=False, comment="version of the resource (or of its deletion)"),
    Column("DM_OLD_ROWGUID", ASCII_IDENT, comment="version agreed with the publisher at the last sync"),
    Column("DM_DELETED", Boolean, nullable=False, default=False),
)

SYS_DAV_CR = Table(
    "SYS_DAV_CR",
    metadata,
    Column("DCR_ID", Integer, primary_key=True, autoincrement=True),
    Column("DCR_COLLECTION", NAME, nullable=False, comment="collection: /path/@conn_id"),
    Column("DCR_ORDER", Integer, nullable=False),
    Column("DCR_CLASS", String(500), nullable=False, comment="pub_wins, sub_wins or package.module:function"),
    Column("DCR_NOTIFY_EMAIL", String(500)),
    Column("DCR_NOTIFY_TEXT", Text),
    UniqueConstraint("DCR_COLLECTION", "DCR_ORDER", name="uq_sys_dav_cr_order"),
)

SYS_DAV_WAITING = Table(
    "SYS_DAV_WAITING",
    metadata,
    Column("DW_ITEM", NAME, primary_key=True, comment="published collection: /path/@conn_id"),
    Column("DW_SERVER", ASCII_IDENT, primary_key=True, comment="server where the resource is locked"),
    Column(
        "DW_PATH_KEY",
        String(64).with_variant(mysql.VARCHAR(64, charset="ascii"), "mysql", "mariadb"),
        primary_key=True,
        comment="sha256 of DW_PATH",
    ),
    Column("DW_PATH", Text, nullable=False, comment="resource path relative to the collection"),
    Column("DW_ORIGIN", ASCII_IDENT, nullable=False, comment="server the waiting version comes from"),
    Column("DW_ROWGUID", ASCII_IDENT, nullable=False, comment="the waiting version"),
    Column("DW_TEMP", Text, comment="its body under _SYS_REPL_BACKUP/.locked/ on DW_SERVER; NULL: a deletion"),
    Column("DW_SINCE", TIMESTAMP, nullable=False, comment="first found locked"),
    Column("DW_LAST_TRY", TIMESTAMP, nullable=False, comment="last found locked"),
)

#: Snapshot groups (issue 25): the members of a group are refreshed together, to one point per source.
SYS_SNAPSHOT_GROUP = Table(
    "SYS_SNAPSHOT_GROUP",
    metadata,
    Column("SG_NAME", NAME, primary_key=True, comment="group: name@dest_conn"),
    Column("SG_DEST_CONN", IDENT, nullable=False),
    Column("SG_DEST_SCHEMA", IDENT, nullable=False, comment="schema the members' destinations are made in"),
    Column("SG_SOURCE_CONN", IDENT, nullable=False),
    Column("SG_SOURCE_SCHEMA", IDENT, nullable=False, comment="schema whose tables the group replicates"),
    Column("SG_EXCLUDE", Text, comment="JSON list of table-name patterns left out (fnmatch, any case)"),
    Column("SG_INCLUDE_NEW", Integer, nullable=False, default=0, comment="1: new source tables join at a refresh"),
    Column("SG_SCHEDULE", String(100), comment="Airflow schedule of the group's DAG (NULL = manual)"),
    Column("SG_POINTS", Text, comment="JSON {source conn: ISO high-water mark} of the last group refresh"),
    Column("SG_CREATED_AT", TIMESTAMP, nullable=False),
    Column("SG_LAST_REFRESH_AT", TIMESTAMP),
    Column("SG_LAST_STATUS", String(20), comment="running, succeeded or failed"),
    Column("SG_LAST_ERROR", Text),
    Column("SG_SKIPPED", Text, comment="JSON {table: why} of source tables not in the group"),
)

SYS_SNAPSHOT_GROUP_MEMBER = Table(
    "SYS_SNAPSHOT_GROUP_MEMBER",
    metadata,
    Column("SGM_SNAPSHOT", NAME, primary_key=True, comment="member snapshot (SN_NAME): in one group at most"),
    Column("SGM_GROUP", NAME, nullable=False, comment="its group (SG_NAME)"),
    Column("SGM_ADDED_AT", TIMESTAMP, nullable=False),
    Index("ix_sys_snapshot_group_member_group", "SGM_GROUP"),
)

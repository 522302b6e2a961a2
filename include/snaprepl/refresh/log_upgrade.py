"""Give a PostgreSQL snapshot log made before exact watermarks its transaction-id column: add
``SNAPXID`` and replace the trigger function with one that writes it, in one transaction, so that
every entry written afterwards carries its writer's xid (see :mod:`snaprepl.dialects.watermarks`).

Entries already in the log keep a NULL xid; the first refresh by transaction ids reads them by
SNAPTIME. A log the refresh cannot upgrade (not its owner, or locked by a long transaction) stays
read by SNAPTIME with the capped watermark, and the refresh says so.
"""

from __future__ import annotations

import logging

from snaprepl.catalog.records import LogRecord
from snaprepl.catalog.store import Catalog
from snaprepl.common.table_names import Ident
from snaprepl.database.sessions import Database

log = logging.getLogger(__name__)

#: Longest the upgrade waits for the log's lock: a log busy with a long transaction is upgraded later.
LOCK_SECONDS = 2
SNAPSHOT_KIND = "snapshot"


def upgrade_to_xids(catalog: Catalog, database: Database, record: LogRecord) -> tuple[bool, str | None]:
    """Upgrade ``record``'s log if its dialect records transaction ids and the log does not yet:
    (whether it was upgraded now, why it could not be).

    Upgraded, the snapshots of the log forget any transaction-id snapshot they hold, so that their
    next refresh reads the entries without an xid by SNAPTIME."""
    dialect = database.dialect
    if not dialect.logs_xids or record.snl_kind != SNAPSHOT_KIND:
        return False, None
    try:
        with database.session() as session:
            if dialect.log_has_xids(session, record.snl_schema, record.objects.rlog):
                return False, None
            info = dialect.describe(
                session, Ident(record.snl_schema, True), Ident(record.snl_table, True), record.snl_conn
            )
            steps = dialect.create_log_ddl(info, record.objects)
            function = next(s.sql for s in steps if s.sql.startswith("CREATE FUNCTION "))
            rlog = dialect.qualified(record.snl_schema, record.objects.rlog)
            session.execute(f"SET LOCAL lock_timeout = '{LOCK_SECONDS}s'")
            session.execute(dialect.xid_log_step_sql(rlog))
            session.execute("CREATE OR REPLACE FUNCTION " + function.removeprefix("CREATE FUNCTION "))
    except Exception as err:  # the SNAPTIME rule with the cap still holds; said in the outcome
        why = (str(err).splitlines() or [""])[0]
        log.warning("the log of %s keeps its SNAPTIME window: %s", record.snl_source, why)
        return False, f"its log was not upgraded to transaction ids ({why}): read by SNAPTIME, capped"
    log.info("the log of %s now records transaction ids", record.snl_source)
    for snapshot in catalog.snapshots_of_log(record.snl_source):
        catalog.update_snapshot(snapshot.sn_name, sn_xid_snapshot=None)
    return True, None

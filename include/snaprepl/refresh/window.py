"""The window of an incremental refresh (SEMANTICS section 4, step 1) and whether it holds work.

SQL only, no Spark: the job asks before it starts a SparkSession, and the submitter
(:mod:`snaprepl.refresh.idle`) asks before it starts a job at all.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta

from snaprepl.catalog.records import LogRecord, SnapshotRecord
from snaprepl.catalog.store import Catalog
from snaprepl.errors import CompleteRefreshRequired, SnapshotLogNotFound
from snaprepl.refresh.endpoints import Endpoints
from snaprepl.refresh.model import INCREMENTAL, RefreshOutcome, RefreshRequest
from snaprepl.sql.change_queries import log_entries_sql


def complete_required(name: str, why: str) -> CompleteRefreshRequired:
    return CompleteRefreshRequired(
        f"snapshot {name} needs a complete refresh: {why}",
        f"run UPDATE SNAPSHOT {name} AS NONINCREMENTAL, or trigger its DAG with mode nonincremental",
    )


def pending_window(
    catalog: Catalog, request: RefreshRequest, ends: Endpoints
) -> tuple[LogRecord, datetime, list[str]] | None:
    """The snapshot's log, the time its entries are read from, and the RLOG_ROWGUIDs the replay log
    lists since then; None when no entry since then is left to apply (the usual scheduled no-op).

    :raises CompleteRefreshRequired: when the snapshot needs a complete refresh first.
    :raises SnapshotLogNotFound: when its log is gone.
    """
    log, start = log_window(catalog, request, ends.snapshot)
    replayed = catalog.replayed_since(ends.snapshot.sn_name, start)
    if not entries_to_apply(ends, log, start, set(replayed)):
        return None
    return log, start, replayed


def nothing_applied(snapshot: SnapshotRecord, started: float) -> RefreshOutcome:
    """The outcome of an incremental refresh that found nothing to apply."""
    return RefreshOutcome(
        snapshot=snapshot.sn_name, kind=INCREMENTAL, last_ts=snapshot.sn_last_ts, duration_s=time.monotonic() - started
    )


def log_window(catalog: Catalog, request: RefreshRequest, snapshot: SnapshotRecord) -> tuple[LogRecord, datetime]:
    """The snapshot's log and the time its entries are read from.

    :raises CompleteRefreshRequired: when the snapshot needs a complete refresh first.
    :raises SnapshotLogNotFound: when its log is gone.
    """
    name = snapshot.sn_name
    if snapshot.sn_needs_complete:
        raise complete_required(name, snapshot.sn_needs_complete)
    if snapshot.sn_last_ts is None:
        raise complete_required(name, "it has never completed a copy")
    log = catalog.log(snapshot.sn_source_table or "")
    if log is None:
        raise SnapshotLogNotFound(
            f"the snapshot log of {snapshot.sn_source_table}, which snapshot {name} reads, is gone",
            f"create it again and refresh {name} completely",
        )
    minutes = snapshot.sn_tolerance_min if snapshot.sn_tolerance_min is not None else request.tolerance_minutes
    start = snapshot.sn_last_ts - timedelta(minutes=minutes)
    if purged_past(log.snl_purged_before, start, snapshot.sn_complete_ts):
        raise complete_required(
            name,
            f"its log was purged up to {log.snl_purged_before:%Y-%m-%d %H:%M:%S} but it needs entries from "
            f"{start:%Y-%m-%d %H:%M:%S} (Oracle's ORA-12034)",
        )
    return log, start


def purged_past(purged_before: datetime | None, start: datetime, complete_ts: datetime | None) -> bool:
    """Whether the log may have lost entries the refresh needs: it was purged past ``start``, and past
    the mark the last complete copy started from (entries purged before that mark are in the copy)."""
    if purged_before is None or start >= purged_before:
        return False
    return complete_ts is None or complete_ts < purged_before


def entries_to_apply(ends: Endpoints, log: LogRecord, start: datetime, replayed: set[str]) -> bool:
    """Whether the log holds entries since ``start`` the replay log does not list: a count, and only
    when the count does not already tell, the entries' RLOG_ROWGUIDs."""
    source = ends.source_db.dialect
    with ends.source_db.session() as session:
        count = int(session.query(log_entries_sql(source, log, start, count=True))[0][0])
        if count == 0 or count > len(replayed):
            return count > 0
        return any(row[0] not in replayed for row in session.query(log_entries_sql(source, log, start, count=False)))

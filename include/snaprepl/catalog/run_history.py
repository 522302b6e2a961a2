"""Recording runs in the history (SYS_REPL_HISTORY), with the copy's lag and backlog at the end.

One function per kind of copy, callable from anywhere a run ends: the refresh and sync jobs (under
spark-submit or in-process), and the submission layer for runs it decides before Spark (idle
runs). Recording never fails the run it records: a history that cannot be written is a warning.

**Lag** is the log database's clock (UTC) at the end of the run minus the newest SNAPTIME the copy
has applied (a snapshot's SN_LAST_TS, a subscriber's pull or push watermark). When the log holds no
pending entry the copy is caught up and its lag is 0, however long ago its last change was.
**Backlog** is the number of log rows still pending: newer than that watermark (for a push, not
from the subscriber itself; for a pull, every entry of the subscriber's log). Either is NULL when it
cannot be known: a nonincremental snapshot has no log, and an unreachable log is not counted.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from snaprepl.catalog.records import HistoryRecord, LogRecord, utcnow
from snaprepl.catalog.store import Catalog
from snaprepl.database.errors import one_line
from snaprepl.database.sessions import Database
from snaprepl.dialects.base import BIDIR

log = logging.getLogger("snaprepl.history")

#: Airflow's task runner exports the DAG run's id in this variable; spark-submit's driver inherits it.
DAG_RUN_ENV = "AIRFLOW_CTX_DAG_RUN_ID"
_CREDENTIALS = re.compile(r"(://[^:/@\s]+:)[^@\s]+@")


@dataclass(frozen=True)
class Backlog:
    """A copy's lag in seconds and pending log rows at one moment (None: unknown)."""

    lag_seconds: float | None = None
    rows: int | None = None


UNKNOWN = Backlog()


def dag_run_id() -> str | None:
    """The Airflow DAG run this process works for, or None from the command line."""
    return os.environ.get(DAG_RUN_ENV) or None


def clean_error(err: BaseException | str) -> str:
    """An error as stored (SS_LAST_ERROR and the others, the history): one line without the SQL and
    bound parameters a driver's error carries (row keys), nor credentials of URLs; at most 4,000
    characters."""
    return _CREDENTIALS.sub(r"\1***@", one_line(err))[:4000]


def log_backlog(record: LogRecord | None, since: datetime | None, not_from: str | None = None) -> Backlog:
    """Lag and backlog of a copy whose newest applied SNAPTIME of log ``record`` is ``since``
    (entries from replication server ``not_from`` excluded); unknown when the log cannot be read."""
    if record is None:
        return UNKNOWN
    try:
        database = Database.for_conn_id(record.snl_conn)
        dialect = database.dialect
        snaptime = dialect.quote(dialect.log_columns.snaptime)
        conditions, params = [], {}
        if not_from is not None:
            conditions.append(f"{dialect.quote(BIDIR.origin)} <> {dialect.literal(not_from)}")
        if since is not None:
            conditions.append(f"{snaptime} > :since")
            params["since"] = dialect.snaptime_param(since)
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        rlog = dialect.qualified(record.snl_schema, record.objects.rlog)
        with database.session() as session:
            rows, oldest = session.query(f"SELECT COUNT(*), MIN({snaptime}) FROM {rlog}{where}", params or None)[0]
            now = dialect.now_utc(session)
    except Exception as err:  # an unreachable log leaves lag and backlog unknown, never fails the run
        log.warning("lag of the copy of %s not measured: %s", record.snl_source, clean_error(err))
        return UNKNOWN
    if not rows:
        return Backlog(0.0, 0)
    applied = since or dialect.snaptime_value(oldest)
    return Backlog(max(0.0, (now - applied).total_seconds()) if applied else None, int(rows))


def group_lag(runs: Iterable[HistoryRecord]) -> float | None:
    """A snapshot group's lag from its members' runs (the last of each, or those of one pass): the
    largest of their lags, as a snapshot's is measured at the end of its run (None: none measured)."""
    lags = [r.rh_lag_seconds for r in runs if r.rh_lag_seconds is not None]
    return max(lags) if lags else None


def snapshot_backlog(catalog: Catalog, name: str) -> Backlog:
    """Lag and backlog of snapshot ``name`` now (unknown for a nonincremental snapshot)."""
    snapshot = catalog.snapshot(name)
    if snapshot is None or not snapshot.incremental or snapshot.sn_needs_complete:
        return UNKNOWN
    return log_backlog(catalog.log(snapshot.sn_source_table or ""), snapshot.sn_last_ts)


def sync_backlog(catalog: Catalog, item: str, kind: str, server: str) -> Backlog:
    """Lag and backlog of subscriber ``server`` of ``item`` in the direction of ``kind``: a pull's
    is the subscriber's own log; a push's (and an init's) the publisher's entries not from it."""
    sub = catalog.subscription(server, item)
    if sub is None:
        return UNKNOWN
    if kind == "pull":
        known = catalog.server(server)
        replica = catalog.log(f"{sub.ss_schema}.{sub.ss_table}@{known.db_address}") if known else None
        return log_backlog(replica, sub.ss_last_pull_ts)
    if sub.ss_init_state != "done":
        return UNKNOWN
    return log_backlog(catalog.log(item), sub.ss_last_push_ts, not_from=server)


def record(catalog: Catalog, run: HistoryRecord) -> HistoryRecord | None:
    """Add ``run`` to the history (with this process's DAG run); None if that failed (logged)."""
    if run.rh_dag_run_id is None and (dag_run := dag_run_id()) is not None:
        run = dataclasses.replace(run, rh_dag_run_id=dag_run)
    try:
        catalog.record_run(run)
    except Exception as err:  # the run's own outcome matters more than its history
        log.warning("run of %s not recorded in the history: %s", run.rh_copy, clean_error(err))
        return None
    return run


def record_refresh(
    catalog: Catalog, name: str, kind: str, started: datetime, outcome: str, **values: Any
) -> HistoryRecord | None:
    """Record a refresh of snapshot ``name`` that started at ``started`` (naive UTC) and ends now,
    measuring its lag and backlog. ``values``: rh_rows_in, rh_rows_out, rh_rows_deleted, rh_error."""
    backlog = _measured(snapshot_backlog, catalog, name)
    return record(
        catalog,
        HistoryRecord(
            rh_copy=name,
            rh_kind=kind,
            rh_started=started,
            rh_ended=utcnow(),
            rh_outcome=outcome,
            rh_lag_seconds=backlog.lag_seconds,
            rh_backlog=backlog.rows,
            **values,
        ),
    )


def record_sync(
    catalog: Catalog, item: str, kind: str, server: str, started: datetime, outcome: str, **values: Any
) -> HistoryRecord | None:
    """Record a sync step (``pull``, ``push`` or ``init``) of ``item`` with subscriber ``server``;
    ``values`` as for :func:`record_refresh`, and rh_conflicts."""
    backlog = _measured(sync_backlog, catalog, item, kind, server)
    return record(
        catalog,
        HistoryRecord(
            rh_copy=item,
            rh_kind=kind,
            rh_server=server,
            rh_started=started,
            rh_ended=utcnow(),
            rh_outcome=outcome,
            rh_lag_seconds=backlog.lag_seconds,
            rh_backlog=backlog.rows,
            **values,
        ),
    )


def _measured(measure: Callable[..., Backlog], *args: Any) -> Backlog:
    try:
        return measure(*args)
    except Exception as err:  # an unreachable catalog: the record fails too, and says so
        log.warning("lag not measured: %s", clean_error(err))
        return UNKNOWN

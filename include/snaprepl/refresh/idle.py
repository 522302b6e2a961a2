"""An incremental refresh with nothing to apply, answered without Spark: what the submitter asks
before it starts a job (a scheduled no-op then costs the task's own start, not a spark-submit).

It records the outcome in the catalog and the run history as the job's own no-op does
(:func:`record_succeeded`, under the snapshot's lease). Complete refreshes always run as jobs.
"""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import datetime

from snaprepl.catalog import run_history
from snaprepl.catalog.records import utcnow
from snaprepl.catalog.run_lock import RunLock, snapshot_lock_name
from snaprepl.catalog.store import Catalog
from snaprepl.refresh.checks import check_sources
from snaprepl.refresh.endpoints import Endpoints
from snaprepl.refresh.model import COMPLETE, INCREMENTAL, RefreshOutcome, RefreshRequest
from snaprepl.refresh.window import entries_to_apply, log_window, nothing_applied, record_xids


def refresh_if_idle(request: RefreshRequest, *, catalog: Catalog) -> RefreshOutcome | None:
    """The outcome of ``request`` if it is an incremental refresh with nothing to apply (recorded in
    the catalog as the job records it); None if it has work or is no incremental refresh.

    Raises what the job would raise before it reads a row (a busy lease, a source or log that is
    gone, a complete refresh required): the caller may leave those to the job.
    """
    snapshot = catalog.snapshot(request.snapshot)
    if snapshot is None or request.mode != INCREMENTAL or not snapshot.incremental:
        return None
    started, started_at = time.monotonic(), utcnow()
    with RunLock(catalog, snapshot_lock_name(snapshot.sn_name), request.run_id, what=f"snapshot {snapshot.sn_name}"):
        ends = Endpoints.of(snapshot)
        try:
            ends.snapshot = check_sources(catalog, snapshot)  # a dropped source is an error, not an empty refresh
            window = log_window(catalog, request, ends)
            if entries_to_apply(ends, window):
                return None
            record_xids(catalog, snapshot, window)
        finally:
            ends.dispose()
        outcome = record_succeeded(catalog, nothing_applied(snapshot, started, window.note), started, started_at)
    return outcome


def record_succeeded(catalog: Catalog, outcome: RefreshOutcome, started: float, started_at: datetime) -> RefreshOutcome:
    """Record a refresh that succeeded (``started``: its ``time.monotonic()`` at the start), in the
    snapshot's record and in the history: a complete refresh read and wrote every row; an incremental
    one took its changes (upserts and deletes), and is idle when it took none. Returns ``outcome`` with
    the lag and backlog the history measured."""
    catalog.update_snapshot(
        outcome.snapshot,
        sn_last_status="succeeded",
        sn_last_error=None,
        sn_last_refresh_kind=outcome.kind,
        sn_last_refresh_at=utcnow(),
        sn_last_rows_copied=outcome.rows_copied,
        sn_last_rows_upserted=outcome.rows_upserted,
        sn_last_rows_deleted=outcome.rows_deleted,
        sn_last_duration_s=time.monotonic() - started,
    )
    if outcome.kind == COMPLETE:
        rows = {"rh_rows_in": outcome.rows_copied, "rh_rows_out": outcome.rows_copied, "rh_rows_deleted": 0}
    else:
        changes = outcome.rows_upserted + outcome.rows_deleted
        rows = {"rh_rows_in": changes, "rh_rows_out": outcome.rows_upserted, "rh_rows_deleted": outcome.rows_deleted}
    idle = outcome.kind == INCREMENTAL and not rows["rh_rows_in"]
    run = run_history.record_refresh(
        catalog, outcome.snapshot, outcome.kind, started_at, "idle" if idle else "ok", **rows
    )
    if run is None:
        return outcome
    return replace(outcome, lag_seconds=run.rh_lag_seconds, backlog=run.rh_backlog)

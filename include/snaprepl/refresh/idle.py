"""An incremental refresh with nothing to apply, answered without Spark: what the submitter asks
before it starts a job (a scheduled no-op then costs the task's own start, not a spark-submit).

It records the outcome in the catalog as the job's own no-op does (:func:`record_succeeded`, under
the snapshot's lease). Complete refreshes always run as jobs.
"""

from __future__ import annotations

import time

from snaprepl.catalog.records import utcnow
from snaprepl.catalog.store import Catalog
from snaprepl.refresh.checks import check_sources
from snaprepl.refresh.endpoints import Endpoints
from snaprepl.refresh.lock import RunLock, snapshot_lock_name
from snaprepl.refresh.model import INCREMENTAL, RefreshOutcome, RefreshRequest
from snaprepl.refresh.window import nothing_applied, pending_window


def refresh_if_idle(request: RefreshRequest, *, catalog: Catalog) -> RefreshOutcome | None:
    """The outcome of ``request`` if it is an incremental refresh with nothing to apply (recorded in
    the catalog as the job records it); None if it has work or is no incremental refresh.

    Raises what the job would raise before it reads a row (a busy lease, a source or log that is
    gone, a complete refresh required): the caller may leave those to the job.
    """
    snapshot = catalog.snapshot(request.snapshot)
    if snapshot is None or request.mode != INCREMENTAL or not snapshot.incremental:
        return None
    started = time.monotonic()
    with RunLock(catalog, snapshot_lock_name(snapshot.sn_name), request.run_id, what=f"snapshot {snapshot.sn_name}"):
        ends = Endpoints.of(snapshot)
        try:
            check_sources(catalog, snapshot)  # a dropped source is an error, not an empty refresh
            if pending_window(catalog, request, ends) is not None:
                return None
        finally:
            ends.dispose()
        outcome = nothing_applied(snapshot, started)
        record_succeeded(catalog, outcome, started)
    return outcome


def record_succeeded(catalog: Catalog, outcome: RefreshOutcome, started: float) -> None:
    """Record a refresh that succeeded (``started``: its ``time.monotonic()`` at the start)."""
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

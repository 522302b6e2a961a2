"""Sync steps with nothing to do, answered without Spark: what the submitter asks before it starts a
sync job (a scheduled no-op then costs the task's own start, not a spark-submit).

A pull has nothing to do when the subscriber's log is empty; a push when every publisher log entry in
its window is listed as pushed by the update replay log. The outcomes are recorded in the catalog and
the run history as the job records them. Each count holds the step's lease, so a step busy elsewhere raises
:class:`~snaprepl.errors.SnapshotBusy`, as the job would. An init always runs as a job.
"""

from __future__ import annotations

import time
from datetime import datetime

from snaprepl.bidir.guard import guard_step
from snaprepl.bidir.pull import pending_pull
from snaprepl.bidir.push import pending_push
from snaprepl.bidir.state import PublicationState
from snaprepl.catalog import run_history
from snaprepl.catalog.records import utcnow
from snaprepl.catalog.run_lock import RunLock
from snaprepl.catalog.store import Catalog
from snaprepl.publications.leases import step_lease
from snaprepl.publications.outcome import Outcome
from snaprepl.publications.steps import is_detached, planned_steps, record_step_succeeded, record_sync_succeeded

#: What counts a step's pending changes, by step.
_PENDING = {"pull": pending_pull, "push": pending_push}


def sync_if_idle(
    catalog: Catalog, item: str, action: str, server: str | None, run_id: str, *, tolerance_minutes: int
) -> list[Outcome] | None:
    """The outcomes of sync job ``action`` (``pull``, ``push`` or a whole ``sync``) of ``item`` if no
    step has anything to do (recorded in the catalog as the job records them); None otherwise."""
    steps = planned_steps(catalog, item, action, server)
    if steps is None or any(is_detached(catalog, item, name) for step, name in steps if step == "push"):
        return None  # a detached subscriber's push fails or reloads it: the job says which
    state = PublicationState(None, catalog, item, run_id, tolerance_minutes=tolerance_minutes, commit_rows=1)
    outcomes: list[tuple[Outcome, datetime]] = []
    try:
        for step, name in steps:
            started, started_at = time.monotonic(), utcnow()
            with RunLock(catalog, step_lease(item, step, name), run_id, what=f"publication {item} ({step} {name})"):
                guard_step(state, name)  # a bypassed trigger fails here, as in the job
                if _PENDING[step](state, name):
                    return None
            outcomes.append((Outcome(step, name, duration_s=time.monotonic() - started), started_at))
    finally:
        state.dispose()
    for outcome, started_at in outcomes:
        if outcome.step == "push":  # a push that read no entries says when it last looked
            catalog.update_subscription(outcome.server, item, ss_last_push_at=utcnow())
        run_history.record_sync(
            catalog, item, outcome.step, outcome.server, started_at, "idle", rh_rows_in=0, rh_rows_out=0, rh_conflicts=0
        )
        record_step_succeeded(catalog, item, outcome.server)
    record_sync_succeeded(catalog, item)
    return [outcome for outcome, _ in outcomes]

"""Running one refresh: the lock, the chosen kind of refresh, and the outcome in the catalog."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from snaprepl.catalog import run_history
from snaprepl.catalog.records import utcnow
from snaprepl.catalog.run_lock import RunLock, snapshot_lock_name
from snaprepl.catalog.store import Catalog
from snaprepl.database.errors import is_unnamed_loss
from snaprepl.errors import (
    CompleteRefreshRequired,
    RefreshFailed,
    SnapreplError,
    SnapshotNotFound,
)
from snaprepl.refresh.checks import check_sources
from snaprepl.refresh.columns import ColumnPlan, plan_columns, record_plan
from snaprepl.refresh.complete import refresh_complete
from snaprepl.refresh.endpoints import Endpoints
from snaprepl.refresh.idle import record_succeeded
from snaprepl.refresh.incremental import refresh_incremental
from snaprepl.refresh.model import COMPLETE, INCREMENTAL, RefreshOutcome, RefreshRequest
from snaprepl.spark.errors import root_cause

#: A run's row counts before it succeeds (and after it failed): unknown.
_NO_COUNTS: dict[str, Any] = {"sn_last_rows_copied": None, "sn_last_rows_upserted": None, "sn_last_rows_deleted": None}


def run_refresh(spark: Any, request: RefreshRequest, *, catalog: Catalog) -> RefreshOutcome:
    """Refresh one snapshot as ``request`` says, holding its lock; record the outcome in the catalog.

    A nonincremental snapshot is always refreshed completely. An incremental refresh whose log entries
    are gone raises :class:`CompleteRefreshRequired`, or with ``fallback_complete`` refreshes completely.
    """
    snapshot = catalog.snapshot(request.snapshot)
    if snapshot is None:
        raise SnapshotNotFound(f"there is no snapshot {request.snapshot}", "`snaprepl status` lists the snapshots")
    started, started_at = time.monotonic(), utcnow()
    with RunLock(catalog, snapshot_lock_name(snapshot.sn_name), request.run_id, what=f"snapshot {snapshot.sn_name}"):
        kind = INCREMENTAL if request.mode == INCREMENTAL and snapshot.incremental else COMPLETE
        # This run's counts replace the last run's only when it succeeds: until then (and if it fails
        # or dies) the snapshot shows none, never another run's.
        catalog.update_snapshot(snapshot.sn_name, sn_last_status="running", sn_last_refresh_kind=kind, **_NO_COUNTS)
        ends = Endpoints.of(snapshot)
        try:
            ends.snapshot = check_sources(catalog, snapshot)  # a dropped source is an error, not an empty refresh
            plan = plan_columns(catalog, ends)  # the source's columns changed: follow them, or refuse
            kind = _follow(catalog, ends, plan, kind)
            outcome = _refresh(spark, catalog, request, ends, kind)
            if plan is not None:
                record_plan(catalog, snapshot, plan)
                outcome = _noted(outcome, plan)
        except BaseException as err:
            failure = _failure(snapshot.sn_name, err, ends)
            catalog.update_snapshot(
                snapshot.sn_name,
                sn_last_status="failed",
                sn_last_error=run_history.clean_error(failure),
                sn_last_refresh_at=utcnow(),
                sn_last_duration_s=time.monotonic() - started,
                **_NO_COUNTS,
            )
            run_history.record_refresh(
                catalog, snapshot.sn_name, kind, started_at, "failed", rh_error=run_history.clean_error(failure)
            )
            if failure is err:
                raise
            raise failure from err
        finally:
            ends.dispose()
        outcome = record_succeeded(catalog, outcome, started, started_at)
    return outcome


def _follow(catalog: Catalog, ends: Endpoints, plan: ColumnPlan | None, kind: str) -> str:
    """Make this run read and write the columns ``plan`` chose; the kind of refresh it then is (a
    complete one where columns were added, to fill them in every row)."""
    if plan is None:
        return kind
    ends.snapshot = dataclasses.replace(ends.snapshot, sn_query=plan.query)
    ends.columns = plan.columns
    if plan.complete and kind != COMPLETE:
        catalog.update_snapshot(ends.snapshot.sn_name, sn_last_refresh_kind=COMPLETE)
        return COMPLETE
    return kind


def _noted(outcome: RefreshOutcome, plan: ColumnPlan) -> RefreshOutcome:
    """``outcome`` with what ``plan`` followed of the source's columns."""
    if not plan.notes:
        return outcome
    note = "; ".join([*plan.notes, *([outcome.note] if outcome.note else [])])
    return dataclasses.replace(outcome, note=note, columns_followed=plan.followed)


def _refresh(spark: Any, catalog: Catalog, request: RefreshRequest, ends: Endpoints, kind: str) -> RefreshOutcome:
    """A refresh of ``kind``; an incremental one that needs a complete refresh falls back to one when
    the request allows it."""
    if kind == COMPLETE:
        return refresh_complete(spark, catalog, request, ends)
    try:
        return refresh_incremental(spark, catalog, request, ends)
    except CompleteRefreshRequired as err:
        if not request.fallback_complete:
            raise
        now = catalog.snapshot(ends.snapshot.sn_name)  # marked for a complete refresh; this run's query kept
        ends.snapshot = dataclasses.replace(now, sn_query=ends.snapshot.sn_query) if now else ends.snapshot
        outcome = refresh_complete(spark, catalog, request, ends)
        return dataclasses.replace(outcome, note=f"fell back to a complete refresh: {err.message}")


def _failure(name: str, err: BaseException, ends: Endpoints) -> BaseException:
    """What a failed refresh reports: a lost connection as :class:`ConnectionLost` naming the end it
    was to, snaprepl's other errors and interruptions as they are, any other error as
    :class:`RefreshFailed` naming its root cause."""
    if not isinstance(err, Exception):
        return err
    if is_unnamed_loss(err, RefreshFailed):
        return ends.lost(err)  # in Spark or a pipe (snaprepl's sessions name their database already)
    if isinstance(err, SnapreplError):
        return err
    return RefreshFailed(
        f"refresh of {name} failed: {root_cause(err)}",
        "the destination keeps its last consistent content; fix the cause and refresh again",
    )

"""Running one verify (or repair) of a snapshot: its lease, the comparison, the repair, the history."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from snaprepl.catalog import run_history
from snaprepl.catalog.records import HistoryRecord, utcnow
from snaprepl.catalog.run_lock import RunLock, snapshot_lock_name
from snaprepl.catalog.store import Catalog
from snaprepl.errors import SnapreplError, SnapshotNotFound, VerifyFailed
from snaprepl.publications.leases import push_lease
from snaprepl.refresh.checks import check_sources
from snaprepl.refresh.endpoints import Endpoints
from snaprepl.spark.errors import root_cause
from snaprepl.verify.bisect import find
from snaprepl.verify.compare import Comparison, bucket_count
from snaprepl.verify.db_sums import DatabaseSums
from snaprepl.verify.inflight import pending_keys
from snaprepl.verify.model import VerifyOutcome, VerifyRequest
from snaprepl.verify.narrow import narrowed
from snaprepl.verify.ranges import Span, plan_ranges
from snaprepl.verify.repair import apply_repair, staged_rows
from snaprepl.verify.replica import verify_replica
from snaprepl.verify.replicas import find_replica
from snaprepl.verify.sides import plan_sides

VERIFY, REPAIR = "verify", "repair"


def run_verify(spark: Any, request: VerifyRequest, *, catalog: Catalog) -> VerifyOutcome:
    """Compare snapshot ``request.snapshot`` with its query evaluated at the source now (or a
    subscriber's replica so named with its publisher's table), holding its lease (no refresh or push
    applies anything meanwhile); with ``request.repair`` fix what differs. The run goes into the
    history (kind ``verify`` or ``repair``)."""
    snapshot = catalog.snapshot(request.snapshot)
    if snapshot is None:
        replica = find_replica(catalog, request.snapshot)
        if replica is None:
            raise SnapshotNotFound(
                f"there is no snapshot or replica {request.snapshot}", "`snaprepl status` lists them"
            )
        return _checked(
            catalog, request, (replica.item, replica.server), lambda: verify_replica(spark, catalog, request, replica)
        )
    ends = Endpoints.of(snapshot)
    try:
        return _checked(catalog, request, (snapshot.sn_name, None), lambda: _verify(spark, catalog, request, ends))
    finally:
        ends.dispose()


def _checked(
    catalog: Catalog, request: VerifyRequest, copy: tuple[str, str | None], work: Callable[[], VerifyOutcome]
) -> VerifyOutcome:
    """``work()`` under the copy's lease (a snapshot's, or the push lease of a replica), recorded."""
    name, server = copy
    kind = REPAIR if request.repair else VERIFY
    started_at = utcnow()
    lease = snapshot_lock_name(name) if server is None else push_lease(name, server)
    what = f"snapshot {name}" if server is None else f"{server}'s replica of {name}"
    with RunLock(catalog, lease, request.run_id, what=what):
        try:
            outcome = work()
        except BaseException as err:
            failure = _failure(name, kind, err)
            _record(catalog, copy, kind, started_at, None, run_history.clean_error(failure))
            if failure is err:
                raise
            raise failure from err
    _record(catalog, copy, kind, started_at, outcome, None)
    return outcome


def _verify(spark: Any, catalog: Catalog, request: VerifyRequest, ends: Endpoints) -> VerifyOutcome:
    started = time.monotonic()
    snapshot = ends.snapshot
    check_sources(catalog, snapshot)  # a dropped source is an error, not a copy full of extras
    log = catalog.log(snapshot.sn_source_table) if snapshot.sn_source_table else None
    sides = plan_sides(ends, log, request.where, request.max_partitions)
    buckets = bucket_count(sides.estimate)
    ranges = plan_ranges(ends.source_db, ends.dest_db, sides, buckets)
    comparison = Comparison(spark, sides, ends.dest_io.target_type, ends.dest_db.dialect.name, buckets, ranges)
    found = find(comparison, DatabaseSums.of(ends.source_db, ends.dest_db, sides))
    outcome = VerifyOutcome(
        copy=snapshot.sn_name, equal=not found.differing, rows=found.rows, ranges=comparison.buckets,
        ranges_differing=found.differing, computed_in=found.computed_in, rows_narrowed=found.rows_narrowed,
    )  # fmt: skip
    if found.differing:
        outcome = _narrowed(spark, catalog, request, ends, comparison, found.target, outcome)
    return dataclasses.replace(outcome, seconds=time.monotonic() - started)


def _narrowed(
    spark: Any,
    catalog: Catalog,
    request: VerifyRequest,
    ends: Endpoints,
    comparison: Comparison,
    target: list[Span] | list[int],
    outcome: VerifyOutcome,
) -> VerifyOutcome:
    """The differences in ``target`` (keys in flight excluded), repaired when asked."""
    sides = comparison.sides
    pending = pending_keys(spark, catalog, ends, sides, request.tolerance_minutes, ends.dest_io.target_type)

    def repair(differences: Any) -> tuple[int, int]:
        staged = staged_rows(differences, sides.dest_columns, sides.key, request.commit_rows)
        return apply_repair(ends, staged, sides.dest_columns, sides.key)

    return narrowed(request, comparison, target, outcome, pending, repair)


def _record(
    catalog: Catalog,
    copy: tuple[str, str | None],
    kind: str,
    started: datetime,
    outcome: VerifyOutcome | None,
    error: str | None,
) -> None:
    """The run in the history: its differences (RH_CONFLICTS), rows compared, rows repaired."""
    run = HistoryRecord(
        rh_copy=copy[0], rh_server=copy[1], rh_kind=kind, rh_started=started, rh_ended=utcnow(),
        rh_outcome="failed", rh_error=error,
    )  # fmt: skip
    if outcome is not None:
        run = dataclasses.replace(
            run, rh_outcome="ok" if outcome.equal else "differences", rh_rows_in=outcome.rows,
            rh_rows_out=outcome.rows_upserted, rh_rows_deleted=outcome.rows_deleted, rh_conflicts=outcome.differences,
        )  # fmt: skip
    run_history.record(catalog, run)


def _failure(name: str, kind: str, err: BaseException) -> BaseException:
    """snaprepl's own errors and interruptions as they are, any other error as :class:`VerifyFailed`."""
    if isinstance(err, SnapreplError) or not isinstance(err, Exception):
        return err
    return VerifyFailed(
        f"{kind} of {name} failed: {root_cause(err)}",
        "nothing was written to the source; fix the cause and run it again",
    )

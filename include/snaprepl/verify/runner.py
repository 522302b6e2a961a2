"""Running one verify (or repair) of a snapshot: its lease, the comparison, the repair, the history."""

from __future__ import annotations

import dataclasses
import time
from datetime import datetime
from typing import Any

from snaprepl import run_history
from snaprepl.catalog.records import HistoryRecord, utcnow
from snaprepl.catalog.run_lock import RunLock, snapshot_lock_name
from snaprepl.catalog.store import Catalog
from snaprepl.errors import SnapreplError, SnapshotNotFound, VerifyFailed
from snaprepl.refresh.checks import check_sources
from snaprepl.refresh.endpoints import Endpoints
from snaprepl.spark.errors import root_cause
from snaprepl.verify.canonical import KEY
from snaprepl.verify.compare import Comparison, bucket_count, counted
from snaprepl.verify.db_sums import database_sums
from snaprepl.verify.inflight import pending_keys
from snaprepl.verify.model import DIFFERENT, EXTRA, MISSING, VerifyOutcome, VerifyRequest
from snaprepl.verify.repair import apply_repair, staged_rows
from snaprepl.verify.sides import plan_sides

VERIFY, REPAIR = "verify", "repair"


def run_verify(spark: Any, request: VerifyRequest, *, catalog: Catalog) -> VerifyOutcome:
    """Compare snapshot ``request.snapshot`` with its query evaluated at the source now, holding its
    lease (no refresh applies anything meanwhile); with ``request.repair`` fix what differs. The run
    goes into the history (kind ``verify`` or ``repair``)."""
    snapshot = catalog.snapshot(request.snapshot)
    if snapshot is None:
        raise SnapshotNotFound(f"there is no snapshot {request.snapshot}", "`snaprepl status` lists the snapshots")
    kind = REPAIR if request.repair else VERIFY
    started_at = utcnow()
    with RunLock(catalog, snapshot_lock_name(snapshot.sn_name), request.run_id, what=f"snapshot {snapshot.sn_name}"):
        ends = Endpoints.of(snapshot)
        try:
            check_sources(catalog, snapshot)  # a dropped source is an error, not a copy full of extras
            outcome = _verify(spark, catalog, request, ends)
        except BaseException as err:
            failure = _failure(snapshot.sn_name, kind, err)
            _record(catalog, snapshot.sn_name, kind, started_at, None, run_history.clean_error(failure))
            if failure is err:
                raise
            raise failure from err
        finally:
            ends.dispose()
    _record(catalog, snapshot.sn_name, kind, started_at, outcome, None)
    return outcome


def _verify(spark: Any, catalog: Catalog, request: VerifyRequest, ends: Endpoints) -> VerifyOutcome:
    started = time.monotonic()
    snapshot = ends.snapshot
    log = catalog.log(snapshot.sn_source_table) if snapshot.sn_source_table else None
    sides = plan_sides(ends, log, request.where, request.max_partitions)
    comparison = Comparison(spark, sides, ends.dest_io.target_type, ends.dest_db.dialect.name, 0)
    comparison.buckets = bucket_count(sides.estimate)
    in_databases = database_sums(ends, sides, comparison.buckets)
    computed_in = "databases" if in_databases is not None and in_databases[0] else "spark"
    buckets: list[int] = []
    if in_databases is not None and in_databases[0]:  # equal: no Spark at all
        rows = in_databases[1]
    else:
        buckets, rows = comparison.differing_buckets()
    outcome = VerifyOutcome(
        copy=snapshot.sn_name, equal=not buckets, rows=rows, ranges=comparison.buckets,
        ranges_differing=len(buckets), computed_in=computed_in,
    )  # fmt: skip
    if buckets:
        outcome = _narrowed(spark, catalog, request, ends, comparison, buckets, outcome)
    return dataclasses.replace(outcome, seconds=time.monotonic() - started)


def _narrowed(
    spark: Any,
    catalog: Catalog,
    request: VerifyRequest,
    ends: Endpoints,
    comparison: Comparison,
    buckets: list[int],
    outcome: VerifyOutcome,
) -> VerifyOutcome:
    """The differences in ``buckets`` (keys in flight excluded), repaired when asked."""
    sides = comparison.sides
    pending = pending_keys(spark, catalog, ends, sides, request.tolerance_minutes, ends.dest_io.target_type)
    found = comparison.differences(buckets).persist()
    try:
        differences = found.join(pending, KEY, "left_anti").persist() if pending is not None else found
        excluded = found.count() - differences.count() if pending is not None else 0
        counts, sample = counted(differences)
        total = sum(counts.values())
        outcome = dataclasses.replace(
            outcome, equal=not total, sample=sample, excluded=excluded,
            missing=counts[MISSING], extra=counts[EXTRA], different=counts[DIFFERENT],
        )  # fmt: skip
        if not request.repair or not total:
            return outcome
        staged = staged_rows(differences, sides.dest_columns, sides.key, request.commit_rows)
        upserted, deleted = apply_repair(ends, staged, sides.dest_columns, sides.key)
        after = comparison.differences(buckets)
        left = (after.join(pending, KEY, "left_anti") if pending is not None else after).count()
    finally:
        found.unpersist()
    return dataclasses.replace(outcome, equal=left == 0, repaired=True, rows_upserted=upserted, rows_deleted=deleted)


def _record(
    catalog: Catalog, name: str, kind: str, started: datetime, outcome: VerifyOutcome | None, error: str | None
) -> None:
    """The run in the history: its differences (RH_CONFLICTS), rows compared, rows repaired."""
    run = HistoryRecord(
        rh_copy=name, rh_kind=kind, rh_started=started, rh_ended=utcnow(), rh_outcome="failed", rh_error=error
    )
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

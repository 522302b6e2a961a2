"""Complete (nonincremental) refresh (docs/semantics.md section 4).

The query's result is read in parallel key ranges and loaded into a staging table in the destination
database (streamed by the source dialect's bulk pipe where the pair has one and the column types
match, PostgreSQL's ``COPY TO`` into ``COPY FROM``; else read by Spark and written by the
destination's writer), which gets its primary key after the load; then, in one transaction, the
staging table replaces the destination's content: a rename swap where the destination has nothing
else hanging on it, else the difference by key (deletes, changed rows, inserts), so triggers such as
a snapshot log on the destination see every change and foreign keys into it hold
(:mod:`snaprepl.dialects.replace`). A failed or killed refresh leaves the old content, and readers
never see an empty or half-filled table.

For an incremental snapshot the log's high-water mark (the source's clock) is taken before the copy
starts and becomes SN_LAST_TS, so changes made while copying are replayed by the next incremental
refresh (Virtuoso takes it after, and can skip them).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from snaprepl.catalog.records import SnapshotRecord, utcnow
from snaprepl.catalog.run_lock import check_leases
from snaprepl.catalog.store import Catalog
from snaprepl.common.progress import Progress
from snaprepl.dialects import Column
from snaprepl.dialects.base import SqlSession
from snaprepl.dialects.model import BulkPipe
from snaprepl.errors import RefreshFailed
from snaprepl.refresh.endpoints import Endpoints
from snaprepl.refresh.model import COMPLETE, COPIED_BY_PIPE, COPIED_BY_SPARK, RefreshOutcome, RefreshRequest
from snaprepl.refresh.window import copy_mark
from snaprepl.spark import partitioning
from snaprepl.spark.errors import foreign_key_failure
from snaprepl.spark.session import session_of
from snaprepl.spark.tasks import reporting_tasks

log = logging.getLogger(__name__)


def refresh_complete(spark: Any, catalog: Catalog, request: RefreshRequest, ends: Endpoints) -> RefreshOutcome:
    started = time.monotonic()
    snapshot = ends.snapshot
    source, dest = ends.source_db.dialect, ends.dest_db.dialect
    schema, table = snapshot.sn_dest_schema, snapshot.sn_dest_table

    high_water_mark = xids = None
    with ends.source_db.session() as session:
        if snapshot.incremental:
            high = copy_mark(catalog, snapshot, session, source)
            high_water_mark, xids = high.mark, high.xids
        result_columns = source.describe_query(session, snapshot.sn_query)
    dest_info = ends.dest_table()
    source_columns = _source_columns(ends, result_columns, dest_info.columns)
    key = [c.name for c in dest_info.primary_key]

    staging = ends.staging_name("full")
    with ends.dest_db.session() as session:
        swap = dest.is_plain_table(session, schema, table)
    key_in_ddl = [] if dest.key_after_load else key  # keyed either way: the difference apply joins on it
    staging_columns = [Column(c.name, c.type_sql, c.nullable) for c in dest_info.columns]
    with ends.dest_db.session() as session:
        session.execute(dest.drop_table_sql(schema, staging))
        session.execute(dest.create_staging_sql(schema, staging, table, staging_columns, key_in_ddl, swap=swap))
    _record_start(catalog, request, snapshot, staging, high_water_mark)
    try:
        copied, copied_by = _copy(spark, request, ends, source_columns, staging, staging_columns, key)
        _replace(ends, staging, staging_columns, key, swap)
    except BaseException:
        ends.drop_after_failure(schema, staging)  # its own failure never hides the run's
        raise
    catalog.record_complete(snapshot.sn_name, high_water_mark, xids)
    return RefreshOutcome(
        snapshot=snapshot.sn_name,
        kind=COMPLETE,
        rows_copied=copied,
        copied_by=copied_by,
        last_ts=high_water_mark,
        duration_s=time.monotonic() - started,
    )


def _source_columns(ends: Endpoints, result_columns: Sequence[Column], dest_columns: Sequence[Column]) -> list[Column]:
    """The query's result columns in the order of the destination's, matched by name.

    :raises RefreshFailed: when the query no longer returns some column of the destination.
    """
    dest = ends.dest_db.dialect
    by_name = {c.name: c for c in result_columns}
    missing = [c.name for c in dest_columns if not any(dest.same_name(c.name, n) for n in by_name)]
    if missing:
        raise RefreshFailed(
            f"the query of snapshot {ends.snapshot.sn_name} no longer returns columns {', '.join(missing)} "
            "of its destination",
            "restore them in the source, or drop and recreate the snapshot",
        )
    return [next(by_name[n] for n in by_name if dest.same_name(c.name, n)) for c in dest_columns]


def _record_start(
    catalog: Catalog, request: RefreshRequest, snapshot: SnapshotRecord, staging: str, high_water_mark: datetime | None
) -> None:
    """Note the run, its staging table and the log's high-water mark in SN_LAST_UPD_BM (the purge of
    dead runs' staging tables reads it)."""
    catalog.update_snapshot(
        snapshot.sn_name,
        sn_last_upd_bm=json.dumps(
            {
                "run_id": request.run_id,
                "staging": staging,
                "high_water_mark": high_water_mark.isoformat() if high_water_mark else None,
                "started": utcnow().isoformat(),
            }
        ),
    )


def _copy(
    spark: Any,
    request: RefreshRequest,
    ends: Endpoints,
    source_columns: list[Column],
    staging: str,
    staging_columns: list[Column],
    key: list[str],
) -> tuple[int, str]:
    """Copy the query's result into the staging table in parallel reads, then key and analyze it;
    the rows copied and how (the dialects' bulk pipe where the pair has one and the column types
    match, else Spark's read and the destination's writer)."""
    snapshot, source, dest = ends.snapshot, ends.source_db.dialect, ends.dest_db.dialect
    schema = snapshot.sn_dest_schema
    source_key = [c for c in source_columns if any(dest.same_name(c.name, k) for k in key)]
    with ends.source_db.session(read_only=True) as session:  # the query's own SQL: it must not write
        estimate = _estimate_rows(session, ends, source_key)
        plan = partitioning.plan(session, source, snapshot.sn_query, source_key, estimate, request.max_partitions)
    progress = Progress(f"complete refresh of {snapshot.sn_name}", estimate, estimated=True, bar=True).start()
    spark_session = session_of(spark)
    pipe = _pipe(ends, source_columns, staging_columns)
    copied: int | None
    with reporting_tasks(spark_session, progress.tasks):
        if pipe is not None:
            copied_by = COPIED_BY_PIPE
            ranges = partitioning.key_ranges(source, plan)
            copied = _pipe_copy(spark_session, ends, pipe, source_columns, ranges, (schema, staging, staging_columns))
        else:
            copied_by = COPIED_BY_SPARK
            frame = ends.source_io.read(spark_session, snapshot.sn_query, source_columns, plan)
            frame = frame.toDF(*[c.name for c in staging_columns])
            copied = ends.dest_io.write(frame, schema, staging, staging_columns)
    with ends.dest_db.session() as session:
        if copied is None:
            copied = int(session.query(f"SELECT COUNT(*) FROM {dest.qualified(schema, staging)}")[0][0])
        progress.reached(copied, total=copied)
        if key and dest.key_after_load:
            session.execute(dest.add_key_sql(schema, staging, key))
        dest.analyze(session, schema, staging)
    return copied, copied_by


def _pipe(ends: Endpoints, source_columns: list[Column], staging_columns: list[Column]) -> BulkPipe | None:
    """The source dialect's bulk pipe into the destination, if the pair has one and it takes these
    columns (the reason it does not is logged)."""
    source, dest = ends.source_db.dialect, ends.dest_db.dialect
    pipe = source.bulk_pipe(ends.source_io.conn, dest, ends.dest_io.conn)
    if pipe is None:
        return None
    refusal = pipe.refusal(source_columns, staging_columns)
    if refusal:
        log.info("snapshot %s: copied through Spark, not the COPY pipe: %s", ends.snapshot.sn_name, refusal)
        return None
    return pipe


def _pipe_copy(
    spark: Any,
    ends: Endpoints,
    pipe: BulkPipe,
    columns: list[Column],
    ranges: list[str | None],
    target: tuple[str, str, list[Column]],
) -> int:
    """Stream the query's result into the staging table ``target`` (schema, table, columns) through
    ``pipe``, one Spark task per key range."""
    snapshot = ends.snapshot
    log.info("snapshot %s: copying through the COPY pipe in %d key ranges", snapshot.sn_name, len(ranges))
    try:
        return pipe(session_of(spark), snapshot.sn_query, columns, ranges, target)
    except Exception as err:
        cause = pipe.failure(err)
        if cause is None:
            raise
        raise RefreshFailed(
            f"complete refresh of {snapshot.sn_name} failed while copying: {cause}",
            "the destination keeps its last consistent content; fix the cause and refresh again",
        ) from err


def _replace(ends: Endpoints, staging: str, columns: list[Column], key: list[str], swap: bool) -> None:
    """Give the destination the staging table's content in one transaction: a table swap where nothing
    hangs on the destination, else the difference by key, so its triggers see every change and foreign
    keys hold (see :mod:`snaprepl.dialects.replace`)."""
    dest, snapshot = ends.dest_db.dialect, ends.snapshot
    schema, table = snapshot.sn_dest_schema, snapshot.sn_dest_table
    try:
        with ends.dest_db.session() as session:
            if swap:
                steps = dest.swap_table_steps(session, schema, table, staging)
            else:
                steps = dest.replace_rows_steps(schema, table, staging, columns, key)
            check_leases()  # a run taken over (thought dead) replaces nothing
            for statement in steps:
                session.execute(statement)
    except Exception as err:
        if not dest.is_foreign_key_violation(err):
            raise
        raise foreign_key_failure(f"complete refresh of {snapshot.sn_name}", err) from err


def _estimate_rows(session: SqlSession, ends: Endpoints, key: list[Column]) -> int | None:
    """Rows the query will return, roughly: the size of the one table it reads, if it reads one."""
    import sqlglot
    from sqlglot import exp

    if not key:
        return None
    source = ends.source_db.dialect
    tables = list(sqlglot.parse_one(ends.snapshot.sn_query, read=source.sqlglot_dialect or None).find_all(exp.Table))
    if len(tables) != 1:
        return None
    schema = tables[0].db or source.default_schema(session)
    found = source.find_table(session, schema, tables[0].name)
    return source.estimate_rows(session, *found) if found else None

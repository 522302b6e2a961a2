"""Incremental refresh (docs/semantics.md section 4).

1. The window (:mod:`snaprepl.refresh.window`): by transaction ids where the log records them, else
   from SN_LAST_TS (minus the tolerance where the watermark is not exact); refuse ("complete refresh
   required") if the log was purged past it and past the mark of the last complete refresh (SN_COMPLETE_TS).
2. One query, run by the source database: the log entries since ``start`` LEFT JOINed with the
   snapshot's query restricted to their keys, so only changed rows travel, current as of now.
3. Drop entries the replay log says were applied; number commit batches along SNAPTIME groups. Where
   the pair has a bulk pipe (:mod:`snaprepl.refresh.change_pipe`), the source numbers them and the
   rows stream straight into the staging table; else Spark reads, numbers and writes them.
4. Stage the rows in the destination database, then per batch, in one transaction: delete the keys
   that are gone (or left the condition), upsert the rest; then record the batch's entries in the
   replay log and move SN_LAST_TS to its newest SNAPTIME, never past an open transaction's.

Rows are read in their current state, so a run killed anywhere is simply run again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, wait
from datetime import datetime
from typing import Any

from snaprepl.catalog.run_lock import check_leases
from snaprepl.catalog.store import Catalog
from snaprepl.common.background import in_background
from snaprepl.common.progress import Progress
from snaprepl.common.table_names import Ident
from snaprepl.dialects import Column, Dialect
from snaprepl.dialects.types import GenericType, render
from snaprepl.refresh.change_pipe import Loader, pipe_loader
from snaprepl.refresh.endpoints import Endpoints
from snaprepl.refresh.model import INCREMENTAL, RefreshOutcome, RefreshRequest
from snaprepl.refresh.staged_entries import BatchRecords, SeenEntries, StagedEntries, staged_batches
from snaprepl.refresh.window import Window, nothing_applied, pending_window, record_xids
from snaprepl.spark.errors import foreign_key_failure
from snaprepl.spark.session import session_of
from snaprepl.sql.change_queries import (
    BATCH,
    OP,
    ROWGUID,
    SNAPTIME,
    change_query,
    staged_changes_query,
    staging_columns,
    staging_index_sql,
    window_groups_sql,
)


def refresh_incremental(spark: Any, catalog: Catalog, request: RefreshRequest, ends: Endpoints) -> RefreshOutcome:
    """Apply the snapshot's log entries since its last refresh (steps 1 to 4 above)."""
    started = time.monotonic()
    snapshot = ends.snapshot
    window = pending_window(catalog, request, ends)
    if window is None:  # the usual scheduled no-op: no Spark
        return nothing_applied(snapshot, started)
    log = window.log

    # ---- 2: the changes, joined with current rows by the source database
    source = ends.source_db.dialect
    with ends.source_db.session() as session:
        source_info = source.describe(session, Ident(log.snl_schema, True), Ident(log.snl_table, True), log.snl_conn)
    source_columns = {c.name: c for c in source_info.columns}
    # never a column the source lost (the destination keeps its values, :mod:`snaprepl.refresh.columns`)
    data_columns = [c for c in ends.written_columns(ends.dest_table()) if c.name in source_columns]
    read = [c.name for c in data_columns]
    entries = window.condition(source, "snaprepl_l.")
    query = change_query(source, log, read, snapshot.sn_condition, window.start, entries)
    stage_columns = staging_columns(ends.dest_db.dialect, data_columns)
    load = pipe_loader(ends, window, query, stage_columns, source_columns, request.commit_rows)
    if load is None:
        load = _spark_loader(spark, ends, window, (query, source_columns), stage_columns, request.commit_rows)

    # ---- 4: stage, then apply batch by batch
    upserted, deleted, batches, last_ts = _stage_and_apply(catalog, ends, load, stage_columns, window)
    record_xids(catalog, snapshot, window)
    return RefreshOutcome(
        snapshot=snapshot.sn_name,
        kind=INCREMENTAL,
        rows_upserted=upserted,
        rows_deleted=deleted,
        batches=batches,
        last_ts=last_ts or snapshot.sn_last_ts,
        duration_s=time.monotonic() - started,
        note=window.note,
    )


def _spark_loader(
    spark: Any,
    ends: Endpoints,
    window: Window,
    change: tuple[str, dict[str, Column]],
    stage_columns: list[Column],
    commit_rows: int,
) -> Loader:
    """A loader of the staging table through Spark: the change query, its commit batches numbered and
    its operations named by the source database (:func:`staged_changes_query`, as the bulk pipe's),
    read by JDBC, the replayed entries left out, written by the destination's writer (steps 2 and 3).

    Numbering in the source keeps Spark's plan a read and a write, no window moving every row into
    one partition. A batch that loses replayed entries is only smaller: a SNAPTIME group still
    belongs to one batch.

    :param change: the change query, and the source table's columns by name.
    """
    spark = session_of(spark)
    log, source = window.log, ends.source_db.dialect
    query, source_columns = change
    data = [c.name for c in stage_columns[4:]]  # every one the source has (the caller's data columns)
    groups = window_groups_sql(source, log, window.start, window.condition(source, "snaprepl_l."))
    staged_query = staged_changes_query(source, (query, groups), log.key_columns, data, (), commit_rows)
    # Read once, by the staging write (one Spark job): pending_window found entries to apply, so
    # asking first whether any are left would only add a job. If none is (the log changed since),
    # the staging table stays empty and nothing is applied.
    staged = ends.source_io.read(spark, staged_query, _staged_read_columns(source, source_columns, data))
    replayed = window.replayed
    if replayed:
        from snaprepl.refresh.transforms import exclude_replayed  # noqa: PLC0415  (pyspark: 60 ms to import)

        staged = exclude_replayed(staged, _replayed_frame(spark, replayed))
    schema = ends.snapshot.sn_dest_schema

    def load(stage: str) -> None:
        ends.dest_io.write(staged, schema, stage, stage_columns, bulk=False)

    return load


def _staged_read_columns(source: Dialect, source_columns: dict[str, Column], data: list[str]) -> list[Column]:
    """The columns of :func:`staged_changes_query`'s result, typed in the source's dialect."""
    return [
        Column(BATCH, render(GenericType("integer"), source.name)),
        Column(OP, render(GenericType("varchar(n)", length=1), source.name)),
        Column(ROWGUID, render(GenericType("varchar(n)", length=255), source.name)),
        Column(SNAPTIME, render(GenericType("timestamp"), source.name)),
        *(source_columns[name] for name in data),
    ]


def _stage_and_apply(
    catalog: Catalog, ends: Endpoints, load: Loader, stage_columns: list[Column], window: Window
) -> tuple[int, int, int, datetime | None]:
    """Load a staging table of the destination with ``load``, apply it batch by batch, drop it;
    (upserted, deleted, batches, newest SNAPTIME applied).

    The staging table is dropped once its last batch is applied, while the catalog records that batch
    (SQLite frees a million rows' pages in half a second)."""
    dest, schema = ends.dest_db.dialect, ends.snapshot.sn_dest_schema
    stage = ends.staging_name("inc")
    data_columns = stage_columns[4:]
    with ends.dest_db.session() as session:
        session.execute(dest.drop_table_sql(schema, stage))
        session.execute(dest.create_scratch_table_sql(schema, stage, stage_columns))

    def drop() -> None:
        with ends.dest_db.session() as session:
            session.execute(dest.drop_table_sql(schema, stage))

    dropping: list[Future[None]] = []
    try:
        seen = load(stage)
        with ends.dest_db.session() as session:
            dest.analyze(session, schema, stage, [BATCH, OP, *window.log.key_columns])  # what the apply reads by
        applied = _apply(
            catalog,
            ends,
            (stage, window, data_columns, seen),
            lambda: dropping.append(in_background(drop, name="snaprepl-drop-staging")),
        )
    except BaseException:
        wait(dropping)
        ends.drop_after_failure(schema, stage)  # its own failure never hides the run's
        raise
    if dropping:
        dropping[0].result()
    else:  # no batch: nothing was released
        drop()
    return applied


def _replayed_frame(spark: Any, guids: list[str]) -> Any:
    """The replayed RLOG_ROWGUIDs as a DataFrame (a schema given as a type, not as text, which a
    Spark Connect server would be asked to parse)."""
    from pyspark.sql.types import StringType, StructField, StructType

    return spark.createDataFrame([(g,) for g in guids], StructType([StructField("RLOG_ROWGUID", StringType())]))


def _apply(
    catalog: Catalog,
    ends: Endpoints,
    staged_rows: tuple[str, Window, list[Column], SeenEntries | None],
    release: Callable[[], None],
) -> tuple[int, int, int, datetime | None]:
    """Apply staging table ``stage`` of ``staged_rows`` (its name, the window, the data columns, the
    entries the load showed) batch by batch; ``release`` is called once nothing reads the table any
    more (the last batch applied, its entries read)."""
    stage, window, columns, seen = staged_rows
    dest, key = ends.dest_db.dialect, window.log.key_columns
    schema, name = ends.snapshot.sn_dest_schema, ends.snapshot.sn_name
    target = dest.qualified(schema, ends.snapshot.sn_dest_table)
    staged = dest.qualified(schema, stage)
    # the entries, read while the batches apply, where the replay log is written at all
    entries_of = StagedEntries(ends, staged, seen) if window.needs_replay_log else None
    with ends.dest_db.session() as session:
        per_batch = staged_batches(session, dest, staged)
    if len(per_batch) > 1:  # each batch's statements then read its rows only (one batch reads them all)
        with ends.dest_db.session() as session:
            session.execute(staging_index_sql(dest, schema, stage))
    delete_sql = dest.delete_staged_sql(target, staged, key, BATCH, OP)
    upsert_sql = dest.upsert_staged_sql(target, staged, columns, key, BATCH, OP)
    upserted = deleted = 0
    last_ts = None
    progress = Progress(f"incremental refresh of {name}", sum(b.rows for b in per_batch.values())).start()
    records = BatchRecords(catalog, name, per_batch, entries_of)
    batches = sorted(per_batch)
    for batch in batches:
        counts = per_batch[batch].counts
        statements = [s for op, s in (("D", delete_sql), ("U", upsert_sql)) if counts.get(op)]
        records.start(batch)  # the replay log written beside the apply, committed after it
        try:
            _apply_batch(ends, batch, statements)
        except BaseException:
            records.abandon()
            raise
        if batch == batches[-1] and records.settled():
            release()
        batch_ts = records.commit(window.watermark)  # never past an open transaction
        upserted += counts.get("U", 0)
        deleted += counts.get("D", 0)
        last_ts = batch_ts
        progress.advance(sum(counts.values()))
    return upserted, deleted, len(per_batch), last_ts


def _apply_batch(ends: Endpoints, batch: int, statements: list[str]) -> None:
    """One transaction per batch (no commit splits a SNAPTIME group): its deletes and upserts."""
    dest = ends.dest_db.dialect
    try:
        with ends.dest_db.session() as session:
            for statement in statements:
                session.execute(statement, {"batch": batch})
            check_leases()  # a run taken over (thought dead) commits nothing more
    except Exception as err:
        if not dest.is_foreign_key_violation(err):
            raise
        raise foreign_key_failure(f"incremental refresh of {ends.snapshot.sn_name}", err) from err

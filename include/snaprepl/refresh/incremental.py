"""Incremental refresh (SEMANTICS section 4).

1. start = SN_LAST_TS - tolerance; refuse ("complete refresh required") if the log was purged past it
   and past the high-water mark of the last complete refresh (SN_COMPLETE_TS).
2. One query, run by the source database: the log entries since ``start`` LEFT JOINed with the
   snapshot's query restricted to their keys, so only changed rows travel, current as of now.
3. Drop entries the replay log says were applied; number commit batches along SNAPTIME groups.
4. Stage the rows in the destination database, then per batch, in one transaction: delete the keys
   that are gone (or left the condition), upsert the rest; then record the batch's entries in the
   replay log and move SN_LAST_TS to its newest SNAPTIME.

Rows are read in their current state, so a run killed anywhere is simply run again.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import Any

from snaprepl.catalog.store import Catalog, LogRecord
from snaprepl.dialects import Column, Dialect
from snaprepl.dialects.types import GenericType, render
from snaprepl.errors import CompleteRefreshRequired, SnapshotLogNotFound
from snaprepl.names import Ident
from snaprepl.refresh import transforms as T
from snaprepl.refresh.endpoints import Endpoints
from snaprepl.refresh.lock import check_leases
from snaprepl.refresh.model import INCREMENTAL, RefreshOutcome, RefreshRequest
from snaprepl.spark.errors import foreign_key_failure
from snaprepl.spark.session import session_of


def _complete_required(name: str, why: str) -> CompleteRefreshRequired:
    return CompleteRefreshRequired(
        f"snapshot {name} needs a complete refresh: {why}",
        f"run UPDATE SNAPSHOT {name} AS NONINCREMENTAL, or trigger its DAG with mode nonincremental",
    )


def refresh_incremental(spark: Any, catalog: Catalog, request: RefreshRequest, ends: Endpoints) -> RefreshOutcome:
    started = time.monotonic()
    snapshot = ends.snapshot
    name = snapshot.sn_name
    if snapshot.sn_needs_complete:
        raise _complete_required(name, snapshot.sn_needs_complete)
    if snapshot.sn_last_ts is None:
        raise _complete_required(name, "it has never completed a copy")
    log = catalog.log(snapshot.sn_source_table or "")
    if log is None:
        raise SnapshotLogNotFound(
            f"the snapshot log of {snapshot.sn_source_table}, which snapshot {name} reads, is gone",
            f"create it again and refresh {name} completely",
        )
    minutes = snapshot.sn_tolerance_min if snapshot.sn_tolerance_min is not None else request.tolerance_minutes
    start = snapshot.sn_last_ts - timedelta(minutes=minutes)
    if _purged_past(log.snl_purged_before, start, snapshot.sn_complete_ts):
        raise _complete_required(
            name,
            f"its log was purged up to {log.snl_purged_before:%Y-%m-%d %H:%M:%S} but it needs entries from "
            f"{start:%Y-%m-%d %H:%M:%S} (Oracle's ORA-12034)",
        )

    source = ends.source_db.dialect
    dest = ends.dest_db.dialect
    replayed_guids = catalog.replayed_since(name, start)
    if not _entries_to_apply(ends, log, start, set(replayed_guids)):  # the usual scheduled no-op: no Spark
        return RefreshOutcome(
            snapshot=name, kind=INCREMENTAL, last_ts=snapshot.sn_last_ts, duration_s=time.monotonic() - started
        )
    spark = session_of(spark)
    with ends.source_db.session() as session:
        source_info = source.describe(session, Ident(log.snl_schema, True), Ident(log.snl_table, True), log.snl_conn)
    dest_info = ends.dest_table()
    key = log.key_columns
    data_columns = list(dest_info.columns)
    source_columns = {c.name: c for c in source_info.columns}

    # ---- 2: the changes, joined with current rows by the source database
    q = source.quote
    objects = log.objects
    log_cols = source.log_columns
    needed = list(dict.fromkeys([*key, *(c.name for c in data_columns if c.name in source_columns)]))
    condition = f" WHERE ({snapshot.sn_condition})" if snapshot.sn_condition else ""
    inner = (
        f"SELECT 1 AS {q(T.PRESENT)}, {', '.join(q(c) for c in needed)} "
        f"FROM {source.qualified(log.snl_schema, log.snl_table)}{condition}"
    )
    on = " AND ".join(f"snaprepl_s.{q(k)} = snaprepl_l.{q(lk)}" for k, lk in zip(key, objects.key_columns, strict=True))
    selected = [f"snaprepl_l.{q(lk)} AS {q(T.key_alias(i))}" for i, lk in enumerate(objects.key_columns)]
    selected += [
        f"snaprepl_l.{q(log_cols.snaptime)} AS {q(T.SNAPTIME)}",
        f"snaprepl_l.{q(log_cols.rowguid)} AS {q(T.ROWGUID)}",
        f"snaprepl_s.{q(T.PRESENT)}",
        *(f"snaprepl_s.{q(c.name)}" for c in data_columns if c.name in source_columns),
    ]
    query = (
        f"SELECT {', '.join(selected)} FROM {source.qualified(log.snl_schema, objects.rlog)} snaprepl_l "
        f"LEFT JOIN ({inner}) snaprepl_s ON {on} "
        f"WHERE snaprepl_l.{q(log_cols.snaptime)} >= {source.timestamp_literal(start)}"
    )
    read_columns = [Column(T.key_alias(i), source_columns[k].type_sql) for i, k in enumerate(key)]
    read_columns += [
        Column(T.SNAPTIME, render(GenericType("timestamp"), source.name)),
        Column(T.ROWGUID, render(GenericType("varchar(n)", length=255), source.name)),
        Column(T.PRESENT, render(GenericType("integer"), source.name)),
        *(source_columns[c.name] for c in data_columns if c.name in source_columns),
    ]
    changes = ends.source_io.read(spark, query, read_columns).persist()

    # ---- 3: what is left to apply, in commit batches
    replayed = spark.createDataFrame([(g,) for g in replayed_guids], "RLOG_ROWGUID STRING")
    pending = T.exclude_replayed(changes, replayed)
    for column in data_columns:  # columns the source lost are NULL in the destination
        if column.name not in source_columns:
            pending = pending.withColumn(column.name, spark_null(column, ends))
    staged = T.to_staging(T.assign_batches(pending, request.commit_rows), key, [c.name for c in data_columns])

    if pending.isEmpty():  # cheap on the cached changes; spares the staging table's round trips
        changes.unpersist()
        return RefreshOutcome(
            snapshot=name, kind=INCREMENTAL, last_ts=snapshot.sn_last_ts, duration_s=time.monotonic() - started
        )

    # ---- 4: stage, then apply batch by batch
    schema = snapshot.sn_dest_schema
    stage = ends.staging_name("inc")
    stage_columns = [
        Column(T.BATCH, render(GenericType("integer"), dest.name)),
        Column(T.OP, dest.dmltype_type),
        Column(T.ROWGUID, dest.rowguid_type),
        Column(T.SNAPTIME, render(GenericType("timestamp"), dest.name)),
        *(Column(c.name, c.type_sql) for c in data_columns),
    ]
    with ends.dest_db.session() as session:
        session.execute(dest.drop_table_sql(schema, stage))
        session.execute(dest.create_table_sql(schema, stage, stage_columns, []))
    try:
        # Changes are few next to a table: JDBC batches beat starting Python workers for COPY.
        ends.dest_io.write(staged, schema, stage, stage_columns, bulk=False)
        changes.unpersist()
        with ends.dest_db.session() as session:
            session.execute(staging_index_sql(dest, schema, stage))
            dest.analyze(session, schema, stage)
        upserted, deleted, batches, last_ts = _apply(catalog, ends, stage, key, data_columns)
    finally:
        with ends.dest_db.session() as session:
            session.execute(dest.drop_table_sql(schema, stage))
    return RefreshOutcome(
        snapshot=name,
        kind=INCREMENTAL,
        rows_upserted=upserted,
        rows_deleted=deleted,
        batches=batches,
        last_ts=last_ts or snapshot.sn_last_ts,
        duration_s=time.monotonic() - started,
    )


def staging_index_sql(dest: Dialect, schema: str | None, stage: str) -> str:
    """Index the staging table by batch: each batch's statements then read only its rows, not the whole
    table once per batch."""
    return dest.create_index_sql(schema, stage, dest.shorten(f"{stage}_batch"), [T.BATCH, T.OP])


def _purged_past(purged_before: datetime | None, start: datetime, complete_ts: datetime | None) -> bool:
    """Whether the log may have lost entries the refresh needs: it was purged past ``start``, and past
    the mark the last complete copy started from (entries purged before that mark are in the copy)."""
    if purged_before is None or start >= purged_before:
        return False
    return complete_ts is None or complete_ts < purged_before


def _entries_to_apply(ends: Endpoints, log: LogRecord, start: datetime, replayed: set[str]) -> bool:
    """Whether the log holds entries since ``start`` the replay log does not list: a count, and only
    when the count does not already tell, the entries' RLOG_ROWGUIDs."""
    source = ends.source_db.dialect
    q, cols = source.quote, source.log_columns
    where = f"FROM {source.qualified(log.snl_schema, log.objects.rlog)} WHERE {q(cols.snaptime)} >= " + (
        source.timestamp_literal(start)
    )
    with ends.source_db.session() as session:
        count = int(session.query(f"SELECT COUNT(*) {where}")[0][0])
        if count == 0 or count > len(replayed):
            return count > 0
        return any(row[0] not in replayed for row in session.query(f"SELECT {q(cols.rowguid)} {where}"))


def spark_null(column: Column, ends: Endpoints) -> Any:
    from pyspark.sql import functions as F

    return F.lit(None).cast(ends.dest_io.target_type(column))


def _apply(
    catalog: Catalog, ends: Endpoints, stage: str, key: list[str], columns: list[Column]
) -> tuple[int, int, int, Any]:
    dest = ends.dest_db.dialect
    schema, name = ends.snapshot.sn_dest_schema, ends.snapshot.sn_name
    target = dest.qualified(schema, ends.snapshot.sn_dest_table)
    staged = dest.qualified(schema, stage)
    q = dest.quote
    with ends.dest_db.session() as session:
        summary = session.query(
            f"SELECT {q(T.BATCH)}, {q(T.OP)}, COUNT(*) FROM {staged} GROUP BY {q(T.BATCH)}, {q(T.OP)} "
            f"ORDER BY {q(T.BATCH)}"
        )
    per_batch: dict[int, dict[str, int]] = {}
    for batch, op, count in summary:
        per_batch.setdefault(int(batch), {})[str(op).strip()] = int(count)
    delete_sql = dest.delete_staged_sql(target, staged, key, T.BATCH, T.OP)
    upsert_sql = dest.upsert_staged_sql(target, staged, columns, key, T.BATCH, T.OP)
    entries_sql = f"SELECT {q(T.ROWGUID)}, {q(T.SNAPTIME)} FROM {staged} WHERE {q(T.BATCH)} = :batch"
    upserted = deleted = 0
    last_ts = None
    for batch in sorted(per_batch):
        counts = per_batch[batch]
        statements = [s for op, s in (("D", delete_sql), ("U", upsert_sql)) if counts.get(op)]
        entries = _apply_batch(ends, batch, statements, entries_sql)
        batch_ts = max(ts for _, ts in entries)
        catalog.record_applied(name, entries, batch_ts)
        upserted += counts.get("U", 0)
        deleted += counts.get("D", 0)
        last_ts = batch_ts
    return upserted, deleted, len(per_batch), last_ts


def _apply_batch(ends: Endpoints, batch: int, statements: list[str], entries_sql: str) -> list[tuple[str, Any]]:
    """One transaction per batch (no commit splits a SNAPTIME group): its deletes and upserts; returns
    the batch's log entries (RLOG_ROWGUID, SNAPTIME)."""
    dest = ends.dest_db.dialect
    try:
        with ends.dest_db.session() as session:
            for statement in statements:
                session.execute(statement, {"batch": batch})
            entries = [(guid, dest.snaptime_value(ts)) for guid, ts in session.query(entries_sql, {"batch": batch})]
            check_leases()  # a run taken over (thought dead) commits nothing more
    except Exception as err:
        if not dest.is_foreign_key_violation(err):
            raise
        raise foreign_key_failure(f"incremental refresh of {ends.snapshot.sn_name}", err) from err
    return entries

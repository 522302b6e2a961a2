"""Repairing a copy: the source's current rows for the keys that differ, applied through the apply
path of an incremental refresh (a staging table in the copy's database, then per commit batch the
destination dialect's delete and upsert of staged rows), so triggers on the copy see exactly those
rows change. The source is only read; the snapshot's watermark and replay log are left alone (a
repair replays no log entry)."""

from __future__ import annotations

from typing import Any

from pyspark.sql import Window
from pyspark.sql import functions as F

from snaprepl.catalog.run_lock import check_leases
from snaprepl.common.progress import Progress
from snaprepl.dialects import Column
from snaprepl.refresh.endpoints import Endpoints
from snaprepl.refresh.staged_entries import staged_batches
from snaprepl.spark.errors import foreign_key_failure
from snaprepl.sql.change_queries import (
    BATCH,
    OP,
    ROWGUID,
    SNAPTIME,
    staging_columns,
    staging_index_sql,
)
from snaprepl.verify.canonical import KEY, quoted
from snaprepl.verify.compare import DEST_KEY, KIND, SOURCE_ROW
from snaprepl.verify.model import EXTRA


def staged_rows(differences: Any, columns: list[Column], key: list[str], commit_rows: int) -> Any:
    """The staging table's rows for ``differences``: an upsert of the source's row for a missing or
    different key, a delete of an extra one; numbered in batches of ``commit_rows`` in key order."""
    op = F.when(F.col(KIND) == F.lit(EXTRA), F.lit("D")).otherwise(F.lit("U"))
    values = [
        F.when(F.col(KIND) == F.lit(EXTRA), F.col(f"{DEST_KEY}.{quoted(c.name)}") if c.name in key else F.lit(None))
        .otherwise(F.col(f"{SOURCE_ROW}.{quoted(c.name)}"))
        .alias(c.name)
        for c in columns
    ]
    number = F.row_number().over(Window.orderBy(KEY)) - F.lit(1)
    return differences.coalesce(1).select(
        F.floor(number / F.lit(commit_rows)).cast("int").alias(BATCH),
        op.alias(OP),
        F.expr("uuid()").alias(ROWGUID),
        F.current_timestamp().cast("timestamp_ntz").alias(SNAPTIME),
        *values,
    )


def apply_repair(ends: Endpoints, staged: Any, columns: list[Column], key: list[str]) -> tuple[int, int]:
    """Stage ``staged`` in the copy's database and apply it batch by batch; (upserted, deleted)."""
    dest, schema = ends.dest_db.dialect, ends.snapshot.sn_dest_schema
    stage = ends.staging_name("repair")
    stage_columns = staging_columns(dest, columns)
    with ends.dest_db.session() as session:
        session.execute(dest.drop_table_sql(schema, stage))
        session.execute(dest.create_table_sql(schema, stage, stage_columns, []))
    try:
        ends.dest_io.write(staged, schema, stage, stage_columns, bulk=False)
        with ends.dest_db.session() as session:
            session.execute(staging_index_sql(dest, schema, stage))
            dest.analyze(session, schema, stage)
        return _apply(ends, stage, columns, key)
    finally:
        with ends.dest_db.session() as session:
            session.execute(dest.drop_table_sql(schema, stage))


def _apply(ends: Endpoints, stage: str, columns: list[Column], key: list[str]) -> tuple[int, int]:
    dest = ends.dest_db.dialect
    schema, name = ends.snapshot.sn_dest_schema, ends.snapshot.sn_name
    target, staged = dest.qualified(schema, ends.snapshot.sn_dest_table), dest.qualified(schema, stage)
    with ends.dest_db.session() as session:
        per_batch = {batch: found.counts for batch, found in staged_batches(session, dest, staged).items()}
    delete_sql = dest.delete_staged_sql(target, staged, key, BATCH, OP)
    upsert_sql = dest.upsert_staged_sql(target, staged, columns, key, BATCH, OP)
    progress = Progress(f"repair of {name}", sum(sum(c.values()) for c in per_batch.values())).start()
    upserted = deleted = 0
    for batch in sorted(per_batch):
        counts = per_batch[batch]
        try:
            with ends.dest_db.session() as session:
                for op, statement in (("D", delete_sql), ("U", upsert_sql)):
                    if counts.get(op):
                        session.execute(statement, {"batch": batch})
                check_leases()  # a run taken over commits nothing more
        except Exception as err:
            if not dest.is_foreign_key_violation(err):
                raise
            raise foreign_key_failure(f"repair of {name}", err) from err
        upserted, deleted = upserted + counts.get("U", 0), deleted + counts.get("D", 0)
        progress.advance(sum(counts.values()))
    return upserted, deleted

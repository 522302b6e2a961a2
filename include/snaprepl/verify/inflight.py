"""Rows in flight are not differences: the keys whose changes the snapshot's log holds and the copy
has not applied yet (entries of the refresh window the replay log does not list). A verify holds the
snapshot's lease, so no refresh applies anything while it compares: the keys read at the end are
exactly the changes pending during the comparison.

(One small function on purpose: how a log entry is known to be applied is the refresh window's
business, :mod:`snaprepl.refresh.window`, and may change.)
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from snaprepl.catalog.store import Catalog
from snaprepl.dialects import Column
from snaprepl.refresh.endpoints import Endpoints
from snaprepl.spark.session import session_of
from snaprepl.verify.canonical import KEY, key_text, quoted
from snaprepl.verify.sides import Sides

_GUID = "snaprepl_guid"


def pending_keys(spark: Any, catalog: Catalog, ends: Endpoints, sides: Sides, tolerance: int, target_type: Any) -> Any:
    """A one-column frame (:data:`KEY`) of the keys with log entries not yet applied, or None when the
    snapshot has no log window (nonincremental, or never copied completely)."""
    snapshot = ends.snapshot
    log = catalog.log(snapshot.sn_source_table or "") if snapshot.incremental else None
    if log is None or snapshot.sn_last_ts is None or snapshot.sn_needs_complete:
        return None
    minutes = snapshot.sn_tolerance_min if snapshot.sn_tolerance_min is not None else tolerance
    start = snapshot.sn_last_ts - timedelta(minutes=minutes)
    source, dest = ends.source_db.dialect, ends.dest_db.dialect
    by_name = {c.name: c for c in sides.dest_columns}
    key_columns = [by_name[k] for k in sides.key]  # in the key's order, as the comparison's keys
    source_types = {c.name: c for c in sides.source.columns}
    read_columns = [Column(c.name, source_types[_source_name(sides, c.name)].type_sql) for c in key_columns]
    rlog_keys = dict(zip(log.key_columns, log.objects.key_columns, strict=True))
    selected = ", ".join(
        f"{source.quote(_log_key(rlog_keys, c.name, dest.same_name))} AS {source.quote(c.name)}" for c in key_columns
    )
    cols = source.log_columns
    query = (
        f"SELECT {selected}, {source.quote(cols.rowguid)} AS {_GUID} "
        f"FROM {source.qualified(log.snl_schema, log.objects.rlog)} "
        f"WHERE {source.quote(cols.snaptime)} >= {source.timestamp_literal(start)}"
    )
    frame = sides.source.io.read(session_of(spark), query, [*read_columns, Column(_GUID, "varchar(64)")])
    replayed = catalog.replayed_since(snapshot.sn_name, start)
    if replayed:
        applied = session_of(spark).createDataFrame(
            [(g,) for g in replayed], StructType([StructField(_GUID, StringType())])
        )
        frame = frame.join(applied, _GUID, "left_anti")
    typed = frame.select(*(F.col(quoted(c.name)).cast(target_type(c)).alias(c.name) for c in key_columns))
    return typed.select(key_text(key_columns, target_type, dest.name).alias(KEY)).distinct()


def _source_name(sides: Sides, dest_name: str) -> str:
    index = [c.name for c in sides.dest_columns].index(dest_name)
    return sides.source.columns[index].name


def _log_key(rlog_keys: dict[str, str], name: str, same_name: Any) -> str:
    return next(log_column for key, log_column in rlog_keys.items() if same_name(name, key))

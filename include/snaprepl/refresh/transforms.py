"""Pure DataFrame -> DataFrame steps of an incremental refresh.

The changes DataFrame is the result of the change query (:mod:`snaprepl.sql.change_queries`, whose
docstring lists its columns besides the snapshot's own).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from snaprepl.sql.change_queries import BATCH, OP, PRESENT, ROWGUID, SNAPTIME, key_alias


def _col(name: str) -> Any:
    return F.col("`" + name.replace("`", "``") + "`")


def exclude_replayed(changes: DataFrame, replayed: DataFrame) -> DataFrame:
    """Changes whose RLOG_ROWGUID is not in the replay log of this snapshot.

    :param replayed: one column, ``RLOG_ROWGUID``.
    """
    applied = replayed.select(F.col("RLOG_ROWGUID").alias(ROWGUID)).distinct()
    return changes.join(applied, on=ROWGUID, how="left_anti")


def assign_batches(changes: DataFrame, commit_rows: int) -> DataFrame:
    """Number commit batches in SNAPTIME order, about ``commit_rows`` rows each, never splitting a
    SNAPTIME group: a group belongs to the batch in which its first row falls.

    A row's ``rank()`` in SNAPTIME order, less one, is the number of rows of earlier groups: where its
    group starts. The numbering needs every row in one partition; the change read is one already, so
    ``coalesce(1)`` keeps it there without a shuffle (one Spark stage from the read to the write).
    """
    start = F.rank().over(Window.orderBy(SNAPTIME)) - F.lit(1)
    batch = F.floor(start / F.lit(commit_rows)).cast("int").alias(BATCH)
    return changes.coalesce(1).select("*", batch)


def to_staging(changes: DataFrame, key_columns: Sequence[str], data_columns: Sequence[str]) -> DataFrame:
    """Rows for the destination's staging table: the operation ('U' upsert, 'D' delete), the batch,
    the log entry's identity, and the destination's columns.

    A row that is gone from the source, or no longer matches the snapshot's condition, is a delete; its
    key comes from the log, so deletes carry the key even when the source row does not exist.
    """
    op = F.when(_col(PRESENT).isNotNull(), F.lit("U")).otherwise(F.lit("D"))
    keys = {name: _col(key_alias(i)).alias(name) for i, name in enumerate(key_columns)}
    values = [keys.get(name, _col(name).alias(name)) for name in data_columns]
    return changes.select(
        _col(BATCH).alias(BATCH), op.alias(OP), _col(ROWGUID).alias(ROWGUID), _col(SNAPTIME).alias(SNAPTIME), *values
    )

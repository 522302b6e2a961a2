"""The pure DataFrame steps of an incremental refresh."""

from __future__ import annotations

from datetime import datetime

import pytest
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

from snaprepl.refresh import transforms as T

pytestmark = pytest.mark.spark

CHANGES_SCHEMA = (
    "SNAPREPL_K0 INT, SNAPREPL_SNAPTIME TIMESTAMP_NTZ, SNAPREPL_ROWGUID STRING, SNAPREPL_PRESENT INT, id INT, v STRING"
)


def ts(second: int) -> datetime:
    return datetime(2026, 1, 1, 0, 0, second)


def test_replayed_entries_are_left_out(spark) -> None:
    changes = spark.createDataFrame(
        [(1, ts(1), "g1", 1, 1, "a"), (2, ts(2), "g2", 1, 2, "b"), (3, ts(3), "g3", None, None, None)], CHANGES_SCHEMA
    )
    replayed = spark.createDataFrame([("g2",), ("g-other",)], "RLOG_ROWGUID STRING")
    expected = spark.createDataFrame([(1, ts(1), "g1", 1, 1, "a"), (3, ts(3), "g3", None, None, None)], CHANGES_SCHEMA)
    assertDataFrameEqual(T.exclude_replayed(changes, replayed).select(*expected.columns), expected)


def test_batches_follow_snaptime_groups_and_never_split_one(spark) -> None:
    # groups: t1 x3, t2 x1, t3 x4, t4 x1, t5 x1 ; commit_rows = 3
    rows = []
    for second, count in [(1, 3), (2, 1), (3, 4), (4, 1), (5, 1)]:
        rows += [(second * 10 + i, ts(second), f"g{second}-{i}", 1, second * 10 + i, "x") for i in range(count)]
    batched = T.assign_batches(spark.createDataFrame(rows, CHANGES_SCHEMA), commit_rows=3)
    per_group = {r["SNAPREPL_SNAPTIME"].second: r["SNAPREPL_BATCH"] for r in batched.collect()}
    # a group's batch is floor(rows before it / 3): t1 starts at 0, t2 at 3, t3 at 4, t4 at 8, t5 at 9
    assert per_group == {1: 0, 2: 1, 3: 1, 4: 2, 5: 3}
    groups_per_batch = batched.groupBy("SNAPREPL_SNAPTIME").agg(F.countDistinct("SNAPREPL_BATCH").alias("n")).collect()
    assert all(r["n"] == 1 for r in groups_per_batch), "no SNAPTIME group spans two batches"
    assert batched.count() == 10


def test_staging_rows_are_upserts_or_deletes_with_the_logged_key(spark) -> None:
    changes = spark.createDataFrame(
        [(1, ts(1), "g1", 1, 1, "a"), (2, ts(1), "g2", None, None, None)], CHANGES_SCHEMA
    ).withColumn("SNAPREPL_BATCH", F.lit(0))
    staged = T.to_staging(changes, ["id"], ["id", "v"])
    expected = spark.createDataFrame(
        [(0, "U", "g1", ts(1), 1, "a"), (0, "D", "g2", ts(1), 2, None)],
        "SNAPREPL_BATCH INT, SNAPREPL_OP STRING, SNAPREPL_ROWGUID STRING, SNAPREPL_SNAPTIME TIMESTAMP_NTZ, "
        "id INT, v STRING",
    )
    assertDataFrameEqual(staged, expected)

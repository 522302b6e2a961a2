"""The pure DataFrame steps of an incremental refresh (the batch numbering is the source's:
tests/integration/test_snapshots.py, tests/unit/test_change_queries.py)."""

from __future__ import annotations

from datetime import datetime

import pytest
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

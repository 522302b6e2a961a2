"""Pure DataFrame -> DataFrame steps of an incremental refresh.

The change set arrives as the destination's staging table holds it, its commit batches numbered and
its operations named by the source database (:func:`snaprepl.sql.change_queries.staged_changes_query`);
what is left for Spark is leaving out the entries the replay log lists.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from snaprepl.sql.change_queries import ROWGUID


def exclude_replayed(changes: DataFrame, replayed: DataFrame) -> DataFrame:
    """Changes whose RLOG_ROWGUID is not in the replay log of this snapshot.

    :param replayed: one column, ``RLOG_ROWGUID``.
    """
    applied = replayed.select(F.col("RLOG_ROWGUID").alias(ROWGUID)).distinct()
    return changes.join(applied, on=ROWGUID, how="left_anti")

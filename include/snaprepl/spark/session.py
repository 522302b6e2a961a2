"""Spark settings every snaprepl job runs with (spark-submit ``--conf``s and test sessions alike)."""

from __future__ import annotations

from typing import Any

#: UTC everywhere: timestamps without time zone must not move between JVM, Spark and databases.
SPARK_CONF: dict[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.extraJavaOptions": "-Duser.timezone=UTC",
    "spark.executor.extraJavaOptions": "-Duser.timezone=UTC",
    "spark.sql.execution.arrow.maxRecordsPerBatch": "50000",
    "spark.ui.showConsoleProgress": "false",
    "spark.log.level": "WARN",
    # Refresh data is changes or one table; AQE coalesces further. 200 shuffle tasks only cost time.
    "spark.sql.shuffle.partitions": "8",
    # Partitions append to staging tables; a retried task would append twice. A failed refresh is
    # rerun whole instead, from a fresh staging table.
    "spark.task.maxFailures": "1",
}


def build_session(app_name: str, master: str | None = None, extra: dict[str, str] | None = None) -> Any:
    """A SparkSession with :data:`SPARK_CONF` (spark-submit jobs get the same as ``--conf``)."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    if master:
        builder = builder.master(master)
    for key, value in {**SPARK_CONF, **(extra or {})}.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()

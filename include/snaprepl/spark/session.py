"""Spark settings every snaprepl job runs with (spark-submit ``--conf``s and test sessions alike)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
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


#: The Spark Connect session a job running in this process uses (see :mod:`snaprepl.spark.connect`).
_REMOTE: ContextVar[Any] = ContextVar("snaprepl_remote_session", default=None)


@contextlib.contextmanager
def remote(session: Callable[[], Any]) -> Iterator[None]:
    """While inside, jobs' :class:`LazySession` give ``session()`` (a Spark Connect session the caller
    keeps and may open on first use: it is not stopped when the job ends)."""
    token = _REMOTE.set(session)
    try:
        yield
    finally:
        _REMOTE.reset(token)


class LazySession:
    """A job's SparkSession, started when first asked for: a refresh or sync with nothing to do never
    pays for a SparkContext (several seconds of every scheduled no-op run).

    Call it to get the session; :meth:`stop` stops it if it was started.
    """

    def __init__(self, app_name: str) -> None:
        self.app_name = app_name
        self._session: Any = None

    def __call__(self) -> Any:
        if (given := _REMOTE.get()) is not None:
            return given()
        if self._session is None:
            self._session = build_session(self.app_name)
        return self._session

    def stop(self) -> None:
        if self._session is not None:
            self._session.stop()
            self._session = None


def session_of(spark: Any) -> Any:
    """The SparkSession behind ``spark``: a session, or a function (e.g. a :class:`LazySession`) that
    returns one."""
    return spark() if callable(spark) else spark

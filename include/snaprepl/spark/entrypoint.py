"""What every ``spark-submit`` job of snaprepl does around its work: the catalog, a lazily started
SparkSession, and the outcome (or the error) written as JSON to ``SNAPREPL_RESULT_FILE`` for the
submitter to read. Expected failures print one ``snaprepl: error:`` line; others their traceback.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import traceback
from contextvars import ContextVar
from types import TracebackType
from typing import Any

from snaprepl.catalog.store import Catalog
from snaprepl.common.progress import configure_job_logging
from snaprepl.common.terminal import visible
from snaprepl.connections.lookup import get_connection
from snaprepl.errors import SnapreplError
from snaprepl.spark.errors import root_cause
from snaprepl.spark.lifeline import attach
from snaprepl.spark.session import LazySession

RESULT_FILE_ENV = "SNAPREPL_RESULT_FILE"
log = logging.getLogger(__name__)


#: Where a job running in its caller's process (Spark Connect mode) puts its result instead of a file.
RESULT_SINK: ContextVar[dict[str, Any] | None] = ContextVar("snaprepl_result_sink", default=None)


def write_result(payload: dict[str, Any]) -> None:
    """Write the job's result, readable by this user only (it names tables and errors); a job run in
    its caller's process hands it over in memory (:data:`RESULT_SINK`)."""
    if (sink := RESULT_SINK.get()) is not None:
        sink.clear()
        sink.update(payload)
        return
    path = os.environ.get(RESULT_FILE_ENV)
    if path:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(json.dumps(payload, default=str))


class JobRun:
    """What every job does around its work, as a ``with`` block the job's ``main`` opens::

        with JobRun("snaprepl-refresh-x", args.catalog_conn, failure=RefreshFailed) as job:
            job.result = {"outcome": ...work(job.spark, job.open_catalog())...}
        return job.exit_code

    On leaving the block the result (or the error) goes to the result file and the SparkSession
    stops. An error is reported by its class name (see :func:`snaprepl.errors.error_class`):
    snaprepl's own as they are, with one ``snaprepl: error:`` line; any other exception as
    ``failure`` with its root cause, after its traceback. The work runs in the job's own frames, so
    the call path goes straight down from ``main`` to the runner, never back up through here.

    :param app_name: the SparkSession's name (started only if the work asks for it).
    :param catalog_conn: the Airflow connection id of the catalog.
    :param failure: the error class reported for unexpected exceptions.
    """

    def __init__(self, app_name: str, catalog_conn: str, *, failure: type[SnapreplError]) -> None:
        self.spark = LazySession(app_name)
        self.result: dict[str, Any] = {}
        self.exit_code = 1
        self._catalog_conn = catalog_conn
        self._failure = failure

    def __enter__(self) -> JobRun:
        if RESULT_SINK.get() is None:  # its own process: progress lines reach the task log
            configure_job_logging()  # (in its caller's process, the caller's logging decides)
        return self

    def open_catalog(self) -> Catalog:
        """Take the credentials into memory and off the disk (and die with the JVM and the submitter),
        then open the catalog."""
        attach()
        return Catalog.from_connection(get_connection(self._catalog_conn))

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> bool:
        try:
            if err is None:
                write_result({"ok": True, **self.result})
                self.exit_code = 0
                return False
            if isinstance(err, SnapreplError):
                write_result(
                    {"ok": False, "error": {"type": type(err).__name__, "message": err.message, "hint": err.hint}}
                )
                if RESULT_SINK.get() is None:  # in the caller's process, the caller says it
                    print(f"snaprepl: error: {visible(str(err))}", file=sys.stderr, flush=True)
                return True
            if isinstance(err, Exception):
                if RESULT_SINK.get() is None:
                    traceback.print_exception(err)
                else:
                    log.warning("the job failed", exc_info=err)
                # Not one of snaprepl's own errors: nothing says doing it again is pointless (a lost
                # executor, a dropped connection), so the submitter may retry it.
                failure = {"type": self._failure.__name__, "message": root_cause(err), "hint": None, "retryable": True}
                write_result({"ok": False, "error": failure})
                return True
            return False  # KeyboardInterrupt, SystemExit: on their way out
        finally:
            self.spark.stop()


def _error(kind: type[SnapreplError], message: str, hint: str | None) -> dict[str, str | None]:
    """An error as the result file carries it: the class by name, for the submitter to raise again."""
    return {"type": kind.__name__, "message": message, "hint": hint}

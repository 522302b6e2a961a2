"""What every ``spark-submit`` job of snaprepl does around its work: the catalog, a lazily started
SparkSession, and the outcome (or the error) written as JSON to ``SNAPREPL_RESULT_FILE`` for the
submitter to read. Expected failures print one ``snaprepl: error:`` line; others their traceback.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any

from snaprepl.catalog.store import Catalog
from snaprepl.connections import get_connection
from snaprepl.errors import SnapreplError
from snaprepl.spark.errors import root_cause
from snaprepl.spark.lifeline import attach
from snaprepl.spark.session import LazySession

RESULT_FILE_ENV = "SNAPREPL_RESULT_FILE"


def write_result(payload: dict[str, Any]) -> None:
    """Write the job's result, readable by this user only (it names tables and errors)."""
    path = os.environ.get(RESULT_FILE_ENV)
    if path:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(json.dumps(payload, default=str))


def run_job(
    app_name: str, catalog_conn: str, work: Callable[[Any, Any], dict[str, Any]], *, failure: type[SnapreplError]
) -> int:
    """Run ``work(spark, catalog)``, whose dict goes into the result; return the exit code.

    :param app_name: the SparkSession's name (started only if ``work`` asks for it).
    :param catalog_conn: the Airflow connection id of the catalog.
    :param failure: the error class reported (by name, see :func:`snaprepl.errors.error_class`) for
        unexpected exceptions.
    """
    spark = LazySession(app_name)
    try:
        attach()  # credentials into memory and off the disk; die with the JVM and with the submitter
        catalog = Catalog.from_connection(get_connection(catalog_conn))
        write_result({"ok": True, **work(spark, catalog)})
        return 0
    except SnapreplError as err:
        write_result({"ok": False, "error": {"type": type(err).__name__, "message": err.message, "hint": err.hint}})
        print(f"snaprepl: error: {err}", file=sys.stderr, flush=True)
        return 1
    except Exception as err:
        traceback.print_exc()
        write_result({"ok": False, "error": {"type": failure.__name__, "message": root_cause(err), "hint": None}})
        return 1
    finally:
        spark.stop()

"""The refresh job that ``spark-submit`` runs: ``main(argv)`` parses, ``run(spark, ...)`` works.

Credentials arrive in the file named by ``SNAPREPL_CONNECTIONS_FILE`` (written by the submitter,
readable only by this user); the command line carries names only. The outcome (or the error) is
written as JSON to ``SNAPREPL_RESULT_FILE`` for the submitter to read.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from snaprepl.catalog.store import Catalog
from snaprepl.errors import RefreshFailed
from snaprepl.refresh.model import RefreshOutcome, RefreshRequest
from snaprepl.refresh.runner import run_refresh
from snaprepl.spark.entrypoint import JobRun
from snaprepl.spark.job_args import parse_job_argv


def run(spark: Any, request: RefreshRequest, catalog: Catalog) -> RefreshOutcome:
    """Refresh ``request.snapshot`` with ``spark`` (a session, or a function starting one when first
    needed); see :func:`snaprepl.refresh.runner.run_refresh`."""
    return run_refresh(spark, request, catalog=catalog)


def main(argv: Sequence[str] | None = None) -> int:
    request, catalog_conn = parse_job_argv(
        RefreshRequest, argv, prog="refresh_snapshot", description="Refresh one snaprepl snapshot."
    )
    with JobRun(f"snaprepl-refresh-{request.snapshot}", catalog_conn, failure=RefreshFailed) as job:
        job.result = {"outcome": run(job.spark, request, job.open_catalog()).to_dict()}
    return job.exit_code


if __name__ == "__main__":
    sys.exit(main())

"""The verify job that ``spark-submit`` runs (or connect mode runs in its caller): ``main(argv)``
parses, :func:`snaprepl.verify.runner.run_verify` works, as :mod:`snaprepl.refresh.job` does."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from snaprepl.errors import VerifyFailed
from snaprepl.spark.entrypoint import JobRun
from snaprepl.spark.job_args import parse_job_argv
from snaprepl.verify.model import VerifyRequest
from snaprepl.verify.runner import run_verify


def main(argv: Sequence[str] | None = None) -> int:
    request, catalog_conn = parse_job_argv(
        VerifyRequest, argv, prog="verify_snapshot", description="Verify one snaprepl snapshot."
    )
    with JobRun(f"snaprepl-verify-{request.snapshot}", catalog_conn, failure=VerifyFailed) as job:
        outcome = run_verify(job.spark, request, catalog=job.open_catalog())
        job.result = {"outcome": outcome.to_dict()}
    return job.exit_code


if __name__ == "__main__":
    sys.exit(main())

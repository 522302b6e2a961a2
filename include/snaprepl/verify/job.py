"""The verify job that ``spark-submit`` runs (or connect mode runs in its caller): ``main(argv)``
parses, :func:`snaprepl.verify.runner.run_verify` works, as :mod:`snaprepl.refresh.job` does."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from snaprepl.errors import VerifyFailed
from snaprepl.spark.entrypoint import JobRun
from snaprepl.spark.job_args import VerifyJobArgs
from snaprepl.verify.model import VerifyRequest
from snaprepl.verify.runner import run_verify


def request_from(args: VerifyJobArgs) -> VerifyRequest:
    values: dict[str, Any] = {
        "snapshot": args.snapshot,
        "repair": args.repair,
        "where": args.where,
        "commit_rows": args.commit_rows,
        "max_partitions": args.max_partitions,
        "tolerance_minutes": args.tolerance_minutes,
    }
    if args.run_id:
        values["run_id"] = args.run_id
    return VerifyRequest(**values)


def main(argv: Sequence[str] | None = None) -> int:
    args = VerifyJobArgs.from_argv(argv)
    with JobRun(f"snaprepl-verify-{args.snapshot}", args.catalog_conn, failure=VerifyFailed) as job:
        outcome = run_verify(job.spark, request_from(args), catalog=job.open_catalog())
        job.result = {"outcome": outcome.to_dict()}
    return job.exit_code


if __name__ == "__main__":
    sys.exit(main())

"""The refresh job that ``spark-submit`` runs: ``main(argv)`` parses, ``run(spark, ...)`` works.

Credentials arrive in the file named by ``SNAPREPL_CONNECTIONS_FILE`` (written by the submitter,
readable only by this user); the command line carries names only. The outcome (or the error) is
written as JSON to ``SNAPREPL_RESULT_FILE`` for the submitter to read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="refresh_snapshot", description="Refresh one snaprepl snapshot.")
    parser.add_argument("--snapshot", required=True, help="SN_NAME of the snapshot")
    parser.add_argument("--mode", choices=("incremental", "complete"), default="incremental")
    parser.add_argument("--fallback-complete", action="store_true")
    parser.add_argument("--tolerance-minutes", type=int, default=15)
    parser.add_argument("--commit-rows", type=int, default=50_000)
    parser.add_argument("--max-partitions", type=int, default=8)
    parser.add_argument("--catalog-conn", default="snaprepl_catalog")
    parser.add_argument("--run-id", default=None)
    return parser.parse_args(argv)


def request_from(args: argparse.Namespace) -> Any:
    from snaprepl.refresh.model import RefreshRequest

    values: dict[str, Any] = {
        "snapshot": args.snapshot,
        "mode": args.mode,
        "fallback_complete": args.fallback_complete,
        "tolerance_minutes": args.tolerance_minutes,
        "commit_rows": args.commit_rows,
        "max_partitions": args.max_partitions,
    }
    if args.run_id:
        values["run_id"] = args.run_id
    return RefreshRequest(**values)


def run(spark: Any, request: Any, catalog: Any) -> Any:
    """Refresh ``request.snapshot`` with ``spark`` (a session, or a function starting one when first
    needed); see :func:`snaprepl.refresh.runner.run_refresh`."""
    from snaprepl.refresh.runner import run_refresh

    return run_refresh(spark, request, catalog=catalog)


def main(argv: Sequence[str] | None = None) -> int:
    from snaprepl.errors import RefreshFailed
    from snaprepl.spark.entrypoint import run_job

    args = parse_args(argv)
    return run_job(
        f"snaprepl-refresh-{args.snapshot}",
        args.catalog_conn,
        lambda spark, catalog: {"outcome": run(spark, request_from(args), catalog).to_dict()},
        failure=RefreshFailed,
    )


if __name__ == "__main__":
    sys.exit(main())

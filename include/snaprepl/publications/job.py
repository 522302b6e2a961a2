"""A sync job's process, for publications of tables (:mod:`snaprepl.bidir.job`) and of collections
(:mod:`snaprepl.collections.job`) alike: its request, its runner's outcomes as the result."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from snaprepl.errors import ReplicationError
from snaprepl.publications.request import SyncRequest
from snaprepl.spark.entrypoint import JobRun
from snaprepl.spark.job_args import parse_job_argv


def sync_main(runner: Callable[[Any, SyncRequest, Any], list[Any]], argv: Sequence[str] | None) -> int:
    """A sync job's process (tables: :mod:`snaprepl.bidir.job`; collections: :mod:`snaprepl.collections.job`): its
    request, ``runner``'s outcomes as the result, failures as :class:`ReplicationError`."""
    request, catalog_conn = parse_job_argv(
        SyncRequest, argv, prog="sync_publication", description="Sync one snaprepl publication."
    )
    with JobRun(f"snaprepl-sync-{request.action}", catalog_conn, failure=ReplicationError) as job:
        job.result = {"outcomes": [o.to_dict() for o in runner(job.spark, request, job.open_catalog())]}
    return job.exit_code

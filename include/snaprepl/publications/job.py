"""A sync job's process, for publications of tables (:mod:`snaprepl.bidir.job`) and of collections
(:mod:`snaprepl.collections.job`) alike: its arguments, its runner's outcomes as the result."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from snaprepl.errors import ReplicationError
from snaprepl.spark.entrypoint import JobRun
from snaprepl.spark.job_args import SyncJobArgs


def sync_main(runner: Callable[[Any, SyncJobArgs, Any], list[Any]], argv: Sequence[str] | None) -> int:
    """A sync job's process (tables: :mod:`snaprepl.bidir.job`; collections: :mod:`snaprepl.collections.job`): its
    arguments, ``runner``'s outcomes as the result, failures as :class:`ReplicationError`."""
    args = SyncJobArgs.from_argv(argv)
    with JobRun(f"snaprepl-sync-{args.action}", args.catalog_conn, failure=ReplicationError) as job:
        job.result = {"outcomes": [o.to_dict() for o in runner(job.spark, args, job.open_catalog())]}
    return job.exit_code

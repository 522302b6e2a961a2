"""Running snaprepl's Spark jobs in the test process's SparkSession: the jobs' own ``run``, without
spark-submit, with the arguments the submitter would give them."""

from __future__ import annotations

from typing import Any

from snaprepl.bidir import job as table_job
from snaprepl.catalog.records import COLLECTION_TYPE
from snaprepl.catalog.store import Catalog
from snaprepl.collections import job as collection_job
from snaprepl.publications.outcome import Outcome
from snaprepl.settings import Settings
from snaprepl.spark.job_args import SyncJobArgs
from snaprepl.submit.sync import Syncer


def in_process_syncer(spark: Any) -> Syncer:
    """A :data:`snaprepl.submit.sync.Syncer` running sync jobs with ``spark``."""

    def sync(
        action: str, item: str, server: str | None, rows_per_commit: int, catalog: Catalog, settings: Settings
    ) -> list[Outcome]:
        args = SyncJobArgs(
            item=item,
            action=action,
            server=server,
            rows_per_commit=rows_per_commit,
            tolerance_minutes=settings.snp_repl_tolerance_offset,
            commit_rows=settings.refresh_commit_rows,
            catalog_conn=settings.catalog_conn_id,
            reinit_detached=settings.reinit_detached,
        )
        publication = catalog.publication(item)
        job = collection_job if publication is not None and publication.sp_type == COLLECTION_TYPE else table_job
        return job.run(spark, args, catalog)  # type: ignore[attr-defined]

    return sync

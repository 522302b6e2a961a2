"""Running snaprepl's Spark jobs in the test process's SparkSession: the jobs' own ``run``, without
spark-submit, with the request the submitter would give them."""

from __future__ import annotations

from typing import Any

from snaprepl.bidir import job as table_job
from snaprepl.catalog.records import COLLECTION_TYPE
from snaprepl.catalog.store import Catalog
from snaprepl.collections import job as collection_job
from snaprepl.publications.outcome import Outcome
from snaprepl.publications.request import SyncRequest
from snaprepl.settings import Settings
from snaprepl.submit.sync import Syncer


def in_process_syncer(spark: Any) -> Syncer:
    """A :data:`snaprepl.submit.sync.Syncer` running sync jobs with ``spark``."""

    def sync(request: SyncRequest, catalog: Catalog, settings: Settings) -> list[Outcome]:
        publication = catalog.publication(request.item)
        job = collection_job if publication is not None and publication.sp_type == COLLECTION_TYPE else table_job
        return job.run(spark, request, catalog)  # type: ignore[attr-defined]

    return sync

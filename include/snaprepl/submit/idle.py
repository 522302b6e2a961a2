"""Work decided before any Spark: a scheduled refresh or sync step with nothing to do is answered by
the submitter from SQL counts, with the outcome the job would have given, and starts no job.

One call for every path that starts jobs (the CLI, the Python API, the Airflow operators) and every
way of running them: ``None`` means "start the job". Anything the counts cannot settle (a busy
lease, a source or log that is gone, a complete refresh required, a database that does not answer)
is also left to the job, which reports it as it always did.
"""

from __future__ import annotations

import logging

from snaprepl.bidir.idle import sync_if_idle
from snaprepl.catalog.records import COLLECTION_TYPE
from snaprepl.catalog.store import Catalog
from snaprepl.collections.idle import collection_sync_if_idle
from snaprepl.common.timeouts import capped
from snaprepl.publications.outcome import Outcome
from snaprepl.publications.request import SyncRequest
from snaprepl.refresh.idle import refresh_if_idle
from snaprepl.refresh.model import RefreshOutcome, RefreshRequest

log = logging.getLogger(__name__)

#: Longest the check waits for a lock on a log (one held by a long transaction, say): then the job
#: decides, and waits for the lock as long as the settings say.
CHECK_LOCK_SECONDS = 5


def idle_refresh(request: RefreshRequest, catalog: Catalog) -> RefreshOutcome | None:
    """The outcome of ``request`` if it is an incremental refresh with nothing to apply (recorded in
    the catalog); None when a job must run."""
    try:
        with capped(CHECK_LOCK_SECONDS):
            return refresh_if_idle(request, catalog=catalog)
    except Exception as err:  # the job meets it again and reports it in full
        log.info("deciding before Spark whether %s has work failed (%s): the job decides", request.snapshot, err)
        return None


def idle_sync(request: SyncRequest, catalog: Catalog) -> list[Outcome] | None:
    """The outcomes of sync job ``request`` if none of its steps has anything to do (recorded in the
    catalog); None when a job must run. A collection's check scans its sides, as the job would
    (:mod:`snaprepl.collections.idle`)."""
    action, item = request.action, request.item
    try:
        publication = catalog.publication(item)
        if publication is not None and publication.sp_type == COLLECTION_TYPE:
            return collection_sync_if_idle(catalog, item, action, request.server, request.run_id)
        with capped(CHECK_LOCK_SECONDS):
            return sync_if_idle(
                catalog, item, action, request.server, request.run_id, tolerance_minutes=request.tolerance_minutes
            )
    except Exception as err:  # the job meets it again and reports it in full
        log.info("deciding before Spark whether %s of %s has work failed (%s): the job decides", action, item, err)
        return None

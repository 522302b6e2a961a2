"""Running sync jobs: spark-submit of ``spark_jobs/sync_publication.py`` (or the job in this process on
a Spark Connect server), as the Airflow tasks do; for publications of tables and collections alike."""

from __future__ import annotations

from collections.abc import Callable

from snaprepl.bidir.servers import server_conn
from snaprepl.catalog.records import COLLECTION_TYPE
from snaprepl.catalog.store import Catalog
from snaprepl.connections.lookup import ConnectionInfo, get_connection
from snaprepl.errors import ReplicationError
from snaprepl.publications.outcome import Outcome
from snaprepl.publications.request import DEFAULT_ROWS_PER_COMMIT, SyncRequest
from snaprepl.settings import Settings
from snaprepl.spark.job_args import job_argv
from snaprepl.submit.alerts import alerting
from snaprepl.submit.idle import idle_sync
from snaprepl.submit.refresh import catalog_connection_of
from snaprepl.submit.submission import Submission, job_module_file, prepare, run_submission

#: Runs one sync job: (request, catalog, settings) -> outcomes.
Syncer = Callable[[SyncRequest, Catalog, Settings], list[Outcome]]


def rows_per_commit_of(catalog: Catalog, item: str) -> int:
    """The rows per commit of publication ``item``'s scheduled sync steps."""
    publication = catalog.publication(item)
    return (publication.sp_rows_per_commit if publication else None) or DEFAULT_ROWS_PER_COMMIT


def sync_connections(catalog: Catalog, settings: Settings, item: str, server: str | None) -> list[ConnectionInfo]:
    """The connections a sync job of ``item`` needs: the catalog, the publisher, the subscriber(s) (a
    collection's job opens every subscriber's: a push forgets deletions every side has applied)."""
    publication = catalog.publication(item)
    if publication is None:
        raise ReplicationError(f"there is no publication {item}")
    servers = [s.ss_server for s in catalog.subscriptions(item)]
    if server and publication.sp_type != COLLECTION_TYPE:
        servers = [server]
    conn_ids = [
        server_conn(publication.sp_server, catalog=catalog),
        *(server_conn(s, catalog=catalog) for s in servers),
    ]
    return [catalog_connection_of(catalog, settings), *(get_connection(c) for c in dict.fromkeys(conn_ids))]


#: The job (spark_jobs/ shim, job module) that syncs a publication of tables, and one of a collection.
TABLE_JOB = ("sync_publication", "snaprepl.bidir.job")
COLLECTION_JOB = ("sync_collection", "snaprepl.collections.job")


def prepare_sync(request: SyncRequest, catalog: Catalog, settings: Settings) -> Submission:
    """One sync job with the publication's Spark connection (SP_SPARK_CONN, else ``[snaprepl]
    spark_conn_id``), ready to run (its caller cleans it up)."""
    publication = catalog.publication(request.item)
    job, module = COLLECTION_JOB if publication and publication.sp_type == COLLECTION_TYPE else TABLE_JOB
    return prepare(
        job=job,
        module_file=job_module_file(module),
        module=module,
        args=job_argv(request, settings.catalog_conn_id),
        connections=sync_connections(catalog, settings, request.item, request.server),
        settings=settings,
        run_id=request.run_id,
        name=f"snaprepl-sync-{request.action}-{request.run_id[:8]}",
        spark_conn=publication.sp_spark_conn if publication else None,
        # An initial load into an empty PostgreSQL replica copies without Spark: its job opens the
        # session only if it stages the rows.
        lazy_session=request.action == "init",
    )


def submit_sync(request: SyncRequest, catalog: Catalog, settings: Settings) -> list[Outcome]:
    """Run one sync job as the Airflow task does: spark-submit of ``spark_jobs/sync_publication.py``,
    unless none of its steps has anything to do (see :mod:`snaprepl.submit.idle`)."""
    idle = idle_sync(request, catalog)
    if idle is not None:
        return idle
    submission = prepare_sync(request, catalog, settings)
    try:
        what = f"{request.action} of {request.item}" + (f" with {request.server}" if request.server else "")
        with alerting(catalog, settings, request.item, what, server=request.server):
            result = run_submission(submission)
    finally:
        submission.cleanup()
    return [Outcome(**o) for o in result["outcomes"]]

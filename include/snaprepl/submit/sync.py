"""Running sync jobs: spark-submit of ``spark_jobs/sync_publication.py`` (or the job in this process on
a Spark Connect server), as the Airflow tasks do; for publications of tables and collections alike."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from snaprepl.bidir.servers import server_conn
from snaprepl.catalog.records import COLLECTION_TYPE
from snaprepl.catalog.store import Catalog
from snaprepl.connections.lookup import ConnectionInfo, get_connection
from snaprepl.errors import ReplicationError
from snaprepl.publications.outcome import Outcome
from snaprepl.settings import Settings
from snaprepl.spark.job_args import DEFAULT_ROWS_PER_COMMIT, SyncJobArgs
from snaprepl.submit.alerts import alerting
from snaprepl.submit.idle import idle_sync
from snaprepl.submit.refresh import catalog_connection_of
from snaprepl.submit.submission import Submission, job_module_file, prepare, run_submission

#: Runs one sync job: (action, item, server or None, rows_per_commit, catalog, settings) -> outcomes.
Syncer = Callable[[str, str, "str | None", int, Catalog, Settings], list[Outcome]]


def rows_per_commit_of(catalog: Catalog, item: str) -> int:
    """The rows per commit of publication ``item``'s scheduled sync steps."""
    publication = catalog.publication(item)
    return (publication.sp_rows_per_commit if publication else None) or DEFAULT_ROWS_PER_COMMIT


def sync_arguments(
    action: str,
    item: str,
    server: str | None,
    rows_per_commit: int,
    settings: Settings,
    run_id: str,
    *,
    atomic: bool = False,
) -> list[str]:
    """The sync job's command line: names and numbers only."""
    return SyncJobArgs(
        item=item,
        action=action,
        server=server,
        rows_per_commit=rows_per_commit,
        atomic=atomic,
        tolerance_minutes=settings.snp_repl_tolerance_offset,
        commit_rows=settings.refresh_commit_rows,
        catalog_conn=settings.catalog_conn_id,
        run_id=run_id,
        reinit_detached=settings.reinit_detached,
    ).to_argv()


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


def prepare_sync(
    action: str,
    item: str,
    server: str | None,
    rows_per_commit: int,
    catalog: Catalog,
    settings: Settings,
    *,
    run_id: str,
    atomic: bool = False,
) -> Submission:
    """One sync job with the publication's Spark connection (SP_SPARK_CONN, else ``[snaprepl]
    spark_conn_id``), ready to run (its caller cleans it up). ``atomic``: an init replaces the replica
    in one transaction (readers see the old rows or the new ones)."""
    publication = catalog.publication(item)
    job, module = COLLECTION_JOB if publication and publication.sp_type == COLLECTION_TYPE else TABLE_JOB
    return prepare(
        job=job,
        module_file=job_module_file(module),
        module=module,
        args=sync_arguments(action, item, server, rows_per_commit, settings, run_id, atomic=atomic),
        connections=sync_connections(catalog, settings, item, server),
        settings=settings,
        run_id=run_id,
        name=f"snaprepl-sync-{action}-{run_id[:8]}",
        spark_conn=publication.sp_spark_conn if publication else None,
    )


def submit_sync(
    action: str, item: str, server: str | None, rows_per_commit: int, catalog: Catalog, settings: Settings
) -> list[Outcome]:
    """Run one sync job as the Airflow task does: spark-submit of ``spark_jobs/sync_publication.py``,
    unless none of its steps has anything to do (see :mod:`snaprepl.submit.idle`)."""
    run_id = uuid.uuid4().hex
    idle = idle_sync(action, item, server, catalog, settings, run_id)
    if idle is not None:
        return idle
    submission = prepare_sync(action, item, server, rows_per_commit, catalog, settings, run_id=run_id)
    try:
        what = f"{action} of {item}" + (f" with {server}" if server else "")
        with alerting(catalog, settings, item, what, server=server):
            result = run_submission(submission)
    finally:
        submission.cleanup()
    return [Outcome(**o) for o in result["outcomes"]]

"""Running verify jobs: ``spark_jobs/verify_snapshot.py`` by spark-submit, or in the caller in
connect mode, prepared as refreshes are (:mod:`snaprepl.submit.refresh`), for the CLI, the API and
Airflow alike."""

from __future__ import annotations

from snaprepl.bidir.servers import server_conn
from snaprepl.catalog.store import Catalog
from snaprepl.connections.lookup import get_connection
from snaprepl.errors import SnapshotNotFound
from snaprepl.settings import Settings
from snaprepl.spark.job_args import job_argv
from snaprepl.submit.alerts import alerting
from snaprepl.submit.refresh import catalog_connection_of
from snaprepl.submit.submission import job_module_file, prepare, run_submission
from snaprepl.verify.model import VerifyOutcome, VerifyRequest
from snaprepl.verify.replicas import find_replica


def submit_verify(request: VerifyRequest, catalog: Catalog, settings: Settings) -> VerifyOutcome:
    """Run a verify (or repair) of ``request.snapshot`` as a Spark job on the snapshot's Spark
    connection; alert when it fails or finds differences."""
    copy, connections, spark_conn = _copy_of(request.snapshot, catalog)
    submission = prepare(
        job="verify_snapshot",
        module_file=job_module_file("snaprepl.verify.job"),
        module="snaprepl.verify.job",
        args=job_argv(request, settings.catalog_conn_id),  # names, numbers, the condition
        connections=[catalog_connection_of(catalog, settings), *(get_connection(c) for c in connections)],
        settings=settings,
        run_id=request.run_id,
        name=f"snaprepl-verify-{request.run_id[:8]}",
        spark_conn=spark_conn,
        lazy_session=True,  # equal sums computed by the databases need no Spark
    )
    try:
        with alerting(catalog, settings, copy, f"verify of {request.snapshot}"):
            result = run_submission(submission)
    finally:
        submission.cleanup()
    return VerifyOutcome.from_dict(result["outcome"])


def _copy_of(name: str, catalog: Catalog) -> tuple[str, list[str], str | None]:
    """The copy's history name, the connections its job needs and its Spark connection: a snapshot's,
    or a replica's (its publication's)."""
    snapshot = catalog.snapshot(name)
    if snapshot is not None:
        return snapshot.sn_name, [snapshot.sn_source_conn, snapshot.sn_dest_conn], snapshot.sn_spark_conn
    replica = find_replica(catalog, name)
    publication = catalog.publication(replica.item) if replica is not None else None
    if replica is None or publication is None:
        raise SnapshotNotFound(f"there is no snapshot or replica {name}", "`snaprepl status` lists them")
    servers = [publication.sp_server, replica.server]
    return replica.item, [server_conn(s, catalog=catalog) for s in servers], publication.sp_spark_conn

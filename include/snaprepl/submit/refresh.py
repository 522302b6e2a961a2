"""Running refresh jobs: spark-submit of ``spark_jobs/refresh_snapshot.py``, one preparation for the
CLI, the Python API and the Airflow operator alike."""

from __future__ import annotations

from snaprepl.catalog.location import catalog_connection
from snaprepl.catalog.records import SnapshotRecord
from snaprepl.catalog.store import Catalog
from snaprepl.connections.lookup import ConnectionInfo, get_connection
from snaprepl.errors import SnapreplError
from snaprepl.refresh.model import RefreshOutcome, RefreshRequest
from snaprepl.settings import Settings
from snaprepl.spark.job_args import job_argv
from snaprepl.submit.alerts import alerting
from snaprepl.submit.idle import idle_refresh
from snaprepl.submit.submission import Submission, job_module_file, prepare, run_submission


def catalog_connection_of(catalog: Catalog, settings: Settings) -> ConnectionInfo:
    """The connection a job opens the catalog with: the catalog's own, else the configured one."""
    return catalog.connection if catalog.connection is not None else catalog_connection(settings)


def prepare_refresh(
    request: RefreshRequest, snapshot: SnapshotRecord, catalog: Catalog, settings: Settings
) -> Submission:
    """The run of ``request`` on ``snapshot`` with the snapshot's Spark connection (SN_SPARK_CONN, else
    ``[snaprepl] spark_conn_id``), ready to run (its caller cleans it up)."""
    return prepare(
        job="refresh_snapshot",
        module_file=job_module_file("snaprepl.refresh.job"),
        module="snaprepl.refresh.job",
        args=job_argv(request, settings.catalog_conn_id),
        connections=[
            catalog_connection_of(catalog, settings),
            get_connection(snapshot.sn_source_conn),
            get_connection(snapshot.sn_dest_conn),
        ],
        settings=settings,
        run_id=request.run_id,
        name=f"snaprepl-refresh-{request.run_id[:8]}",
        spark_conn=snapshot.sn_spark_conn,
        lazy_session=True,  # opened by the job if it needs one: an incremental pipe's does not
    )


def submit_refresh(request: RefreshRequest, catalog: Catalog, settings: Settings) -> RefreshOutcome:
    """Run a refresh as the Airflow task does: spark-submit of ``spark_jobs/refresh_snapshot.py``,
    unless it is an incremental refresh with nothing to apply (see :mod:`snaprepl.submit.idle`)."""
    snapshot = catalog.snapshot(request.snapshot)
    if snapshot is None:
        raise SnapreplError(f"there is no snapshot {request.snapshot}")
    idle = idle_refresh(request, catalog)
    if idle is not None:
        return idle
    submission = prepare_refresh(request, snapshot, catalog, settings)
    try:
        with alerting(catalog, settings, snapshot.sn_name, f"refresh of {snapshot.sn_name}"):
            result = run_submission(submission)
    finally:
        submission.cleanup()
    return RefreshOutcome.from_dict(result["outcome"])

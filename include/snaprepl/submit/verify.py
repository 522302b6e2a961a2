"""Running verify jobs: ``spark_jobs/verify_snapshot.py`` by spark-submit, or in the caller in
connect mode, prepared as refreshes are (:mod:`snaprepl.submit.refresh`), for the CLI, the API and
Airflow alike."""

from __future__ import annotations

from snaprepl.catalog.store import Catalog
from snaprepl.connections import get_connection
from snaprepl.errors import SnapshotNotFound
from snaprepl.settings import Settings
from snaprepl.spark.job_args import VerifyJobArgs
from snaprepl.submit.alerts import alerting
from snaprepl.submit.refresh import catalog_connection_of
from snaprepl.submit.submission import job_module_file, prepare, run_submission
from snaprepl.verify.model import VerifyOutcome, VerifyRequest


def verify_arguments(request: VerifyRequest, settings: Settings) -> list[str]:
    """The verify job's command line: names, numbers and the condition (no credentials)."""
    return VerifyJobArgs(
        snapshot=request.snapshot,
        repair=request.repair,
        where=request.where,
        commit_rows=request.commit_rows,
        max_partitions=request.max_partitions,
        tolerance_minutes=request.tolerance_minutes,
        catalog_conn=settings.catalog_conn_id,
        run_id=request.run_id,
    ).to_argv()


def submit_verify(request: VerifyRequest, catalog: Catalog, settings: Settings) -> VerifyOutcome:
    """Run a verify (or repair) of ``request.snapshot`` as a Spark job on the snapshot's Spark
    connection; alert when it fails or finds differences."""
    snapshot = catalog.snapshot(request.snapshot)
    if snapshot is None:
        raise SnapshotNotFound(f"there is no snapshot {request.snapshot}", "`snaprepl status` lists the snapshots")
    submission = prepare(
        job="verify_snapshot",
        module_file=job_module_file("snaprepl.verify.job"),
        module="snaprepl.verify.job",
        args=verify_arguments(request, settings),
        connections=[
            catalog_connection_of(catalog, settings),
            get_connection(snapshot.sn_source_conn),
            get_connection(snapshot.sn_dest_conn),
        ],
        settings=settings,
        run_id=request.run_id,
        name=f"snaprepl-verify-{request.run_id[:8]}",
        spark_conn=snapshot.sn_spark_conn,
    )
    try:
        with alerting(catalog, settings, snapshot.sn_name, f"verify of {snapshot.sn_name}"):
            result = run_submission(submission)
    finally:
        submission.cleanup()
    return VerifyOutcome.from_dict(result["outcome"])

"""Airflow operators of snaprepl."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

from snaprepl.spark.submit import job_application, spark_binary

if TYPE_CHECKING:
    from airflow.sdk import Context

NONINCREMENTAL = "nonincremental"
MODES = ("incremental", NONINCREMENTAL)


def resolve_mode(configured: str | None, context: Context) -> tuple[str, bool]:
    """The refresh mode of this run: a backfill refreshes completely; otherwise the run's ``mode``
    param, else the task's own; also whether to fall back to a complete refresh."""
    params = context.get("params") or {}
    fallback = bool(params.get("fallback_complete", False))
    dag_run = context.get("dag_run")
    if dag_run is not None and str(getattr(dag_run, "run_type", "")) in {"backfill", "DagRunType.BACKFILL_JOB"}:
        return "complete", fallback
    mode = params.get("mode") or configured or "incremental"
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    return ("complete" if mode == NONINCREMENTAL else "incremental"), fallback


class SnapshotRefreshOperator(SparkSubmitOperator):
    """Refresh one snaprepl snapshot with spark-submit of ``spark_jobs/refresh_snapshot.py``.

    Everything is resolved in ``execute``: the snapshot's connections are written to a file only the
    job can read (credentials never reach the command line), the job runs, and its outcome is the
    task's return value. A run of type backfill, or a run whose ``mode`` param is ``nonincremental``,
    refreshes completely.

    :param snapshot: SN_NAME of the snapshot (``schema.table@conn_id``).
    :param mode: ``incremental`` or ``nonincremental`` when the run's params do not say.
    """

    template_fields: Sequence[str] = (*SparkSubmitOperator.template_fields, "snapshot", "mode")
    ui_color = "#d9ead3"

    def __init__(self, *, snapshot: str, mode: str | None = None, **kwargs: Any) -> None:
        from snaprepl.refresh import job
        from snaprepl.settings import Settings

        settings = Settings.load()
        kwargs.setdefault("conn_id", settings.spark_conn_id)
        kwargs.setdefault("driver_memory", settings.spark_driver_memory)
        kwargs.setdefault("name", "snaprepl-refresh")
        super().__init__(
            application=job_application("refresh_snapshot", Path(job.__file__)),
            spark_binary=spark_binary(),
            **kwargs,
        )
        self.snapshot = snapshot
        self.mode = mode

    def execute(self, context: Context) -> dict[str, Any]:
        from airflow.sdk.exceptions import AirflowFailException

        from snaprepl.catalog.store import Catalog
        from snaprepl.connections import get_connection
        from snaprepl.errors import CompleteRefreshRequired, SnapreplError, SnapshotNotFound
        from snaprepl.refresh import job
        from snaprepl.refresh.model import RefreshOutcome, RefreshRequest
        from snaprepl.settings import Settings
        from snaprepl.snapshots import catalog_connection_of, refresh_arguments
        from snaprepl.spark.submit import error_from_result, prepare

        settings = Settings.load()
        mode, fallback = resolve_mode(self.mode, context)
        catalog = Catalog.open(settings)
        record = catalog.snapshot(self.snapshot)
        if record is None:
            raise AirflowFailException(str(SnapshotNotFound(f"there is no snapshot {self.snapshot}")))
        request = RefreshRequest(
            snapshot=record.sn_name,
            mode=mode,
            fallback_complete=fallback,
            tolerance_minutes=settings.snp_repl_tolerance_offset,
            commit_rows=settings.refresh_commit_rows,
        )
        self.log.info("refreshing snapshot %s (%s, run %s)", record.sn_name, mode, request.run_id)
        submission = prepare(
            job="refresh_snapshot",
            module_file=Path(job.__file__),
            args=refresh_arguments(request, settings),
            connections=[
                catalog_connection_of(catalog, settings),
                get_connection(record.sn_source_conn),
                get_connection(record.sn_dest_conn),
            ],
            settings=settings,
            run_id=request.run_id,
            name=f"snaprepl-refresh-{request.run_id[:8]}",
        )
        self.application_args = submission.application_args
        self.conf = submission.conf
        self.jars = submission.jars
        self.driver_class_path = submission.driver_class_path
        self.env_vars = submission.env_vars
        self.name = submission.name
        self._hook = None
        failure: BaseException | None = None
        try:
            super().execute(context)
        except Exception as err:  # the hook raises on a non-zero exit; the job's result says why
            failure = err
        finally:
            result = submission.read_result()
            submission.cleanup()
        if failure is not None or not result or not result.get("ok"):
            error: SnapreplError = error_from_result(result, failure)
            if isinstance(error, CompleteRefreshRequired):
                # Retrying cannot help: a complete refresh is needed (trigger with mode nonincremental).
                raise AirflowFailException(str(error))
            raise RuntimeError(str(error))
        outcome = RefreshOutcome.from_dict(result["outcome"])
        self.log.info("%s", outcome)
        return outcome.to_dict()

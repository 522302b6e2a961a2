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


class SnaprepSparkOperator(SparkSubmitOperator):
    """Base of snaprepl's operators: a ``SparkSubmitOperator`` whose submission (arguments, connections
    file, environment) is prepared in ``execute``, and whose job reports its outcome in a result file."""

    def _prepare(self, context: Context) -> Any:
        """The :class:`snaprepl.spark.submit.Submission` of this run."""
        raise NotImplementedError

    def _run_submission(self, context: Context, submission: Any) -> dict[str, Any]:
        from airflow.sdk.exceptions import AirflowFailException

        from snaprepl.errors import CompleteRefreshRequired, InvalidArgument, SnapshotNotFound
        from snaprepl.spark.submit import error_from_result

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
            error = error_from_result(result, failure)
            if isinstance(error, CompleteRefreshRequired | SnapshotNotFound | InvalidArgument):
                raise AirflowFailException(str(error))  # retrying cannot help
            raise RuntimeError(str(error))
        return result


class SnapshotRefreshOperator(SnaprepSparkOperator):
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
        from snaprepl.errors import SnapshotNotFound
        from snaprepl.refresh import job
        from snaprepl.refresh.model import RefreshOutcome, RefreshRequest
        from snaprepl.settings import Settings
        from snaprepl.snapshots import catalog_connection_of, refresh_arguments
        from snaprepl.spark.submit import prepare

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
        result = self._run_submission(context, submission)
        outcome = RefreshOutcome.from_dict(result["outcome"])
        self.log.info("%s", outcome)
        return outcome.to_dict()


class ReplicationSyncOperator(SnaprepSparkOperator):
    """One step of a publication's sync with spark-submit of ``spark_jobs/sync_publication.py``: pull a
    subscriber's changes into the publisher, or push the publisher's log to a subscriber. After a pull,
    the conflicts it met are sent to the configured notifier.

    :param item: SP_ITEM of the publication.
    :param action: ``pull`` or ``push``.
    :param server: the subscriber's replication name.
    """

    template_fields: Sequence[str] = (*SparkSubmitOperator.template_fields, "item", "server")
    ui_color = "#cfe2f3"

    def __init__(self, *, item: str, action: str, server: str, **kwargs: Any) -> None:
        from snaprepl.bidir import job
        from snaprepl.settings import Settings

        if action not in {"pull", "push"}:
            raise ValueError(f"action must be pull or push, not {action!r}")
        settings = Settings.load()
        kwargs.setdefault("conn_id", settings.spark_conn_id)
        kwargs.setdefault("driver_memory", settings.spark_driver_memory)
        kwargs.setdefault("name", f"snaprepl-{action}")
        super().__init__(
            application=job_application("sync_publication", Path(job.__file__)),
            spark_binary=spark_binary(),
            **kwargs,
        )
        self.item = item
        self.action = action
        self.server = server

    def execute(self, context: Context) -> list[dict[str, Any]]:
        import uuid

        from snaprepl.bidir import job
        from snaprepl.bidir.notify import notify_conflicts
        from snaprepl.bidir.submit import sync_arguments, sync_connections
        from snaprepl.catalog.store import Catalog
        from snaprepl.settings import Settings
        from snaprepl.spark.submit import prepare

        settings = Settings.load()
        catalog = Catalog.open(settings)
        run_id = uuid.uuid4().hex
        self.log.info("%s %s of %s (run %s)", self.action, self.server, self.item, run_id)
        submission = prepare(
            job="sync_publication",
            module_file=Path(job.__file__),
            args=sync_arguments(self.action, self.item, self.server, 100, settings, run_id),
            connections=sync_connections(catalog, settings, self.item, self.server),
            settings=settings,
            run_id=run_id,
            name=f"snaprepl-{self.action}-{run_id[:8]}",
        )
        outcomes = self._run_submission(context, submission)["outcomes"]
        for outcome in outcomes:
            self.log.info("%s", outcome)
        if self.action == "pull":
            notified = notify_conflicts(catalog, settings)
            if notified:
                self.log.info("%d conflicts notified", notified)
        return outcomes

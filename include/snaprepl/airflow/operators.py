"""Airflow operators of snaprepl.

Their ``__init__`` stores ids only: DAG parsing builds one operator per snapshot and sync step, so
settings, connections and the job's files are resolved in ``execute``. A run that finds its snapshot
or publication busy with another run is rescheduled (``[snaprepl] busy_wait_seconds`` later) instead
of failing; a backfill refreshes completely once (see :mod:`snaprepl.catalog.backfills`).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import Context
from airflow.sdk.exceptions import AirflowFailException, AirflowRescheduleException, AirflowSkipException

from snaprepl.airflow.metrics import refresh_metrics, sync_metrics
from snaprepl.airflow.runs import MODES, NONINCREMENTAL, backfill_id, is_backfill, resolve_mode, runs_step
from snaprepl.catalog import backfills
from snaprepl.catalog.records import SnapshotRecord, utcnow
from snaprepl.catalog.run_lock import LEASE, holder_is_dead, snapshot_lock_name
from snaprepl.catalog.store import Catalog
from snaprepl.errors import SnapreplError, SnapshotBusy, SnapshotNotFound
from snaprepl.publications.leases import step_lease
from snaprepl.publications.notify import notify_conflicts
from snaprepl.publications.request import SyncRequest
from snaprepl.refresh.model import RefreshOutcome, RefreshRequest
from snaprepl.refresh.stale import drop_staging_tables
from snaprepl.settings import Settings
from snaprepl.submit.alerts import alerting
from snaprepl.submit.idle import idle_refresh, idle_sync
from snaprepl.submit.refresh import prepare_refresh
from snaprepl.submit.submission import Submission, error_from_result, spark_binary
from snaprepl.submit.sync import prepare_sync, rows_per_commit_of

T = TypeVar("T")

#: Exceptions that end a task without a failed run: rescheduled behind a busy lease.
NO_FAILURE = (AirflowRescheduleException,)

__all__ = ["MODES", "NONINCREMENTAL", "ReplicationSyncOperator", "SnapshotRefreshOperator", "resolve_mode"]


def task_failure(error: SnapreplError) -> BaseException:
    """What a task raises for ``error``: the error itself when its class (or the job) says a retry may
    succeed, so Airflow retries it and the log names its class; else an ``AirflowFailException``
    naming it, which fails the task without spending its retries."""
    if error.retryable:
        return error
    return AirflowFailException(f"{type(error).__name__}: {error}")


def failing_fast(execute: Callable[[Any, Context], T]) -> Callable[[Any, Context], T]:
    """Wrap an operator's ``execute``: a snaprepl error becomes :func:`task_failure`'s exception."""

    @functools.wraps(execute)
    def run(self: Any, context: Context) -> T:
        try:
            return execute(self, context)
        except SnapreplError as err:
            failure = task_failure(err)
            if failure is err:
                raise
            raise failure from err

    return run


def lease_busy(catalog: Catalog, name: str) -> str | None:
    """Who holds lease ``name``, if a live run does (a dead holder's lease is taken over by the job)."""
    current = catalog.lock_holder(name)
    if current is None:
        return None
    run_id, holder, heartbeat = current
    if holder_is_dead(holder) or utcnow() - heartbeat > LEASE:
        return None
    return f"run {run_id} ({holder})"


def drop_in_background(record: SnapshotRecord, log: Any, wait: float = 3.0) -> None:
    """Drop ``record``'s staging tables from a thread, waiting ``wait`` seconds at most: on_kill runs in
    a signal handler, which must not wait for a lock its own interrupted job may hold."""

    def drop() -> None:
        try:
            dropped = drop_staging_tables(record)
        except Exception as err:  # the next run, or the purge, drops them
            log.warning("staging tables of %s not dropped: %s", record.sn_name, err)
            return
        if dropped:
            log.info("dropped staging tables %s of %s", dropped, record.sn_name)

    worker = threading.Thread(target=drop, name="snaprepl-drop-staging", daemon=True)
    worker.start()
    worker.join(wait)


class SnapreplSparkOperator(SparkSubmitOperator):
    """Base of snaprepl's operators: a ``SparkSubmitOperator`` whose submission (arguments, connections
    file, environment) is prepared in ``execute``, and whose job reports its outcome in a result file."""

    def _reschedule(self, settings: Settings, why: str) -> None:
        self.log.info("%s: trying again in %d s", why, settings.busy_wait_seconds)
        raise AirflowRescheduleException(datetime.now(UTC) + timedelta(seconds=settings.busy_wait_seconds))

    def _wait_if_busy(self, catalog: Catalog, lease: str, what: str, settings: Settings) -> None:
        """Reschedule at once, without a spark-submit, when a live run holds ``lease``."""
        holder = lease_busy(catalog, lease)
        if holder is not None:
            self._reschedule(settings, f"{what} is busy with {holder}")

    def _run_submission(self, context: Context, submission: Submission, settings: Settings) -> dict[str, Any]:
        self.application = submission.application
        self.application_args = submission.application_args
        self.conf = submission.conf
        self.jars = submission.jars
        self.driver_class_path = submission.driver_class_path
        self.env_vars = submission.env_vars
        self.name = submission.name
        self._conn_id = submission.conn_id
        self._driver_memory = submission.driver_memory
        self._spark_binary = spark_binary()
        self._hook = None
        self._submission = submission
        self.log.info("Spark job in %s mode (Spark connection %s)", submission.mode, submission.conn_id)
        try:  # spark-submit through SparkSubmitOperator, or on the Connect server: the submission decides
            result, failure = submission.execute(lambda: super(SnapreplSparkOperator, self).execute(context))
        finally:
            self._submission = None
            submission.cleanup()
        if failure is not None or not result or not result.get("ok"):
            error = error_from_result(result, failure)
            if isinstance(error, SnapshotBusy):  # another run took the lease first: wait, do not fail
                self._reschedule(settings, str(error))
            raise error
        return result

    def on_kill(self) -> None:
        """Kill the running job: spark-submit's processes, or the run's operations on the Connect server."""
        submission: Submission | None = getattr(self, "_submission", None)
        if submission is None:
            super().on_kill()
        else:
            stopped = submission.kill(super().on_kill)
            if stopped:  # connect mode: the run's operations on the server
                self.log.info("interrupted Spark operations %s tagged %s", ", ".join(stopped), submission.tag)

    def _backfill(self, context: Context) -> str | None:
        """This run's backfill id when it is a backfill run (None otherwise)."""
        if not is_backfill(context):
            return None
        found = backfill_id(context)
        if found is None:
            self.log.warning(
                "this backfill run does not name its backfill (is snaprepl installed where the scheduler runs? its "
                "plugin's listener names them): it refreshes completely, as every run of this backfill will"
            )
        return found


class SnapshotRefreshOperator(SnapreplSparkOperator):
    """Refresh one snaprepl snapshot with spark-submit of ``spark_jobs/refresh_snapshot.py``.

    Everything is resolved in ``execute``: the snapshot's connections are written to a file only the
    job can read (credentials never reach the command line), the job runs, and its outcome is the
    task's return value. A run whose ``mode`` param is ``nonincremental`` refreshes completely; so
    does the first run of a backfill to get there, and the backfill's other runs say so and succeed.

    :param snapshot: SN_NAME of the snapshot (``schema.table@conn_id``).
    :param mode: ``incremental`` or ``nonincremental`` when the run's params do not say.
    """

    template_fields: Sequence[str] = (*SparkSubmitOperator.template_fields, "snapshot", "mode")
    ui_color = "#d9ead3"

    def __init__(self, *, snapshot: str, mode: str | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("name", "snaprepl-refresh")
        super().__init__(**kwargs)
        self.snapshot = snapshot
        self.mode = mode

    @failing_fast
    def execute(self, context: Context) -> dict[str, Any]:
        settings = Settings.load()
        mode, fallback = resolve_mode(self.mode, context)
        catalog = Catalog.open(settings)
        record = catalog.snapshot(self.snapshot)
        if record is None:
            raise AirflowFailException(str(SnapshotNotFound(f"there is no snapshot {self.snapshot}")))
        backfill = self._backfill(context)
        if backfill is not None and (done := backfills.done(catalog, backfill, record.sn_name)) is not None:
            self.log.info("%s: nothing to do", done)
            return {
                "snapshot": record.sn_name,
                "backfill_id": backfill,
                "already_done": str(done),
                "by_run": done.run_id,
            }
        self._wait_if_busy(catalog, snapshot_lock_name(record.sn_name), f"snapshot {record.sn_name}", settings)
        result = self._refresh(context, catalog, record, mode, fallback, settings)
        if backfill is not None:
            dag_run = context["dag_run"]
            backfills.record(catalog, backfill, record.sn_name, dag_run.dag_id, dag_run.run_id)
            self.log.info("backfill %s: this run refreshed %s completely", backfill, record.sn_name)
            result["backfill_id"] = backfill
        return result

    def _refresh(
        self, context: Context, catalog: Catalog, record: Any, mode: str, fallback: bool, settings: Settings
    ) -> dict[str, Any]:
        request = RefreshRequest.configured(record.sn_name, settings, mode=mode, fallback_complete=fallback)
        self.log.info("refreshing snapshot %s (%s, run %s)", record.sn_name, mode, request.run_id)
        idle = idle_refresh(request, catalog)
        if idle is not None:
            self.log.info("%s; decided without Spark", idle)
            refresh_metrics(idle.to_dict())  # a quiet copy's lag and backlog are figures too
            return idle.to_dict()
        submission = prepare_refresh(request, record, catalog, settings)
        self._refreshing = record
        with alerting(catalog, settings, record.sn_name, f"refresh of {record.sn_name}", ignore=NO_FAILURE):
            result = self._run_submission(context, submission, settings)
        outcome = RefreshOutcome.from_dict(result["outcome"])
        self.log.info("%s", outcome)
        self._refreshed = (record, {**result["outcome"], **outcome.to_dict()})  # lag and backlog, if measured
        refresh_metrics(self._refreshed[1])
        return outcome.to_dict()

    def on_kill(self) -> None:
        """Stop the job (see the base class), then drop the staging tables of the run's snapshot: a job
        stopped on a Connect server fails and drops them itself, but the task may be SIGKILLed first."""
        super().on_kill()
        record = getattr(self, "_refreshing", None)
        if record is not None:
            drop_in_background(record, self.log)

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        """The tables the refresh read and wrote, with the rows written (OpenLineage provider)."""
        from snaprepl.airflow.lineage_events import refresh_lineage  # noqa: PLC0415  (heavy: sqlglot, openlineage)

        refreshed = getattr(self, "_refreshed", None)
        return refresh_lineage(*refreshed) if refreshed else None


class ReplicationSyncOperator(SnapreplSparkOperator):
    """One step of a publication's sync with spark-submit of ``spark_jobs/sync_publication.py``: pull a
    subscriber's changes into the publisher, or push the publisher's log to a subscriber. After a pull,
    the conflicts it met are sent to the configured notifier.

    The run's ``direction`` param (``pull and push``, ``pull only``, ``push only``) skips the other
    steps. In a backfill, a push reloads the subscriber's replica from the publisher instead
    (REPL_INIT_SNAPSHOT), after every pull; each step does so once per backfill.

    :param item: SP_ITEM of the publication.
    :param action: ``pull`` or ``push``.
    :param server: the subscriber's replication name.
    """

    template_fields: Sequence[str] = (*SparkSubmitOperator.template_fields, "item", "server")
    ui_color = "#cfe2f3"

    def __init__(self, *, item: str, action: str, server: str, **kwargs: Any) -> None:
        if action not in {"pull", "push"}:
            raise ValueError(f"action must be pull or push, not {action!r}")
        kwargs.setdefault("name", f"snaprepl-{action}")
        super().__init__(**kwargs)
        self.item = item
        self.action = action
        self.server = server

    @failing_fast
    def execute(self, context: Context) -> list[dict[str, Any]]:
        if not runs_step(self.action, context):
            raise AirflowSkipException(f"this run's direction is {context['params'].get('direction')!r}")
        settings = Settings.load()
        catalog = Catalog.open(settings)
        backfill = self._backfill(context)
        step = "init" if is_backfill(context) and self.action == "push" else self.action
        target = f"{step}:{self.item}:{self.server}"
        if backfill is not None and (done := backfills.done(catalog, backfill, target)) is not None:
            self.log.info("%s: nothing to do", done)
            return [{"backfill_id": backfill, "already_done": str(done), "by_run": done.run_id}]
        lease = step_lease(self.item, step, self.server)
        self._wait_if_busy(catalog, lease, f"publication {self.item} ({step} {self.server})", settings)
        outcomes = self._sync(context, catalog, step, settings)
        if backfill is not None:
            dag_run = context["dag_run"]
            backfills.record(catalog, backfill, target, dag_run.dag_id, dag_run.run_id)
            self.log.info("backfill %s: this run did %s", backfill, target)
        return outcomes

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        """The tables the step read and wrote, with the rows written (OpenLineage provider)."""
        from snaprepl.airflow.lineage_events import sync_lineage  # noqa: PLC0415  (heavy: sqlglot, openlineage)

        synced = getattr(self, "_synced", None)
        if synced is None:
            return None
        catalog = Catalog.open(Settings.load())
        try:
            return sync_lineage(catalog, self.item, self.server, *synced)
        finally:
            catalog.dispose()

    def _sync(self, context: Context, catalog: Catalog, step: str, settings: Settings) -> list[dict[str, Any]]:
        request = SyncRequest.configured(
            step,
            self.item,
            settings,
            server=self.server,
            rows_per_commit=rows_per_commit_of(catalog, self.item),
            atomic=step == "init",  # a backfill's reload: readers see the old rows or the new ones
        )
        self.log.info("%s %s of %s (run %s)", step, self.server, self.item, request.run_id)
        idle = idle_sync(request, catalog)
        if idle is not None:
            self.log.info("nothing to do, decided without Spark")
            outcomes = [o.to_dict() for o in idle]
        else:
            submission = prepare_sync(request, catalog, settings)
            what = f"{step} of {self.item} with {self.server}"
            with alerting(catalog, settings, self.item, what, server=self.server, ignore=NO_FAILURE):
                outcomes = self._run_submission(context, submission, settings)["outcomes"]
        for outcome in outcomes:
            self.log.info("%s", outcome)
        sync_metrics(self.item, outcomes)
        self._synced = (step, outcomes)
        if step == "pull":
            notified = notify_conflicts(catalog, settings, request.item)
            if notified:
                self.log.info("%d conflicts notified", notified)
        return outcomes

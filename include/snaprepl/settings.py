"""snaprepl's settings: the ``[snaprepl]`` section of Airflow's configuration.

Like every Airflow option they can be set in ``airflow.cfg`` or as environment variables
(``AIRFLOW__SNAPREPL__SNP_REPL_TOLERANCE_OFFSET=20``). The two offsets keep Virtuoso's registry
names. Spark jobs do not read Airflow's configuration: what they need is passed to them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from snaprepl.common.airflow_config import airflow_option
from snaprepl.common.table_names import validate_conn_id
from snaprepl.errors import InvalidArgument

SECTION = "snaprepl"
#: How Spark jobs run: a spark-submit each, or in the caller against a Spark Connect server.
SPARK_MODES = ("submit", "connect")


@dataclass(frozen=True)
class Settings:
    """Validated settings.

    :param catalog_conn_id: Airflow connection of the catalog database. When it is not defined the
        Airflow metadata database is used, which works everywhere except inside task and DAG-parsing
        processes (Airflow 3 hides the metadata database there): deployments that run the scheduler
        define this connection, pointing at the metadata database.
    :param spark_conn_id: Airflow connection of the Spark master for refresh jobs; when it is not
        defined, jobs run with ``spark_master``.
    :param spark_master: master used when ``spark_conn_id`` is not defined.
    :param snp_repl_tolerance_offset: minutes a SNAPTIME window (an incremental refresh's, a push's)
        reaches back before its watermark where the watermark is not exact: the source cannot show its
        open transactions (MariaDB without ``PROCESS``), or its clock went back. Exact watermarks
        (PostgreSQL transaction ids, capped SNAPTIMEs) read only new entries.
    :param long_transaction_warn_minutes: ``snaprepl status`` names a source transaction open longer
        than this, which holds watermarks back (its changes wait until it commits).
    :param snp_repl_purge_offset: minutes replay-log entries are kept behind SN_LAST_TS.
    :param rplog_purge_schedule: schedule of the DAG that purges replay logs.
    :param log_purge_schedule: schedule of the DAG that purges snapshot logs.
    :param refresh_commit_rows: rows applied per destination commit (commits never split a SNAPTIME group).
    :param refresh_max_partitions: most parallel reads of a complete refresh, of each side of a verify,
        and of a subscriber's initial load (fewer when the table is small).
    :param spark_driver_memory: ``--driver-memory`` of refresh jobs.
    :param spark_ui: start the Spark web UI for refresh jobs (off: it costs startup time, and jobs are
        short; turn it on to watch long complete refreshes).
    :param conflict_notifier: ``log``, ``email``, or ``package.module:Class`` of an Airflow notifier.
    :param conflict_email_to: comma-separated addresses for ``conflict_notifier = email``.
    :param smtp_conn_id: SMTP connection of the e-mail notifier.
    :param urplog_purge_schedule: schedule of the DAG that purges the update replay logs.
    :param dags_paused_at_creation: create snaprepl's scheduled DAGs paused, as Airflow's
        ``dags_are_paused_at_creation`` would (off: a new snapshot's schedule runs at once).
    :param strict_dags: a catalog record that cannot become a DAG fails the whole DAG file (for CI);
        off, the other DAGs load and the bad record shows as an import error naming it.
    :param execution_timeout_minutes: ``execution_timeout`` of refresh, pull and push tasks (0: none).
    :param busy_wait_seconds: a task that finds its snapshot or publication busy with another run is
        rescheduled this many seconds later instead of failing (15 at least).
    :param pool: Airflow pool of every refresh, pull and push task ("": Airflow's default pool).
    :param pool_per_connection: put each task in the pool ``snaprepl__<source conn id>`` instead
        (the pools must exist in Airflow).
    :param lock_timeout_seconds: longest a statement on a source or destination waits for a lock
        (PostgreSQL ``lock_timeout``, MariaDB ``innodb_lock_wait_timeout``/``lock_wait_timeout``,
        SQLite's busy timeout); then it fails with ``LockTimeout``, which Airflow retries.
    :param statement_timeout_seconds: longest one statement may run there (0: no limit; PostgreSQL
        ``statement_timeout``, MariaDB ``max_statement_time``).
    :param history_keep_days: the purge DAG drops runs older than this from the history (1 at least).
    :param lag_alert_minutes: a run that ends with its copy lagging more than this many minutes is
        reported to the notifier (0: no lag alerts). Failed runs are always reported.
    :param spark_mode: ``submit`` (a spark-submit per job, the default) or ``connect`` (the job runs in
        the calling process against the Spark Connect server of ``spark_conn_id``, a ``spark_connect``
        connection). A ``spark_connect`` Spark connection means ``connect`` whatever this says.
    :param connect_fallback: in ``connect`` mode, a Spark Connect server that does not answer makes
        jobs fall back to spark-submit (off: they fail, naming the connection and how to start it).
    :param stale_after_hours: a snapshot or subscriber with no successful refresh, pull or push for
        this many hours is ``stale`` (a publication's own REPL_SET_PUBLICATION_STALE overrides it).
    :param detach_stale: a stale subscriber or incremental snapshot no longer holds its log's purge
        back: it is detached, and then needs REPL_INIT_SNAPSHOT or a complete refresh.
    :param reinit_detached: a detached subscriber's next sync pulls its local changes, then reloads it
        (REPL_INIT_SNAPSHOT) instead of failing with a line saying it needs one (a publication's own
        REPL_SET_PUBLICATION_REINIT overrides it).
    :param log_backlog_alert_rows: the watchdog alerts when a log holds more rows than this (0: never).
    :param watchdog_schedule: schedule of the ``snaprepl_watchdog`` DAG (see :mod:`snaprepl.ops.watchdog`).
    :param airflow_api_conn_id: HTTP connection to Airflow's REST API (host, login, password) the
        watchdog asks which snaprepl DAGs are paused when its own Task SDK does not answer (it
        normally does: nothing to configure); without either that check is not made.
    """

    catalog_conn_id: str = "snaprepl_catalog"
    spark_conn_id: str = "snaprepl_spark"
    spark_master: str = "local[*]"
    snp_repl_tolerance_offset: int = 15
    snp_repl_purge_offset: int = 30
    long_transaction_warn_minutes: int = 10
    rplog_purge_schedule: str = "*/30 * * * *"
    log_purge_schedule: str = "0 * * * *"
    refresh_commit_rows: int = 50_000
    refresh_max_partitions: int = 8
    spark_driver_memory: str = "1g"
    spark_ui: bool = False
    conflict_notifier: str = "log"
    conflict_email_to: str = ""
    smtp_conn_id: str = "smtp_default"
    urplog_purge_schedule: str = "*/30 * * * *"
    dags_paused_at_creation: bool = False
    strict_dags: bool = False
    execution_timeout_minutes: int = 0
    busy_wait_seconds: int = 60
    pool: str = ""
    pool_per_connection: bool = False
    lock_timeout_seconds: int = 60
    statement_timeout_seconds: int = 0
    history_keep_days: int = 30
    lag_alert_minutes: int = 0
    spark_mode: str = "submit"
    connect_fallback: bool = False
    stale_after_hours: int = 72
    detach_stale: bool = False
    reinit_detached: bool = False
    log_backlog_alert_rows: int = 0
    watchdog_schedule: str = "*/5 * * * *"
    airflow_api_conn_id: str = "snaprepl_airflow_api"

    def __post_init__(self) -> None:
        if self.spark_mode not in SPARK_MODES:
            raise InvalidArgument(
                f"setting [{SECTION}] spark_mode = {self.spark_mode!r} is not one of {', '.join(SPARK_MODES)}"
            )
        validate_conn_id(self.catalog_conn_id)
        validate_conn_id(self.spark_conn_id)
        if self.snp_repl_tolerance_offset < 0:
            raise InvalidArgument("snp_repl_tolerance_offset must be 0 or more minutes")
        if self.snp_repl_purge_offset < self.snp_repl_tolerance_offset:
            raise InvalidArgument(
                f"snp_repl_purge_offset ({self.snp_repl_purge_offset} min) is below snp_repl_tolerance_offset "
                f"({self.snp_repl_tolerance_offset} min)",
                "replay-log entries would be purged while refreshes still look at them; raise the purge offset",
            )
        if self.refresh_commit_rows < 1:
            raise InvalidArgument("refresh_commit_rows must be at least 1")
        if self.refresh_max_partitions < 1:
            raise InvalidArgument("refresh_max_partitions must be at least 1")
        if self.lock_timeout_seconds < 1 or self.statement_timeout_seconds < 0:
            raise InvalidArgument("lock_timeout_seconds must be 1 or more, statement_timeout_seconds 0 or more")
        if self.history_keep_days < 1 or self.lag_alert_minutes < 0 or self.long_transaction_warn_minutes < 0:
            raise InvalidArgument(
                "history_keep_days must be 1 or more, lag_alert_minutes and long_transaction_warn_minutes 0 or more"
            )
        if self.stale_after_hours < 1 or self.log_backlog_alert_rows < 0:
            raise InvalidArgument("stale_after_hours must be 1 or more, log_backlog_alert_rows 0 or more")
        if self.execution_timeout_minutes < 0 or self.busy_wait_seconds < 15:
            # Sooner, Airflow 3.3's scheduler can queue the task again before it has processed the end
            # of its previous attempt, and then takes that end for an external kill (a retry).
            raise InvalidArgument("execution_timeout_minutes must be 0 or more, busy_wait_seconds 15 or more")

    @classmethod
    def load(cls) -> Settings:
        """Read the ``[snaprepl]`` section (Airflow's config, or the environment without Airflow)."""
        values: dict[str, Any] = {}
        for item in fields(cls):
            raw = airflow_option(SECTION, item.name)  # Airflow itself only when the plain reading is unsure
            if raw is None or raw == "":
                continue
            try:
                if item.type in {"bool", bool}:
                    values[item.name] = _boolean(item.name, str(raw))
                else:
                    values[item.name] = int(raw) if item.type in {"int", int} else str(raw)
            except ValueError:
                raise InvalidArgument(f"setting [{SECTION}] {item.name} = {raw!r} is not a number") from None
        return cls(**values)


def _boolean(name: str, raw: str) -> bool:
    """A boolean setting, strictly: ``true``/``1`` or ``false``/``0`` (any case); nothing else."""
    text = raw.strip().lower()
    if text in {"true", "1"}:
        return True
    if text in {"false", "0"}:
        return False
    raise InvalidArgument(f"setting [{SECTION}] {name} = {raw!r} is not a boolean", "use true or false")

"""The scheduled purge DAGs: replay logs and the run history, snapshot logs, update replay logs."""

from __future__ import annotations

from airflow.sdk import DAG, task

from snaprepl.airflow.dag_common import TAG, snaprepl_dag, timetable
from snaprepl.catalog.records import LogRecord
from snaprepl.catalog.store import Catalog
from snaprepl.common.dag_names import LOG_PURGE_DAG, RPLOG_PURGE_DAG, URPLOG_PURGE_DAG, safe_id
from snaprepl.errors import SnapshotLogNotFound
from snaprepl.ops.purge import purge_history, purge_urplogs
from snaprepl.ops.snapshot_logs import purge_log
from snaprepl.ops.snapshot_upkeep import purge_replay_logs
from snaprepl.settings import Settings


def replay_log_purge_dag(settings: Settings) -> DAG:
    with snaprepl_dag(
        settings,
        dag_id=RPLOG_PURGE_DAG,
        description="purge snaprepl replay logs (REPL_PURGE_RPLOGS)",
        schedule=timetable(settings.rplog_purge_schedule),
        tags=[TAG, "purge"],
        doc_md="Deletes replay-log entries older than each snapshot's SN_LAST_TS minus `snp_repl_purge_offset`, "
        "and runs older than `history_keep_days` from the history.",
    ) as dag:

        @task(task_id="purge_replay_logs")
        def purge() -> dict[str, int]:
            return purge_replay_logs(catalog=Catalog.open(settings), settings=settings).deleted

        @task(task_id="purge_history")
        def forget() -> int:
            return purge_history(catalog=Catalog.open(settings), settings=settings)

        purge()
        forget()
    return dag


def log_purge_task_id(source: str) -> str:
    table, _, conn = source.rpartition("@")
    schema, _, table = table.partition(".")
    return "purge__" + safe_id(source, [conn, schema, table])


def snapshot_log_purge_dag(logs: list[LogRecord], settings: Settings) -> DAG:
    with snaprepl_dag(
        settings,
        dag_id=LOG_PURGE_DAG,
        description="purge snaprepl snapshot logs (PURGE SNAPSHOT LOG)",
        schedule=timetable(settings.log_purge_schedule),
        tags=[TAG, "purge"],
        doc_md="Deletes snapshot-log entries every snapshot of the log has applied; one task per log.",
    ) as dag:
        for record in logs:

            @task(task_id=log_purge_task_id(record.snl_source))
            def purge(source: str) -> str:
                catalog = Catalog.open(settings)
                log = catalog.log(source)
                if log is None:
                    raise SnapshotLogNotFound(f"the snapshot log of {source} was dropped")
                return str(purge_log(log, catalog=catalog, settings=settings))

            purge(record.snl_source)
    return dag


def update_replay_log_purge_dag(settings: Settings) -> DAG:
    with snaprepl_dag(
        settings,
        dag_id=URPLOG_PURGE_DAG,
        description="purge snaprepl update replay logs (REPL_PURGE_URPLOGS)",
        schedule=timetable(settings.urplog_purge_schedule),
        tags=[TAG, "purge"],
        doc_md="Per publication, subscriber and direction, deletes update replay log entries older than that "
        "direction's watermark minus `snp_repl_purge_offset`.",
    ) as dag:

        @task(task_id="purge_update_replay_logs")
        def purge() -> dict[str, int]:
            return purge_urplogs(catalog=Catalog.open(settings), settings=settings).deleted

        purge()
    return dag

"""DAGs generated from the catalog: one per snapshot, and the scheduled purges.

``dags/snaprepl_dags.py`` calls :func:`build_dags` at parse time. It reads the catalog once (through
the ``snaprepl_catalog`` connection, since DAG parsing cannot see the metadata database); a failure
to read it raises, so it shows as an import error instead of the DAGs silently vanishing.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from airflow.sdk import DAG, Asset, CronDataIntervalTimetable, Param, chain, task

from snaprepl.airflow.naming import (
    LOG_PURGE_DAG,
    RPLOG_PURGE_DAG,
    URPLOG_PURGE_DAG,
    publication_dag_id,
    slug,
    snapshot_dag_id,
)
from snaprepl.airflow.operators import MODES, NONINCREMENTAL, ReplicationSyncOperator, SnapshotRefreshOperator
from snaprepl.catalog.store import Catalog, LogRecord, PublicationRecord, SnapshotRecord, SubscriptionRecord
from snaprepl.settings import Settings

TAG = "snaprepl"
DEFAULT_ARGS = {"owner": "snaprepl", "retries": 2, "retry_delay": timedelta(minutes=1)}
#: DAGs start on this date: with catchup off it only bounds backfills.
START = datetime(2024, 1, 1, tzinfo=UTC)


def snapshot_asset(record: SnapshotRecord) -> Asset:
    """The destination table as an Airflow Asset, for downstream DAGs to be scheduled on."""
    return Asset(
        name=f"snaprepl.snapshot.{record.sn_name}",
        uri=f"snaprepl://{record.sn_dest_conn}/{record.sn_dest_schema}/{record.sn_dest_table}",
        group="snaprepl",
    )


def timetable(schedule: str | None) -> CronDataIntervalTimetable | None:
    # A cron string alone would get CronTriggerTimetable, whose data intervals are empty.
    return CronDataIntervalTimetable(schedule, timezone="UTC") if schedule else None


def _doc(record: SnapshotRecord) -> str:
    if record.incremental:
        what = f"Incremental snapshot of `{record.sn_source_table}`"
        if record.sn_condition:
            what += f" where `{record.sn_condition}`"
    else:
        what = f"Nonincremental snapshot of a query on connection `{record.sn_source_conn}`"
    return (
        f"### snaprepl snapshot `{record.sn_name}`\n\n{what}, into `{record.sn_dest_schema}.{record.sn_dest_table}` "
        f"on connection `{record.sn_dest_conn}`.\n\n```sql\n{record.sn_query}\n```\n\n"
        "Trigger with `mode` = `nonincremental` for a complete refresh (a backfill always refreshes completely); "
        "`fallback_complete` lets an incremental run whose log entries were purged refresh completely.\n"
    )


def _dag(**kwargs: Any) -> DAG:
    """A snaprepl DAG: no catchup, one run at a time, retries; ``kwargs`` say the rest."""
    return DAG(start_date=START, catchup=False, max_active_runs=1, default_args=DEFAULT_ARGS, **kwargs)


def snapshot_dag(record: SnapshotRecord) -> DAG:
    default_mode = "incremental" if record.incremental else NONINCREMENTAL
    with _dag(
        dag_id=snapshot_dag_id(record.sn_name),
        description=f"refresh snaprepl snapshot {record.sn_name}",
        schedule=timetable(record.sn_schedule),
        tags=[TAG, "snapshot", "incremental" if record.incremental else NONINCREMENTAL],
        doc_md=_doc(record),
        params={
            "mode": Param(default_mode, enum=list(MODES), description="incremental, or nonincremental (complete)"),
            "fallback_complete": Param(False, type="boolean", description="refresh completely if the log was purged"),
        },
    ) as dag:
        SnapshotRefreshOperator(
            task_id="refresh",
            snapshot=record.sn_name,
            mode=default_mode,
            outlets=[snapshot_asset(record)],
        )
    return dag


def replay_log_purge_dag(settings: Settings) -> DAG:
    with _dag(
        dag_id=RPLOG_PURGE_DAG,
        description="purge snaprepl replay logs (REPL_PURGE_RPLOGS)",
        schedule=timetable(settings.rplog_purge_schedule),
        tags=[TAG, "purge"],
        doc_md="Deletes replay-log entries older than each snapshot's SN_LAST_TS minus `snp_repl_purge_offset`.",
    ) as dag:

        @task(task_id="purge_replay_logs")
        def purge() -> dict[str, int]:
            from snaprepl.snapshots import purge_replay_logs

            settings = Settings.load()
            return purge_replay_logs(catalog=Catalog.open(settings), settings=settings).deleted

        purge()
    return dag


def snapshot_log_purge_dag(logs: list[LogRecord], settings: Settings) -> DAG:
    with _dag(
        dag_id=LOG_PURGE_DAG,
        description="purge snaprepl snapshot logs (PURGE SNAPSHOT LOG)",
        schedule=timetable(settings.log_purge_schedule),
        tags=[TAG, "purge"],
        doc_md="Deletes snapshot-log entries every snapshot of the log has applied; one task per log.",
    ) as dag:
        for record in logs:

            @task(task_id=f"purge__{slug(record.snl_source)}")
            def purge(source: str) -> str:
                from snaprepl.errors import SnapshotLogNotFound
                from snaprepl.snapshot_logs import purge_log

                settings = Settings.load()
                catalog = Catalog.open(settings)
                log = catalog.log(source)
                if log is None:
                    raise SnapshotLogNotFound(f"the snapshot log of {source} was dropped")
                return str(purge_log(log, catalog=catalog, settings=settings))

            purge(record.snl_source)
    return dag


def publication_dag(publication: PublicationRecord, subscriptions: list[SubscriptionRecord]) -> DAG | None:
    """Pull each loaded subscriber in name order (each pull writes to the publisher), then push to all
    in parallel. Subscribers appear once REPL_INIT_SNAPSHOT has loaded them."""
    loaded = sorted(s.ss_server for s in subscriptions if s.ss_init_state == "done")
    if not loaded:
        return None
    with _dag(
        dag_id=publication_dag_id(publication.sp_item),
        description=f"sync snaprepl publication {publication.sp_item}",
        schedule=timetable(publication.sp_schedule),
        tags=[TAG, "publication"],
        doc_md=(
            f"### snaprepl publication `{publication.sp_item}`\n\nPublisher `{publication.sp_server}`; "
            f"subscribers {', '.join(f'`{s}`' for s in loaded)}. Each subscriber's changes are pulled into the "
            "publisher with conflict resolution, one subscriber after another; then the publisher's log is "
            "pushed to every subscriber except each change's originator (REPL_UPDATE_SNAPSHOT).\n"
        ),
    ) as dag:
        pulls = [
            ReplicationSyncOperator(task_id=f"pull__{slug(s)}", item=publication.sp_item, action="pull", server=s)
            for s in loaded
        ]
        pushes = [
            ReplicationSyncOperator(task_id=f"push__{slug(s)}", item=publication.sp_item, action="push", server=s)
            for s in loaded
        ]
        chain(*pulls)
        pulls[-1] >> pushes
    return dag


def update_replay_log_purge_dag(settings: Settings) -> DAG:
    with _dag(
        dag_id=URPLOG_PURGE_DAG,
        description="purge snaprepl update replay logs (REPL_PURGE_URPLOGS)",
        schedule=timetable(settings.urplog_purge_schedule),
        tags=[TAG, "purge"],
        doc_md="Per publication, subscriber and direction, deletes update replay log entries older than that "
        "direction's watermark minus `snp_repl_purge_offset`.",
    ) as dag:

        @task(task_id="purge_update_replay_logs")
        def purge() -> dict[str, int]:
            from snaprepl.bidir.purge import purge_urplogs

            settings = Settings.load()
            return purge_urplogs(catalog=Catalog.open(settings), settings=settings).deleted

        purge()
    return dag


def build_dags(catalog: Catalog | None = None, settings: Settings | None = None) -> dict[str, Any]:
    """Every snaprepl DAG, by DAG id, from the catalog's current content."""
    settings = settings or Settings.load()
    catalog = catalog or Catalog.open(settings)
    dags: dict[str, Any] = {}
    for record in catalog.snapshots():
        dag = snapshot_dag(record)
        dags[dag.dag_id] = dag
    publications = catalog.publications()
    for publication in publications:
        dag = publication_dag(publication, catalog.subscriptions(publication.sp_item))
        if dag is not None:
            dags[dag.dag_id] = dag
    if publications:
        dags[URPLOG_PURGE_DAG] = update_replay_log_purge_dag(settings)
    logs = catalog.logs()
    if logs:
        dags[RPLOG_PURGE_DAG] = replay_log_purge_dag(settings)
        dags[LOG_PURGE_DAG] = snapshot_log_purge_dag(logs, settings)
    return dags

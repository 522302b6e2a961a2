"""DAGs generated from the catalog: one per snapshot (one per snapshot group for a group's members) and
per loaded publication (of tables or collections), and the scheduled purges.

``dags/snaprepl_dags.py`` calls :func:`build_dags` at parse time. It reads the catalog once (through
the ``snaprepl_catalog`` connection, since DAG parsing cannot see the metadata database); a failure
to read it raises, so it shows as an import error instead of the DAGs silently vanishing.

Each record becomes its DAG in its own ``try``: a record that cannot is logged and left out, while
every other DAG still loads, and ``dags/snaprepl_catalog_check.py`` reports it as an import error
naming it (Airflow marks every DAG of a file with an import error stale, so it must be another
file); ``[snaprepl] strict_dags`` makes this file fail instead. A task process parses only its own
DAG (``get_parsing_context()``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, Asset, Param, chain, get_parsing_context

from snaprepl.airflow.dag_common import TAG, snaprepl_dag, timetable
from snaprepl.airflow.group_dag import group_dag
from snaprepl.airflow.operators import ReplicationSyncOperator, SnapshotRefreshOperator
from snaprepl.airflow.purge_dags import (
    replay_log_purge_dag,
    snapshot_log_purge_dag,
    update_replay_log_purge_dag,
)
from snaprepl.airflow.runs import BOTH, DIRECTIONS, INCREMENTAL, NONINCREMENTAL, PULL_ONLY, PUSH_ONLY
from snaprepl.airflow.verify_operator import ReplicaVerifyOperator, SnapshotVerifyOperator
from snaprepl.airflow.watchdog import WATCHDOG_DAG, add_tasks, dag_args
from snaprepl.catalog.records import COLLECTION_TYPE, PublicationRecord, SnapshotRecord, SubscriptionRecord
from snaprepl.catalog.store import Catalog
from snaprepl.common.dag_names import (
    LOG_PURGE_DAG,
    RPLOG_PURGE_DAG,
    URPLOG_PURGE_DAG,
    asset_uri,
    group_dag_id,
    publication_dag_id,
    publication_verify_dag_id,
    safe_id,
    snapshot_dag_id,
    task_key,
    verify_dag_id,
)
from snaprepl.errors import SnapreplError
from snaprepl.settings import Settings

log = logging.getLogger(__name__)

#: The publication DAG's task between the pulls and the pushes (done when every pull is, however it ended).
PULLS_DONE = "pulls_done"
MODE_LABELS = {
    INCREMENTAL: "incremental: apply the changes in the snapshot log",
    NONINCREMENTAL: "nonincremental: replace the destination with the query's result",
}
DIRECTION_LABELS = {
    BOTH: "pull and push: subscribers' changes into the publisher, then the publisher's to every subscriber",
    PULL_ONLY: "pull only: subscribers' changes into the publisher",
    PUSH_ONLY: "push only: the publisher's changes to every subscriber",
}


def snapshot_asset(record: SnapshotRecord) -> Asset:
    """The destination table as an Airflow Asset, for downstream DAGs to be scheduled on."""
    return Asset(
        name=f"snaprepl.snapshot.{record.sn_name}",
        uri=asset_uri(record.sn_dest_conn, record.sn_dest_schema, record.sn_dest_table),
        group="snaprepl",
    )


def _doc(record: SnapshotRecord) -> str:
    if record.incremental:
        what = f"Incremental snapshot of `{record.sn_source_table}`"
        if record.sn_condition:
            what += f" where `{record.sn_condition}`"
        how = "Trigger with `mode` = `nonincremental` for a complete refresh. "
    else:
        what = f"Nonincremental snapshot of a query on connection `{record.sn_source_conn}`"
        how = "Every run replaces the destination with the query's result. "
    return (
        f"### snaprepl snapshot `{record.sn_name}`\n\n{what}, into `{record.sn_dest_schema}.{record.sn_dest_table}` "
        f"on connection `{record.sn_dest_conn}`.\n\n```sql\n{record.sn_query}\n```\n\n{how}"
        "A backfill refreshes completely once, in its first run; its other runs say so and succeed.\n\n"
        f"{_spark_doc(record.sn_spark_conn)}\n"
    )


def _spark_doc(conn_id: str | None) -> str:
    """Which Spark connection the jobs run with (its type, read when a run starts, decides where)."""
    if conn_id is None:
        return "Spark jobs run with the connection of `[snaprepl] spark_conn_id`."
    return f"Spark jobs run with connection `{conn_id}` (spark: spark-submit; spark_connect: its Spark Connect server)."


def task_args(settings: Settings, source_conn: str) -> dict[str, Any]:
    """What every refresh, pull and push task shares: one at a time per task across all runs
    (backfills included), the execution timeout, and the pool."""
    args: dict[str, Any] = {"max_active_tis_per_dag": 1}
    if settings.execution_timeout_minutes:
        args["execution_timeout"] = timedelta(minutes=settings.execution_timeout_minutes)
    if settings.pool_per_connection:
        args["pool"] = safe_id(source_conn, [source_conn], "snaprepl")
    elif settings.pool:
        args["pool"] = settings.pool
    return args


def _snapshot_params(record: SnapshotRecord) -> dict[str, Param]:
    if not record.incremental:
        return {
            "mode": Param(
                NONINCREMENTAL,
                enum=[NONINCREMENTAL],
                values_display={NONINCREMENTAL: MODE_LABELS[NONINCREMENTAL]},
                title="Refresh mode",
                description="A nonincremental snapshot is always refreshed completely.",
            )
        }
    return {
        "mode": Param(
            INCREMENTAL,
            enum=[INCREMENTAL, NONINCREMENTAL],
            values_display=MODE_LABELS,
            title="Refresh mode",
            description="Incremental applies what the snapshot log recorded since the last refresh; "
            "nonincremental copies the whole source again.",
        ),
        "fallback_complete": Param(
            False,
            type="boolean",
            title="Refresh completely if the log was purged",
            description="An incremental refresh whose log entries were purged fails unless this is on.",
        ),
    }


def snapshot_dag(record: SnapshotRecord, settings: Settings) -> DAG:
    with snaprepl_dag(
        settings,
        dag_id=snapshot_dag_id(record.sn_name),
        description=f"refresh snaprepl snapshot {record.sn_name}",
        schedule=timetable(record.sn_schedule),
        tags=[TAG, "snapshot", INCREMENTAL if record.incremental else NONINCREMENTAL],
        doc_md=_doc(record),
        params=_snapshot_params(record),
    ) as dag:
        SnapshotRefreshOperator(
            task_id="refresh",
            snapshot=record.sn_name,
            mode=INCREMENTAL if record.incremental else NONINCREMENTAL,
            outlets=[snapshot_asset(record)],
            **task_args(settings, record.sn_source_conn),
        )
    return dag


def verify_dag(record: SnapshotRecord, settings: Settings) -> DAG:
    """The snapshot's verify DAG, on its verify schedule: one task comparing the copy with its source."""
    with snaprepl_dag(
        settings,
        dag_id=verify_dag_id(record.sn_name),
        description=f"verify snaprepl snapshot {record.sn_name} against its source",
        schedule=timetable(record.sn_verify_schedule),
        tags=[TAG, "snapshot", "verify"],
        doc_md=f"Compares snapshot `{record.sn_name}` with its source (`snaprepl verify`); writes nothing.",
    ) as dag:
        SnapshotVerifyOperator(task_id="verify", snapshot=record.sn_name)
    return dag


def publication_verify_dag(publication: PublicationRecord, subs: list[SubscriptionRecord], settings: Settings) -> DAG:
    """The publication's verify DAG, on its verify schedule: one task per subscriber's replica (in
    parallel, each independent of the others), comparing it with the publisher's table."""
    item = publication.sp_item
    with snaprepl_dag(
        settings,
        dag_id=publication_verify_dag_id(item),
        description=f"verify the replicas of snaprepl publication {item} against the publisher",
        schedule=timetable(publication.sp_verify_schedule),
        tags=[TAG, "publication", "verify"],
        doc_md=f"Compares each subscriber's replica of `{item}` with the publisher's table (`snaprepl verify`); "
        "writes nothing. Differences send an alert and the metric `snaprepl.verify.differences`.",
    ) as dag:
        for sub in sorted(subs, key=lambda s: s.ss_server):
            if sub.ss_type != COLLECTION_TYPE:  # a table's replica (a collection's tables: by name)
                ReplicaVerifyOperator(task_id=f"verify__{task_key(sub.ss_server)}", item=item, server=sub.ss_server)
    return dag


def _publication_doc(publication: PublicationRecord, loaded: list[str]) -> str:
    head = (
        f"### snaprepl publication `{publication.sp_item}`\n\nPublisher `{publication.sp_server}`; "
        f"subscribers {', '.join(f'`{s}`' for s in loaded)}. A failing subscriber stops no other: its "
        "push is not run, the others' steps are, and the run ends failed. "
    )
    if publication.sp_type == COLLECTION_TYPE:
        return head + (
            "A collection of files: each pull scans the publisher and one subscriber and replays the "
            "subscriber's changed resources on the publisher with conflict resolution, one subscriber after "
            "another; then each push copies the publisher's versions to a subscriber (REPL_UPDATE_SNAPSHOT). "
            "A push carries the publisher as the latest pull scanned it. A manual run can do the pulls only "
            "or the pushes only. A backfill pulls every subscriber, then reloads each one from the publisher "
            "(REPL_INIT_SNAPSHOT: its changes since the pull are kept), once per backfill.\n"
        )
    return head + (
        "Each subscriber's changes are pulled into the publisher with conflict resolution, one subscriber "
        "after another; then the publisher's log is pushed to every subscriber except each change's "
        "originator (REPL_UPDATE_SNAPSHOT). A manual run can do the pulls only or the pushes only. A backfill "
        "pulls every subscriber, then reloads each replica from the publisher (REPL_INIT_SNAPSHOT), once per "
        "backfill.\n"
    )


def publication_dag(
    publication: PublicationRecord, subscriptions: list[SubscriptionRecord], settings: Settings
) -> DAG | None:
    """Pull each loaded subscriber in name order (each pull writes to the publisher), then push to all
    in parallel; for tables and collections alike. Subscribers appear once REPL_INIT_SNAPSHOT has
    loaded them.

    Subscribers are independent: a pull runs once the one before it is done, however it ended
    (``all_done``), and ``pulls_done`` waits for every pull; a push runs after ``pulls_done`` (so it
    carries every change pulled) unless its own subscriber's pull failed (``none_failed``: a skipped
    pull, in a push-only run, lets it run). A failed pull fails its own push, so the run fails."""
    loaded = sorted(s.ss_server for s in subscriptions if s.ss_init_state == "done")
    if not loaded:
        return None
    with snaprepl_dag(
        settings,
        dag_id=publication_dag_id(publication.sp_item),
        description=f"sync snaprepl publication {publication.sp_item}",
        schedule=timetable(publication.sp_schedule),
        tags=[TAG, "publication"],
        doc_md=_publication_doc(publication, loaded) + f"\n{_spark_doc(publication.sp_spark_conn)}\n",
        params={
            "direction": Param(
                BOTH,
                enum=list(DIRECTIONS),
                values_display=DIRECTION_LABELS,
                title="Steps",
                description="Which steps of the sync this run does; the others are skipped.",
            )
        },
    ) as dag:
        shared: dict[str, Any] = {"item": publication.sp_item}
        shared.update(task_args(settings, publication.sp_item.rpartition("@")[2]))
        pulls = [
            ReplicationSyncOperator(
                task_id=f"pull__{task_key(s)}", action="pull", server=s, trigger_rule="all_done", **shared
            )
            for s in loaded
        ]
        done = EmptyOperator(task_id=PULLS_DONE, trigger_rule="all_done")
        chain(*pulls, done)
        for server, pull in zip(loaded, pulls, strict=True):
            push = ReplicationSyncOperator(
                task_id=f"push__{task_key(server)}", action="push", server=server, trigger_rule="none_failed", **shared
            )
            [pull, done] >> push
    return dag


def watchdog_dag(settings: Settings) -> DAG:
    """Checks every copy's freshness (see :mod:`snaprepl.airflow.watchdog`); unpaused as the purges."""
    return add_tasks(
        snaprepl_dag(settings, schedule=timetable(settings.watchdog_schedule), **dag_args(settings)), settings
    )


def _recipes(catalog: Catalog, settings: Settings) -> Iterator[tuple[str, str, Callable[[], DAG | None]]]:
    """(DAG id, record, builder) of every DAG the catalog asks for; nothing is built yet."""
    records = catalog.snapshots()
    # A group's members are refreshed by the group's DAG only. Read after the snapshots: a member is
    # registered with its membership in one transaction, so every member read above is in it.
    grouped = catalog.grouped_snapshots()
    for record in records:
        if record.sn_name not in grouped:
            yield (
                snapshot_dag_id(record.sn_name),
                f"snapshot {record.sn_name}",
                lambda r=record: snapshot_dag(r, settings),
            )
        if record.sn_verify_schedule:
            yield verify_dag_id(record.sn_name), f"verify of {record.sn_name}", lambda r=record: verify_dag(r, settings)
    yield from _group_recipes(catalog, settings, grouped)
    publications = catalog.publications()
    for pub in publications:
        yield (
            publication_dag_id(pub.sp_item),
            f"publication {pub.sp_item}",
            lambda p=pub: publication_dag(p, catalog.subscriptions(p.sp_item), settings),
        )
        if pub.sp_verify_schedule:
            yield (
                publication_verify_dag_id(pub.sp_item),
                f"verify of publication {pub.sp_item}",
                lambda p=pub: publication_verify_dag(p, catalog.subscriptions(p.sp_item), settings),
            )
    if publications:
        yield URPLOG_PURGE_DAG, "update replay log purge", lambda: update_replay_log_purge_dag(settings)
    if publications or catalog.snapshots():
        yield WATCHDOG_DAG, "freshness watchdog", lambda: watchdog_dag(settings)
    logs = catalog.logs()
    if logs:
        yield RPLOG_PURGE_DAG, "replay log purge", lambda: replay_log_purge_dag(settings)
        yield LOG_PURGE_DAG, "snapshot log purge", lambda: snapshot_log_purge_dag(logs, settings)


def _group_recipes(
    catalog: Catalog, settings: Settings, grouped: dict[str, str]
) -> Iterator[tuple[str, str, Callable[[], DAG | None]]]:
    records = {s.sn_name: s for s in catalog.snapshots() if s.sn_name in grouped}
    for group in catalog.groups():
        if group.creating:  # CREATE SNAPSHOT GROUP is making its members: no run before it is done
            continue
        members = sorted(n for n, g in grouped.items() if g == group.sg_name)
        outlets = [snapshot_asset(records[m]) for m in members if m in records]
        args = task_args(settings, group.sg_source_conn)
        yield (
            group_dag_id(group.sg_name),
            f"snapshot group {group.sg_name}",
            lambda g=group, m=members, o=outlets, a=args: group_dag(g, m, settings, o, a),
        )


def build_dags(catalog: Catalog | None = None, settings: Settings | None = None) -> dict[str, Any]:
    """Every snaprepl DAG, by DAG id, from the catalog's current content (only the DAG a task
    process is parsing for, when it is one). Records that cannot become DAGs are left out."""
    return _build(catalog, settings)[0]


def unbuildable_records(catalog: Catalog | None = None, settings: Settings | None = None) -> list[str]:
    """Each catalog record that cannot become a DAG, with why (``dags/snaprepl_catalog_check.py``
    raises them as an import error of its own: one in ``snaprepl_dags.py`` would hide every DAG of it)."""
    return _build(catalog, settings)[1]


def _build(catalog: Catalog | None, settings: Settings | None) -> tuple[dict[str, Any], list[str]]:
    settings = settings or Settings.load()
    catalog = catalog or Catalog.open(settings)
    only = get_parsing_context().dag_id
    dags: dict[str, Any] = {}
    broken: list[str] = []
    for dag_id, what, build in _recipes(catalog, settings):
        if only is not None and dag_id != only:
            continue
        try:
            if dag_id in dags:
                raise SnapreplError(f"its DAG id {dag_id} is another record's too")
            dag = build()
            if dag is not None:
                dag.validate()  # e.g. a schedule that is no cron expression
        except Exception as err:
            if settings.strict_dags:
                raise SnapreplError(f"catalog record {what} cannot become a DAG: {err}") from err
            log.error("snaprepl: catalog record %s cannot become a DAG: %s", what, err)
            broken.append(f"{what}: {type(err).__name__}: {err}")
            continue
        if dag is not None:
            dags[dag.dag_id] = dag
    return dags, broken

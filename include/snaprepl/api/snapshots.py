"""The Python API, with the seed's function names.

Every function takes table names as strings in the statements' form (``[schema.]table[@conn_id]``)
and returns a result object whose ``str()`` is what ``snaprepl sql`` prints. Keyword-only
``catalog`` and ``settings`` default to the process's catalog and Airflow's ``[snaprepl]`` settings.

>>> from snaprepl import repl_create_snapshot_log
>>> print(repl_create_snapshot_log("orders@src"))  # doctest: +SKIP
snapshot log created for public.orders@src: table RLOG_orders, triggers public_orders_I_log, ...
Bi-directional replication's functions live in :mod:`snaprepl.api.replication`; this module carries
them too, and :data:`FUNCTIONS` names every function a statement may call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from snaprepl.api.groups import (
    repl_add_to_snapshot_group,
    repl_create_snapshot_group,
    repl_drop_snapshot_group,
    repl_refresh_snapshot_group,
    repl_remove_from_snapshot_group,
    repl_set_snapshot_group_schedule,
)
from snaprepl.api.replication import (
    default_catalog,
    default_settings,
    repl_add_dav_cr,
    repl_add_snapshot_cr,
    repl_create_snapshot_pub,
    repl_create_snapshot_sub,
    repl_drop_snapshot_pub,
    repl_drop_snapshot_sub,
    repl_init_snapshot,
    repl_purge_urplogs,
    repl_server_name,
    repl_set_publication_reinit,
    repl_set_publication_schedule,
    repl_set_publication_spark_conn,
    repl_set_publication_stale,
    repl_set_publication_verify_schedule,
    repl_snp_server,
    repl_update_snapshot,
)
from snaprepl.catalog.store import Catalog
from snaprepl.common.arguments import Flag, checked
from snaprepl.ops import snapshot_logs, snapshot_upkeep, snapshots, spark_conns, verify
from snaprepl.refresh.model import RefreshOutcome
from snaprepl.settings import Settings
from snaprepl.statements.parser import parse_table_ref
from snaprepl.submit.refresh import submit_refresh
from snaprepl.submit.verify import submit_verify
from snaprepl.verify.model import VerifyOutcome

_catalog, _settings = default_catalog, default_settings


@checked
def repl_create_snapshot_log(source_table: str, *, catalog: Catalog | None = None) -> snapshot_logs.CreatedLog:
    """``CREATE SNAPSHOT LOG FOR source_table``: log table ``RLOG_<t>`` and its three triggers.

    :param source_table: ``[schema.]table[@conn_id]`` of a table with a primary key.
    """
    return snapshot_logs.create_snapshot_log(parse_table_ref(source_table), catalog=_catalog(catalog))


@checked
def repl_drop_snapshot_log(source_table: str, *, catalog: Catalog | None = None) -> snapshot_logs.DroppedLog:
    """``DROP SNAPSHOT LOG FOR source_table``: drop the triggers and ``RLOG_<t>``, and unregister."""
    return snapshot_logs.drop_snapshot_log(parse_table_ref(source_table), catalog=_catalog(catalog))


@checked
def repl_purge_snapshot_log(
    source_table: str,
    force: Flag = False,
    *,
    catalog: Catalog | None = None,
    settings: Settings | None = None,
) -> snapshot_logs.PurgeResult:
    """``PURGE SNAPSHOT LOG FOR source_table [FORCE]``: delete entries every snapshot has applied.

    :param force: purge past snapshots that fell behind, marking them as needing a complete refresh.
    """
    return snapshot_logs.purge_snapshot_log(
        parse_table_ref(source_table),
        catalog=_catalog(catalog),
        settings=_settings(settings),
        force=bool(force),  # parsed strictly by @checked
    )


@checked
def repl_create_snapshot(
    query_def: str,
    dest_table: str,
    schedule: str | None = None,
    use_existing: Flag = False,
    *,
    catalog: Catalog | None = None,
    settings: Settings | None = None,
    refresher: snapshots.Refresher | None = None,
) -> snapshots.CreatedSnapshot:
    """``CREATE NONINCREMENTAL SNAPSHOT dest_table AS 'query_def'``.

    :param query_def: a SELECT; tables name their connection as ``table@conn_id``.
    :param dest_table: ``[schema.]table[@conn_id]``; created to fit the result if missing.
    :param schedule: cron expression or preset of its refresh DAG (None: manual).
    :param use_existing: ``USING EXISTING TABLE``: fill ``dest_table`` though it holds rows (deleting the others).
    """
    return snapshots.create_nonincremental_snapshot(
        parse_table_ref(dest_table),
        query_def,
        schedule,
        catalog=_catalog(catalog),
        settings=_settings(settings),
        refresher=refresher or submit_refresh,
        use_existing=bool(use_existing),
    )


@checked
def repl_create_inc_snapshot(
    source_column_list: str | None,
    source_table: str,
    condition: str | None,
    dest_table: str,
    schedule: str | None = None,
    use_existing: Flag = False,
    *,
    catalog: Catalog | None = None,
    settings: Settings | None = None,
    refresher: snapshots.Refresher | None = None,
) -> snapshots.CreatedSnapshot:
    """``CREATE SNAPSHOT dest_table FROM source_table ['source_column_list'] [WHERE 'condition']``.

    :param source_column_list: ``'col, ...'`` or None for every column (the key is always included).
    :param condition: a WHERE condition in the source's dialect, or None.
    :param use_existing: ``USING EXISTING TABLE``, as for :func:`repl_create_snapshot`.
    """
    return snapshots.create_incremental_snapshot(
        parse_table_ref(dest_table),
        parse_table_ref(source_table),
        source_column_list,
        condition,
        schedule,
        catalog=_catalog(catalog),
        settings=_settings(settings),
        refresher=refresher or submit_refresh,
        use_existing=bool(use_existing),
    )


@checked
def repl_refresh_inc_snapshot(
    snapshot_table_name: str,
    *,
    catalog: Catalog | None = None,
    settings: Settings | None = None,
    refresher: snapshots.Refresher | None = None,
) -> RefreshOutcome:
    """``UPDATE SNAPSHOT name`` of an incremental snapshot: replay its log."""
    return snapshots.update_snapshot(
        parse_table_ref(snapshot_table_name),
        incremental_only=True,
        catalog=_catalog(catalog),
        settings=_settings(settings),
        refresher=refresher or submit_refresh,
    )


@checked
def repl_refresh_noninc_snapshot(
    snapshot_table_name: str,
    *,
    catalog: Catalog | None = None,
    settings: Settings | None = None,
    refresher: snapshots.Refresher | None = None,
) -> RefreshOutcome:
    """``UPDATE SNAPSHOT name AS NONINCREMENTAL``: replace its content with its query's result."""
    return snapshots.update_snapshot(
        parse_table_ref(snapshot_table_name),
        nonincremental=True,
        catalog=_catalog(catalog),
        settings=_settings(settings),
        refresher=refresher or submit_refresh,
    )


@checked
def repl_drop_snapshot(
    snapshot_table_name: str, delete: Flag = 0, *, catalog: Catalog | None = None
) -> snapshot_upkeep.DroppedSnapshot:
    """``DROP SNAPSHOT name [WITH DELETE]``; ``delete`` true also drops the destination table."""
    return snapshot_upkeep.drop_snapshot(
        parse_table_ref(snapshot_table_name), with_delete=bool(delete), catalog=_catalog(catalog)
    )


@checked
def repl_set_snapshot_schedule(
    snapshot_table_name: str, schedule: str | None, *, catalog: Catalog | None = None
) -> snapshot_upkeep.ScheduledSnapshot:
    """``ALTER SNAPSHOT name SCHEDULE 'cron' | NONE`` (snaprepl's addition)."""
    return snapshot_upkeep.set_schedule(parse_table_ref(snapshot_table_name), schedule, catalog=_catalog(catalog))


@checked
def repl_set_snapshot_spark_conn(
    snapshot_table_name: str, conn_id: str | None, *, catalog: Catalog | None = None
) -> spark_conns.SparkConnSet:
    """The Spark connection of the snapshot's refreshes, in place of ``[snaprepl] spark_conn_id``
    (snaprepl's addition): type ``spark`` runs them by spark-submit, ``spark_connect`` on that Spark
    Connect server; NULL goes back to the setting's."""
    return spark_conns.set_snapshot_spark_conn(parse_table_ref(snapshot_table_name), conn_id, catalog=_catalog(catalog))


@checked
def repl_purge_rplogs(
    *, catalog: Catalog | None = None, settings: Settings | None = None
) -> snapshot_upkeep.PurgedReplayLogs:
    """``REPL_PURGE_RPLOGS()``: purge replay-log entries every snapshot is past."""
    return snapshot_upkeep.purge_replay_logs(catalog=_catalog(catalog), settings=_settings(settings))


@checked
def repl_verify_snapshot(
    snapshot_table_name: str,
    condition: str | None = None,
    *,
    catalog: Catalog | None = None,
    settings: Settings | None = None,
    verifier: verify.Verifier | None = None,
) -> VerifyOutcome:
    """``VERIFY SNAPSHOT name [WHERE 'condition']`` (snaprepl's addition): compare the copy with its
    query evaluated at the source now; writes nothing anywhere."""
    return verify.verify_snapshot(
        parse_table_ref(snapshot_table_name), where=condition, catalog=_catalog(catalog),
        settings=_settings(settings), verifier=verifier or submit_verify,
    )  # fmt: skip


@checked
def repl_repair_snapshot(
    snapshot_table_name: str,
    condition: str | None = None,
    *,
    catalog: Catalog | None = None,
    settings: Settings | None = None,
    verifier: verify.Verifier | None = None,
) -> VerifyOutcome:
    """``REPAIR SNAPSHOT name [WHERE 'condition']``: verify, then apply the source's rows for the keys
    that differ through the incremental refresh's apply path (the source is never written)."""
    return verify.verify_snapshot(
        parse_table_ref(snapshot_table_name), repair=True, where=condition, catalog=_catalog(catalog),
        settings=_settings(settings), verifier=verifier or submit_verify,
    )  # fmt: skip


@checked
def repl_verify_replica(
    replica_table_name: str,
    condition: str | None = None,
    *,
    catalog: Catalog | None = None,
    settings: Settings | None = None,
    verifier: verify.Verifier | None = None,
) -> VerifyOutcome:
    """``REPL_VERIFY_REPLICA('schema.table@conn')``: compare a subscriber's replica (named as
    ``snaprepl status`` lists it) with its publisher's table, ROWGUID included; writes nothing."""
    return repl_verify_snapshot(replica_table_name, condition, catalog=catalog, settings=settings, verifier=verifier)


@checked
def repl_repair_replica(
    replica_table_name: str,
    condition: str | None = None,
    *,
    catalog: Catalog | None = None,
    settings: Settings | None = None,
    verifier: verify.Verifier | None = None,
) -> VerifyOutcome:
    """``REPL_REPAIR_REPLICA(...)``: verify, then make the replica hold the publisher's rows for the keys
    that differ (the publisher wins; it is never written)."""
    return repl_repair_snapshot(replica_table_name, condition, catalog=catalog, settings=settings, verifier=verifier)


@checked
def repl_set_snapshot_verify_schedule(
    snapshot_table_name: str, schedule: str | None, *, catalog: Catalog | None = None
) -> verify.VerifySchedule:
    """A verify DAG for the snapshot on ``schedule`` (cron or preset, e.g. ``@weekly``); NULL removes it
    (snaprepl's addition; off by default)."""
    return verify.set_verify_schedule(parse_table_ref(snapshot_table_name), schedule, catalog=_catalog(catalog))


# ---------------------------------------------------------------------- bi-directional replication


FUNCTIONS: dict[str, Callable[..., Any]] = {
    f.__name__: f
    for f in (
        repl_create_snapshot_log,
        repl_drop_snapshot_log,
        repl_purge_snapshot_log,
        repl_create_snapshot,
        repl_create_inc_snapshot,
        repl_refresh_inc_snapshot,
        repl_refresh_noninc_snapshot,
        repl_drop_snapshot,
        repl_set_snapshot_schedule,
        repl_set_snapshot_spark_conn,
        repl_purge_rplogs,
        repl_verify_snapshot,
        repl_repair_snapshot,
        repl_set_snapshot_verify_schedule,
        repl_create_snapshot_group,
        repl_refresh_snapshot_group,
        repl_add_to_snapshot_group,
        repl_remove_from_snapshot_group,
        repl_set_snapshot_group_schedule,
        repl_drop_snapshot_group,
        repl_verify_replica,
        repl_repair_replica,
        repl_snp_server,
        repl_server_name,
        repl_create_snapshot_pub,
        repl_drop_snapshot_pub,
        repl_create_snapshot_sub,
        repl_drop_snapshot_sub,
        repl_init_snapshot,
        repl_update_snapshot,
        repl_add_snapshot_cr,
        repl_add_dav_cr,
        repl_set_publication_schedule,
        repl_set_publication_spark_conn,
        repl_set_publication_stale,
        repl_set_publication_reinit,
        repl_set_publication_verify_schedule,
        repl_purge_urplogs,
    )
}

"""The Python API, with the seed's function names.

Every function takes table names as strings in the statements' form (``[schema.]table[@conn_id]``)
and returns a result object whose ``str()`` is what ``snaprepl sql`` prints. Keyword-only
``catalog`` and ``settings`` default to the process's catalog and Airflow's ``[snaprepl]`` settings.

>>> from snaprepl import repl_create_snapshot_log
>>> print(repl_create_snapshot_log("orders@src"))  # doctest: +SKIP
snapshot log created for public.orders@src: table RLOG_orders, triggers public_orders_I_log, ...
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from snaprepl import snapshot_logs, snapshots
from snaprepl.catalog.store import Catalog
from snaprepl.refresh.model import RefreshOutcome
from snaprepl.settings import Settings
from snaprepl.statements.parser import parse_table_ref


def _catalog(catalog: Catalog | None) -> Catalog:
    return catalog if catalog is not None else Catalog.open()


def _settings(settings: Settings | None) -> Settings:
    return settings if settings is not None else Settings.load()


def repl_create_snapshot_log(source_table: str, *, catalog: Catalog | None = None) -> snapshot_logs.CreatedLog:
    """``CREATE SNAPSHOT LOG FOR source_table``: log table ``RLOG_<t>`` and its three triggers.

    :param source_table: ``[schema.]table[@conn_id]`` of a table with a primary key.
    """
    return snapshot_logs.create_snapshot_log(parse_table_ref(source_table), catalog=_catalog(catalog))


def repl_drop_snapshot_log(source_table: str, *, catalog: Catalog | None = None) -> snapshot_logs.DroppedLog:
    """``DROP SNAPSHOT LOG FOR source_table``: drop the triggers and ``RLOG_<t>``, and unregister."""
    return snapshot_logs.drop_snapshot_log(parse_table_ref(source_table), catalog=_catalog(catalog))


def repl_purge_snapshot_log(
    source_table: str,
    force: bool | int = False,
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
        force=bool(force),
    )


def repl_create_snapshot(
    query_def: str,
    dest_table: str,
    schedule: str | None = None,
    *,
    catalog: Catalog | None = None,
    settings: Settings | None = None,
    refresher: snapshots.Refresher | None = None,
) -> snapshots.CreatedSnapshot:
    """``CREATE NONINCREMENTAL SNAPSHOT dest_table AS 'query_def'``.

    :param query_def: a SELECT; tables name their connection as ``table@conn_id``.
    :param dest_table: ``[schema.]table[@conn_id]``; created to fit the result if missing.
    :param schedule: cron expression or preset of its refresh DAG (None: manual).
    """
    return snapshots.create_nonincremental_snapshot(
        parse_table_ref(dest_table),
        query_def,
        schedule,
        catalog=_catalog(catalog),
        settings=_settings(settings),
        refresher=refresher or snapshots.submit_refresh,
    )


def repl_create_inc_snapshot(
    source_column_list: str | None,
    source_table: str,
    condition: str | None,
    dest_table: str,
    schedule: str | None = None,
    *,
    catalog: Catalog | None = None,
    settings: Settings | None = None,
    refresher: snapshots.Refresher | None = None,
) -> snapshots.CreatedSnapshot:
    """``CREATE SNAPSHOT dest_table FROM source_table ['source_column_list'] [WHERE 'condition']``.

    :param source_column_list: ``'col, ...'`` or None for every column (the key is always included).
    :param condition: a WHERE condition in the source's dialect, or None.
    """
    return snapshots.create_incremental_snapshot(
        parse_table_ref(dest_table),
        parse_table_ref(source_table),
        source_column_list,
        condition,
        schedule,
        catalog=_catalog(catalog),
        settings=_settings(settings),
        refresher=refresher or snapshots.submit_refresh,
    )


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
        refresher=refresher or snapshots.submit_refresh,
    )


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
        refresher=refresher or snapshots.submit_refresh,
    )


def repl_drop_snapshot(
    snapshot_table_name: str, delete: int | bool = 0, *, catalog: Catalog | None = None
) -> snapshots.DroppedSnapshot:
    """``DROP SNAPSHOT name [WITH DELETE]``; ``delete`` true also drops the destination table."""
    return snapshots.drop_snapshot(
        parse_table_ref(snapshot_table_name), with_delete=bool(delete), catalog=_catalog(catalog)
    )


def repl_set_snapshot_schedule(
    snapshot_table_name: str, schedule: str | None, *, catalog: Catalog | None = None
) -> snapshots.ScheduledSnapshot:
    """``ALTER SNAPSHOT name SCHEDULE 'cron' | NONE`` (snaprepl's addition)."""
    return snapshots.set_schedule(parse_table_ref(snapshot_table_name), schedule, catalog=_catalog(catalog))


def repl_purge_rplogs(
    *, catalog: Catalog | None = None, settings: Settings | None = None
) -> snapshots.PurgedReplayLogs:
    """``REPL_PURGE_RPLOGS()``: purge replay-log entries every snapshot is past."""
    return snapshots.purge_replay_logs(catalog=_catalog(catalog), settings=_settings(settings))


#: Functions callable from statements, by lower-case name.
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
        repl_purge_rplogs,
    )
}

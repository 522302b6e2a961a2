"""The Python API, with the seed's function names.

Every function takes table names as strings in the statements' form (``[schema.]table[@conn_id]``)
and returns a result object whose ``str()`` is what ``snaprepl sql`` prints. Keyword-only
``catalog`` and ``settings`` default to the process's catalog and Airflow's ``[snaprepl]`` settings.

>>> from snaprepl import repl_create_snapshot_log
>>> print(repl_create_snapshot_log("orders@src"))  # doctest: +SKIP
snapshot log created for public.orders@src: table RLOG_orders, triggers public_orders_I_log, ...
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from snaprepl.arguments import Flag, checked
from snaprepl.bidir.notify import notify_conflicts
from snaprepl.bidir.servers import register_server, server_name
from snaprepl.catalog.store import Catalog
from snaprepl.ops import collection_pubs as coll
from snaprepl.ops import snapshot_logs, snapshot_upkeep, snapshots
from snaprepl.ops.publications import (
    add_resolver,
    check_type,
    create_publication,
    create_subscription,
    drop_publication,
    drop_subscription,
    find_publication,
)
from snaprepl.ops.purge import purge_urplogs
from snaprepl.refresh.model import RefreshOutcome
from snaprepl.schedules import validate_schedule
from snaprepl.settings import Settings
from snaprepl.statements.parser import parse_table_ref
from snaprepl.submit.refresh import submit_refresh
from snaprepl.submit.sync import Syncer, submit_sync


def _catalog(catalog: Catalog | None) -> Catalog:
    return catalog if catalog is not None else Catalog.open(Settings.load())


def _settings(settings: Settings | None) -> Settings:
    return settings if settings is not None else Settings.load()


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
def repl_purge_rplogs(
    *, catalog: Catalog | None = None, settings: Settings | None = None
) -> snapshot_upkeep.PurgedReplayLogs:
    """``REPL_PURGE_RPLOGS()``: purge replay-log entries every snapshot is past."""
    return snapshot_upkeep.purge_replay_logs(catalog=_catalog(catalog), settings=_settings(settings))


# ---------------------------------------------------------------------- bi-directional replication


@dataclass(frozen=True)
class SyncResult:
    """Outcomes of the steps of a sync job."""

    what: str
    outcomes: list[Any]
    notified: int = 0

    def __str__(self) -> str:
        lines = [f"{self.what}:"] + [f"  {o}" for o in self.outcomes]
        if self.notified:
            lines.append(f"  {self.notified} conflicts notified")
        return "\n".join(lines) if self.outcomes else f"{self.what}: nothing to do"


@checked
def repl_snp_server(
    dsn: str, user: str | None = None, password: str | None = None, *, catalog: Catalog | None = None
) -> str:
    """``REPL_SNP_SERVER(conn_id[, user, password])``: register a replication server; return its unique
    replication name.

    :param dsn: the Airflow connection id of the server.
    :param user: accepted so the seed's calls run as written, but credentials belong to the
        connection: the user and password given here are neither used nor stored.
    """
    if user is not None or password is not None:
        logging.getLogger("snaprepl").warning(
            "REPL_SNP_SERVER('%s', ...): the user and password arguments are ignored and not stored; "
            "snaprepl connects with the login of Airflow connection '%s'",
            dsn,
            dsn,
        )
    if coll.is_collection_conn(dsn):
        return coll.register_collection_server(dsn, catalog=_catalog(catalog))
    return register_server(dsn, catalog=_catalog(catalog))


@checked
def repl_server_name(dsn: str, *, catalog: Catalog | None = None) -> str:
    """``REPL_SERVER_NAME(conn_id)``: the replication name of a registered server."""
    return server_name(dsn, catalog=_catalog(catalog))


@checked
def repl_create_snapshot_pub(item: str, type: int, *, catalog: Catalog | None = None) -> Any:
    """``REPL_CREATE_SNAPSHOT_PUB(item, 2)``: publish a table (ROWGUID column, bi-directional log, triggers);
    ``REPL_CREATE_SNAPSHOT_PUB('/path/collection/@conn_id', 1)``: publish a WebDAV collection or folder."""
    if type == coll.COLLECTION_TYPE:
        return coll.create_collection_publication(item, catalog=_catalog(catalog))
    return create_publication(parse_table_ref(item), type, catalog=_catalog(catalog))


@checked
def repl_drop_snapshot_pub(item: str, type: int, *, catalog: Catalog | None = None) -> Any:
    """``REPL_DROP_SNAPSHOT_PUB(item, 2)``: drop a publication with its subscriptions and resolvers."""
    if type == coll.COLLECTION_TYPE:
        return coll.drop_collection_publication(item, catalog=_catalog(catalog))
    return drop_publication(parse_table_ref(item), type, catalog=_catalog(catalog))


@checked
def repl_create_snapshot_sub(server: str, item: str, type: int, *, catalog: Catalog | None = None) -> Any:
    """``REPL_CREATE_SNAPSHOT_SUB(server, item, 2)``: create the replica on a registered server."""
    if type == coll.COLLECTION_TYPE:
        return coll.create_collection_subscription(str(server), item, catalog=_catalog(catalog))
    return create_subscription(server, parse_table_ref(item), type, catalog=_catalog(catalog))


@checked
def repl_drop_snapshot_sub(server: str, item: str, type: int, *, catalog: Catalog | None = None) -> Any:
    """``REPL_DROP_SNAPSHOT_SUB(server, item, 2)``: drop a subscription and its replica."""
    if type == coll.COLLECTION_TYPE:
        return coll.drop_collection_subscription(str(server), item, catalog=_catalog(catalog))
    return drop_subscription(server, parse_table_ref(item), type, catalog=_catalog(catalog))


@checked
def repl_init_snapshot(
    server: str,
    item: str,
    type: int,
    rows_per_commit: int = 100,
    *,
    catalog: Catalog | None = None,
    settings: Settings | None = None,
    syncer: Syncer | None = None,
) -> SyncResult:
    """``REPL_INIT_SNAPSHOT(server, item, 2[, rows_per_commit])``: load the publisher's rows into the
    replica, committing every ``rows_per_commit`` rows (default 100, as the seed). Type 1: copy the
    collection, committing per resource, in this process."""
    if type == coll.COLLECTION_TYPE:
        counts = coll.init_collection(str(server), item, catalog=_catalog(catalog))
        return SyncResult(f"REPL_INIT_SNAPSHOT {item} on {server}", [str(counts)])
    check_type(type)
    catalog = _catalog(catalog)
    publication, _ = find_publication(catalog, parse_table_ref(item))
    outcomes = (syncer or submit_sync)(
        "init", publication.sp_item, str(server), int(rows_per_commit), catalog, _settings(settings)
    )
    return SyncResult(f"REPL_INIT_SNAPSHOT {publication.sp_item} on {server}", outcomes)


@checked
def repl_update_snapshot(
    item: str,
    type: int,
    *,
    catalog: Catalog | None = None,
    settings: Settings | None = None,
    syncer: Syncer | None = None,
) -> SyncResult:
    """``REPL_UPDATE_SNAPSHOT(item, 2)``: pull every subscriber's changes into the publisher (with
    conflict resolution), then push the publisher's log to every subscriber but each change's origin.
    Type 1: scan and sync the collection in this process, resource by resource."""
    if type == coll.COLLECTION_TYPE:
        catalog, settings = _catalog(catalog), _settings(settings)
        counts = coll.sync_collection(item, catalog=catalog)
        return SyncResult(f"REPL_UPDATE_SNAPSHOT {item}", [str(counts)], notify_conflicts(catalog, settings))
    check_type(type)
    catalog, settings = _catalog(catalog), _settings(settings)
    publication, _ = find_publication(catalog, parse_table_ref(item))
    outcomes = (syncer or submit_sync)("sync", publication.sp_item, None, 100, catalog, settings)
    notified = notify_conflicts(catalog, settings)
    return SyncResult(f"REPL_UPDATE_SNAPSHOT {publication.sp_item}", outcomes, notified)


@checked
def repl_add_snapshot_cr(
    table: str,
    suffix: str,
    type: str,
    order: int,
    klass: str,
    column: str | None = None,
    *,
    catalog: Catalog | None = None,
) -> Any:
    """``REPL_ADD_SNAPSHOT_CR(table, suffix, type, order, class[, column])``: add a conflict resolver.

    :param klass: ``min``, ``max``, ``ave`` (with ``column``), ``pub_wins``, ``sub_wins``, or the import
        path ``package.module:function`` of a resolver of your own.
    """
    return add_resolver(parse_table_ref(table), suffix, type, order, klass, column, catalog=_catalog(catalog))


@checked
def repl_add_dav_cr(
    collection: str,
    klass: str,
    notify_email: str | None = None,
    notify_text: str | None = None,
    *,
    catalog: Catalog | None = None,
) -> Any:
    """``REPL_ADD_DAV_CR(collection, class[, notify_email, notify_text])``: a conflict resolver of a
    collection (and the collections under it that have none): ``pub_wins``, ``sub_wins`` or
    ``package.module:function``."""
    return coll.add_dav_resolver(collection, klass, notify_email, notify_text, catalog=_catalog(catalog))


@checked
def repl_set_publication_schedule(item: str, schedule: str | None, *, catalog: Catalog | None = None) -> str:
    """The schedule of a publication's sync DAG (snaprepl's addition; None: manual)."""
    catalog = _catalog(catalog)
    publication, _ = find_publication(catalog, parse_table_ref(item))
    value = validate_schedule(schedule)
    catalog.update_publication(publication.sp_item, sp_schedule=value)
    return f"publication {publication.sp_item}: schedule {value or 'none (manual syncs only)'}"


@checked
def repl_purge_urplogs(*, catalog: Catalog | None = None, settings: Settings | None = None) -> str:
    """``REPL_PURGE_URPLOGS()``: purge update replay logs per publication, subscriber and direction."""
    return str(purge_urplogs(catalog=_catalog(catalog), settings=_settings(settings)))


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
        repl_purge_urplogs,
    )
}

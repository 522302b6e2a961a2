"""The Python API of bi-directional replication, with the seed's function names: servers,
publications of tables (type 2) and collections (type 1), subscriptions, initial loads, syncs,
conflict resolvers. :mod:`snaprepl.api` carries them with the rest of the API.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from snaprepl.bidir.servers import register_server, server_name
from snaprepl.catalog.store import Catalog
from snaprepl.common.arguments import checked
from snaprepl.common.schedules import validate_schedule
from snaprepl.errors import InvalidArgument
from snaprepl.ops import collection_pubs as coll
from snaprepl.ops import spark_conns
from snaprepl.ops.publications import (
    TABLE_TYPE,
    add_resolver,
    check_type,
    create_publication,
    create_subscription,
    drop_publication,
    drop_subscription,
    find_publication,
)
from snaprepl.ops.purge import purge_urplogs
from snaprepl.ops.verify import set_publication_verify_schedule
from snaprepl.publications.notify import notify_conflicts
from snaprepl.publications.request import DEFAULT_ROWS_PER_COMMIT, SyncRequest
from snaprepl.settings import Settings
from snaprepl.statements.parser import parse_table_ref
from snaprepl.submit.sync import Syncer, submit_sync


def default_catalog(catalog: Catalog | None) -> Catalog:
    """``catalog``, or the process's catalog (Airflow's ``[snaprepl]`` settings)."""
    return catalog if catalog is not None else Catalog.open(Settings.load())


def default_settings(settings: Settings | None) -> Settings:
    """``settings``, or Airflow's ``[snaprepl]`` settings."""
    return settings if settings is not None else Settings.load()


_catalog, _settings = default_catalog, default_settings


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
    rows_per_commit: int = DEFAULT_ROWS_PER_COMMIT,
    *,
    catalog: Catalog | None = None,
    settings: Settings | None = None,
    syncer: Syncer | None = None,
) -> SyncResult:
    """``REPL_INIT_SNAPSHOT(server, item, 2[, rows_per_commit])``: load the publisher's rows into the
    replica, committing every ``rows_per_commit`` rows (default 100, as the seed). Type 1: copy the
    collection, committing per resource. Both run as the sync job (spark-submit, or on the Spark
    Connect server), as the publication's DAG runs it."""
    catalog, settings = _catalog(catalog), _settings(settings)
    key = _published(catalog, item, type, server=str(server))
    request = SyncRequest.configured("init", key, settings, server=str(server), rows_per_commit=int(rows_per_commit))
    outcomes = (syncer or submit_sync)(request, catalog, settings)
    return SyncResult(f"REPL_INIT_SNAPSHOT {key} on {server}", outcomes)


def _published(catalog: Catalog, item: str, type: int, *, server: str | None = None) -> str:
    """SP_ITEM of the publication ``item`` of ``type`` (and ``server``'s subscription to a collection)."""
    if type == coll.COLLECTION_TYPE:
        return coll.find_collection(catalog, item, subscriber=server)[0].sp_item
    check_type(type)
    return find_publication(catalog, parse_table_ref(item))[0].sp_item


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
    Type 1: scan the collection on every side and sync it resource by resource, in the same job."""
    catalog, settings = _catalog(catalog), _settings(settings)
    key = _published(catalog, item, type)
    outcomes = (syncer or submit_sync)(SyncRequest.configured("sync", key, settings), catalog, settings)
    notified = notify_conflicts(catalog, settings, key)
    return SyncResult(f"REPL_UPDATE_SNAPSHOT {key}", outcomes, notified)


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
    """The schedule of a publication's sync DAG (snaprepl's addition; None: manual). ``item`` is a
    table or a collection (``/path/collection/@conn_id``)."""
    catalog = _catalog(catalog)
    key = _published(catalog, item, coll.COLLECTION_TYPE if str(item).startswith("/") else TABLE_TYPE)
    value = validate_schedule(schedule)
    catalog.update_publication(key, sp_schedule=value)
    return f"publication {key}: schedule {value or 'none (manual syncs only)'}"


@checked
def repl_set_publication_spark_conn(item: str, conn_id: str | None, *, catalog: Catalog | None = None) -> str:
    """The Spark connection of a publication's syncs, in place of ``[snaprepl] spark_conn_id``
    (snaprepl's addition; type ``spark`` or ``spark_connect``; NULL: the setting's)."""
    return str(spark_conns.set_publication_spark_conn(parse_table_ref(item), conn_id, catalog=_catalog(catalog)))


@checked
def repl_set_publication_stale(
    item: str, type: int, hours: int | None, detach: int | None = None, *, catalog: Catalog | None = None
) -> str:
    """``REPL_SET_PUBLICATION_STALE(item, type, hours[, detach])`` (snaprepl's addition): its subscribers
    are stale after ``hours`` without a completed pull or push, and with ``detach`` = 1 then detached
    from the publisher's log purge (0: never; NULL: ``[snaprepl] stale_after_hours`` / ``detach_stale``)."""
    catalog = _catalog(catalog)
    key = _published(catalog, item, type)
    if hours is not None and (isinstance(hours, bool) or not isinstance(hours, int) or hours < 1):
        raise InvalidArgument(f"stale hours must be a whole number of 1 or more, not {hours!r}")
    if detach not in (None, 0, 1):
        raise InvalidArgument(f"detach must be 0, 1 or NULL, not {detach!r}")
    catalog.update_publication(key, sp_stale_after_hours=hours, sp_detach_stale=detach)
    rule = {None: "as [snaprepl] detach_stale says", 0: "never detached", 1: "then detached"}[detach]
    return f"publication {key}: subscribers stale after {hours or 'stale_after_hours'} h, {rule}"


@checked
def repl_set_publication_reinit(item: str, type: int, reinit: int | None, *, catalog: Catalog | None = None) -> str:
    """``REPL_SET_PUBLICATION_REINIT(item, type, reinit)`` (snaprepl's addition): with ``reinit`` = 1 a
    detached subscriber's next sync pulls its local changes, then reloads it (REPL_INIT_SNAPSHOT); with 0
    it fails saying it needs one (NULL: as ``[snaprepl] reinit_detached`` says)."""
    catalog = _catalog(catalog)
    key = _published(catalog, item, type)
    if reinit not in (None, 0, 1) or isinstance(reinit, bool):
        raise InvalidArgument(f"reinit must be 0, 1 or NULL, not {reinit!r}")
    catalog.update_publication(key, sp_reinit_detached=reinit)
    rule = {
        None: "as [snaprepl] reinit_detached says",
        0: "fail until REPL_INIT_SNAPSHOT",
        1: "are reloaded at their next sync",
    }[reinit]
    return f"publication {key}: detached subscribers {rule}"


@checked
def repl_set_publication_verify_schedule(
    item: str, type: int, schedule: str | None, *, catalog: Catalog | None = None
) -> str:
    """``REPL_SET_PUBLICATION_VERIFY_SCHEDULE(item, type, schedule)`` (snaprepl's addition): a verify DAG
    comparing each subscriber's replica with the publisher's table on ``schedule`` (cron or preset, e.g.
    ``@weekly``); NULL removes it (off by default)."""
    catalog = _catalog(catalog)
    if type == coll.COLLECTION_TYPE:
        raise InvalidArgument(
            "a collection's replicas are not verified on a schedule", "verify its tables' replicas by name"
        )
    key = _published(catalog, item, type)
    return str(set_publication_verify_schedule(key, schedule, catalog=catalog))


@checked
def repl_purge_urplogs(*, catalog: Catalog | None = None, settings: Settings | None = None) -> str:
    """``REPL_PURGE_URPLOGS()``: purge update replay logs per publication, subscriber and direction."""
    return str(purge_urplogs(catalog=_catalog(catalog), settings=_settings(settings)))


#: Functions callable from statements, by lower-case name.

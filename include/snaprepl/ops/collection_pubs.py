"""Publications of collections (type 1): REPL_CREATE/DROP_SNAPSHOT_PUB/SUB, REPL_INIT/UPDATE_SNAPSHOT
and REPL_ADD_DAV_CR for WebDAV collections and local folders.

An item is ``/path/collection/@conn_id``: the collection's path on the publisher's server. Every
subscriber holds the same path on its own server. REPL_INIT_SNAPSHOT and REPL_UPDATE_SNAPSHOT run as
the sync job, as for tables (:mod:`snaprepl.submit.sync`, then :mod:`snaprepl.collections.job`).
"""

from __future__ import annotations

from dataclasses import dataclass

from snaprepl.catalog.manifests import DavResolver
from snaprepl.catalog.records import (
    COLLECTION_TYPE,
    PublicationRecord,
    ServerRecord,
    SubscriptionRecord,
    utcnow,
)
from snaprepl.catalog.store import Catalog
from snaprepl.collections import resolve
from snaprepl.collections.stores import WEBDAV_TYPES, Store, ensure_collection, parse_item, replication_name
from snaprepl.connections.lookup import get_connection
from snaprepl.errors import ConnectionNotFound, InvalidArgument, SnapshotExists, SnapshotNotFound


def is_collection_conn(conn_id: str) -> bool:
    """Whether ``conn_id`` is a WebDAV or folder connection (False when it is not defined: the table
    path reports that)."""
    try:
        return get_connection(conn_id).conn_type in WEBDAV_TYPES | {"fs"}
    except ConnectionNotFound:
        return False


def register_collection_server(conn_id: str, *, catalog: Catalog) -> str:
    """REPL_SNP_SERVER for a WebDAV or folder connection: its replication name (extra or conn id)."""
    catalog.ensure_ready()
    known = catalog.server_of_conn(conn_id)
    if known is not None:
        return known.server
    name = replication_name(get_connection(conn_id))
    other = catalog.server(name)
    if other is not None:
        raise InvalidArgument(
            f"replication name {name!r} already belongs to the server at connection '{other.db_address}'",
            f"give connection '{conn_id}' a distinct extra replication_name",
        )
    catalog.add_server(
        ServerRecord(server=name, db_address=conn_id, created_at=utcnow()),
        InvalidArgument(f"replication name {name!r} was registered concurrently"),
    )
    return name


@dataclass(frozen=True)
class Done:
    text: str

    def __str__(self) -> str:
        return self.text


def _key(item: str) -> tuple[str, str, str]:
    root, conn_id = parse_item(item)
    return f"{root}@{conn_id}", root, conn_id


def find_collection(
    catalog: Catalog, item: str, *, subscriber: str | None = None
) -> tuple[PublicationRecord, str, str]:
    """The publication of collection ``item`` (with its root and connection id); with
    ``subscriber``, that server must subscribe to it."""
    key, root, conn_id = _key(item)
    record = catalog.publication(key)
    if record is None or record.sp_type != COLLECTION_TYPE:
        raise SnapshotNotFound(
            f"collection {key} is not published", f"publish it first: REPL_CREATE_SNAPSHOT_PUB('{key}', 1)"
        )
    if subscriber is not None and catalog.subscription(subscriber, key) is None:
        raise SnapshotNotFound(f"server {subscriber} does not subscribe to {key}")
    return record, root, conn_id


def create_collection_publication(item: str, *, catalog: Catalog) -> Done:
    key, root, conn_id = _key(item)
    catalog.ensure_ready()
    store = Store.open(conn_id, root)
    store.check()
    for other in catalog.publications():
        if other.sp_type != COLLECTION_TYPE or not other.sp_item.endswith(f"@{conn_id}"):
            continue
        other_root = other.sp_item.rpartition("@")[0]
        if other_root.startswith(root) or root.startswith(other_root):
            raise InvalidArgument(
                f"collection {key} overlaps publication {other.sp_item}",
                "a collection is published once: not inside, nor around, another publication",
            )
    server = register_collection_server(conn_id, catalog=catalog)
    record = PublicationRecord(sp_item=key, sp_type=COLLECTION_TYPE, sp_server=server, sp_created_at=utcnow())
    catalog.add_publication(record, SnapshotExists(f"{key} is already published"))
    return Done(f"publication {key} created on server {server} (collection)")


def create_collection_subscription(server: str, item: str, *, catalog: Catalog) -> Done:
    record, root, _ = find_collection(catalog, item)
    if server == record.sp_server:
        raise InvalidArgument(f"server {server} is the publisher of {record.sp_item}", "subscribe another server")
    known = catalog.server(server)
    if known is None:
        raise InvalidArgument(
            f"there is no replication server {server!r}", "register its connection with REPL_SNP_SERVER('conn_id')"
        )
    if catalog.subscription(server, record.sp_item) is not None:
        raise SnapshotExists(f"server {server} already subscribes to {record.sp_item}")
    ensure_collection(Store.open(known.db_address, root))
    catalog.add_subscription(
        SubscriptionRecord(ss_server=server, ss_item=record.sp_item, ss_type=COLLECTION_TYPE, ss_created_at=utcnow()),
        SnapshotExists(f"server {server} already subscribes to {record.sp_item}"),
    )
    return Done(f"server {server} subscribed to {record.sp_item}; load it with REPL_INIT_SNAPSHOT")


def drop_collection_subscription(server: str, item: str, *, catalog: Catalog) -> Done:
    record, _, _ = find_collection(catalog, item)
    if catalog.subscription(server, record.sp_item) is None:
        raise SnapshotNotFound(f"server {server} does not subscribe to {record.sp_item}")
    catalog.delete_manifests(record.sp_item, server)
    catalog.delete_waiting(record.sp_item, server)
    catalog.delete_subscription(server, record.sp_item)
    return Done(f"subscription of {server} to {record.sp_item} dropped (its files are left in place)")


def drop_collection_publication(item: str, *, catalog: Catalog) -> Done:
    record, root, conn_id = find_collection(catalog, item)
    for sub in catalog.subscriptions(record.sp_item):
        catalog.delete_subscription(sub.ss_server, record.sp_item)
    catalog.delete_manifests(record.sp_item)
    catalog.delete_waiting(record.sp_item)
    catalog.delete_dav_resolvers(root, conn_id)
    catalog.delete_publication(record.sp_item)
    return Done(f"publication {record.sp_item} dropped (files are left in place)")


def add_dav_resolver(
    collection: str, klass: str, notify_email: str | None, notify_text: str | None, *, catalog: Catalog
) -> Done:
    """REPL_ADD_DAV_CR(collection, class[, notify_email, notify_text])."""
    key, root, conn_id = _key(collection)
    inside = [
        p
        for p in catalog.publications()
        if p.sp_type == COLLECTION_TYPE
        and p.sp_item.endswith(f"@{conn_id}")
        and root.startswith(p.sp_item.rpartition("@")[0])
    ]
    if not inside:
        raise SnapshotNotFound(f"{key} is in no published collection", "give a collection under a publication")
    if klass not in resolve.CLASSES:
        resolve.load(klass)
    order = 1 + max((r.order for r in catalog.dav_resolvers(key)), default=0)
    catalog.add_dav_resolver(
        DavResolver(key, order, klass, notify_email, notify_text),
        SnapshotExists(f"resolver {order} of {key} was added concurrently"),
    )
    return Done(f"resolver {klass} added to {key} (order {order})")

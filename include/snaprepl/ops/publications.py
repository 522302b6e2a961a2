"""Publications, subscriptions and conflict resolvers (REPL_CREATE/DROP_SNAPSHOT_PUB/SUB, REPL_ADD_SNAPSHOT_CR)."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from snaprepl.bidir import resolvers as R
from snaprepl.bidir.servers import register_server, server_conn
from snaprepl.catalog.lookup import dialect_of, executable_database
from snaprepl.catalog.records import LogRecord, PublicationRecord, ResolverRecord, SubscriptionRecord, utcnow
from snaprepl.catalog.store import Catalog
from snaprepl.common.table_names import Ident, ResolvedTable, TableRef
from snaprepl.database.sessions import Database
from snaprepl.dialects import Column, DdlStep, LogObjects, TableInfo
from snaprepl.dialects.base import BIDIR
from snaprepl.errors import (
    InvalidArgument,
    NoPrimaryKey,
    SnapreplError,
    SnapshotExists,
    SnapshotLogExists,
    SnapshotNotFound,
)
from snaprepl.ops.log_cascades import refuse_cascaded_publication
from snaprepl.ops.log_guard_ddl import guard_record, with_guards
from snaprepl.ops.snapshot_logs import run_ddl

TABLE_TYPE = 2
BIDIR_KIND = "bidir"


def check_type(kind: int | None) -> None:
    if kind == 1:
        raise InvalidArgument(
            "type 1 publishes a collection of files, not a table",
            "name the collection as /path/collection/@conn_id, or use type 2 for a table",
        )
    if kind != TABLE_TYPE:
        raise InvalidArgument(f"publication type {kind!r} is unknown", "use 2 (a table)")


@dataclass(frozen=True)
class Published:
    record: PublicationRecord
    objects: LogObjects

    def __str__(self) -> str:
        return f"publication {self.record.sp_item} created on server {self.record.sp_server}: table {self.objects.rlog}"


@dataclass(frozen=True)
class Subscribed:
    record: SubscriptionRecord

    def __str__(self) -> str:
        return (
            f"server {self.record.ss_server} subscribed to {self.record.ss_item}: "
            f"table {self.record.ss_schema}.{self.record.ss_table} created; load it with REPL_INIT_SNAPSHOT"
        )


@dataclass(frozen=True)
class Dropped:
    what: str

    def __str__(self) -> str:
        return f"{self.what} dropped"


def find_publication(catalog: Catalog, ref: TableRef) -> tuple[PublicationRecord, LogRecord]:
    """The publication of the table ``ref`` names (a publisher table name written as in statements)."""
    dialect = dialect_of(ref.conn_id)
    table = dialect.fold(ref.table)
    schema = dialect.fold(ref.schema) if ref.schema else None
    found = []
    for publication in catalog.publications():
        log = catalog.log(publication.sp_item)
        if log is None or log.snl_conn != ref.conn_id or not dialect.same_name(log.snl_table, table):
            continue
        if schema is None or dialect.same_name(log.snl_schema, schema):
            found.append((publication, log))
    if not found:
        raise SnapshotNotFound(f"{ref} is not published", f"publish it first: REPL_CREATE_SNAPSHOT_PUB('{ref}', 2)")
    if len(found) > 1:
        raise InvalidArgument(f"{ref} matches several publications", "qualify it with its schema")
    return found[0]


def _log_record(info: TableInfo, objects: LogObjects, dialect_name: str) -> LogRecord:
    return LogRecord(
        snl_source=info.table.key,
        snl_rlog=objects.rlog,
        snl_rplog="SYS_URPLOG",
        snl_conn=info.table.conn_id,
        snl_schema=info.table.schema,
        snl_table=info.table.table,
        snl_dialect=dialect_name,
        snl_key_columns=json.dumps([c.name for c in info.primary_key]),
        snl_objects=objects.to_json(),
        snl_kind=BIDIR_KIND,
        snl_created_at=utcnow(),
    )


def create_publication(item: TableRef, kind: int, *, catalog: Catalog) -> Published:
    """``REPL_CREATE_SNAPSHOT_PUB(item, 2)``: add ROWGUID (existing rows get '<publisher>@<uuid>'), the
    bi-directional log and its triggers, and register the publication and its server."""
    check_type(kind)
    catalog.ensure_ready()
    database = executable_database(item.conn_id)
    dialect = database.dialect
    with database.session() as session:
        info = database.describe(session, item)
        refuse_cascaded_publication(dialect, session, info)
    server = register_server(item.conn_id, catalog=catalog).name
    if not info.primary_key:
        raise NoPrimaryKey(
            f"table {info.table} has no primary key",
            "bi-directional replication matches rows by key: add a primary key, then publish the table",
        )
    if catalog.publication(info.table.key) is not None:
        raise SnapshotExists(f"{info.table} is already published")
    existing = catalog.log(info.table.key)
    if existing is not None:
        raise SnapshotLogExists(
            f"{info.table} has a snapshot log, which a publication would replace",
            f"drop it first (DROP SNAPSHOT LOG FOR {info.table})",
        )
    data_columns = [c for c in info.columns if c.name != BIDIR.rowguid]
    objects = dialect.bidir_log_objects(info.table, [c.name for c in info.primary_key])
    steps = [] if len(data_columns) < len(info.columns) else dialect.add_rowguid_steps(info.table, server)
    with_rowguid = TableInfo(info.table, (*data_columns, Column(BIDIR.rowguid, dialect.rowguid_type)))
    log_steps = [*steps, *dialect.create_bidir_log_ddl(with_rowguid, objects, server, publisher=True)]
    guarded, ddl_guard = with_guards(database, with_rowguid, objects, log_steps)
    run_ddl(database, guarded, f"the publication of {info.table}")
    record = PublicationRecord(
        sp_item=info.table.key, sp_type=kind, sp_server=server, sp_created_at=utcnow(), sp_rows_per_commit=None
    )
    try:
        guard, _ = guard_record(database, with_rowguid, objects, ddl_guard)
        catalog.add_log(
            replace(_log_record(with_rowguid, objects, dialect.name), snl_guard=guard),
            SnapshotLogExists(f"{info.table} was published concurrently"),
        )
        catalog.add_publication(record, SnapshotExists(f"{info.table} was published concurrently"))
    except BaseException:
        _drop_objects(database, info.table, objects, drop_rowguid=bool(steps))
        catalog.delete_log(info.table.key)
        raise
    return Published(record, objects)


def _drop_objects(database: Database, table: ResolvedTable, objects: LogObjects, *, drop_rowguid: bool) -> None:
    dialect = database.dialect
    with database.session() as session:
        exists = dialect.table_exists(session, table.schema, table.table)
    statements = [
        *dialect.drop_log_ddl(table, objects, source_exists=exists),
        *dialect.guard_drop_sql(table, objects, source_exists=exists),
    ]
    if drop_rowguid and exists:
        statements.append(
            f"ALTER TABLE {dialect.qualified(table.schema, table.table)} DROP COLUMN {dialect.quote(BIDIR.rowguid)}"
        )
    for statement in statements:
        with database.session() as session:
            session.execute(statement)


def drop_publication(item: TableRef, kind: int, *, catalog: Catalog) -> Dropped:
    """``REPL_DROP_SNAPSHOT_PUB(item, 2)``: drop its subscriptions, resolvers, log, triggers and ROWGUID."""
    check_type(kind)
    publication, log = find_publication(catalog, item)
    for subscription in catalog.subscriptions(publication.sp_item):
        _drop_subscription(subscription, catalog=catalog)
    database = executable_database(log.snl_conn)
    _drop_objects(database, ResolvedTable(log.snl_conn, log.snl_schema, log.snl_table), log.objects, drop_rowguid=True)
    catalog.delete_publication(publication.sp_item)
    catalog.delete_log(log.snl_source)
    return Dropped(f"publication {publication.sp_item}")


def create_subscription(server: str, item: TableRef, kind: int, *, catalog: Catalog) -> Subscribed:
    """``REPL_CREATE_SNAPSHOT_SUB(server, item, 2)``: create the replica on the subscriber (types mapped to
    its dialect, same key, ROWGUID), with its bi-directional log and triggers."""
    check_type(kind)
    publication, log = find_publication(catalog, item)
    if server == publication.sp_server:
        raise InvalidArgument(f"server {server} is the publisher of {publication.sp_item}", "subscribe another server")
    if catalog.subscription(server, publication.sp_item) is not None:
        raise SnapshotExists(f"server {server} already subscribes to {publication.sp_item}")
    sub_conn = server_conn(server, catalog=catalog)
    publisher = executable_database(log.snl_conn)
    with publisher.session() as session:
        pub_info = publisher.dialect.describe(
            session, Ident(log.snl_schema, True), Ident(log.snl_table, True), log.snl_conn
        )
    subscriber = executable_database(sub_conn)
    dialect = subscriber.dialect
    key = log.key_columns
    schema = _replica_schema(subscriber, server, log)
    columns = [
        Column(
            c.name,
            dialect.rowguid_type if c.name == BIDIR.rowguid else dialect.map_type(c.type_sql, publisher.dialect),
            c.name not in key,
            c.pk_position,
        )
        for c in pub_info.columns
    ]
    table = ResolvedTable(sub_conn, schema, log.snl_table)
    info = TableInfo(table, tuple(columns))
    objects = dialect.bidir_log_objects(table, key)
    steps = [
        DdlStep(
            dialect.create_table_sql(table.schema, table.table, columns, key),
            dialect.drop_table_sql(table.schema, table.table),
        ),
        *dialect.create_bidir_log_ddl(info, objects, server, publisher=False),
    ]
    guarded, ddl_guard = with_guards(subscriber, info, objects, steps)
    run_ddl(subscriber, guarded, f"the replica of {publication.sp_item} on server {server}")
    record = SubscriptionRecord(
        ss_server=server,
        ss_item=publication.sp_item,
        ss_type=kind,
        ss_created_at=utcnow(),
        ss_schema=schema,
        ss_table=log.snl_table,
    )
    try:
        guard, _ = guard_record(subscriber, info, objects, ddl_guard)
        log_record = replace(_log_record(info, objects, dialect.name), snl_guard=guard)
        catalog.add_log(log_record, SnapshotLogExists(f"{table} has a log already"))
        catalog.add_subscription(record, SnapshotExists(f"server {server} subscribed concurrently"))
    except BaseException:
        catalog.delete_log(table.key)
        _drop_replica(subscriber, table, objects)
        raise
    return Subscribed(record)


def _replica_schema(subscriber: Database, server: str, log: LogRecord) -> str:
    """The schema of the replica on the subscriber: the publisher's schema name where the subscriber
    has that schema, else its default one; the replica's table must not exist yet."""
    dialect = subscriber.dialect
    with subscriber.session() as session:
        exists = dialect.schema_exists(session, log.snl_schema)
        schema: str = log.snl_schema if exists else dialect.default_schema(session)
        if dialect.find_table(session, schema, log.snl_table) is not None:
            raise SnapshotExists(
                f"table {schema}.{log.snl_table} already exists on server {server}",
                "drop or rename it; the subscription creates the replica",
            )
    return schema


def _drop_replica(database: Database, table: ResolvedTable, objects: LogObjects) -> None:
    dialect = database.dialect
    for statement in [
        *dialect.drop_log_ddl(table, objects, source_exists=True),
        dialect.drop_table_sql(table.schema, table.table),
        *dialect.guard_drop_sql(table, objects, source_exists=False),
    ]:
        try:
            with database.session() as session:
                session.execute(statement)
        except SnapreplError:
            raise
        except Exception:  # the table may be gone already; its triggers went with it
            continue


def _drop_subscription(subscription: SubscriptionRecord, *, catalog: Catalog) -> None:
    sub_conn = server_conn(subscription.ss_server, catalog=catalog)
    table = ResolvedTable(sub_conn, subscription.ss_schema or "", subscription.ss_table or "")
    log = catalog.log(table.key)
    if log is not None:
        _drop_replica(executable_database(sub_conn), table, log.objects)
        catalog.delete_log(table.key)
    catalog.delete_subscription(subscription.ss_server, subscription.ss_item)


def drop_subscription(server: str, item: TableRef, kind: int, *, catalog: Catalog) -> Dropped:
    """``REPL_DROP_SNAPSHOT_SUB(server, item, 2)``: drop the replica, its log and the subscription."""
    check_type(kind)
    publication, _ = find_publication(catalog, item)
    subscription = catalog.subscription(server, publication.sp_item)
    if subscription is None:
        raise SnapshotNotFound(f"server {server} does not subscribe to {publication.sp_item}")
    _drop_subscription(subscription, catalog=catalog)
    return Dropped(f"subscription of server {server} to {publication.sp_item}")


@dataclass(frozen=True)
class AddedResolver:
    record: ResolverRecord

    def __str__(self) -> str:
        r = self.record
        what = r.cr_class + (f"({r.cr_column})" if r.cr_column else "") if r.cr_class else r.cr_proc
        return f"conflict resolver {what} added to {r.cr_table_name} for '{r.cr_type}' conflicts at order {r.cr_order}"


def add_resolver(
    table: TableRef, suffix: str, kind: str, order: int, klass: str, column: str | None = None, *, catalog: Catalog
) -> AddedResolver:
    """``REPL_ADD_SNAPSHOT_CR(table, suffix, type, order, class[, column])``.

    :param klass: ``min``, ``max``, ``ave`` (need ``column``), ``pub_wins``, ``sub_wins``, or the import
        path ``package.module:function`` of a resolver of your own.
    """
    publication, log = find_publication(catalog, table)
    kind = (kind or "").upper()
    if kind not in {"I", "U", "D"}:
        raise InvalidArgument(f"conflict type {kind!r} is unknown", "use 'I', 'U' or 'D'")
    if not isinstance(order, int):
        raise InvalidArgument(f"order {order!r} is not a number")
    if klass in R.GENERATED:
        proc = f"snaprepl.bidir.resolvers:{klass}"
        if klass in {"min", "max", "ave"}:
            if kind == "D":
                raise InvalidArgument(f"a {klass} resolver compares rows; 'D' conflicts only have the key")
            if not column:
                raise InvalidArgument(f"a {klass} resolver needs the column it compares")
            database = executable_database(log.snl_conn)
            with database.session() as session:
                info = database.dialect.describe(
                    session, Ident(log.snl_schema, True), Ident(log.snl_table, True), log.snl_conn
                )
            match = next((c.name for c in info.columns if database.dialect.same_name(c.name, column)), None)
            if match is None:
                raise InvalidArgument(f"{log.snl_source} has no column {column!r}")
            column = match
        stored_class: str | None = klass
    else:
        R.load(klass)  # refuse what cannot be imported now rather than at the next conflict
        proc, stored_class, column = klass, None, None
    record = ResolverRecord(
        cr_id=None,
        cr_table_name=publication.sp_item,
        cr_type=kind,
        cr_proc=proc,
        cr_order=order,
        cr_class=stored_class,
        cr_column=column,
        cr_suffix=suffix,
    )
    catalog.add_resolver(
        record,
        InvalidArgument(
            f"{publication.sp_item} already has a '{kind}' resolver at order {order}", "choose another order"
        ),
    )
    return AddedResolver(record)

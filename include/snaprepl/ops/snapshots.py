"""Snapshots: CREATE [NONINCREMENTAL] SNAPSHOT and UPDATE SNAPSHOT, the statements that run a refresh
(docs/semantics.md section 4; DROP and ALTER are in :mod:`snaprepl.ops.snapshot_upkeep`).

Creating a snapshot registers it and fills it with a complete refresh. If that first fill fails, the
statement takes itself back (the registration, and the destination table if it made it) so it can
simply be run again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from snaprepl.catalog.lookup import dialect_of, executable_database, find_log, find_snapshot
from snaprepl.catalog.records import LogRecord, SnapshotRecord, utcnow
from snaprepl.catalog.store import Catalog
from snaprepl.catalog.table_lineage import Place, query_places
from snaprepl.common.dag_names import dag_id_collision
from snaprepl.common.schedules import validate_schedule
from snaprepl.common.table_names import Ident, TableRef
from snaprepl.database.sessions import Database
from snaprepl.dialects import Column, Dialect, TableInfo
from snaprepl.dialects.base import SqlSession
from snaprepl.errors import (
    InvalidArgument,
    InvalidCondition,
    SnapreplError,
    SnapshotExists,
    SnapshotLogNotFound,
    TableNotFound,
)
from snaprepl.ops.destinations import Destination, destination, drop_table, mapped_columns
from snaprepl.ops.readonly import first_line, probe_query
from snaprepl.ops.snapshot_guards import refuse_stale_incremental
from snaprepl.refresh.model import COMPLETE, INCREMENTAL, RefreshOutcome, RefreshRequest
from snaprepl.settings import Settings
from snaprepl.sql.change_queries import incremental_snapshot_query
from snaprepl.submit.refresh import submit_refresh

if TYPE_CHECKING:
    from snaprepl.sql.snapshot_queries import SourceQuery

# Parsing a snapshot's query or condition loads sqlglot (0.09 s): only the statements that create a
# snapshot do, each where it parses, so an UPDATE SNAPSHOT starts without it.

#: Runs a refresh and returns its outcome (spark-submit by default; tests may run Spark in-process).
Refresher = Callable[[RefreshRequest, Catalog, Settings], RefreshOutcome]


# ------------------------------------------------------------------ results


@dataclass(frozen=True)
class CreatedSnapshot:
    record: SnapshotRecord
    outcome: RefreshOutcome
    created_table: bool

    def __str__(self) -> str:
        kind = "incremental" if self.record.incremental else "nonincremental"
        made = "created and " if self.created_table else ""
        return f"{kind} snapshot {self.record.sn_name} {made}filled: {self.outcome.rows_copied} rows"


# ------------------------------------------------------------------ creation


def _register_and_fill(
    record: SnapshotRecord,
    dest: Destination,
    create_sql: str | None,
    *,
    catalog: Catalog,
    settings: Settings,
    refresher: Refresher,
    group: str | None = None,
) -> CreatedSnapshot:
    if catalog.snapshot(record.sn_name) is not None:
        raise SnapshotExists(
            f"snapshot {record.sn_name} already exists", f"refresh it (UPDATE SNAPSHOT {record.sn_name}) or drop it"
        )
    if (other := dag_id_collision(catalog, record.sn_name)) is not None:
        raise SnapshotExists(f"snapshot {record.sn_name} would share its Airflow DAG id with {other}", "rename it")
    if create_sql:
        with dest.database.session() as session:
            session.execute(create_sql)
    try:
        catalog.add_snapshot(record, SnapshotExists(f"snapshot {record.sn_name} already exists"), group)
    except BaseException:
        if create_sql:
            drop_table(dest.database, dest.table)
        raise
    try:
        outcome = refresher(RefreshRequest.configured(record.sn_name, settings, mode=COMPLETE), catalog, settings)
    except BaseException as err:
        catalog.delete_snapshot(record.sn_name)
        if create_sql:
            drop_table(dest.database, dest.table)
        if isinstance(err, SnapreplError):
            raise type(err)(
                f"the first copy of snapshot {record.sn_name} failed: {err.message}",
                (err.hint + "; " if err.hint else "") + "nothing was kept: fix the cause and create it again",
            ) from None
        raise
    return CreatedSnapshot(catalog.snapshot(record.sn_name) or record, outcome, create_sql is not None)


# ------------------------------------------------------------------ statements


def create_nonincremental_snapshot(
    dest: TableRef,
    query: str,
    schedule: str | None = None,
    *,
    catalog: Catalog,
    settings: Settings,
    refresher: Refresher = submit_refresh,
    use_existing: bool = False,
) -> CreatedSnapshot:
    """``CREATE NONINCREMENTAL SNAPSHOT dest AS 'query'``: ``dest`` (made to fit the query's result if
    missing) holds the query's result, replaced by every refresh.

    :param query: a SELECT; its tables name their connection as ``table@conn_id`` (default
        ``snaprepl_default``).
    """
    catalog.ensure_ready()
    schedule = validate_schedule(schedule)
    from snaprepl.sql.snapshot_queries import parse_snapshot_query  # noqa: PLC0415  (heavy: sqlglot)

    source_query = parse_snapshot_query(query, dialect_of)
    source_db = executable_database(source_query.conn_id)
    result, key = _describe_query(source_db, source_query)
    probe_query(
        source_db, source_query.sql, f"the query fails on connection '{source_query.conn_id}'", only_writes=True
    )
    target = destination(
        catalog, dest, query_places(source_query.conn_id, source_query.tree), use_existing=use_existing
    )
    columns = mapped_columns(result, source_db.dialect, target.dialect, key)
    if len({c.name.lower() for c in columns}) != len(columns):
        raise InvalidArgument("the query returns two columns of the same name", "give them distinct aliases")
    if target.existing is not None:
        target.check_columns(columns, [])
        key = [c.name for c in target.existing.primary_key]
    record = SnapshotRecord(
        sn_name=target.table.key,
        sn_query=source_query.sql,
        sn_source_conn=source_query.conn_id,
        sn_dest_conn=target.table.conn_id,
        sn_dest_schema=target.table.schema,
        sn_dest_table=target.table.table,
        sn_created_at=utcnow(),
        sn_key_columns=json.dumps(key),
        sn_schedule=schedule,
    )
    return _register_and_fill(
        record, target, target.create_sql(columns, key), catalog=catalog, settings=settings, refresher=refresher
    )


def _describe_query(database: Database, query: SourceQuery) -> tuple[list[Column], list[str]]:
    """The columns of ``query``'s result, and its key when it keeps the key of the one table it reads."""
    dialect = database.dialect
    with database.session() as session:
        try:
            result = dialect.describe_query(session, query.sql)
        except SnapreplError:
            raise
        except Exception as err:
            raise InvalidCondition(
                f"the query fails on connection '{query.conn_id}': {first_line(err)}", "check the query"
            ) from None
        return result, _query_key(session, dialect, query)


def _query_key(session: SqlSession, source: Dialect, query: SourceQuery) -> list[str]:
    """The key of the query's result when it is a plain projection of one table including its key."""
    from snaprepl.sql.snapshot_queries import plain_projection_key, single_table  # noqa: PLC0415  (heavy: sqlglot)

    table = single_table(query.tree)
    if table is None:
        return []
    try:
        info = source.describe(session, table[0], table[1], "-")
    except (TableNotFound, SnapreplError):
        return []
    pk = [c.name for c in info.primary_key]
    return (plain_projection_key(query.tree, info.table.table, pk, source) or []) if pk else []


def create_incremental_snapshot(
    dest: TableRef,
    source: TableRef,
    columns: str | None = None,
    condition: str | None = None,
    schedule: str | None = None,
    *,
    catalog: Catalog,
    settings: Settings,
    refresher: Refresher = submit_refresh,
    use_existing: bool = False,
    group: str | None = None,
) -> CreatedSnapshot:
    """``CREATE SNAPSHOT dest FROM source ['cols'] [WHERE 'condition']``.

    The snapshot's query is ``SELECT <source key>, <cols or every column> FROM source [WHERE condition]``;
    it needs a snapshot log on ``source``. An existing ``dest`` must have those columns and the source's
    key as primary key; a missing one is created like the source (types mapped to its dialect).
    ``group``: the snapshot group it joins, registered with it (it never gets a DAG of its own).
    """
    catalog.ensure_ready()
    schedule = validate_schedule(schedule)
    log, source_db, info = _logged_source(catalog, source)
    dialect, key = source_db.dialect, log.key_columns
    chosen = _chosen_columns(columns, info, dialect) if columns is not None else None
    selected = _selected_columns(chosen, info, key)
    from snaprepl.sql.snapshot_queries import validate_condition  # noqa: PLC0415  (heavy: sqlglot)

    where = validate_condition(condition, dialect) if condition is not None else None
    query = incremental_snapshot_query(dialect, [c.name for c in selected], info.table.schema, info.table.table, where)
    probe_query(source_db, query, f"the snapshot's query fails on {info.table}")
    sources = [Place(log.snl_conn, log.snl_schema, log.snl_table)]
    target = destination(catalog, dest, sources, use_existing=use_existing)
    mapped = mapped_columns(selected, dialect, target.dialect, key)
    if target.existing is not None and len(target.existing.columns) <= len(key):
        raise InvalidArgument(
            f"destination {target.existing.table} has {len(target.existing.columns)} columns, no more than the "
            f"source's {len(key)} key parts",
            "give it the snapshot's columns",
        )
    target.check_columns(mapped, key)
    record = SnapshotRecord(
        sn_name=target.table.key,
        sn_query=query,
        sn_source_conn=log.snl_conn,
        sn_dest_conn=target.table.conn_id,
        sn_dest_schema=target.table.schema,
        sn_dest_table=target.table.table,
        sn_created_at=utcnow(),
        sn_is_incremental=1,
        sn_source_table=log.snl_source,
        sn_columns=json.dumps(chosen) if chosen is not None else None,
        sn_condition=where,
        sn_key_columns=json.dumps(key),
        sn_schedule=schedule,
    )
    create_sql = target.create_sql(mapped, key)
    return _register_and_fill(
        record, target, create_sql, catalog=catalog, settings=settings, refresher=refresher, group=group
    )


def _logged_source(catalog: Catalog, source: TableRef) -> tuple[LogRecord, Database, TableInfo]:
    """The snapshot log of ``source``, its database, and the table as it is now (with the log's key)."""
    try:
        log = find_log(catalog, source)
    except SnapshotLogNotFound:
        raise SnapshotLogNotFound(
            f"an incremental snapshot needs a snapshot log on {source}",
            f"create it first: CREATE SNAPSHOT LOG FOR {source}",
        ) from None
    database = executable_database(log.snl_conn)
    with database.session() as session:
        info = database.dialect.describe(session, Ident(log.snl_schema, True), Ident(log.snl_table, True), log.snl_conn)
    if [c.name for c in info.primary_key] != log.key_columns:
        raise InvalidArgument(
            f"the primary key of {info.table} changed since its snapshot log was made",
            "drop the snapshot log and create it again",
        )
    return log, database, info


def _chosen_columns(columns: str, info: TableInfo, dialect: Dialect) -> list[str]:
    """The names in the column list ``columns`` as ``info``'s table spells them."""
    from snaprepl.sql.snapshot_queries import parse_column_list  # noqa: PLC0415  (heavy: sqlglot)

    chosen = []
    for ident in parse_column_list(columns, dialect):
        name = dialect.fold(ident)
        match = next((c.name for c in info.columns if dialect.same_name(c.name, name)), None)
        if match is None:
            raise InvalidArgument(f"{info.table} has no column {name!r}", "check the column list")
        chosen.append(match)
    return chosen


def _selected_columns(chosen: list[str] | None, info: TableInfo, key: list[str]) -> list[Column]:
    """The key and the ``chosen`` columns (every column if None) of the snapshot's query."""
    if chosen is None:
        return list(info.columns)
    selected = [info.column(k) for k in key] + [info.column(c) for c in chosen if c not in key]
    if len(selected) <= len(key):
        raise InvalidArgument("the column list has nothing but the key", "add at least one other column")
    return selected


def update_snapshot(
    name: TableRef,
    *,
    nonincremental: bool = False,
    incremental_only: bool = False,
    fallback_complete: bool = False,
    catalog: Catalog,
    settings: Settings,
    refresher: Refresher = submit_refresh,
) -> RefreshOutcome:
    """``UPDATE SNAPSHOT name [AS NONINCREMENTAL]``: refresh by the snapshot's type, or completely."""
    record = find_snapshot(catalog, name)
    if incremental_only and not record.incremental:
        raise InvalidArgument(
            f"snapshot {record.sn_name} is nonincremental", "refresh it with repl_refresh_noninc_snapshot"
        )
    mode = COMPLETE if nonincremental or not record.incremental else INCREMENTAL
    if mode == INCREMENTAL and not fallback_complete:
        refuse_stale_incremental(record)  # known before a job starts
    request = RefreshRequest.configured(record.sn_name, settings, mode=mode, fallback_complete=fallback_complete)
    return refresher(request, catalog, settings)

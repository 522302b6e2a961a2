"""Checks at the start of a refresh, before anything is read or written."""

from __future__ import annotations

from snaprepl.catalog.log_guard import guard_snapshot_log
from snaprepl.catalog.records import LogRecord, SnapshotRecord
from snaprepl.catalog.store import Catalog
from snaprepl.catalog.table_lineage import Place, sources_of
from snaprepl.database.sessions import Database
from snaprepl.errors import TableNotFound
from snaprepl.refresh.cascade_check import check_cascades


def check_sources(catalog: Catalog, snapshot: SnapshotRecord) -> SnapshotRecord:
    """Refuse to refresh a snapshot one of whose source tables is gone (a refresh would report
    success having read nothing); check its log's triggers in the same session
    (:mod:`snaprepl.catalog.log_guard`). Returns the snapshot as the catalog now has it (a bypass of the
    log's triggers found now marks it as needing a complete refresh).

    :raises TableNotFound: naming the missing table, the snapshot, and its still registered log.
    :raises LogBypassed: a trigger of its log is missing or disabled.
    """
    database = Database.for_conn_id(snapshot.sn_source_conn)
    dialect = database.dialect
    log = catalog.log(snapshot.sn_source_table) if snapshot.incremental and snapshot.sn_source_table else None
    places = _sources(snapshot, log)
    with database.session() as session:
        default: str | None = None
        for place in places:
            if place.schema is not None:
                schema = place.schema
            else:
                schema = default = default or dialect.default_schema(session)
            if dialect.find_table(session, schema, place.table) is None:
                log = log or (catalog.log(snapshot.sn_source_table) if snapshot.sn_source_table else None)
                note = f"; its snapshot log {log.snl_rlog} is still registered" if log else ""
                raise TableNotFound(
                    f"source table {schema}.{place.table}@{snapshot.sn_source_conn} of snapshot "
                    f"{snapshot.sn_name} is gone{note}",
                    "restore the table, or drop the snapshot"
                    + (f" and then its log (DROP SNAPSHOT LOG FOR {snapshot.sn_source_table})" if log else ""),
                )
        if log is not None:
            marked = guard_snapshot_log(catalog, log, dialect, session)
            check_cascades(dialect, session, log, snapshot.sn_name)
            if marked:
                return catalog.snapshot(snapshot.sn_name) or snapshot
    return snapshot


def _sources(snapshot: SnapshotRecord, log: LogRecord | None) -> list[Place]:
    """The tables ``snapshot`` reads. An incremental snapshot without a condition reads its log's table
    alone (its query is generated from that table and a column list); any other query is parsed, which
    loads sqlglot (0.09 s of a 1-second refresh)."""
    if log is not None and not snapshot.sn_condition:
        return [Place(log.snl_conn, log.snl_schema, log.snl_table)]
    return sources_of(snapshot)

"""Checks at the start of a refresh, before anything is read or written."""

from __future__ import annotations

from snaprepl.catalog.store import Catalog, SnapshotRecord
from snaprepl.db import Database
from snaprepl.errors import TableNotFound
from snaprepl.lineage import query_places


def check_sources(catalog: Catalog, snapshot: SnapshotRecord) -> None:
    """Refuse to refresh a snapshot one of whose source tables is gone (a refresh would report
    success having read nothing).

    :raises TableNotFound: naming the missing table, the snapshot, and its still registered log.
    """
    import sqlglot

    database = Database.for_conn_id(snapshot.sn_source_conn)
    dialect = database.dialect
    tree = sqlglot.parse_one(snapshot.sn_query, read=dialect.sqlglot_dialect or None)
    with database.session() as session:
        default = None
        for place in query_places(snapshot.sn_source_conn, tree):
            if place.schema is None:
                default = default or dialect.default_schema(session)
            schema = place.schema if place.schema is not None else default
            if dialect.find_table(session, schema, place.table) is None:
                log = catalog.log(snapshot.sn_source_table) if snapshot.sn_source_table else None
                note = f"; its snapshot log {log.snl_rlog} is still registered" if log else ""
                raise TableNotFound(
                    f"source table {schema}.{place.table}@{snapshot.sn_source_conn} of snapshot "
                    f"{snapshot.sn_name} is gone{note}",
                    "restore the table, or drop the snapshot"
                    + (f" and then its log (DROP SNAPSHOT LOG FOR {snapshot.sn_source_table})" if log else ""),
                )

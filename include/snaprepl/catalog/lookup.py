"""Finding catalog entries and databases from what a user wrote, without connecting to the database.

A name is folded by its connection's dialect (only the connection's type is needed) and matched
against the catalog's exact names; a name without a schema matches any schema, and is ambiguous if
it matches several.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from snaprepl.catalog.records import LogRecord, SnapshotRecord
from snaprepl.catalog.store import Catalog
from snaprepl.common.table_names import TableRef
from snaprepl.connections.lookup import get_connection
from snaprepl.database.sessions import Database
from snaprepl.dialects import Dialect
from snaprepl.errors import (
    AmbiguousName,
    SnapreplError,
    SnapshotLogNotFound,
    SnapshotNotFound,
    UnsupportedConnection,
)

T = TypeVar("T")


def dialect_of(conn_id: str) -> Dialect:
    return get_connection(conn_id).dialect


def executable_database(conn_id: str) -> Database:
    """The database of ``conn_id``, if snaprepl runs its dialect for real."""
    database = Database.for_conn_id(conn_id)
    if not database.dialect.executable:
        raise UnsupportedConnection(
            f"connection '{conn_id}' is {database.dialect.name}, for which snaprepl generates DDL only",
            f"print it with `snaprepl ddl log --dialect {database.dialect.name} ...` and run it yourself",
        )
    return database


def _match(
    ref: TableRef,
    candidates: Sequence[T],
    names: Callable[[T], tuple[str, str]],
    key: Callable[[T], str],
    kind: str,
    not_found: SnapreplError,
) -> T:
    dialect = dialect_of(ref.conn_id)
    table = dialect.fold(ref.table)
    schema = dialect.fold(ref.schema) if ref.schema else None
    found = [
        c
        for c in candidates
        if dialect.same_name(names(c)[1], table) and (schema is None or dialect.same_name(names(c)[0], schema))
    ]
    if not found:
        raise not_found
    if len(found) > 1:
        raise AmbiguousName(
            f"{ref} matches several {kind}s: {', '.join(key(c) for c in found)}",
            "qualify the name with its schema",
        )
    return found[0]


def find_log(catalog: Catalog, ref: TableRef) -> LogRecord:
    """The snapshot log of the table ``ref`` names.

    :raises SnapshotLogNotFound: if none is registered.
    """
    return _match(
        ref,
        [r for r in catalog.logs() if r.snl_conn == ref.conn_id],
        lambda r: (r.snl_schema, r.snl_table),
        lambda r: r.snl_source,
        "snapshot log",
        SnapshotLogNotFound(f"there is no snapshot log for {ref}", f"create it with CREATE SNAPSHOT LOG FOR {ref}"),
    )


def find_snapshot(catalog: Catalog, ref: TableRef) -> SnapshotRecord:
    """The snapshot whose destination ``ref`` names.

    :raises SnapshotNotFound: if none is registered.
    """
    return _match(
        ref,
        [s for s in catalog.snapshots() if s.sn_dest_conn == ref.conn_id],
        lambda s: (s.sn_dest_schema, s.sn_dest_table),
        lambda s: s.sn_name,
        "snapshot",
        SnapshotNotFound(f"there is no snapshot {ref}", "`snaprepl status` lists the snapshots"),
    )

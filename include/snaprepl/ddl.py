"""``snaprepl ddl``: DDL of a snapshot log, or of a bi-directional log, for any dialect, without
connecting to a database.

This is how the dialects snaprepl does not run (SQL Server, Oracle, DB2, Informix) are served: the
script is printed in the form that database's own client accepts, to be run by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from snaprepl.dialects import Column, TableInfo, get_dialect
from snaprepl.dialects.base import BIDIR
from snaprepl.errors import InvalidArgument
from snaprepl.names import ResolvedTable
from snaprepl.statements.parser import parse_table_ref


def _key_column(spec: str) -> tuple[str, str]:
    parts = spec.strip().split(None, 1)
    if len(parts) != 2:
        raise InvalidArgument(f"key column {spec!r} needs a name and a type", "write it as 'COLUMN TYPE'")
    return parts[0], parts[1]


def snapshot_log_ddl(dialect_name: str, table: str, keys: Sequence[str], *, drop: bool = False) -> str:
    """The script that creates (or with ``drop``, drops) the snapshot log of ``table``.

    See :func:`snapshot_log_statements` for the parameters.
    """
    statements = snapshot_log_statements(dialect_name, table, keys, drop=drop)
    return get_dialect(dialect_name).render_script(statements)


def _table_info(dialect_name: str, table: str, keys: Sequence[str]) -> tuple[Any, TableInfo]:
    dialect = get_dialect(dialect_name)
    ref = parse_table_ref(table)
    if ref.explicit_conn:
        raise InvalidArgument("`snaprepl ddl` takes [schema.]table without @conn_id")
    schema = dialect.fold(ref.schema) if ref.schema else ""
    resolved = ResolvedTable(conn_id="-", schema=schema, table=dialect.fold(ref.table))
    columns = []
    for position, spec in enumerate(keys, start=1):
        name, type_sql = _key_column(spec)
        columns.append(Column(dialect.fold(parse_table_ref(name).table), type_sql, False, position))
    return dialect, TableInfo(resolved, tuple(columns))


def snapshot_log_statements(dialect_name: str, table: str, keys: Sequence[str], *, drop: bool = False) -> list[str]:
    """The statements that create (or with ``drop``, drop) the snapshot log of ``table``.

    :param dialect_name: postgres, mysql, sqlite, mssql, oracle, db2 or informix.
    :param table: ``[schema.]table`` as in statements (quoted names keep their case).
    :param keys: primary key columns as ``'COLUMN TYPE'``, in key order.
    """
    dialect, info = _table_info(dialect_name, table, keys)
    objects = dialect.log_objects(info.table, [c.name for c in info.primary_key])
    if drop:
        return dialect.drop_log_ddl(info.table, objects, source_exists=True)
    return [step.sql for step in dialect.create_log_ddl(info, objects)]


def bidir_log_statements(
    dialect_name: str, table: str, keys: Sequence[str], server: str, *, publisher: bool = True, drop: bool = False
) -> list[str]:
    """The statements that make ``table`` a bi-directionally replicated table of replication server
    ``server``: its ROWGUID column (on a publisher, existing rows get versions of the server), the
    bi-directional log and its triggers; with ``drop``, the statements that remove them.

    :param publisher: the publisher's table (a subscriber's log forgets an insert deleted before
        the next sync; a publisher's keeps the delete).
    """
    dialect, info = _table_info(dialect_name, table, keys)
    objects = dialect.bidir_log_objects(info.table, [c.name for c in info.primary_key])
    target = dialect.qualified(info.table.schema, info.table.table)
    if drop:
        return [
            *dialect.drop_log_ddl(info.table, objects, source_exists=True),
            f"ALTER TABLE {target} DROP COLUMN {dialect.quote(BIDIR.rowguid)}",
        ]
    with_rowguid = TableInfo(info.table, (*info.columns, Column(BIDIR.rowguid, dialect.rowguid_type)))
    steps = [
        *dialect.add_rowguid_steps(info.table, server),
        *dialect.create_bidir_log_ddl(with_rowguid, objects, server, publisher=publisher),
    ]
    return [step.sql for step in steps]


def bidir_log_ddl(
    dialect_name: str, table: str, keys: Sequence[str], server: str, *, publisher: bool = True, drop: bool = False
) -> str:
    """The script of :func:`bidir_log_statements`, for the dialect's own client."""
    statements = bidir_log_statements(dialect_name, table, keys, server, publisher=publisher, drop=drop)
    return get_dialect(dialect_name).render_script(statements)

"""``snaprepl ddl``: DDL of a snapshot log for any dialect, without connecting to a database.

This is how the dialects snaprepl does not run (SQL Server, Oracle, DB2, Informix) are served: the
script is printed in the form that database's own client accepts, to be run by hand.
"""

from __future__ import annotations

from collections.abc import Sequence

from snaprepl.dialects import Column, TableInfo, get_dialect
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


def snapshot_log_statements(dialect_name: str, table: str, keys: Sequence[str], *, drop: bool = False) -> list[str]:
    """The statements that create (or with ``drop``, drop) the snapshot log of ``table``.

    :param dialect_name: postgres, mysql, sqlite, mssql, oracle, db2 or informix.
    :param table: ``[schema.]table`` as in statements (quoted names keep their case).
    :param keys: primary key columns as ``'COLUMN TYPE'``, in key order.
    """
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
    info = TableInfo(resolved, tuple(columns))
    objects = dialect.log_objects(resolved, [c.name for c in columns])
    if drop:
        return dialect.drop_log_ddl(resolved, objects, source_exists=True)
    return [step.sql for step in dialect.create_log_ddl(info, objects)]

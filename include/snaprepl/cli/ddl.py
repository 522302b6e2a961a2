"""``snaprepl ddl``: DDL of a snapshot log, or of a bi-directional log, for any dialect, without
connecting to a database.

This is how the dialects snaprepl does not run (SQL Server, Oracle, DB2, Informix) are served: the
script is printed in the form that database's own client accepts, to be run by hand.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from snaprepl.common.table_names import ResolvedTable
from snaprepl.dialects import Column, TableInfo, get_dialect
from snaprepl.dialects.base import BIDIR
from snaprepl.dialects.types import to_generic
from snaprepl.errors import InvalidArgument
from snaprepl.statements.parser import parse_table_ref

# One column type: words, each optionally with a parenthesized list of numbers or words
# (``numeric(12, 4)``, ``VARCHAR2(10 CHAR)``, ``DATETIME YEAR TO FRACTION(5)``, ``timestamp(6) with time zone``).
_WORD = r"[A-Za-z_][A-Za-z0-9_]*"
_ARGS = r"\(\s*[A-Za-z0-9_]+(?:\s+[A-Za-z]+)?(?:\s*,\s*[A-Za-z0-9_]+)*\s*\)"
_TYPE_RE = re.compile(rf"^{_WORD}\s*(?:{_ARGS})?(?:\s+{_WORD}\s*(?:{_ARGS})?)*$")
# Words of a column definition that are not part of its type.
_NOT_TYPE_WORDS = {
    "NOT", "NULL", "DEFAULT", "PRIMARY", "KEY", "REFERENCES", "CHECK", "CONSTRAINT", "UNIQUE",
    "GENERATED", "AS", "IDENTITY", "AUTO_INCREMENT", "AUTOINCREMENT", "ON", "COMMENT",
}  # fmt: skip


def _key_column(spec: str, dialect_name: str) -> tuple[str, str]:
    parts = spec.strip().split(None, 1)
    if len(parts) != 2:
        raise InvalidArgument(f"key column {spec!r} needs a name and a type", "write it as 'COLUMN TYPE'")
    name, type_sql = parts[0], parts[1].strip()
    words = {w.upper() for w in re.findall(_WORD, type_sql)}
    if not _TYPE_RE.match(type_sql) or words & _NOT_TYPE_WORDS:
        raise InvalidArgument(
            f"key column {name}: {type_sql!r} is not a single column type", "write one type, e.g. 'id NUMBER(10)'"
        )
    try:
        to_generic(type_sql, dialect_name)
    except InvalidArgument as err:
        raise InvalidArgument(f"key column {name}: {err.message}", err.hint) from None
    return name, type_sql


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
        name, type_sql = _key_column(spec, dialect.name)
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
        return [
            *dialect.drop_log_ddl(info.table, objects, source_exists=True),
            *dialect.guard_drop_sql(info.table, objects, source_exists=True),
        ]
    steps = [*dialect.create_log_ddl(info, objects), *dialect.guard_steps(info, objects, ddl_guard=False)]
    return [step.sql for step in steps]


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
            *dialect.guard_drop_sql(info.table, objects, source_exists=True),
            f"ALTER TABLE {target} DROP COLUMN {dialect.quote(BIDIR.rowguid)}",
        ]
    with_rowguid = TableInfo(info.table, (*info.columns, Column(BIDIR.rowguid, dialect.rowguid_type)))
    steps = [
        *dialect.add_rowguid_steps(info.table, server),
        *dialect.create_bidir_log_ddl(with_rowguid, objects, server, publisher=publisher),
        *dialect.guard_steps(with_rowguid, objects, ddl_guard=False),
    ]
    return [step.sql for step in steps]


def bidir_log_ddl(
    dialect_name: str, table: str, keys: Sequence[str], server: str, *, publisher: bool = True, drop: bool = False
) -> str:
    """The script of :func:`bidir_log_statements`, for the dialect's own client."""
    statements = bidir_log_statements(dialect_name, table, keys, server, publisher=publisher, drop=drop)
    return get_dialect(dialect_name).render_script(statements)

"""The change query of an incremental refresh, and the queries on a snapshot log's window and on the
destination's staging table of changes.

Pure functions: (dialect, log, snapshot's query parts, window start) -> SQL text, golden-tested per
dialect (tests/unit/test_change_queries.py). The change query is run by the source database: the log
entries since ``since`` LEFT JOINed with the snapshot's table restricted to their keys, so only changed
rows travel, current as of now. Its result has these columns besides the snapshot's own:
``SNAPREPL_K<i>`` (the logged key), ``SNAPREPL_SNAPTIME``, ``SNAPREPL_ROWGUID`` and ``SNAPREPL_PRESENT``
(1 when the row exists in the source and matches the snapshot's condition).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime

from snaprepl.catalog.records import LogRecord
from snaprepl.dialects import Column, Dialect
from snaprepl.dialects.types import GenericType, render

SNAPTIME = "SNAPREPL_SNAPTIME"
ROWGUID = "SNAPREPL_ROWGUID"
PRESENT = "SNAPREPL_PRESENT"
#: Columns of the destination's staging table: the commit batch and the operation ('U' or 'D').
BATCH = "SNAPREPL_BATCH"
OP = "SNAPREPL_OP"
#: Entries of one SNAPTIME group (:func:`window_groups_sql`).
GROUP_ROWS = "SNAPREPL_N"


def key_alias(position: int) -> str:
    """The change query's name for the ``position``-th key column as the log recorded it."""
    return f"SNAPREPL_K{position}"


def change_query(
    dialect: Dialect,
    log: LogRecord,
    columns: Sequence[str],
    condition: str | None,
    since: datetime,
    window: str | None = None,
) -> str:
    """The log entries of ``log`` since ``since``, each with the current row of its key.

    :param columns: the destination's columns the source table still has.
    :param condition: the snapshot's WHERE condition, or None; a row that fails it is not PRESENT.
    :param window: which entries, as a condition on the log aliased ``snaprepl_l`` (instead of ``since``).
    """
    q, objects, log_cols = dialect.quote, log.objects, dialect.log_columns
    where = f" WHERE ({condition})" if condition else ""
    needed = list(dict.fromkeys([*log.key_columns, *columns]))
    inner = (
        f"SELECT 1 AS {q(PRESENT)}, {', '.join(q(c) for c in needed)} "
        f"FROM {dialect.qualified(log.snl_schema, log.snl_table)}{where}"
    )
    on = " AND ".join(
        f"snaprepl_s.{q(k)} = snaprepl_l.{q(lk)}" for k, lk in zip(log.key_columns, objects.key_columns, strict=True)
    )
    selected = [f"snaprepl_l.{q(lk)} AS {q(key_alias(i))}" for i, lk in enumerate(objects.key_columns)]
    selected += [
        f"snaprepl_l.{q(log_cols.snaptime)} AS {q(SNAPTIME)}",
        f"snaprepl_l.{q(log_cols.rowguid)} AS {q(ROWGUID)}",
        f"snaprepl_s.{q(PRESENT)}",
        *(f"snaprepl_s.{q(c)}" for c in columns),
    ]
    return (
        f"SELECT {', '.join(selected)} FROM {dialect.qualified(log.snl_schema, objects.rlog)} snaprepl_l "
        f"LEFT JOIN ({inner}) snaprepl_s ON {on} "
        f"WHERE {window or f'snaprepl_l.{q(log_cols.snaptime)} >= {dialect.timestamp_literal(since)}'}"
    )


def change_columns(
    dialect: Dialect, log: LogRecord, source_columns: Mapping[str, Column], columns: Sequence[str]
) -> list[Column]:
    """The columns of :func:`change_query`'s result, in its order, typed in ``dialect``.

    :param source_columns: the source table's columns by name (the key's among them).
    """
    read = [Column(key_alias(i), source_columns[k].type_sql) for i, k in enumerate(log.key_columns)]
    return [
        *read,
        Column(SNAPTIME, render(GenericType("timestamp"), dialect.name)),
        Column(ROWGUID, render(GenericType("varchar(n)", length=255), dialect.name)),
        Column(PRESENT, render(GenericType("integer"), dialect.name)),
        *(source_columns[c] for c in columns),
    ]


def log_entries_sql(
    dialect: Dialect, log: LogRecord, since: datetime | str, *, count: bool, at_most: int | None = None
) -> str:
    """The RLOG_ROWGUIDs of ``log``'s entries since ``since`` (or in a window given as a condition on
    the log's columns), or with ``count`` how many there are, counting no further than ``at_most``
    when given (the count then reads that many entries, not every one)."""
    q, cols = dialect.quote, dialect.log_columns
    what = "COUNT(*)" if count else q(cols.rowguid)
    where = since if isinstance(since, str) else f"{q(cols.snaptime)} >= {dialect.timestamp_literal(since)}"
    table = dialect.qualified(log.snl_schema, log.objects.rlog)
    if count and at_most is not None:
        first = dialect.first_rows.format(select=f"SELECT 1 AS snaprepl_one FROM {table} WHERE {where}", rows=at_most)
        return f"SELECT COUNT(*) FROM ({first}) snaprepl_n"
    return f"SELECT {what} FROM {table} WHERE {where}"


def staging_columns(dialect: Dialect, data_columns: Sequence[Column]) -> list[Column]:
    """The columns of a staging table that batches are applied from (an incremental refresh's, a
    group's, a repair's): batch, operation, log entry, SNAPTIME, then ``data_columns``."""
    return [
        Column(BATCH, render(GenericType("integer"), dialect.name)),
        Column(OP, dialect.dmltype_type),
        Column(ROWGUID, dialect.rowguid_type),
        Column(SNAPTIME, render(GenericType("timestamp"), dialect.name)),
        *(Column(c.name, c.type_sql) for c in data_columns),
    ]


def staging_index_sql(dialect: Dialect, schema: str | None, stage: str) -> str:
    """Index the staging table by batch: each batch's statements then read only its rows, not the whole
    table once per batch."""
    return dialect.create_index_sql(schema, stage, dialect.shorten(f"{stage}_batch"), [BATCH, OP])


def staged_batches_sql(dialect: Dialect, staged: str) -> str:
    """Rows per batch and operation of the staging table ``staged`` (qualified), with their newest
    SNAPTIME, in batch order."""
    q = dialect.quote
    newest = dialect.snaptime_read.format(f"MAX({q(SNAPTIME)})")
    return (
        f"SELECT {q(BATCH)}, {q(OP)}, COUNT(*), {newest} FROM {staged} GROUP BY {q(BATCH)}, {q(OP)} ORDER BY {q(BATCH)}"
    )


def staged_all_entries_sql(dialect: Dialect, staged: str) -> str:
    """The log entries (batch, ROWGUID, SNAPTIME) of every batch of the staging table ``staged``."""
    q = dialect.quote
    return f"SELECT {q(BATCH)}, {q(ROWGUID)}, {dialect.snaptime_read.format(q(SNAPTIME))} FROM {staged}"


def incremental_snapshot_query(
    dialect: Dialect, columns: Sequence[str], schema: str | None, table: str, where: str | None
) -> str:
    """An incremental snapshot's query: ``SELECT <columns> FROM <table> [WHERE (<where>)]`` (its
    columns change when the source's do, :mod:`snaprepl.refresh.columns`)."""
    select = ", ".join(dialect.quote(c) for c in columns)
    return f"SELECT {select} FROM {dialect.qualified(schema, table)}" + (f" WHERE ({where})" if where else "")


def incremental_query_columns(dialect: Dialect, query: str) -> list[str] | None:
    """The columns of ``query`` if it is exactly as :func:`incremental_snapshot_query` writes it, read
    back without a SQL parser (every incremental refresh asks, and sqlglot takes 0.09 s to load);
    None for any other text. What is read is written again and compared, so a name is never misread."""
    start, end = dialect.identifier_quotes
    quoted = re.compile(f"{re.escape(start)}((?:[^{re.escape(end)}]|{re.escape(end * 2)})*){re.escape(end)}")
    names: list[str] = []
    pos = len("SELECT ")
    while (found := quoted.match(query, pos)) is not None:
        names.append(found.group(1).replace(end * 2, end))
        pos = found.end()
        if not query.startswith(", ", pos):
            break
        pos += 2
    select = ", ".join(dialect.quote(n) for n in names)
    return names if names and query.startswith(f"SELECT {select} FROM ") else None


def window_groups_sql(dialect: Dialect, log: LogRecord, since: datetime, window: str | None = None) -> str:
    """The SNAPTIME groups of the entries :func:`change_query` reads (the same log, the same window
    condition on the log aliased ``snaprepl_l``): ``SNAPREPL_SNAPTIME`` and ``SNAPREPL_N``, its entries.

    A few rows a source transaction, read from the log alone: what numbers commit batches without
    sorting the change set (:func:`staged_changes_query`).
    """
    q, snaptime = dialect.quote, f"snaprepl_l.{dialect.quote(dialect.log_columns.snaptime)}"
    return (
        f"SELECT {snaptime} AS {q(SNAPTIME)}, COUNT(*) AS {q(GROUP_ROWS)} "
        f"FROM {dialect.qualified(log.snl_schema, log.objects.rlog)} snaprepl_l "
        f"WHERE {window or f'{snaptime} >= {dialect.timestamp_literal(since)}'} GROUP BY {snaptime}"
    )


def staged_changes_query(
    dialect: Dialect,
    change: tuple[str, str],
    key_columns: Sequence[str],
    columns: Sequence[str],
    lost: Collection[str],
    commit_rows: int,
    *,
    entries: bool = True,
) -> str:
    """The rows of the change query as the destination's staging table holds them, numbered into
    commit batches by the source database, for the bulk pipe and Spark's JDBC read alike.

    A group's entries before it (a running sum over the window's SNAPTIME groups, in SNAPTIME order)
    are the ``RANK()`` of its first row less one: the group belongs to the batch in which its first
    row falls, and no commit splits it. The groups are numbered and joined to the rows by SNAPTIME, so
    the change set itself is never sorted (a ``RANK()`` over it sorted every row, spilling to disk:
    13 of 14.4 s of a 1,000,000-change query).

    :param change: the change query, and its window's SNAPTIME groups (:func:`window_groups_sql`).
    :param key_columns: the snapshot's key, whose values come from the log (deletes have no row).
    :param columns: the staging table's data columns (the destination's), in its order.
    :param lost: those the source no longer has: NULL.
    :param entries: whether the rows carry their log entries' RLOG_ROWGUIDs, which only the replay log
        needs: without it, NULL (36 bytes less per row through the pipe and into staging).
    """
    q = dialect.quote
    rows, groups = change
    keys = {name: key_alias(i) for i, name in enumerate(key_columns)}
    integer = render(GenericType("integer"), dialect.name)
    before = f"SUM(g.{q(GROUP_ROWS)}) OVER (ORDER BY g.{q(SNAPTIME)}) - g.{q(GROUP_ROWS)}"
    batch = dialect.integer_quotient.format(a=before, b=int(commit_rows))
    numbered = f"SELECT g.{q(SNAPTIME)}, CAST({batch} AS {integer}) AS {q(BATCH)} FROM ({groups}) g"
    values = [f"{'NULL' if name in lost else f'c.{q(keys.get(name, name))}'} AS {q(name)}" for name in columns]
    selected = [
        f"b.{q(BATCH)}",
        f"CASE WHEN c.{q(PRESENT)} IS NOT NULL THEN 'U' ELSE 'D' END AS {q(OP)}",
        f"c.{q(ROWGUID)}" if entries else f"NULL AS {q(ROWGUID)}",
        f"c.{q(SNAPTIME)}",
        *values,
    ]
    return f"SELECT {', '.join(selected)} FROM ({rows}) c JOIN ({numbered}) b ON b.{q(SNAPTIME)} = c.{q(SNAPTIME)}"

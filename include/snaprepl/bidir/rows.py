"""Reading and writing rows of a :class:`~snaprepl.bidir.sides.Side` in a transaction: current rows by
key, tombstones, and replicated writes (which the triggers do not log)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from snaprepl.bidir.sides import Side
from snaprepl.database.sessions import Session


def norm(value: Any) -> Any:
    """A key value in a form equal whichever side (or driver) it was read from."""
    if isinstance(value, datetime):
        return value.isoformat(sep=" ", timespec="microseconds")
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, bool | int | float):
        return value
    if value is None:
        return None
    return str(value)


def norm_key(key: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(norm(v) for v in key)


def _key_filters(dialect: Any, columns: Sequence[str], keys: Sequence[tuple[Any, ...]]) -> Iterator[str]:
    """``(columns) IN (...)`` predicates over distinct ``keys``, 500 keys each."""
    unique = list({norm_key(k): k for k in keys}.values())
    target = ", ".join(dialect.quote(c) for c in columns)
    for start in range(0, len(unique), 500):
        chunk = unique[start : start + 500]
        if len(columns) == 1:
            yield f"{target} IN ({', '.join(dialect.literal_value(k[0]) for k in chunk)})"
        else:
            values = ", ".join(f"({', '.join(dialect.literal_value(v) for v in k)})" for k in chunk)
            yield f"({target}) IN ({values})"


def current_rows(
    session: Session, side: Side, keys: Sequence[tuple[Any, ...]]
) -> dict[tuple[Any, ...], dict[str, Any] | None]:
    """``side``'s current rows for ``keys``, locked for this transaction where the dialect can."""
    d = side.dialect
    names = [c.name for c in side.columns]
    key_idx = [names.index(k) for k in side.key]
    columns = ", ".join(d.quote(n) for n in names)
    found: dict[tuple[Any, ...], dict[str, Any] | None] = {}
    for condition in _key_filters(d, side.key, keys):
        for row in session.query(f"SELECT {columns} FROM {side.table} WHERE {condition}{d.for_update}"):
            found[tuple(norm(row[i]) for i in key_idx)] = dict(zip(names, row, strict=True))
    return found


def tombstones(
    session: Session,
    publisher: Side,
    keys: Sequence[tuple[Any, ...]],
    current: dict[tuple[Any, ...], dict[str, Any] | None],
) -> dict[tuple[Any, ...], str]:
    """For keys the publisher has no row for, the version of the delete its log holds: a pull that
    deleted a row logs the delete under the incoming entry's own version, so a pull run again
    after being killed recognises the delete as applied rather than as a conflict."""
    d = publisher.dialect
    missing = [k for k in keys if norm_key(k) not in current]
    log_keys = publisher.log.objects.key_columns
    select = f"SELECT {', '.join(d.quote(k) for k in log_keys)}, {d.quote(d.log_columns.rowguid)}"
    found: dict[tuple[Any, ...], str] = {}
    for condition in _key_filters(d, log_keys, missing):
        sql = f"{select} FROM {publisher.rlog} WHERE {condition} AND {d.quote(d.log_columns.dmltype)} = 'D'"
        for row in session.query(sql):
            found[norm_key(row[:-1])] = row[-1]
    return found


def write_row(session: Session, side: Side, row: dict[str, Any], exists: bool) -> None:
    """Insert or update ``row`` with its ROWGUID: a replicated write, which the triggers do not log."""
    d = side.dialect
    names = [c.name for c in side.columns]
    params = {f"c{i}": d.python_param(row.get(n)) for i, n in enumerate(names)}
    if exists:
        sets = ", ".join(f"{d.quote(n)} = :c{i}" for i, n in enumerate(names) if n not in side.key)
        where = " AND ".join(f"{d.quote(k)} = :c{names.index(k)}" for k in side.key)
        session.execute(f"UPDATE {side.table} SET {sets} WHERE {where}", params)
    else:
        marks = ", ".join(f":c{i}" for i in range(len(names)))
        session.execute(f"INSERT INTO {side.table} ({', '.join(d.quote(n) for n in names)}) VALUES ({marks})", params)


def delete_row(session: Session, side: Side, key: tuple[Any, ...]) -> None:
    """Delete the row of ``key``: a replicated delete, which the triggers do not log."""
    params = {f"k{i}": side.dialect.python_param(v) for i, v in enumerate(key)}
    match = " AND ".join(f"{side.dialect.quote(k)} = :k{i}" for i, k in enumerate(side.key))
    for statement in side.dialect.replicated_delete_sql(side.table, match):
        session.execute(statement, params)


def log_change(
    session: Session, side: Side, op: str, key: tuple[Any, ...], guid: str, old: str | None, origin: str
) -> None:
    """Record a change applied to the publisher in its log, for pushes (folded like users' changes)."""
    d = side.dialect
    keys = [f":k{i}" for i in range(len(key))]
    params = {f"k{i}": d.python_param(v) for i, v in enumerate(key)}
    params.update({"guid": guid, "old": old, "origin": origin})
    for statement in d.bidir_put_sql(side.rlog, side.log.objects, op, keys, ":guid", ":old", ":origin", publisher=True):
        session.execute(statement, params)


#: Bound parameters per INSERT of :func:`insert_rows` (well under every dialect's limit).
_PARAMS_PER_INSERT = 900


def insert_rows(
    session: Session, dialect: Any, table: str, names: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    """Insert ``rows`` (values of columns ``names``) into ``table``, many rows per statement."""
    columns = ", ".join(dialect.quote(n) for n in names)
    per_insert = max(1, _PARAMS_PER_INSERT // len(names))
    for start in range(0, len(rows), per_insert):
        chunk = rows[start : start + per_insert]
        params = {f"p{i}_{j}": dialect.python_param(v) for i, row in enumerate(chunk) for j, v in enumerate(row)}
        marks = ", ".join(f"({', '.join(f':p{i}_{j}' for j in range(len(names)))})" for i in range(len(chunk)))
        session.execute(f"INSERT INTO {table} ({columns}) VALUES {marks}", params)

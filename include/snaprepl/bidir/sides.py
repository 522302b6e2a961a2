"""One server's copy of a published table (:class:`Side`) and reading its log entries with its rows."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property
from typing import Any

from snaprepl.catalog.records import LogRecord
from snaprepl.common.table_names import Ident
from snaprepl.connections.lookup import get_connection
from snaprepl.database.sessions import Database
from snaprepl.dialects import Column, Dialect
from snaprepl.dialects.base import BIDIR
from snaprepl.dialects.types import GenericType, render, to_generic
from snaprepl.spark.io import SparkJdbc

K = "SNAPREPL_K"
SYNC = "SNAPREPL_SYNC"
SNAPTIME = "SNAPREPL_SNAPTIME"
OP = "SNAPREPL_OP"
GUID = "SNAPREPL_GUID"
OLD = "SNAPREPL_OLD"
ORIGIN = "SNAPREPL_ORIGIN"
PRESENT = "SNAPREPL_PRESENT"

#: Python types of values of generic column types, as the publisher's driver returns them, so a
#: resolver compares an incoming row with the publisher's on equal terms (Spark carries numerics
#: without precision as text, and SQLite's NUMERIC holds integers and reals).
_PYTHON_TYPES: dict[str, Any] = {
    "numeric": lambda v: Decimal(str(v)),
    "numeric(p, s)": lambda v: Decimal(str(v)),
    "integer": int,
    "smallint": int,
    "bigint": int,
    "real": float,
    "double precision": float,
    "boolean": bool,
}


@dataclass
class Side:
    """One server's copy of a published table."""

    name: str
    db: Database
    io: SparkJdbc
    log: LogRecord
    columns: list[Column]

    @property
    def dialect(self) -> Dialect:
        return self.db.dialect

    @property
    def key(self) -> list[str]:
        return self.log.key_columns

    @property
    def table(self) -> str:
        qualified: str = self.dialect.qualified(self.log.snl_schema, self.log.snl_table)
        return qualified

    @property
    def rlog(self) -> str:
        qualified: str = self.dialect.qualified(self.log.snl_schema, self.log.objects.rlog)
        return qualified

    def as_own_values(self, row: dict[str, Any] | None) -> dict[str, Any] | None:
        """``row`` (read from another side) with values of the Python types of this side's columns."""
        if row is None:
            return None
        out = dict(row)
        for name, convert in self._converters.items():
            if out.get(name) is not None:
                out[name] = convert(out[name])
        return out

    @cached_property
    def _converters(self) -> dict[str, Any]:
        found = {c.name: _PYTHON_TYPES.get(to_generic(c.type_sql, self.dialect.name).name) for c in self.columns}
        return {name: convert for name, convert in found.items() if convert is not None}

    @classmethod
    def open(cls, name: str, log: LogRecord, *, role: str | None = None) -> Side:
        """:param role: what the side is to the sync ("publisher x", "subscriber y"), for messages."""
        conn = get_connection(log.snl_conn)
        database = Database(conn, role=role)
        with database.session() as session:
            info = database.dialect.describe(
                session, Ident(log.snl_schema, True), Ident(log.snl_table, True), log.snl_conn
            )
        return cls(name, database, SparkJdbc(conn), log, list(info.columns))


def read_changes(spark: Any, side: Side, where: str) -> list[dict[str, Any]]:
    """Log entries of ``side`` matching ``where`` (on log alias ``l``), each with ``side``'s current row."""
    if not count_changes(side, where):  # no Spark job for an empty log, the usual case of frequent syncs
        return []
    rows = [r.asDict() for r in side.io.read(spark, _changes_query(side, where), _read_columns(side)).collect()]
    rows.sort(key=lambda r: (r[SNAPTIME], r[SYNC] or ""))
    return rows


def count_changes(side: Side, where: str) -> int:
    """How many log entries of ``side`` match ``where`` (on log alias ``l``): SQL only, no Spark."""
    with side.db.session() as session:
        return int(session.query(f"SELECT COUNT(*) FROM {side.rlog} l WHERE {where}")[0][0])


def change_guids(side: Side, where: str) -> list[str]:
    """The RLOG_ROWGUIDs of the log entries of ``side`` matching ``where``: SQL only, no Spark."""
    rowguid = side.dialect.quote(side.dialect.log_columns.rowguid)
    with side.db.session() as session:
        return [str(row[0]) for row in session.query(f"SELECT l.{rowguid} FROM {side.rlog} l WHERE {where}")]


def _changes_query(side: Side, where: str) -> str:
    d = side.dialect
    q = d.quote
    objects, cols, bidir = side.log.objects, d.log_columns, BIDIR
    names = [c.name for c in side.columns]
    inner = f"SELECT 1 AS {q(PRESENT)}, {', '.join(q(n) for n in names)} FROM {side.table}"
    on = " AND ".join(f"s.{q(k)} = l.{q(lk)}" for k, lk in zip(side.key, objects.key_columns, strict=True))
    select = [f"l.{q(lk)} AS {q(f'{K}{i}')}" for i, lk in enumerate(objects.key_columns)]
    select += [
        f"l.{q(bidir.sync_id)} AS {q(SYNC)}",
        f"l.{q(cols.snaptime)} AS {q(SNAPTIME)}",
        f"l.{q(cols.dmltype)} AS {q(OP)}",
        f"l.{q(cols.rowguid)} AS {q(GUID)}",
        f"l.{q(bidir.old_rowguid)} AS {q(OLD)}",
        f"l.{q(bidir.origin)} AS {q(ORIGIN)}",
        f"s.{q(PRESENT)}",
        *(f"s.{q(n)}" for n in names),
    ]
    return f"SELECT {', '.join(select)} FROM {side.rlog} l LEFT JOIN ({inner}) s ON {on} WHERE {where}"


def _read_columns(side: Side) -> list[Column]:
    d = side.dialect
    text = render(GenericType("varchar(n)", length=255), d.name)
    by_name = {c.name: c for c in side.columns}
    read_columns = [Column(f"{K}{i}", by_name[k].type_sql) for i, k in enumerate(side.key)]
    read_columns += [
        Column(SYNC, text),
        Column(SNAPTIME, render(GenericType("timestamp"), d.name)),
        Column(OP, text),
        Column(GUID, text),
        Column(OLD, text),
        Column(ORIGIN, text),
        Column(PRESENT, render(GenericType("integer"), d.name)),
        *side.columns,
    ]
    return read_columns


def key_of(entry: dict[str, Any], side: Side) -> tuple[Any, ...]:
    """The key of a log entry read by :func:`read_changes`."""
    return tuple(entry[f"{K}{i}"] for i in range(len(side.key)))


def row_of(entry: dict[str, Any], side: Side) -> dict[str, Any] | None:
    """The side's current row read with a log entry, or None if it has none."""
    if entry.get(PRESENT) is None:
        return None
    return {c.name: entry[c.name] for c in side.columns}


def batches(entries: list[dict[str, Any]], commit_rows: int) -> Iterator[list[dict[str, Any]]]:
    """Entries in SNAPTIME order, cut into batches of about ``commit_rows`` along SNAPTIME groups."""
    batch: list[dict[str, Any]] = []
    for entry in entries:
        if len(batch) >= commit_rows and entry[SNAPTIME] != batch[-1][SNAPTIME]:
            yield batch
            batch = []
        batch.append(entry)
    if batch:
        yield batch

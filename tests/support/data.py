"""Typed test tables in every real dialect, and comparing their rows across dialects."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from tests.support.databases import RealDatabase

COLUMNS = ["id", "name", "amount", "happened", "payload", "flag", "note"]

DDL = {
    "postgres": "CREATE TABLE {t} (id int PRIMARY KEY, name varchar(100), amount numeric(12,4), "
    "happened timestamp(6), payload bytea, flag boolean, note text)",
    "mysql": "CREATE TABLE {t} (id int PRIMARY KEY, name varchar(100), amount decimal(12,4), "
    "happened datetime(6), payload varbinary(100), flag boolean, note text) CHARACTER SET utf8mb4",
    "sqlite": "CREATE TABLE {t} (id INTEGER PRIMARY KEY, name VARCHAR(100), amount DECIMAL(12,4), "
    "happened TIMESTAMP, payload BLOB, flag BOOLEAN, note TEXT)",
}

ROWS: list[tuple[Any, ...]] = [
    (1, "ascii", Decimal("10.5000"), datetime(2026, 1, 2, 3, 4, 5, 123456), b"\x00\x01\xff", True, None),
    (2, "ünïcødé ✓ 中文 🙂", Decimal("999.9999"), datetime(2025, 12, 31, 23, 59, 59, 999999), b"", False, "n"),
    (3, "out of the filter", Decimal("5000.0000"), datetime(2026, 6, 1, 0, 0, 0, 1), None, None, None),
    (4, "quote ' and \" and \\ backslash", Decimal("0.0001"), datetime(2026, 2, 28, 12, 0, 0), b"\x7f", True, ""),
    (5, "to delete", Decimal("1.0000"), datetime(2026, 3, 1, 1, 1, 1, 500000), b"\x10", False, "bye"),
    (6, "to move", Decimal("2.2500"), datetime(2026, 3, 2, 2, 2, 2, 2), None, True, None),
    (7, None, None, None, None, None, None),
]


def _param(db: RealDatabase) -> str:
    return "?" if db.dialect == "sqlite" else "%s"


def _to_db(db: RealDatabase, row: tuple[Any, ...]) -> tuple[Any, ...]:
    if db.dialect != "sqlite":
        return row
    out = []
    for value in row:
        if isinstance(value, datetime):
            out.append(value.isoformat(sep=" ", timespec="microseconds"))
        elif isinstance(value, Decimal):
            out.append(str(value))
        elif isinstance(value, bool):
            out.append(int(value))
        else:
            out.append(value)
    return tuple(out)


def create_typed_table(db: RealDatabase, table: str, rows: list[tuple[Any, ...]] = ROWS) -> None:
    db.run(DDL[db.dialect].format(t=db.q(table)))
    insert_rows(db, table, rows)


def insert_rows(db: RealDatabase, table: str, rows: list[tuple[Any, ...]]) -> None:
    marks = ", ".join([_param(db)] * len(COLUMNS))
    with db.connect() as conn:
        cur = conn.cursor()
        for row in rows:
            cur.execute(f"INSERT INTO {db.q(table)} VALUES ({marks})", _to_db(db, row))


def execute(db: RealDatabase, sql: str, *params: Any) -> None:
    with db.connect() as conn:
        conn.cursor().execute(sql.replace("?", _param(db)), _to_db(db, tuple(params)))


def normalize(value: Any, column: str) -> Any:
    """A value as Python sees it, whatever dialect it came from."""
    if value is None:
        return None
    if column == "amount":
        return Decimal(str(value)).quantize(Decimal("0.0001"))
    if column == "happened":
        return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    if column == "payload":
        return bytes(value)
    if column == "flag":
        return bool(value)
    if column == "id":
        return int(value)
    return value


def table_rows(db: RealDatabase, table: str, where: str = "") -> dict[int, tuple[Any, ...]]:
    """id -> normalized row."""
    cols = ", ".join(db.q(c) for c in COLUMNS)
    rows = db.rows(f"SELECT {cols} FROM {db.q(table)} {where}")
    return {int(r[0]): tuple(normalize(v, c) for v, c in zip(r, COLUMNS, strict=True)) for r in rows}

"""PostgreSQL to MariaDB through the LOAD DATA pipe (``COPY ... TO STDOUT (FORMAT csv)`` piped into
``LOAD DATA LOCAL INFILE`` inside Spark tasks): a snapshot's first copy and its change sets, values
that CSV must quote or that spell NULL arriving unchanged; a type whose text forms differ takes Spark."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

import pytest

from snaprepl import api
from snaprepl.dialects.postgres_mysql_pipe import PostgresMySqlPipe
from snaprepl.refresh.model import COPIED_BY_PIPE, COPIED_BY_SPARK
from tests.support.pipes import count_loads

pytestmark = pytest.mark.spark

AWKWARD = [
    "plain",
    "comma, \"quotes\" and 'apostrophes'",
    'ends with a quote"',
    "new\nline\r\nand\ttab",
    "back\\slash \\N \\x00 \\.",
    "NULL",
    "unicode: żółć 漢字 🚀",
    "",
]
TYPES = (
    "id bigint PRIMARY KEY, t text, v varchar(200), n numeric(30,10), f double precision, "
    "ts timestamp(6), d date, i int"
)


@pytest.fixture
def piped(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The rows each pipe call loaded (the real pipe runs; this only counts)."""
    return count_loads(monkeypatch, PostgresMySqlPipe)


def _fill(pg_db, src: str) -> None:
    pg_db.run(f"CREATE TABLE {src} ({TYPES})")
    for i, text in enumerate(AWKWARD, start=1):
        pg_db.run(
            f"INSERT INTO {src} VALUES (%s, %s, %s, %s, %s, "
            "timestamp '2026-01-02 03:04:05.123456' + %s * interval '1 day', date '1999-12-31' + %s, %s)",
            params=[i, text, text[::-1], f"{i}2345678901234567890.0123456789", [1.0 / 3, 1e308, -0.0, 5e-324][i % 4],
                    i, i, -i],
        )  # fmt: skip
    pg_db.run(f"INSERT INTO {src} (id) VALUES (100)")  # NULL in every column


def _rows(db, table: str) -> list[tuple[object, ...]]:
    """Rows as comparable Python values (MariaDB's datetime and PostgreSQL's timestamp alike)."""
    out = []
    for row in db.rows(f"SELECT id, t, v, n, f, ts, d, i FROM {table} ORDER BY id"):
        out.append(tuple(v if not isinstance(v, (datetime, date, Decimal)) else str(v) for v in row))
    return out


def test_snapshot_and_change_sets_load_through_the_pipe_unchanged(
    pg_db, mysql_db, catalog, settings, refresher, unique_name, piped
) -> None:
    src, dst = f"{unique_name}_s", f"{unique_name}_d"
    _fill(pg_db, src)
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    api.repl_create_snapshot_log(f"{src}@{pg_db.conn_id}", catalog=catalog)
    created = api.repl_create_inc_snapshot(None, f"{src}@{pg_db.conn_id}", None, f"{dst}@{mysql_db.conn_id}", **kw)
    assert created.outcome.copied_by == COPIED_BY_PIPE
    assert _rows(mysql_db, dst) == _rows(pg_db, src)
    first = len(piped)

    pg_db.run(
        f"UPDATE {src} SET t = 'NULL', v = NULL WHERE id = 1",
        f"UPDATE {src} SET t = NULL, v = 'NULL', n = -0.0000000001 WHERE id = 6",
        f"UPDATE {src} SET t = E'changed,\"again\"\\n\\\\' WHERE id = 2",
        f"DELETE FROM {src} WHERE id = 3",
        f"INSERT INTO {src} (id, t, ts) VALUES (7000, E'seven\\\\', timestamp '1970-01-01 00:00:00')",
    )
    outcome = api.repl_refresh_inc_snapshot(f"{dst}@{mysql_db.conn_id}", **kw)
    assert (outcome.rows_upserted, outcome.rows_deleted) == (4, 1)
    assert piped[first:] == [5], "the change set (4 upserts, 1 delete) was staged by the pipe"
    assert _rows(mysql_db, dst) == _rows(pg_db, src)
    assert mysql_db.rows(f"SELECT t IS NULL, v FROM {dst} WHERE id = 6") == [(1, "NULL")]


def test_a_type_whose_text_differs_takes_spark(pg_db, mysql_db, catalog, settings, refresher, unique_name) -> None:
    src, dst = f"{unique_name}_s", f"{unique_name}_d"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, ok boolean)", f"INSERT INTO {src} VALUES (1, true), (2, NULL)")
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    api.repl_create_snapshot_log(f"{src}@{pg_db.conn_id}", catalog=catalog)
    created = api.repl_create_inc_snapshot(None, f"{src}@{pg_db.conn_id}", None, f"{dst}@{mysql_db.conn_id}", **kw)
    assert created.outcome.copied_by == COPIED_BY_SPARK
    pg_db.run(f"UPDATE {src} SET ok = false WHERE id = 1")
    api.repl_refresh_inc_snapshot(f"{dst}@{mysql_db.conn_id}", **kw)
    assert mysql_db.rows(f"SELECT id, ok FROM {dst} ORDER BY id") == [(1, 0), (2, None)]

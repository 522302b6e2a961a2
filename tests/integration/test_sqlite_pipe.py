"""PostgreSQL to SQLite through the fetch pipe (a server-side cursor into ``executemany`` inside a Spark
task): a snapshot's first copy and its change sets store every value exactly as Spark's JDBC path
stores it (the same SQLite storage class and the same text or number), awkward strings and NULLs
included; a type the pipe does not carry takes Spark."""

from __future__ import annotations

import pytest

from snaprepl import api
from snaprepl.dialects.postgres import PostgresDialect
from snaprepl.dialects.postgres_sqlite_pipe import PostgresSqlitePipe
from snaprepl.refresh import change_pipe, staged_entries
from snaprepl.refresh.model import COPIED_BY_PIPE, COPIED_BY_SPARK
from tests.support.pipes import count_loads

pytestmark = pytest.mark.spark

AWKWARD = [
    "plain",
    "comma, \"quotes\" and 'apostrophes'",
    "new\nline\r\nand\ttab",
    "back\\slash \\N \\x00 \\.",
    "NULL",
    "unicode: żółć 漢字 🚀",
    "",
]
TYPES = (
    "id bigint PRIMARY KEY, t text, v varchar(200), f double precision, ts timestamp(6), d date, i int, "
    "s smallint, j jsonb, u uuid, c char(6)"
)
COLUMNS = ("id", "t", "v", "f", "ts", "d", "i", "s", "j", "u", "c")


@pytest.fixture
def piped(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The rows each pipe call loaded (the real pipe runs; this only counts)."""
    return count_loads(monkeypatch, PostgresSqlitePipe)


def _fill(pg_db, src: str) -> None:
    pg_db.run(f"CREATE TABLE {src} ({TYPES})")
    for i, text in enumerate(AWKWARD, start=1):
        pg_db.run(
            f"INSERT INTO {src} VALUES (%s, %s, %s, %s, "
            "timestamp '2026-01-02 03:04:05.123456' + %s * interval '1 day', date '1999-12-31' + %s, %s, %s, "
            "jsonb_build_object('k', %s, 'n', %s), gen_random_uuid(), %s)",
            params=[i, text, text[::-1], [1.0 / 3, 1e308, -0.0, 5e-324][i % 4], i, i, -i, i, text, i, text[:3]],
        )
    pg_db.run(
        f"INSERT INTO {src} VALUES (50, 'whole second', 'x', 2.5, timestamp '1970-01-01 00:00:00', "
        "date '0001-01-01', 2147483647, -32768, '[1, \"two\", null]', NULL, 'abcdef')",
        f"INSERT INTO {src} (id) VALUES (100)",  # NULL in every column
    )


def _stored(sqlite_db, table: str) -> list[tuple[object, ...]]:
    """Each row as SQLite stores it: every column's storage class and its SQL literal."""
    cells = ", ".join(f"typeof({c}), quote({c})" for c in COLUMNS)
    return sqlite_db.rows(f"SELECT {cells} FROM {table} ORDER BY id")


def _change(pg_db, src: str) -> None:
    pg_db.run(
        f"UPDATE {src} SET t = 'NULL', v = NULL WHERE id = 1",
        f"UPDATE {src} SET t = NULL, v = 'NULL', f = -1.5e-300 WHERE id = 6",
        f"UPDATE {src} SET t = E'changed,\"again\"\\n\\\\', ts = timestamp '2026-11-27 12:00:00.5' WHERE id = 2",
        f"DELETE FROM {src} WHERE id = 3",
        f"INSERT INTO {src} (id, t, ts) VALUES (7000, E'seven\\\\', timestamp '1970-01-01 00:00:00')",
    )


@pytest.mark.parametrize("by_xids", [True, False], ids=["window-by-xids", "window-by-snaptime"])
def test_the_pipe_stores_what_sparks_path_stores(
    pg_db, sqlite_db, catalog, settings, refresher, unique_name, piped, monkeypatch, by_xids
) -> None:
    """Both paths store the same values and move SN_LAST_TS alike. A window read by transaction ids
    writes no replay log (nothing reads it), so no entry is read back, grouped or written; a window
    read by SNAPTIME (a log without transaction ids) lists its entries, the pipe's as it showed them."""
    if not by_xids:
        monkeypatch.setattr(PostgresDialect, "logs_xids", False)
    src, dst, ref = f"{unique_name}_s", f"{unique_name}_d", f"{unique_name}_r"
    _fill(pg_db, src)
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    api.repl_create_snapshot_log(f"{src}@{pg_db.conn_id}", catalog=catalog)
    created = api.repl_create_inc_snapshot(None, f"{src}@{pg_db.conn_id}", None, f"{dst}@{sqlite_db.conn_id}", **kw)
    assert created.outcome.copied_by == COPIED_BY_PIPE
    with monkeypatch.context() as spark_only:  # the reference: the same source through Spark's JDBC path
        spark_only.setattr(PostgresDialect, "bulk_pipe", lambda *args: None)
        made = api.repl_create_inc_snapshot(None, f"{src}@{pg_db.conn_id}", None, f"{ref}@{sqlite_db.conn_id}", **kw)
        assert made.outcome.copied_by == COPIED_BY_SPARK
    assert _stored(sqlite_db, dst) == _stored(sqlite_db, ref)
    assert sqlite_db.rows(f"SELECT ts, d FROM {dst} WHERE id = 50") == [("1970-01-01 00:00:00.000000", "0001-01-01")]
    first = len(piped)

    _change(pg_db, src)
    with monkeypatch.context() as shown:  # the pipe shows its rows: their entries are not read back
        shown.setattr(staged_entries, "staged_all_entries_sql", _never_read_back)
        if by_xids:
            shown.setattr(change_pipe, "SeenEntries", _never_grouped)
        outcome = api.repl_refresh_inc_snapshot(f"{dst}@{sqlite_db.conn_id}", **kw)
    assert (outcome.rows_upserted, outcome.rows_deleted) == (4, 1)
    assert piped[first:] == [5], "the change set (4 upserts, 1 delete) was staged by the pipe"
    with monkeypatch.context() as spark_only:
        spark_only.setattr(PostgresDialect, "bulk_pipe", lambda *args: None)
        if by_xids:
            spark_only.setattr(staged_entries, "staged_all_entries_sql", _never_read_back)
        through_spark = api.repl_refresh_inc_snapshot(f"{ref}@{sqlite_db.conn_id}", **kw)
    assert _stored(sqlite_db, dst) == _stored(sqlite_db, ref)
    assert len(_stored(sqlite_db, dst)) == len(pg_db.rows(f"SELECT id FROM {src}"))
    logged = {guid for (guid,) in pg_db.rows(f'SELECT "RLOG_ROWGUID" FROM "RLOG_{src}"')}
    assert len(logged) == 5
    listed = set() if by_xids else logged  # the entries the pipe showed are the ones Spark's path reads back
    assert set(catalog.replayed_since(outcome.snapshot, None)) == listed
    assert set(catalog.replayed_since(through_spark.snapshot, None)) == listed
    newest = pg_db.rows(f'SELECT MAX("SNAPTIME") FROM "RLOG_{src}"')[0][0]
    assert catalog.snapshot(outcome.snapshot).sn_last_ts == catalog.snapshot(through_spark.snapshot).sn_last_ts
    assert catalog.snapshot(outcome.snapshot).sn_last_ts == newest, "SN_LAST_TS is the newest entry applied"


def _never_grouped(*args: object) -> None:
    raise AssertionError("the pipe's entries were grouped for a replay log that is not written")


def _never_read_back(*args: object) -> str:
    raise AssertionError("the staged entries were read back from the staging table")


def test_a_type_the_pipe_does_not_carry_takes_spark(
    pg_db, sqlite_db, catalog, settings, refresher, unique_name
) -> None:
    src, dst = f"{unique_name}_s", f"{unique_name}_d"
    pg_db.run(
        f"CREATE TABLE {src} (id int PRIMARY KEY, ok boolean, n numeric(12,2))",
        f"INSERT INTO {src} VALUES (1, true, 1.25), (2, NULL, NULL)",
    )
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    api.repl_create_snapshot_log(f"{src}@{pg_db.conn_id}", catalog=catalog)
    created = api.repl_create_inc_snapshot(None, f"{src}@{pg_db.conn_id}", None, f"{dst}@{sqlite_db.conn_id}", **kw)
    assert created.outcome.copied_by == COPIED_BY_SPARK
    pg_db.run(f"UPDATE {src} SET ok = false WHERE id = 1")
    api.repl_refresh_inc_snapshot(f"{dst}@{sqlite_db.conn_id}", **kw)
    assert sqlite_db.rows(f"SELECT id, ok FROM {dst} ORDER BY id") == [(1, 0), (2, None)]

"""PostgreSQL to PostgreSQL complete refreshes through the COPY pipe (issue 11.6): ``COPY TO`` piped into
``COPY FROM`` per key range inside Spark tasks, when the column types match; Spark's read and the
Arrow COPY writer otherwise."""

from __future__ import annotations

import json
import logging

import psycopg2
import pytest

from snaprepl import api
from snaprepl.errors import RefreshFailed
from snaprepl.refresh.model import COPIED_BY_PIPE, COPIED_BY_SPARK
from snaprepl.spark import partitioning
from tests.support.databases import PG_ADMIN

pytestmark = pytest.mark.spark

AWKWARD = [
    "plain",
    "comma, \"quotes\" and 'apostrophes'",
    "new\nline\r\nand\ttab",
    "back\\slash \\N \\x00 \\.",
    "unicode: żółć 漢字 🚀",
    "",
]
TYPES = (
    "id bigint PRIMARY KEY, t text, v varchar(200), n numeric(30,10), f double precision, "
    "ts timestamp(6), tz timestamptz, d date, b bytea, j jsonb, a int[], ok boolean, secret text"
)


@pytest.fixture
def pipe_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger="snaprepl.refresh.complete")
    return caplog


@pytest.fixture
def small_ranges(monkeypatch: pytest.MonkeyPatch) -> None:
    """Key ranges of a few rows each, so the small tables here are copied by several Spark tasks."""
    monkeypatch.setattr(partitioning, "ROWS_PER_PARTITION", 3)


def _fill(pg_db, src: str) -> None:
    pg_db.run(f"CREATE TABLE {src} ({TYPES})")
    for i, text in enumerate(AWKWARD, start=1):
        pg_db.run(
            f"INSERT INTO {src} VALUES (%s, %s, %s, %s, %s, "
            "timestamp '2026-01-02 03:04:05.123456' + %s * interval '1 day', "
            "timestamptz '2026-06-01 12:00:00.5+02' + %s * interval '1 hour', "
            "date '1999-12-31' + %s, %s, %s, %s, %s, %s)",
            params=[
                i,
                text,
                text[::-1],
                f"{i}2345678901234567890.0123456789" if i % 2 else "-0.0000000001",
                [1.0 / 3, float("nan"), float("-inf"), 1e308, -0.0, 5e-324][i - 1],
                i,
                i,
                i,
                bytes([0, 1, 92, 10, 255, i]),
                json.dumps({"k": text}) if i != 2 else None,
                [i, None, -i],
                bool(i % 2),
                "hidden",
            ],
        )
    pg_db.run(f"INSERT INTO {src} (id) VALUES (100)")  # NULL in every column
    pg_db.run(f"ANALYZE {src}")


def test_the_pipe_copies_exactly_the_query_s_rows(
    pg_db, catalog, settings, refresher, unique_name, pipe_log, small_ranges
):
    src, dst = f"{unique_name}_s", unique_name
    _fill(pg_db, src)
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    api.repl_create_snapshot_log(f"{src}@{pg_db.conn_id}", catalog=catalog)
    columns = "t, v, n, f, ts, tz, d, b, j, a, ok"  # a column subset: not "secret"
    created = api.repl_create_inc_snapshot(columns, f"{src}@{pg_db.conn_id}", "id <> 3", f"{dst}@{pg_db.conn_id}", **kw)
    assert created.outcome.copied_by == COPIED_BY_PIPE
    assert "through the COPY pipe" in str(created.outcome)
    assert any("COPY pipe in" in m and "key ranges" in m and "in 1 key" not in m for m in pipe_log.messages)
    wanted = f"SELECT id, {columns} FROM {src} WHERE id <> 3 ORDER BY id"
    assert created.outcome.rows_copied == len(pg_db.rows(wanted))
    assert _exact(pg_db, f"SELECT id, {columns} FROM {dst} ORDER BY id") == _exact(pg_db, wanted)
    names = f"SELECT column_name FROM information_schema.columns WHERE table_name = '{dst}' ORDER BY ordinal_position"
    assert [r[0] for r in pg_db.rows(names)] == ["id", *columns.split(", ")]
    assert pg_db.rows(f"SELECT contype FROM pg_constraint WHERE conrelid = '{dst}'::regclass") == [("p",)]

    # a complete refresh again (the swap): changed, deleted and new rows, the key rebuilt after the load
    pg_db.run(
        f"UPDATE {src} SET t = 'changed,\"again\"\\n' WHERE id = 1",
        f"DELETE FROM {src} WHERE id = 2",
        f"INSERT INTO {src} (id, t) VALUES (7, E'seven\\\\')",
    )
    outcome = api.repl_refresh_noninc_snapshot(f"{dst}@{pg_db.conn_id}", **kw)
    assert outcome.copied_by == COPIED_BY_PIPE and outcome.rows_copied == len(pg_db.rows(wanted))
    assert _exact(pg_db, f"SELECT id, {columns} FROM {dst} ORDER BY id") == _exact(pg_db, wanted)
    assert pg_db.rows(f"SELECT conname, contype FROM pg_constraint WHERE conrelid = '{dst}'::regclass") == [
        (f"{dst}_pkey", "p")
    ]
    assert not [t for (t,) in pg_db.rows("SELECT tablename FROM pg_tables") if t.startswith("snaprepl_full")]


def _exact(pg_db, sql: str) -> list[tuple[object, ...]]:
    """Rows as text (so NaN equals NaN and every digit counts) and bytea as bytes."""
    with psycopg2.connect(dbname=pg_db.name, **PG_ADMIN) as conn, conn.cursor() as cur:
        cur.execute(f"SELECT to_jsonb(q)::text FROM ({sql}) q")
        return cur.fetchall()


def test_a_copy_failing_half_way_keeps_the_old_content(
    pg_db, catalog, settings, refresher, unique_name, small_ranges, pipe_log
) -> None:
    src = f"{unique_name}_s"
    pg_db.run(
        f"CREATE TABLE {src} (id int PRIMARY KEY)",
        f"INSERT INTO {src} SELECT g FROM generate_series(1, 20) g WHERE g <> 15",
    )
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    query = f"SELECT id, 1000 / (id - 15) AS x FROM {src}@{pg_db.conn_id}"
    api.repl_create_snapshot(query, f"{unique_name}@{pg_db.conn_id}", **kw)
    pg_db.run(f"ANALYZE {src}")  # the row estimate that splits the read into several key ranges
    outcome = api.repl_refresh_noninc_snapshot(f"{unique_name}@{pg_db.conn_id}", **kw)
    assert outcome.copied_by == COPIED_BY_PIPE
    before = pg_db.rows(f"SELECT * FROM {unique_name} ORDER BY id")
    assert len(before) == 19

    pg_db.run(f"INSERT INTO {src} VALUES (15)", f"DELETE FROM {src} WHERE id = 1")  # division by zero in a late range
    pipe_log.clear()
    with pytest.raises(RefreshFailed, match="DivisionByZero: division by zero") as failed:
        api.repl_refresh_noninc_snapshot(f"{unique_name}@{pg_db.conn_id}", **kw)
    assert any("COPY pipe in 7 key ranges" in m for m in pipe_log.messages)  # the ranges before 15 committed
    assert "\n" not in failed.value.message
    assert pg_db.rows(f"SELECT * FROM {unique_name} ORDER BY id") == before
    assert not [t for (t,) in pg_db.rows("SELECT tablename FROM pg_tables") if t.startswith("snaprepl_full")]
    record = catalog.snapshot(f"public.{unique_name}@{pg_db.conn_id}")
    assert record.sn_last_status == "failed" and "division by zero" in record.sn_last_error


def test_types_that_differ_take_the_spark_path(pg_db, catalog, settings, refresher, unique_name, pipe_log) -> None:
    src = f"{unique_name}_s"
    pg_db.run(
        f"CREATE TABLE {src} (id int PRIMARY KEY, v text, n int)",
        f"INSERT INTO {src} VALUES (1, 'a,\"b\"', 1), (2, NULL, 2)",
    )
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    api.repl_create_snapshot(
        f"SELECT id, v, n FROM {src}@{pg_db.conn_id} WHERE n > 1 OR v IS NOT NULL",
        f"{unique_name}@{pg_db.conn_id}",
        **kw,
    )
    pg_db.run(f"ALTER TABLE {unique_name} ALTER COLUMN n TYPE bigint", f"UPDATE {src} SET n = 3 WHERE id = 2")
    outcome = api.repl_refresh_noninc_snapshot(f"{unique_name}@{pg_db.conn_id}", **kw)
    assert outcome.copied_by == COPIED_BY_SPARK
    assert "through the COPY pipe" not in str(outcome)
    assert any("not the COPY pipe: column n is bigint" in m for m in pipe_log.messages)
    assert pg_db.rows(f"SELECT id, v, n FROM {unique_name} ORDER BY id") == [(1, 'a,"b"', 1), (2, None, 3)]


@pytest.mark.parametrize("block_bytes", [1, 200, 1 << 20])
def test_rows_pass_in_blocks_of_any_size_unchanged(pg_db, unique_name, block_bytes: int) -> None:
    """The task gathers the source's rows into blocks before writing them: a block of one row, of a few
    rows, or of the whole range, the destination reads back exactly the source's values (run here in
    this process as the Spark task :func:`arrow_task` makes of it runs it, on one index batch)."""
    import pyarrow as pa

    from snaprepl.connections.lookup import get_connection
    from snaprepl.dialects.postgres_copy import psycopg2_kwargs
    from snaprepl.dialects.postgres_pipe import TEXT_FORMS, arrow_task, pipe_task

    src, dst = f"{unique_name}_s", f"{unique_name}_d"
    _fill(pg_db, src)
    pg_db.run(f"INSERT INTO {src} (id, t) SELECT g, repeat('x', g) FROM generate_series(1000, 1400) g")
    pg_db.run(f"CREATE TABLE {dst} (LIKE {src})")
    info = get_connection(pg_db.conn_id)
    kwargs = psycopg2_kwargs(info.dialect, info)
    ranges = [
        f"COPY (SELECT * FROM {src} WHERE id < 1200) TO STDOUT",
        f"COPY (SELECT * FROM {src} WHERE id >= 1200) TO STDOUT",
    ]
    task = pipe_task(
        (kwargs, kwargs), (list(TEXT_FORMS), list(TEXT_FORMS)), ranges, f"COPY {dst} FROM STDIN", block_bytes
    )
    out = list(arrow_task(task)(iter([pa.RecordBatch.from_pydict({"id": [0, 1]})])))
    assert out[0].column(0).to_pylist() == [len(pg_db.rows(f"SELECT id FROM {src}"))]
    assert _exact(pg_db, f"SELECT * FROM {dst} ORDER BY id") == _exact(pg_db, f"SELECT * FROM {src} ORDER BY id")


@pytest.mark.parametrize("commit_rows", [1, 50, 10_000])
def test_ranges_piped_in_threads_commit_every_commit_rows_rows(pg_db, unique_name, commit_rows: int) -> None:
    """With ``commit_rows`` each range commits every that many rows (a transaction each: the rows'
    xmin), the last chunk of a range holding the rest; run in threads of this process (what an
    initial load into an empty replica does), the destination reads back exactly the source's rows."""
    from snaprepl.connections.lookup import get_connection
    from snaprepl.dialects.postgres_copy import psycopg2_kwargs
    from snaprepl.dialects.postgres_pipe import TEXT_FORMS, in_threads, pipe_task

    src, dst = f"{unique_name}_s", f"{unique_name}_d"
    _fill(pg_db, src)
    pg_db.run(f"INSERT INTO {src} (id, t) SELECT g, repeat('x', g) FROM generate_series(1000, 1400) g")
    pg_db.run(f"CREATE TABLE {dst} (LIKE {src})")
    info = get_connection(pg_db.conn_id)
    kwargs = psycopg2_kwargs(info.dialect, info)
    ranges = [
        f"COPY (SELECT * FROM {src} WHERE id < 1200) TO STDOUT",
        f"COPY (SELECT * FROM {src} WHERE id >= 1200) TO STDOUT",
    ]
    task = pipe_task(
        (kwargs, kwargs),
        (list(TEXT_FORMS), list(TEXT_FORMS)),
        ranges,
        f"COPY {dst} FROM STDIN",
        200,
        (commit_rows, None),
    )
    assert in_threads(task, len(ranges)) == 7 + 401
    assert _exact(pg_db, f"SELECT * FROM {dst} ORDER BY id") == _exact(pg_db, f"SELECT * FROM {src} ORDER BY id")
    sizes = [n for (n,) in pg_db.rows(f"SELECT COUNT(*) FROM {dst} GROUP BY xmin")]
    per_range = (207, 201)  # ids 1-6, 100 and 1000-1199; 1200-1400
    assert max(sizes) <= commit_rows
    assert len(sizes) == sum(-(-n // commit_rows) for n in per_range)


def test_a_failing_range_fails_the_threads_with_the_database_s_message(pg_db, unique_name) -> None:
    """A range that fails (a key already in the destination) raises the database's message, after every
    other range ran to its end; the chunks committed before stay."""
    from snaprepl.connections.lookup import get_connection
    from snaprepl.dialects.postgres_copy import psycopg2_kwargs
    from snaprepl.dialects.postgres_pipe import TEXT_FORMS, PostgresCopyPipe, in_threads, pipe_task

    src, dst = f"{unique_name}_s", f"{unique_name}_d"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY)", f"INSERT INTO {src} SELECT generate_series(1, 100)")
    pg_db.run(f"CREATE TABLE {dst} (id int PRIMARY KEY)", f"INSERT INTO {dst} VALUES (25)")
    info = get_connection(pg_db.conn_id)
    kwargs = psycopg2_kwargs(info.dialect, info)
    ranges = [
        f"COPY (SELECT * FROM {src} WHERE id <= 50 ORDER BY id) TO STDOUT",
        f"COPY (SELECT * FROM {src} WHERE id > 50) TO STDOUT",
    ]
    task = pipe_task(
        (kwargs, kwargs), (list(TEXT_FORMS), list(TEXT_FORMS)), ranges, f"COPY {dst} FROM STDIN", 1, (10, None)
    )
    with pytest.raises(RuntimeError) as failed:
        in_threads(task, len(ranges))
    message = PostgresCopyPipe(info.dialect, info, info.dialect, info).failure(failed.value)
    assert message and message.startswith("UniqueViolation") and info.dialect.duplicate_key(message)
    assert [r[0] for r in pg_db.rows(f"SELECT id FROM {dst} ORDER BY id")] == [*range(1, 21), 25, *range(51, 101)]


def test_a_check_raising_before_a_commit_leaves_that_chunk_uncommitted(pg_db, unique_name) -> None:
    """The check each chunk gets right before its commit (a lease check of an initial load) stops the
    range when it raises: the chunks before it stay, that one is rolled back, the error is the check's."""
    from snaprepl.connections.lookup import get_connection
    from snaprepl.dialects.postgres_copy import psycopg2_kwargs
    from snaprepl.dialects.postgres_pipe import TEXT_FORMS, in_threads, pipe_task

    src, dst = f"{unique_name}_s", f"{unique_name}_d"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY)", f"INSERT INTO {src} SELECT generate_series(1, 100)")
    pg_db.run(f"CREATE TABLE {dst} (id int PRIMARY KEY)")
    info = get_connection(pg_db.conn_id)
    kwargs = psycopg2_kwargs(info.dialect, info)
    checked: list[int] = []

    def check(rows: int) -> None:
        checked.append(rows)
        if len(checked) == 3:
            raise LookupError("taken over")

    copy_out = [f"COPY (SELECT * FROM {src} ORDER BY id) TO STDOUT"]
    task = pipe_task(
        (kwargs, kwargs), (list(TEXT_FORMS), list(TEXT_FORMS)), copy_out, f"COPY {dst} FROM STDIN", 1, (10, check)
    )
    with pytest.raises(LookupError, match="taken over"):
        in_threads(task, 1)
    assert checked == [10, 10, 10]
    assert [r[0] for r in pg_db.rows(f"SELECT id FROM {dst} ORDER BY id")] == list(range(1, 21))

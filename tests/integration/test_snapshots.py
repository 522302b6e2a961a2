"""Snapshots on real databases, refreshed by the Spark job's own code in this process's SparkSession
(the spark-submit path is tested in test_refresh_submit.py)."""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import replace

import psycopg2
import pytest

from snaprepl import api
from snaprepl.errors import (
    RefreshFailed,
)
from snaprepl.refresh.model import COPIED_BY_PIPE
from snaprepl.refresh.staged_entries import BatchRecords
from tests.support.data import create_typed_table, execute, insert_rows, table_rows
from tests.support.databases import PG_ADMIN, RealDatabase

pytestmark = pytest.mark.spark

DIALECTS = ["postgres", "mysql", "sqlite"]
FIXTURE = {"postgres": "pg_db", "mysql": "mysql_db", "sqlite": "sqlite_db"}


@pytest.fixture(params=list(itertools.product(DIALECTS, DIALECTS)), ids=lambda p: f"{p[0]}-to-{p[1]}")
def pair(request: pytest.FixtureRequest) -> tuple[RealDatabase, RealDatabase]:
    source, dest = request.param
    return request.getfixturevalue(FIXTURE[source]), request.getfixturevalue(FIXTURE[dest])


def test_incremental_snapshot_between_every_pair_of_dialects(pair, catalog, settings, refresher, unique_name) -> None:
    source, dest = pair
    src, dst = f"{unique_name}_s", f"{unique_name}_d"
    create_typed_table(source, src)
    api.repl_create_snapshot_log(f"{src}@{source.conn_id}", catalog=catalog)
    created = api.repl_create_inc_snapshot(
        None, f"{src}@{source.conn_id}", "amount < 1000 OR amount IS NULL", f"{dst}@{dest.conn_id}",
        catalog=catalog, settings=settings, refresher=refresher,
    )  # fmt: skip
    assert created.created_table and created.outcome.rows_copied == 6
    in_filter = "WHERE amount < 1000 OR amount IS NULL"
    assert table_rows(dest, dst) == table_rows(source, src, in_filter)

    # inserts inside and outside the filter, an update out of and one into it, a key change, a delete
    insert_rows(
        source, src, [(8, "new ✓", None, None, b"\x00", True, "x"), (9, "new but big", 7000, None, None, None, None)]
    )
    execute(source, f"UPDATE {source.q(src)} SET amount = 4000 WHERE id = 1")
    execute(source, f"UPDATE {source.q(src)} SET amount = 3 WHERE id = 3")
    execute(source, f"UPDATE {source.q(src)} SET id = 60, name = 'moved' WHERE id = 6")
    execute(source, f"DELETE FROM {source.q(src)} WHERE id = 5")
    execute(source, f"UPDATE {source.q(src)} SET name = ?, note = NULL WHERE id = 2", "ünïcødé 2 ✓")
    outcome = api.repl_refresh_inc_snapshot(
        f"{dst}@{dest.conn_id}", catalog=catalog, settings=settings, refresher=refresher
    )
    assert table_rows(dest, dst) == table_rows(source, src, in_filter)
    assert set(table_rows(dest, dst)) == {2, 3, 4, 7, 8, 60}
    # 1 left the filter, 5 was deleted, 6 moved: deletes; 2, 3, 8, 60 upserts (9 and 1 are not in the filter)
    assert outcome.rows_deleted == 4 and outcome.rows_upserted == 4

    again = api.repl_refresh_inc_snapshot(
        f"{dst}@{dest.conn_id}", catalog=catalog, settings=settings, refresher=refresher
    )
    assert (again.rows_upserted, again.rows_deleted) == (0, 0), "the replay log keeps entries from being applied twice"


def test_nonincremental_snapshot_of_a_join_and_aggregate(
    pg_db, sqlite_db, catalog, settings, refresher, unique_name
) -> None:
    orders, customers = f"{unique_name}_o", f"{unique_name}_c"
    pg_db.run(
        f"CREATE TABLE {customers} (id int PRIMARY KEY, name text)",
        f"INSERT INTO {customers} VALUES (1, 'ada'), (2, 'grace')",
        f"CREATE TABLE {orders} (id int PRIMARY KEY, customer int, amount numeric(10,2))",
        f"INSERT INTO {orders} VALUES (1, 1, 10.50), (2, 1, 1.25), (3, 2, 100.00)",
    )
    query = (
        f"SELECT c.name, COUNT(*) AS orders, SUM(o.amount) AS total FROM {orders}@{pg_db.conn_id} o "
        f"JOIN {customers}@{pg_db.conn_id} c ON c.id = o.customer GROUP BY c.name"
    )
    created = api.repl_create_snapshot(
        query, f"{unique_name}@{sqlite_db.conn_id}", catalog=catalog, settings=settings, refresher=refresher
    )
    assert created.outcome.rows_copied == 2
    assert sorted(sqlite_db.rows(f"SELECT name, orders, total FROM {unique_name}")) == [
        ("ada", 2, 11.75),
        ("grace", 1, 100),
    ]
    pg_db.run(f"INSERT INTO {orders} VALUES (4, 2, 1.00)", f"DELETE FROM {orders} WHERE id = 1")
    outcome = api.repl_refresh_noninc_snapshot(
        f"{unique_name}@{sqlite_db.conn_id}", catalog=catalog, settings=settings, refresher=refresher
    )
    assert outcome.kind == "complete" and outcome.rows_copied == 2
    assert sorted(sqlite_db.rows(f"SELECT name, orders, total FROM {unique_name}")) == [
        ("ada", 1, 1.25),
        ("grace", 2, 101),
    ]


def test_chosen_columns_keep_the_key_first(mysql_db, pg_db, catalog, settings, refresher, unique_name) -> None:
    create_typed_table(mysql_db, unique_name)
    api.repl_create_snapshot_log(f"{unique_name}@{mysql_db.conn_id}", catalog=catalog)
    api.repl_create_inc_snapshot(
        "name, flag",
        f"{unique_name}@{mysql_db.conn_id}",
        None,
        f"{unique_name}@{pg_db.conn_id}",
        catalog=catalog,
        settings=settings,
        refresher=refresher,
    )
    columns = [
        r[0]
        for r in pg_db.rows(
            "SELECT column_name FROM information_schema.columns "
            f"WHERE table_name = '{unique_name}' ORDER BY ordinal_position"
        )
    ]
    assert columns == ["id", "name", "flag"]
    assert pg_db.rows(f"SELECT id, name, flag FROM {unique_name} WHERE id = 1") == [(1, "ascii", True)]


def _readers_see_only_whole_tables(
    db: RealDatabase, table: str, allowed: set[int], stop: threading.Event, seen: list
) -> None:
    while not stop.is_set():
        try:
            seen.append(db.rows(f"SELECT COUNT(*) FROM {db.q(table)}")[0][0])
        except Exception as err:  # a reader may wait for a lock; it must never see a missing or partial table
            seen.append(f"{type(err).__name__}: {err}")
        time.sleep(0.01)


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("with_view", [False, True], ids=["plain", "with-view"])
def test_complete_refresh_is_atomic_for_readers(
    request, dialect, with_view, catalog, settings, refresher, unique_name
) -> None:
    db: RealDatabase = request.getfixturevalue(FIXTURE[dialect])
    src, dst = f"{unique_name}_s", f"{unique_name}_d"
    i = db.int_type()
    db.run(f"CREATE TABLE {db.q(src)} (id {i} PRIMARY KEY, v {i})")
    values = ", ".join(f"({n}, {n})" for n in range(1, 3001))
    db.run(f"INSERT INTO {db.q(src)} VALUES {values}")
    api.repl_create_snapshot(
        f"SELECT id, v FROM {src}@{db.conn_id}",
        f"{dst}@{db.conn_id}",
        catalog=catalog,
        settings=settings,
        refresher=refresher,
    )
    if with_view:
        db.run(f"CREATE VIEW {db.q(dst + '_v')} AS SELECT id FROM {db.q(dst)}")
    more = ", ".join(f"({n}, {n})" for n in range(3001, 5001))
    db.run(f"INSERT INTO {db.q(src)} VALUES {more}")
    stop, seen = threading.Event(), []
    reader = threading.Thread(target=_readers_see_only_whole_tables, args=(db, dst, {3000, 5000}, stop, seen))
    reader.start()
    try:
        api.repl_refresh_noninc_snapshot(f"{dst}@{db.conn_id}", catalog=catalog, settings=settings, refresher=refresher)
        time.sleep(0.1)
    finally:
        stop.set()
        reader.join()
    assert seen and set(seen) <= {3000, 5000}, sorted({str(s) for s in seen})
    assert db.rows(f"SELECT COUNT(*) FROM {db.q(dst)}")[0][0] == 5000
    if with_view:
        assert db.rows(f"SELECT COUNT(*) FROM {db.q(dst + '_v')}")[0][0] == 5000, "the view still reads the snapshot"
    assert [c for c in _tables(db) if c.startswith("snaprepl_")] == [], "no staging table is left behind"


def _tables(db: RealDatabase) -> list[str]:
    if db.dialect == "postgres":
        return [r[0] for r in db.rows("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
    if db.dialect == "mysql":
        return [r[0] for r in db.rows("SHOW TABLES")]
    return [r[0] for r in db.rows("SELECT name FROM sqlite_master WHERE type = 'table'")]


def test_failed_complete_refresh_keeps_the_old_content(pg_db, catalog, settings, refresher, unique_name) -> None:
    src = f"{unique_name}_s"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY)", f"INSERT INTO {src} SELECT generate_series(1, 100)")
    api.repl_create_snapshot(
        f"SELECT id, 1000 / (id - 500) AS x FROM {src}@{pg_db.conn_id}",
        f"{unique_name}@{pg_db.conn_id}",
        catalog=catalog,
        settings=settings,
        refresher=refresher,
    )
    before = pg_db.rows(f"SELECT * FROM {unique_name} ORDER BY id")
    pg_db.run(f"INSERT INTO {src} VALUES (500)")  # division by zero while copying
    with pytest.raises(RefreshFailed, match="division by zero"):
        api.repl_refresh_noninc_snapshot(
            f"{unique_name}@{pg_db.conn_id}", catalog=catalog, settings=settings, refresher=refresher
        )
    assert pg_db.rows(f"SELECT * FROM {unique_name} ORDER BY id") == before
    record = catalog.snapshot(f"public.{unique_name}@{pg_db.conn_id}")
    assert record.sn_last_status == "failed" and "division by zero" in record.sn_last_error
    assert catalog.lock_holder(f"snapshot:{record.sn_name}") is None, "the lock is released after a failure"


def test_a_transaction_open_during_the_copy_is_replayed_afterwards(
    pg_db, catalog, settings, refresher, unique_name
) -> None:
    """The high-water mark is taken before the copy: changes the copy cannot see are replayed next time."""
    src = f"{unique_name}_s"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v text)", f"INSERT INTO {src} VALUES (1, 'a')")
    api.repl_create_snapshot_log(f"{src}@{pg_db.conn_id}", catalog=catalog)
    late = psycopg2.connect(dbname=pg_db.name, **PG_ADMIN)  # a transaction that commits after the copy
    late.cursor().execute(f"UPDATE {src} SET v = 'late' WHERE id = 1")
    try:
        created = api.repl_create_inc_snapshot(
            None,
            f"{src}@{pg_db.conn_id}",
            None,
            f"{unique_name}@{pg_db.conn_id}",
            catalog=catalog,
            settings=settings,
            refresher=refresher,
        )
        assert created.outcome.copied_by == COPIED_BY_PIPE, "the rule holds on the COPY pipe (issue 11.6)"
        assert pg_db.rows(f"SELECT v FROM {unique_name}") == [("a",)]
        late.commit()
    finally:
        late.close()
    api.repl_refresh_inc_snapshot(
        f"{unique_name}@{pg_db.conn_id}", catalog=catalog, settings=settings, refresher=refresher
    )
    assert pg_db.rows(f"SELECT v FROM {unique_name}") == [("late",)]


def test_commits_follow_snaptime_groups_and_advance_sn_last_ts(
    pg_db, catalog, settings, refresher, unique_name
) -> None:
    src = f"{unique_name}_s"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v int)")
    api.repl_create_snapshot_log(f"{src}@{pg_db.conn_id}", catalog=catalog)
    api.repl_create_inc_snapshot(
        None,
        f"{src}@{pg_db.conn_id}",
        None,
        f"{unique_name}@{pg_db.conn_id}",
        catalog=catalog,
        settings=settings,
        refresher=refresher,
    )
    for group in range(5):  # five source transactions of four rows: five SNAPTIME groups
        pg_db.transaction(*[f"INSERT INTO {src} VALUES ({group * 10 + n}, {group})" for n in range(4)])
    name = f"public.{unique_name}@{pg_db.conn_id}"
    small_batches = replace(settings, refresh_commit_rows=6)
    outcome = api.repl_refresh_inc_snapshot(
        f"{unique_name}@{pg_db.conn_id}", catalog=catalog, settings=small_batches, refresher=refresher
    )
    # groups of 4 in batches of about 6 rows: a group starting at row 0, 4, 8, 12, 16 -> batches 0, 0, 1, 2, 2
    assert outcome.batches == 3 and outcome.rows_upserted == 20
    newest = pg_db.rows(f'SELECT MAX("SNAPTIME") FROM "RLOG_{src}"')[0][0]
    assert catalog.snapshot(name).sn_last_ts == newest
    assert catalog.replay_log_size(name) == 0, "a window read by transaction ids needs no replay log"


@pytest.mark.parametrize("source_dest", [("mysql", "mysql"), ("sqlite", "sqlite"), ("postgres", "mysql")])
def test_spark_path_batches_are_numbered_by_the_source_along_snaptime_groups(
    source_dest, request, catalog, settings, refresher, unique_name
) -> None:
    """The Spark path reads the change set numbered by the source database (RANK() in SNAPTIME order,
    divided by the commit size as each dialect divides integers), as the COPY pipe does."""
    source, dest = (request.getfixturevalue(FIXTURE[d]) for d in source_dest)
    src, dst = f"{unique_name}_s", f"{unique_name}_d"
    source.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v int)")
    api.repl_create_snapshot_log(f"{src}@{source.conn_id}", catalog=catalog)
    made = (f"{src}@{source.conn_id}", None, f"{dst}@{dest.conn_id}")
    api.repl_create_inc_snapshot(None, *made, catalog=catalog, settings=settings, refresher=refresher)
    for group in range(5):  # five statements of four rows: five SNAPTIME groups (one time per statement)
        source.run(f"INSERT INTO {src} VALUES " + ", ".join(f"({group * 10 + n}, {group})" for n in range(4)))
        time.sleep(0.01)  # SQLite's SNAPTIME has milliseconds
    small_batches = replace(settings, refresh_commit_rows=6)
    outcome = api.repl_refresh_inc_snapshot(
        f"{dst}@{dest.conn_id}", catalog=catalog, settings=small_batches, refresher=refresher
    )
    # groups of 4 in batches of about 6 rows: a group starting at row 0, 4, 8, 12, 16 -> batches 0, 0, 1, 2, 2
    assert (outcome.batches, outcome.rows_upserted) == (3, 20)
    assert dest.rows(f"SELECT id, v FROM {dst} ORDER BY id") == source.rows(f"SELECT id, v FROM {src} ORDER BY id")


def test_a_refresh_killed_between_commits_converges_when_run_again(
    pg_db, catalog, settings, refresher, unique_name, monkeypatch
) -> None:
    src = f"{unique_name}_s"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v int)")
    api.repl_create_snapshot_log(f"{src}@{pg_db.conn_id}", catalog=catalog)
    api.repl_create_inc_snapshot(
        None,
        f"{src}@{pg_db.conn_id}",
        None,
        f"{unique_name}@{pg_db.conn_id}",
        catalog=catalog,
        settings=settings,
        refresher=refresher,
    )
    for group in range(4):
        pg_db.transaction(*[f"INSERT INTO {src} VALUES ({group * 10 + n}, {group})" for n in range(3)])
    real_record = BatchRecords.commit  # records a batch once the destination committed it, any catalog
    calls = []

    def die_after_first_batch(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 2:  # the second batch is committed in the destination, not recorded
            raise KeyboardInterrupt("killed")
        return real_record(self, *args, **kwargs)

    monkeypatch.setattr(BatchRecords, "commit", die_after_first_batch)
    small = replace(settings, refresh_commit_rows=3)
    with pytest.raises(KeyboardInterrupt):
        api.repl_refresh_inc_snapshot(
            f"{unique_name}@{pg_db.conn_id}", catalog=catalog, settings=small, refresher=refresher
        )
    monkeypatch.setattr(BatchRecords, "commit", real_record)
    assert 3 <= pg_db.rows(f"SELECT COUNT(*) FROM {unique_name}")[0][0] < 12, "some commits happened, not all"
    api.repl_refresh_inc_snapshot(
        f"{unique_name}@{pg_db.conn_id}", catalog=catalog, settings=small, refresher=refresher
    )
    assert pg_db.rows(f"SELECT * FROM {unique_name} ORDER BY id") == pg_db.rows(f"SELECT * FROM {src} ORDER BY id")


def test_an_incremental_refresh_starts_spark_only_for_entries_its_pipe_cannot_carry(
    pg_db, catalog, settings, spark, unique_name
) -> None:
    from snaprepl.refresh.runner import run_refresh

    started: list[int] = []

    def lazy_spark() -> object:  # what the job passes: a function starting the session on first use
        started.append(1)
        return spark

    def refresher(request, catalog, settings):
        return run_refresh(lazy_spark, request, catalog=catalog)

    src, dst = f"{unique_name}_s", f"{unique_name}@{pg_db.conn_id}"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v int)", f"INSERT INTO {src} VALUES (1, 1)")
    api.repl_create_snapshot_log(f"{src}@{pg_db.conn_id}", catalog=catalog)
    api.repl_create_inc_snapshot(
        None, f"{src}@{pg_db.conn_id}", None, dst, catalog=catalog, settings=settings, refresher=refresher
    )
    assert len(started) == 1  # the first copy is a complete refresh

    pg_db.run(f"UPDATE {src} SET v = 2 WHERE id = 1", f"INSERT INTO {src} VALUES (2, 2)")
    outcome = api.repl_refresh_inc_snapshot(dst, catalog=catalog, settings=settings, refresher=refresher)
    assert len(started) == 1 and outcome.rows_upserted == 2  # the COPY pipe, in the job's process

    # The entries are still inside the tolerance window but the transaction-id snapshot recorded
    # after the last refresh leaves them out: nothing to do.
    outcome = api.repl_refresh_inc_snapshot(dst, catalog=catalog, settings=settings, refresher=refresher)
    assert len(started) == 1 and outcome.rows_upserted == 0
    assert pg_db.rows(f"SELECT id, v FROM {unique_name} ORDER BY id") == [(1, 2), (2, 2)]

    # A destination column the pipe cannot fill as is (bigint for an int): the changes go through Spark.
    pg_db.run(f"ALTER TABLE {unique_name} ALTER COLUMN v TYPE bigint", f"DELETE FROM {src} WHERE id = 1")
    outcome = api.repl_refresh_inc_snapshot(dst, catalog=catalog, settings=settings, refresher=refresher)
    assert len(started) == 2 and outcome.rows_deleted == 1
    assert pg_db.rows(f"SELECT id, v FROM {unique_name} ORDER BY id") == [(2, 2)]

"""A snapshot's upkeep and end on real databases: purging the snapshot log and the replay log, clear
errors that leave nothing behind, dropping snapshots and logs, a first copy that fails (refreshes by
the Spark job's own code in this process's SparkSession, as in test_snapshots.py)."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest

from snaprepl import api
from snaprepl.api.script import run_script
from snaprepl.errors import (
    CompleteRefreshRequired,
    InvalidArgument,
    InvalidCondition,
    RefreshFailed,
    SnapshotLogInUse,
    SnapshotLogNotFound,
    SnapshotNotFound,
)
from snaprepl.settings import Settings

pytestmark = pytest.mark.spark


def test_purge_follows_the_oldest_snapshot_and_forced_purge_requires_complete_refresh(
    sqlite_db, catalog, refresher, unique_name
) -> None:
    src = f"{unique_name}_s"
    no_tolerance = Settings(snp_repl_tolerance_offset=0, snp_repl_purge_offset=0)
    sqlite_db.run(f"CREATE TABLE {src} (id INTEGER PRIMARY KEY, v INTEGER)")
    api.repl_create_snapshot_log(f"{src}@{sqlite_db.conn_id}", catalog=catalog)
    sqlite_db.run(f"INSERT INTO {src} VALUES (1, 1)")
    time.sleep(0.01)
    for copy in ("a", "b"):
        api.repl_create_inc_snapshot(
            None,
            f"{src}@{sqlite_db.conn_id}",
            None,
            f"{unique_name}_{copy}@{sqlite_db.conn_id}",
            catalog=catalog,
            settings=no_tolerance,
            refresher=refresher,
        )
    sqlite_db.run(f"INSERT INTO {src} VALUES (2, 2)")
    time.sleep(0.01)
    api.repl_refresh_inc_snapshot(
        f"{unique_name}_a@{sqlite_db.conn_id}", catalog=catalog, settings=no_tolerance, refresher=refresher
    )
    time.sleep(0.01)
    sqlite_db.run(f"INSERT INTO {src} VALUES (3, 3)")

    # b is behind: the purge keeps everything b has not applied
    result = api.repl_purge_snapshot_log(f"{src}@{sqlite_db.conn_id}", catalog=catalog, settings=no_tolerance)
    assert result.deleted == 1 and {r[0] for r in sqlite_db.rows(f'SELECT "RLOG_id" FROM "RLOG_{src}"')} == {2, 3}
    log = catalog.log(f"main.{src}@{sqlite_db.conn_id}")
    assert log.snl_purged_before == result.cutoff
    from snaprepl.reporting.status import collect_status

    report = collect_status(catalog, no_tolerance)
    waits = next(e for e in report["snapshot_logs"] if e["source"] == log.snl_source)["purge_waits_for"]
    assert waits.startswith(f"main.{unique_name}_b@"), waits

    # a forced purge goes past b, which must then refuse to refresh incrementally
    forced = api.repl_purge_snapshot_log(f"{src}@{sqlite_db.conn_id}", 1, catalog=catalog, settings=no_tolerance)
    assert forced.stale and all(s.startswith(f"main.{unique_name}_") for s in forced.stale)
    assert sqlite_db.rows(f'SELECT COUNT(*) FROM "RLOG_{src}"')[0][0] == 0
    with pytest.raises(CompleteRefreshRequired, match="needs a complete refresh"):
        api.repl_refresh_inc_snapshot(
            f"{unique_name}_b@{sqlite_db.conn_id}", catalog=catalog, settings=no_tolerance, refresher=refresher
        )
    from snaprepl.ops.snapshots import update_snapshot
    from snaprepl.statements.parser import parse_table_ref

    fell_back = update_snapshot(
        parse_table_ref(f"{unique_name}_b@{sqlite_db.conn_id}"),
        fallback_complete=True,
        catalog=catalog,
        settings=no_tolerance,
        refresher=refresher,
    )
    assert fell_back.kind == "complete" and "fell back" in str(fell_back)
    assert sorted(sqlite_db.rows(f"SELECT id FROM {unique_name}_b")) == [(1,), (2,), (3,)]
    assert catalog.snapshot(f"main.{unique_name}_b@{sqlite_db.conn_id}").sn_needs_complete is None


def test_replay_log_purge_keeps_the_tolerance_window(mysql_db, catalog, settings, refresher, unique_name) -> None:
    """A MariaDB log is read by SNAPTIME, so its refreshes list what they applied (PostgreSQL's, read by
    transaction ids, list nothing: tests/integration/test_replay_log_beside_apply.py)."""
    src = f"{unique_name}_s"
    mysql_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY)")
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    api.repl_create_snapshot_log(f"{src}@{mysql_db.conn_id}", catalog=catalog)
    dst = f"{unique_name}@{mysql_db.conn_id}"
    made = api.repl_create_inc_snapshot(None, f"{src}@{mysql_db.conn_id}", None, dst, **kw)
    mysql_db.run(f"INSERT INTO {src} VALUES (1), (2)")
    name = made.record.sn_name
    api.repl_refresh_inc_snapshot(name, **kw)
    assert catalog.replay_log_size(name) == 2
    assert api.repl_purge_rplogs(catalog=catalog, settings=settings).deleted[name] == 0
    catalog.update_snapshot(name, sn_last_ts=catalog.snapshot(name).sn_last_ts + timedelta(minutes=31))
    assert api.repl_purge_rplogs(catalog=catalog, settings=settings).deleted[name] == 2


def test_bad_snapshot_statements_get_clear_errors_and_leave_nothing(
    pg_db, mysql_db, catalog, settings, refresher, unique_name
) -> None:
    src = f"{unique_name}_s"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v int, w text)", f"INSERT INTO {src} VALUES (1, 1, 'x')")
    run = lambda text: run_script(text, catalog=catalog, settings=settings, refresher=refresher)  # noqa: E731
    with pytest.raises(SnapshotLogNotFound, match="needs a snapshot log"):
        run(f"CREATE SNAPSHOT {unique_name}@{mysql_db.conn_id} FROM {src}@{pg_db.conn_id}")
    api.repl_create_snapshot_log(f"{src}@{pg_db.conn_id}", catalog=catalog)
    with pytest.raises(InvalidCondition):
        run(
            f"CREATE SNAPSHOT {unique_name}@{mysql_db.conn_id} FROM {src}@{pg_db.conn_id} "
            f"WHERE 'v = 1; DROP TABLE {src}'"
        )
    with pytest.raises(InvalidCondition):
        run(f"CREATE SNAPSHOT {unique_name}@{mysql_db.conn_id} FROM {src}@{pg_db.conn_id} WHERE 'v = 1) OR (1 = 1'")
    with pytest.raises(InvalidCondition, match="fails on"):
        run(f"CREATE SNAPSHOT {unique_name}@{mysql_db.conn_id} FROM {src}@{pg_db.conn_id} WHERE 'no_such_column = 1'")
    with pytest.raises(InvalidArgument, match="no column"):
        run(f"CREATE SNAPSHOT {unique_name}@{mysql_db.conn_id} FROM {src}@{pg_db.conn_id} 'v, nope'")
    with pytest.raises(InvalidCondition, match="not a SELECT"):
        run(f"CREATE NONINCREMENTAL SNAPSHOT {unique_name}@{mysql_db.conn_id} AS 'DELETE FROM {src}@{pg_db.conn_id}'")
    with pytest.raises(InvalidArgument, match="several connections"):
        run(f"CREATE NONINCREMENTAL SNAPSHOT {unique_name} AS 'SELECT * FROM a@{pg_db.conn_id}, b@{mysql_db.conn_id}'")
    with pytest.raises(InvalidArgument, match="schedule"):
        run(f"CREATE SNAPSHOT {unique_name}@{mysql_db.conn_id} FROM {src}@{pg_db.conn_id} SCHEDULE 'every day'")
    mysql_db.run(f"CREATE TABLE {unique_name} (id int, v int)")  # exists without the key
    with pytest.raises(InvalidArgument, match="primary key"):
        run(f"CREATE SNAPSHOT {unique_name}@{mysql_db.conn_id} FROM {src}@{pg_db.conn_id} 'v'")
    assert pg_db.rows(f"SELECT COUNT(*) FROM {src}")[0][0] == 1
    assert [s for s in catalog.snapshots() if unique_name in s.sn_name] == []
    with pytest.raises(SnapshotNotFound):
        run(f"UPDATE SNAPSHOT {unique_name}_none@{mysql_db.conn_id}")


def test_drop_snapshot_schedule_and_log_dependency(pg_db, sqlite_db, catalog, settings, refresher, unique_name) -> None:
    src = f"{unique_name}_s"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY)")
    run = lambda text: run_script(text, catalog=catalog, settings=settings, refresher=refresher)  # noqa: E731
    run(
        f"CREATE SNAPSHOT LOG FOR {src}@{pg_db.conn_id};"
        f"CREATE SNAPSHOT {unique_name}@{sqlite_db.conn_id} FROM {src}@{pg_db.conn_id} SCHEDULE '@hourly'"
    )
    name = f"main.{unique_name}@{sqlite_db.conn_id}"
    assert catalog.snapshot(name).sn_schedule == "@hourly"
    run(f"ALTER SNAPSHOT {unique_name}@{sqlite_db.conn_id} SCHEDULE '*/5 * * * *'")
    assert catalog.snapshot(name).sn_schedule == "*/5 * * * *"
    with pytest.raises(SnapshotLogInUse, match=name):
        run(f"DROP SNAPSHOT LOG FOR {src}@{pg_db.conn_id}")
    run(f"DROP SNAPSHOT {unique_name}@{sqlite_db.conn_id}")
    assert catalog.snapshot(name) is None and sqlite_db.table_exists(unique_name)
    run(
        f"CREATE SNAPSHOT {unique_name}_2@{sqlite_db.conn_id} FROM {src}@{pg_db.conn_id}; "
        f"DROP SNAPSHOT {unique_name}_2@{sqlite_db.conn_id} WITH DELETE"
    )
    assert not sqlite_db.table_exists(f"{unique_name}_2")
    run(f"DROP SNAPSHOT LOG FOR {src}@{pg_db.conn_id}")


def test_first_copy_failure_takes_the_statement_back(pg_db, catalog, settings, refresher, unique_name) -> None:
    src = f"{unique_name}_s"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY)", f"INSERT INTO {src} VALUES (0)")
    with pytest.raises(RefreshFailed, match=r"first copy .* failed.*division by zero.*nothing was kept"):
        api.repl_create_snapshot(
            f"SELECT id, 1 / id AS x FROM {src}@{pg_db.conn_id}",
            f"{unique_name}@{pg_db.conn_id}",
            catalog=catalog,
            settings=settings,
            refresher=refresher,
        )
    assert not pg_db.table_exists(unique_name)
    assert catalog.snapshot(f"public.{unique_name}@{pg_db.conn_id}") is None

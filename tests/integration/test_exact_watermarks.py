"""Exact watermarks (issue 20, item 1): a change whose transaction stays open across refreshes, while
other sessions commit and the refreshes move on, reaches the copy once it commits, with the tolerance
window at its minimum (0 minutes). SNAPTIME is no commit order: PostgreSQL stamps a transaction's
start, MariaDB a statement's time, SQLite the statement's time under one writer at a time."""

from __future__ import annotations

import sqlite3
import threading
import time
import uuid
from dataclasses import replace

import psycopg2
import pymysql
import pytest

from snaprepl import api
from tests.support.databases import MYSQL_ADMIN, PG_ADMIN, RealDatabase, mysql_admin_connect
from tests.support.long_transactions import long_transaction_survives, two_row_snapshot

pytestmark = pytest.mark.spark


@pytest.fixture
def no_tolerance(catalog, settings, refresher) -> dict[str, object]:
    return {
        "catalog": catalog,
        "settings": replace(settings, snp_repl_tolerance_offset=0),
        "refresher": refresher,
    }


def test_postgres_long_transaction_reaches_the_copy(pg_db, no_tolerance, unique_name) -> None:
    conn = psycopg2.connect(dbname=pg_db.name, **PG_ADMIN)
    conn.autocommit = True
    try:
        long_transaction_survives(pg_db, conn, no_tolerance, unique_name)
    finally:
        conn.close()
    name = f"public.{unique_name}@{pg_db.conn_id}"
    assert no_tolerance["catalog"].snapshot(name).sn_xid_snapshot, "read by transaction ids"


def test_mariadb_long_transaction_reaches_the_copy(mysql_db, no_tolerance, unique_name) -> None:
    conn = pymysql.connect(database=mysql_db.name, autocommit=True, **MYSQL_ADMIN)
    try:
        long_transaction_survives(mysql_db, conn, no_tolerance, unique_name)
    finally:
        conn.close()


def test_mariadb_without_process_privilege_says_the_watermark_is_not_exact(
    mysql_db, no_tolerance, unique_name, monkeypatch: pytest.MonkeyPatch
) -> None:
    user, password, conn_id = f"np_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex, f"test_my_np_{unique_name}"
    with mysql_admin_connect() as admin:
        cur = admin.cursor()
        cur.execute(f"CREATE USER '{user}'@'%' IDENTIFIED BY '{password}'")
        cur.execute(f"GRANT ALL ON `{mysql_db.name}`.* TO '{user}'@'%'")
    monkeypatch.setenv(
        f"AIRFLOW_CONN_{conn_id.upper()}",
        f"mysql://{user}:{password}@{MYSQL_ADMIN['host']}:{MYSQL_ADMIN['port']}/{mysql_db.name}",
    )
    try:
        src, dst = f"{unique_name}_s", f"{unique_name}@{conn_id}"
        mysql_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v varchar(40))", f"INSERT INTO {src} VALUES (1, 'a')")
        api.repl_create_snapshot_log(f"{src}@{conn_id}", catalog=no_tolerance["catalog"])
        api.repl_create_inc_snapshot(None, f"{src}@{conn_id}", None, dst, **no_tolerance)
        mysql_db.run(f"UPDATE {src} SET v = 'b' WHERE id = 1")
        outcome = api.repl_refresh_inc_snapshot(dst, **no_tolerance)
        assert outcome.rows_upserted == 1
        assert outcome.note and "PROCESS" in outcome.note, outcome.note
        assert "PROCESS" in str(outcome)
        from snaprepl.reporting.status import collect_status

        report = collect_status(no_tolerance["catalog"], no_tolerance["settings"])
        [entry] = [log for log in report["snapshot_logs"] if log["source"].endswith(f"@{conn_id}")]
        assert entry["watermarks"]["mode"].startswith("not exact") and "PROCESS" in entry["watermarks"]["note"]
    finally:
        with mysql_admin_connect() as admin:
            admin.cursor().execute(f"DROP USER '{user}'@'%'")


def test_sqlite_copy_mark_waits_for_the_open_writer(sqlite_db, pg_db, no_tolerance, unique_name) -> None:
    """A complete refresh's mark is taken while no write transaction is open: a change still
    uncommitted when the copy started is replayed by the next incremental refresh."""
    src, dst = two_row_snapshot(sqlite_db, pg_db, unique_name, no_tolerance)
    writer = sqlite3.connect(sqlite_db.name, isolation_level=None, timeout=30, check_same_thread=False)
    failed: list[BaseException] = []

    def complete() -> None:
        try:
            api.repl_refresh_noninc_snapshot(dst, **no_tolerance)
        except BaseException as err:  # reported by the test's thread
            failed.append(err)

    try:
        writer.execute("BEGIN")
        writer.execute(f"UPDATE {src} SET v = 'from-long-tx' WHERE id = 1")
        time.sleep(1.1)
        copy = threading.Thread(target=complete)
        copy.start()
        copy.join(timeout=6)  # before the change commits, unless the refresh waits for it
        writer.execute("COMMIT")
        copy.join()
    finally:
        writer.close()
    assert not failed, failed
    api.repl_refresh_inc_snapshot(dst, **no_tolerance)
    assert pg_db.rows(f"SELECT id, v FROM {unique_name} ORDER BY id") == [(1, "from-long-tx"), (2, "a")]


@pytest.mark.parametrize("fixture", ["pg_db", "mysql_db"])
def test_status_names_the_transaction_holding_watermarks_back(
    fixture: str, request: pytest.FixtureRequest, catalog, settings, unique_name
) -> None:
    from snaprepl.database.sessions import Database
    from snaprepl.reporting.render import render_text
    from snaprepl.reporting.status import collect_status
    from snaprepl.reporting.watermarks import BY_XIDS, CAPPED

    db: RealDatabase = request.getfixturevalue(fixture)
    src = f"{unique_name}_s"
    db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v varchar(40))", f"INSERT INTO {src} VALUES (1, 'a')")
    api.repl_create_snapshot_log(f"{src}@{db.conn_id}", catalog=catalog)
    with db.connect() as conn:
        cur = conn.cursor()
        cur.execute({"pg_db": "SELECT pg_backend_pid()", "mysql_db": "SELECT CONNECTION_ID()"}[fixture])
        pid = str(cur.fetchone()[0])
        cur.execute("BEGIN")
        cur.execute(f"UPDATE {src} SET v = 'held' WHERE id = 1")
        time.sleep(2.2)
        database = Database.for_conn_id(db.conn_id)
        with database.session() as session:
            found = database.dialect.open_transactions(session, 2 / 60)
        report = collect_status(catalog, settings)
        cur.execute("ROLLBACK")
    [held] = [t for t in found if t.session == pid]
    assert held.age_seconds >= 2 and held.user == {"pg_db": "postgres", "mysql_db": "root"}[fixture]
    assert held.describe().startswith(f"session {pid} of {held.user} open since")
    [entry] = [log for log in report["snapshot_logs"] if log["source"].startswith(f"{db.schema}.{src}@")]
    assert entry["watermarks"]["mode"] == {"pg_db": BY_XIDS, "mysql_db": CAPPED}[fixture]
    assert entry["watermarks"]["long_transactions"] == [], "10 minutes by default: not long yet"
    assert entry["watermarks"]["mode"] in render_text(report)


def test_an_old_postgres_log_is_upgraded_at_the_next_refresh(pg_db, no_tolerance, unique_name) -> None:
    """A log made before transaction ids (no SNAPXID, a trigger that does not write it) gets both at the
    next refresh; its entries without an xid are applied by SNAPTIME, later ones by transaction ids."""
    src, dst = two_row_snapshot(pg_db, pg_db, unique_name, no_tolerance)
    function = f"public.public_{src}_rlog_fn"
    [(definition,)] = pg_db.rows(f"SELECT pg_get_functiondef('{function}'::regproc)")
    for new in (', "SNAPXID" = EXCLUDED."SNAPXID"', ', "SNAPXID"', ", pg_current_xact_id()"):
        definition = definition.replace(new, "")
    pg_db.run(f'ALTER TABLE "RLOG_{src}" DROP COLUMN "SNAPXID"', definition)
    pg_db.run(f"UPDATE {src} SET v = 'old log' WHERE id = 2")
    assert pg_db.rows(f'SELECT COUNT(*) FROM "RLOG_{src}"') == [(1,)]

    outcome = api.repl_refresh_inc_snapshot(dst, **no_tolerance)
    assert outcome.rows_upserted == 1 and not outcome.note
    assert pg_db.rows(f'SELECT COUNT(*) FROM "RLOG_{src}" WHERE "SNAPXID" IS NULL') == [(1,)]
    pg_db.run(f"UPDATE {src} SET v = 'new log' WHERE id = 1")
    assert pg_db.rows(f'SELECT COUNT(*) FROM "RLOG_{src}" WHERE "SNAPXID" IS NOT NULL') == [(1,)]
    outcome = api.repl_refresh_inc_snapshot(dst, **no_tolerance)
    assert outcome.rows_upserted == 1, "the entry without an xid is not read again"
    assert pg_db.rows(f"SELECT id, v FROM {unique_name} ORDER BY id") == [(1, "new log"), (2, "old log")]


def test_a_transaction_open_in_another_postgres_database_holds_nothing_back(pg_db, no_tolerance, unique_name) -> None:
    """A session cannot write another database's log: its open transaction must not cap SN_LAST_TS
    (on a shared server it would hold every copy back for as long as it stays open)."""
    src, dst = two_row_snapshot(pg_db, pg_db, unique_name, no_tolerance)
    elsewhere = psycopg2.connect(dbname="postgres", **PG_ADMIN)
    try:
        elsewhere.cursor().execute("SELECT 1")  # a transaction open (psycopg2 begins one), in another database
        time.sleep(1.1)
        pg_db.run(f"UPDATE {src} SET v = 'later' WHERE id = 2")
        api.repl_refresh_inc_snapshot(dst, **no_tolerance)
        newest = pg_db.rows(f'SELECT max("SNAPTIME") FROM "RLOG_{src}"')[0][0]
        snapshot = no_tolerance["catalog"].snapshot(f"public.{unique_name}@{pg_db.conn_id}")
        assert snapshot.sn_last_ts == newest, "capped by a transaction of another database"
    finally:
        elsewhere.close()

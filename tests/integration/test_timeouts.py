"""Issue 14.6: a refresh whose destination another session has locked fails within
``lock_timeout_seconds`` with a retryable LockTimeout naming the table, instead of hanging
(PostgreSQL) or failing after 50 s with the server's message (MariaDB)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from snaprepl import api
from snaprepl.errors import LockTimeout
from tests.support.databases import RealDatabase, mysql_admin_connect, pg_admin_connect

pytestmark = [pytest.mark.spark]
LOCK_SECONDS = 2


@contextmanager
def locked(db: RealDatabase, table: str) -> Iterator[None]:
    """Another session holding an exclusive lock on ``table`` until the block ends."""
    if db.dialect == "postgres":
        with pg_admin_connect(db.name) as conn:
            conn.autocommit = False
            conn.cursor().execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
            try:
                yield
            finally:
                conn.rollback()
    else:
        with mysql_admin_connect(db.name) as conn:
            conn.cursor().execute(f"LOCK TABLES {table} WRITE")
            try:
                yield
            finally:
                conn.cursor().execute("UNLOCK TABLES")


@pytest.fixture(params=["postgres", "mysql"])
def dest_db(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> RealDatabase:
    monkeypatch.setenv("AIRFLOW__SNAPREPL__LOCK_TIMEOUT_SECONDS", str(LOCK_SECONDS))
    monkeypatch.setenv("AIRFLOW__SNAPREPL__STATEMENT_TIMEOUT_SECONDS", "0")
    return request.getfixturevalue({"postgres": "pg_db", "mysql": "mysql_db"}[request.param])


def test_a_locked_destination_fails_the_refresh_within_the_lock_timeout(
    dest_db: RealDatabase, pg_db: RealDatabase, catalog: Any, settings: Any, refresher: Any, unique_name: str
) -> None:
    src = f"{unique_name}_s"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY)", f"INSERT INTO {src} SELECT generate_series(1, 10)")
    dest = f"{unique_name}@{dest_db.conn_id}"
    kwargs = {"catalog": catalog, "settings": settings, "refresher": refresher}
    api.repl_create_snapshot(f"SELECT id FROM {src}@{pg_db.conn_id}", dest, **kwargs)
    pg_db.run(f"INSERT INTO {src} VALUES (11)")

    with locked(dest_db, unique_name):
        started = time.monotonic()
        with pytest.raises(LockTimeout) as failure:
            api.repl_refresh_noninc_snapshot(dest, **kwargs)
        waited = time.monotonic() - started

    message = str(failure.value)
    assert f"after {LOCK_SECONDS} s waiting for a lock on" in message and unique_name in message, message
    assert "retry" in message
    assert waited < 45, f"the refresh gave up after {waited:.0f} s"
    assert dest_db.rows(f"SELECT COUNT(*) FROM {unique_name}") == [(10,)], "the old content stays"
    api.repl_refresh_noninc_snapshot(dest, **kwargs)  # once the lock is gone, the retry succeeds
    assert dest_db.rows(f"SELECT COUNT(*) FROM {unique_name}") == [(11,)]


def test_sessions_get_the_timeouts(pg_db: RealDatabase, mysql_db: RealDatabase, monkeypatch) -> None:
    from snaprepl.connections.lookup import get_connection
    from snaprepl.database.sessions import Database

    monkeypatch.setenv("AIRFLOW__SNAPREPL__LOCK_TIMEOUT_SECONDS", "7")
    monkeypatch.setenv("AIRFLOW__SNAPREPL__STATEMENT_TIMEOUT_SECONDS", "90")
    with Database(get_connection(pg_db.conn_id)).session() as session:
        assert session.query("SELECT current_setting('lock_timeout'), current_setting('statement_timeout')") == [
            ("7s", "90s")
        ]
    with Database(get_connection(mysql_db.conn_id)).session() as session:
        rows = session.query("SELECT @@innodb_lock_wait_timeout, @@lock_wait_timeout, @@max_statement_time")
        assert [tuple(float(v) for v in row) for row in rows] == [(7.0, 7.0, 90.0)]
    props = get_connection(pg_db.conn_id).jdbc_properties()
    assert "-c lock_timeout=7s -c statement_timeout=90s" in props["options"]


def test_status_says_what_a_running_refresh_waits_for(
    dest_db: RealDatabase,
    pg_db: RealDatabase,
    catalog: Any,
    settings: Any,
    refresher: Any,
    unique_name: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While a refresh waits for a lock another session holds, ``snaprepl status`` says so, naming the
    table, instead of a bare ``running`` (issue 14.6)."""
    import threading

    from snaprepl.reporting.status import collect_status, render_text

    src = f"{unique_name}_s"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY)", f"INSERT INTO {src} SELECT generate_series(1, 10)")
    dest = f"{unique_name}@{dest_db.conn_id}"
    kwargs = {"catalog": catalog, "settings": settings, "refresher": refresher}
    api.repl_create_snapshot(f"SELECT id FROM {src}@{pg_db.conn_id}", dest, **kwargs)
    monkeypatch.setenv("AIRFLOW__SNAPREPL__LOCK_TIMEOUT_SECONDS", "60")
    outcome: list[BaseException | None] = []
    seen: list[str] = []
    with locked(dest_db, unique_name):
        refresh = threading.Thread(
            target=lambda: outcome.append(_refresh(api.repl_refresh_noninc_snapshot, dest, kwargs)), daemon=True
        )
        refresh.start()
        deadline = time.monotonic() + 50
        while time.monotonic() < deadline and not seen:
            report = collect_status(catalog, settings, probe=True)
            [entry] = [e for e in report["snapshots"] if e["name"].endswith(dest)]
            seen = entry.get("waiting") or []
            time.sleep(0.5)
        text = render_text(report)
    refresh.join(timeout=120)
    assert seen and "lock on" in seen[0] and unique_name in seen[0], seen
    assert f"running, {seen[0]}" in text
    assert outcome == [None], "the refresh went on once the lock was released"
    assert dest_db.rows(f"SELECT COUNT(*) FROM {unique_name}") == [(10,)]


def _refresh(function: Any, dest: str, kwargs: dict[str, Any]) -> BaseException | None:
    try:
        function(dest, **kwargs)
    except BaseException as err:  # reported to the test's thread
        return err
    return None

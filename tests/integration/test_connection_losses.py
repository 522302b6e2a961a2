"""Connections lost in the middle of a run name their database (issue 27, item 4): a server of the
test's own stopped mid-copy and mid-read, sessions killed from another session (PostgreSQL's
pg_terminate_backend, MariaDB's KILL), a catalog whose server went away. The error is one line,
stored as such (no SQL, no bound parameters), and a cleanup that fails against the dead server does
not hide it."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from snaprepl import api
from snaprepl.catalog.migrate import upgrade
from snaprepl.catalog.store import Catalog
from snaprepl.connections.lookup import ConnectionInfo, get_connection
from snaprepl.database.sessions import Database, create_engine, forget_databases
from snaprepl.errors import CatalogConnectionLost, ConnectionLost
from snaprepl.reporting.status import collect_status
from tests.support.databases import RealDatabase
from tests.support.own_postgres import OwnPostgres, own_postgres


@pytest.fixture(scope="module")
def own_pg() -> Iterator[OwnPostgres]:
    with own_postgres() as server:
        yield server


@pytest.fixture
def own_db(own_pg: OwnPostgres, monkeypatch: pytest.MonkeyPatch, unique_name: str) -> Iterator[str]:
    """A database on the test's own server, as Airflow connection ``own_pg`` (the server running)."""
    own_pg.start() if own_pg.pid() is None else None
    own_pg.psql(f"CREATE DATABASE {unique_name}")
    monkeypatch.setenv("AIRFLOW_CONN_OWN_PG", own_pg.url(unique_name))
    forget_databases()  # connection own_pg is another database now
    yield unique_name
    forget_databases()
    if own_pg.pid() is None:
        own_pg.start()


def _when(found: Callable[[], bool], then: Callable[[], None]) -> threading.Thread:
    """Run ``then`` in a thread as soon as ``found()`` (polled) is true."""

    def watch() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if found():
                    then()
                    return
            except Exception:
                pass
            time.sleep(0.05)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def _assert_stored_clean(catalog, settings, name: str, *fragments: str) -> None:  # type: ignore[no-untyped-def]
    """The failure as status --json, the history and the snapshot's record hold it: one line."""
    [entry] = [s for s in collect_status(catalog, settings, probe=False)["snapshots"] if s["name"] == name]
    stored = [entry["last_refresh"]["error"], catalog.history(name)[0].rh_error, catalog.snapshot(name).sn_last_error]
    for text in stored:
        assert "\n" not in text and "[SQL:" not in text and "parameters" not in text, text
        assert all(f in text for f in fragments), text
    json.dumps(entry)


def test_a_destination_that_dies_mid_copy_is_named_and_its_cleanup_does_not_hide_it(
    pg_db: RealDatabase, own_pg: OwnPostgres, own_db: str, catalog, settings, refresher, unique_name: str
) -> None:
    src = f"{unique_name}_s"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v int)", f"INSERT INTO {src} VALUES (1, 1)")
    query = f"SELECT id, v FROM {src}@{pg_db.conn_id} WHERE pg_sleep(0.05 + 0 * v) IS NOT NULL"
    created = api.repl_create_snapshot(query, f"{unique_name}@own_pg", catalog=catalog, settings=settings,
                                       refresher=refresher)  # fmt: skip
    name = created.record.sn_name
    pg_db.run(f"INSERT INTO {src} SELECT g, g FROM generate_series(2, 150) g")  # 7 s of reading
    # Spark's writer holds its connection to the destination while it reads the source's rows.
    reading = (
        "SELECT count(*) FROM pg_stat_activity WHERE query ILIKE '%pg_sleep%' AND state = 'active' "
        "AND query NOT ILIKE '%pg_stat_activity%'"
    )
    killer = _when(lambda: pg_db.rows(reading)[0][0] > 0, own_pg.stop)

    with pytest.raises(ConnectionLost) as lost:
        api.repl_refresh_noninc_snapshot(name, catalog=catalog, settings=settings, refresher=refresher)

    killer.join(timeout=5)
    message = str(lost.value)
    assert "lost the connection to the destination, connection 'own_pg'" in message, message
    assert f"127.0.0.1:{own_pg.port}/{own_db}" in message and "run it again" in message
    _assert_stored_clean(catalog, settings, name, "lost the connection to the destination")


def test_a_source_that_dies_during_the_change_read_is_named(
    pg_db: RealDatabase, own_pg: OwnPostgres, own_db: str, catalog, settings, refresher, unique_name: str
) -> None:
    own_pg.psql("CREATE TABLE src (id int PRIMARY KEY, v int); INSERT INTO src VALUES (1, 1)", own_db)
    api.repl_create_snapshot_log("src@own_pg", catalog=catalog)
    created = api.repl_create_inc_snapshot(
        None, "src@own_pg", "pg_sleep(0.05 + 0 * v) IS NOT NULL", f"{unique_name}@{pg_db.conn_id}",
        catalog=catalog, settings=settings, refresher=refresher,
    )  # fmt: skip
    name = created.record.sn_name
    own_pg.psql("INSERT INTO src SELECT g, g FROM generate_series(2, 150) g", own_db)
    reading = (
        "SELECT count(*) FROM pg_stat_activity WHERE query ILIKE '%pg_sleep%' AND query ILIKE '%RLOG%' "
        "AND state = 'active' AND query NOT ILIKE '%pg_stat_activity%'"
    )
    killer = _when(lambda: own_pg.psql(reading, own_db) != "0", own_pg.stop)

    with pytest.raises(ConnectionLost) as lost:
        api.repl_refresh_inc_snapshot(name, catalog=catalog, settings=settings, refresher=refresher)

    killer.join(timeout=5)
    message = str(lost.value)
    assert "lost the connection to the source, connection 'own_pg'" in message, message
    assert f"127.0.0.1:{own_pg.port}/{own_db}" in message
    _assert_stored_clean(catalog, settings, name, "lost the connection to the source")


def _killed_session(database: Database, sql: str, kill: Callable[[], None]) -> ConnectionLost:
    killer = threading.Timer(1.5, kill)
    killer.start()
    try:
        with pytest.raises(ConnectionLost) as lost, database.session() as session:
            session.query(sql, {"key": "row-key-7"})
    finally:
        killer.join()
    return lost.value


def test_sessions_killed_by_another_session_name_their_database(pg_db: RealDatabase, mysql_db: RealDatabase) -> None:
    pg = Database(get_connection(pg_db.conn_id), role="subscriber s1")
    tag = f"snaprepl-victim-{time.monotonic_ns()}"
    terminate = (
        f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%{tag}%' AND pid <> pg_backend_pid()"
    )
    lost = _killed_session(pg, f"SELECT pg_sleep(20), :key AS k, '{tag}'", lambda: pg_db.run(terminate))
    assert str(lost).startswith(f"lost the connection to the subscriber s1, connection '{pg_db.conn_id}' (postgres at")
    assert "server closed the connection unexpectedly" in str(lost) and "row-key-7" not in str(lost)

    my = Database(get_connection(mysql_db.conn_id), role="publisher p1")
    victims = f"SELECT id FROM information_schema.processlist WHERE info LIKE '%{tag}%' AND id <> CONNECTION_ID()"
    kill = lambda: [mysql_db.run(f"KILL {pid}") for (pid,) in mysql_db.rows(victims)]  # noqa: E731
    lost = _killed_session(my, f"SELECT SLEEP(20), :key AS k, '{tag}'", kill)
    assert str(lost).startswith(f"lost the connection to the publisher p1, connection '{mysql_db.conn_id}' (mysql at")
    assert "row-key-7" not in str(lost) and "[SQL:" not in str(lost)
    pg.dispose()
    my.dispose()


def test_a_catalog_that_died_mid_run_says_it_is_the_catalog(own_pg: OwnPostgres, unique_name: str) -> None:
    own_pg.start() if own_pg.pid() is None else None
    own_pg.psql(f"CREATE DATABASE {unique_name}")
    own = Catalog(create_engine(own_pg.url(unique_name)))
    upgrade(own.engine)
    assert own.snapshots() == []
    own_pg.stop()
    try:
        with pytest.raises(CatalogConnectionLost) as lost:
            own.snapshots()
        assert f"lost the connection to the snaprepl catalog (postgresql database 127.0.0.1:{own_pg.port}/" in str(
            lost.value
        )
        assert lost.value.retryable
    finally:
        own_pg.start()
        own.dispose()


def test_sql_without_parameters_reaches_every_database_as_written(
    pg_db: RealDatabase, mysql_db: RealDatabase, tmp_path
) -> None:
    """A statement without parameters may hold ``%`` and ``:`` (Session.execute's promise): psycopg2 and
    mysqlclient used to read ``%`` as a placeholder and fail on ``LIKE 'a%'``."""
    sqlite_conn = ConnectionInfo(conn_id="pct_sqlite", conn_type="sqlite", host=str(tmp_path / "pct.db"))
    for conn in (get_connection(pg_db.conn_id), get_connection(mysql_db.conn_id), sqlite_conn):
        with Database(conn).session() as session:
            assert session.query("SELECT CASE WHEN 'a%b' LIKE 'a%' THEN 'x%:y' END") == [("x%:y",)], conn.conn_type

"""Changes that bypass a log's row triggers are caught, never silently lost (issue 20, item 2).

Each case: a 200-row source with a snapshot log and an incremental snapshot into SQLite; the bypass,
then ordinary writes; UPDATE SNAPSHOT. Before the guards every refresh exited 0 and left the copy
different from its source. Now either the incremental refresh converges (the triggers fired after
all), or it fails naming the table and the trigger and the complete refresh that follows converges.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from snaprepl.api.script import run_script
from snaprepl.errors import CompleteRefreshRequired, LogBypassed
from tests.support.databases import RealDatabase

pytestmark = pytest.mark.spark

Run = Callable[[str], list[Any]]


@pytest.fixture
def run(catalog: Any, settings: Any, refresher: Any) -> Run:
    return lambda text: run_script(text, catalog=catalog, settings=settings, refresher=refresher)


@pytest.fixture
def fallback(catalog: Any, settings: Any, refresher: Any) -> Callable[[str], Any]:
    """UPDATE SNAPSHOT as a DAG run with ``fallback_complete`` does it."""
    from snaprepl.ops.snapshots import update_snapshot
    from snaprepl.statements.parser import parse_table_ref

    return lambda name: update_snapshot(
        parse_table_ref(name), fallback_complete=True, catalog=catalog, settings=settings, refresher=refresher
    )


def _logged(db: RealDatabase, lite: RealDatabase, run: Run, name: str) -> tuple[str, str]:
    """A 200-row source on ``db`` with its log, and its incremental snapshot in SQLite, refreshed once."""
    db.run(f"CREATE TABLE {name} (id int PRIMARY KEY, v varchar(40))")
    db.run(f"INSERT INTO {name} (id, v) VALUES " + ", ".join(f"({i}, 'v{i}')" for i in range(1, 201)))
    created = run(f"CREATE SNAPSHOT LOG FOR {name}@{db.conn_id}")
    run(f"CREATE SNAPSHOT {name}_c@{lite.conn_id} FROM {name}@{db.conn_id}")
    return str(created[0]), f"{name}_c@{lite.conn_id}"


def _same(db: RealDatabase, lite: RealDatabase, name: str) -> bool:
    source = db.rows(f"SELECT id, v FROM {name} ORDER BY id")
    return source == lite.rows(f"SELECT id, v FROM {name}_c ORDER BY id") and len(source) > 0


def _writes(db: RealDatabase, name: str) -> None:
    """20 updates and 10 deletes."""
    db.run(f"UPDATE {name} SET v = 'changed' WHERE id <= 20", f"DELETE FROM {name} WHERE id > 190")


def _converges_completely(db: RealDatabase, lite: RealDatabase, run: Run, name: str, snapshot: str) -> None:
    """The complete refresh converges, and incremental refreshes work again afterwards."""
    run(f"UPDATE SNAPSHOT {snapshot} AS NONINCREMENTAL")
    assert _same(db, lite, name)
    db.run(f"UPDATE {name} SET v = 'after' WHERE id = 100")
    outcome = run(f"UPDATE SNAPSHOT {snapshot}")[0]
    assert outcome.kind == "incremental" and _same(db, lite, name)


def test_postgres_truncate_needs_a_complete_refresh(pg_db, sqlite_db, run, fallback, catalog, unique_name) -> None:
    _, snapshot = _logged(pg_db, sqlite_db, run, unique_name)
    pg_db.run(f"TRUNCATE {unique_name}")
    pg_db.run(f"INSERT INTO {unique_name} SELECT g, 'new' || g FROM generate_series(1, 50) g")
    with pytest.raises(CompleteRefreshRequired, match=rf"table public\.{unique_name} was truncated") as failure:
        run(f"UPDATE SNAPSHOT {snapshot}")
    assert "\n" not in failure.value.message
    assert catalog.snapshot(f"main.{unique_name}_c@{sqlite_db.conn_id}").sn_needs_complete
    with pytest.raises(CompleteRefreshRequired, match="truncated"):
        run(f"UPDATE SNAPSHOT {snapshot}")  # said again until the complete refresh
    assert "fell back" in (fallback(snapshot).note or "")
    assert _same(pg_db, sqlite_db, unique_name)
    _converges_completely(pg_db, sqlite_db, run, unique_name, snapshot)


def test_postgres_replication_role_replica_still_logs(pg_db, sqlite_db, run, unique_name) -> None:
    """The triggers are enabled ALWAYS: a load tool's replica-role session is logged like any other."""
    _, snapshot = _logged(pg_db, sqlite_db, run, unique_name)
    pg_db.transaction(
        "SET LOCAL session_replication_role = replica",
        f"UPDATE {unique_name} SET v = 'changed' WHERE id <= 20",
        f"DELETE FROM {unique_name} WHERE id > 190",
    )
    pg_db.run(f"UPDATE {unique_name} SET v = 'last' WHERE id = 100")
    assert run(f"UPDATE SNAPSHOT {snapshot}")[0].kind == "incremental"
    assert _same(pg_db, sqlite_db, unique_name)


def test_postgres_triggers_disabled_and_enabled_again_fail_until_enabled_always(
    pg_db, sqlite_db, run, catalog, unique_name
) -> None:
    """DISABLE TRIGGER ALL ... ENABLE TRIGGER ALL leaves them enabled for ordinary sessions only."""
    _, snapshot = _logged(pg_db, sqlite_db, run, unique_name)
    pg_db.run(f"ALTER TABLE {unique_name} DISABLE TRIGGER ALL")
    _writes(pg_db, unique_name)
    pg_db.run(f"ALTER TABLE {unique_name} ENABLE TRIGGER ALL", f"UPDATE {unique_name} SET v = 'x' WHERE id = 100")
    trigger = f"public_{unique_name}_U_log"
    with pytest.raises(LogBypassed, match=rf"trigger {trigger} of table public\.{unique_name} is enabled") as failure:
        run(f"UPDATE SNAPSHOT {snapshot}")
    assert "ENABLE ALWAYS TRIGGER" in failure.value.hint and "DROP SNAPSHOT LOG FOR" in failure.value.hint
    with pytest.raises(LogBypassed):  # a complete refresh would not last: the triggers come first
        run(f"UPDATE SNAPSHOT {snapshot} AS NONINCREMENTAL")
    for op in "IUDT":
        pg_db.run(f'ALTER TABLE {unique_name} ENABLE ALWAYS TRIGGER "public_{unique_name}_{op}_log"')
    with pytest.raises(CompleteRefreshRequired, match=trigger):
        run(f"UPDATE SNAPSHOT {snapshot}")
    _converges_completely(pg_db, sqlite_db, run, unique_name, snapshot)


def test_postgres_trigger_off_between_two_refreshes_is_caught_by_the_event_trigger(
    pg_db, sqlite_db, run, unique_name
) -> None:
    _, snapshot = _logged(pg_db, sqlite_db, run, unique_name)
    trigger = f"public_{unique_name}_D_log"
    pg_db.run(f'ALTER TABLE {unique_name} DISABLE TRIGGER "{trigger}"')
    _writes(pg_db, unique_name)
    pg_db.run(f'ALTER TABLE {unique_name} ENABLE ALWAYS TRIGGER "{trigger}"')
    with pytest.raises(CompleteRefreshRequired, match=rf"trigger {trigger} of table public\.{unique_name}.*disabled"):
        run(f"UPDATE SNAPSHOT {snapshot}")
    _converges_completely(pg_db, sqlite_db, run, unique_name, snapshot)


def test_postgres_dropped_trigger_fails_every_refresh(pg_db, sqlite_db, run, catalog, unique_name) -> None:
    _, snapshot = _logged(pg_db, sqlite_db, run, unique_name)
    trigger = f"public_{unique_name}_I_log"
    pg_db.run(f'DROP TRIGGER "{trigger}" ON {unique_name}', f"INSERT INTO {unique_name} VALUES (500, 'lost')")
    for statement in (f"UPDATE SNAPSHOT {snapshot}", f"UPDATE SNAPSHOT {snapshot} AS NONINCREMENTAL"):
        with pytest.raises(LogBypassed, match=rf"trigger {trigger} of table public\.{unique_name} is missing"):
            run(statement)
    record = catalog.snapshot(f"main.{unique_name}_c@{sqlite_db.conn_id}")
    assert record.sn_last_status == "failed" and "is missing" in record.sn_needs_complete


def test_postgres_event_trigger_leaves_other_ddl_alone_and_goes_with_the_last_log(
    pg_db, sqlite_db, run, unique_name
) -> None:
    created, snapshot = _logged(pg_db, sqlite_db, run, unique_name)
    assert "note:" not in created, "the tests run as a superuser: the event trigger is installed"
    other = f"{unique_name}_o"
    pg_db.run(
        f"CREATE TABLE {other} (id int PRIMARY KEY)",
        f"ALTER TABLE {other} ADD COLUMN x int",
        f"CREATE TRIGGER t_{other} AFTER INSERT ON {other} "
        "FOR EACH ROW EXECUTE FUNCTION suppress_redundant_updates_trigger()",
        f"ALTER TABLE {other} DISABLE TRIGGER ALL",
        f'DROP TRIGGER "t_{other}" ON {other}',
        f"DROP TABLE {other}",
        # a logged table's unrelated change (not its columns: an added column is followed by a complete
        # refresh, docs/concepts/schema-changes.md)
        f"ALTER TABLE {unique_name} ADD CONSTRAINT {unique_name}_k CHECK (id > -1000000)",
        # the guard table gone does not break anyone's DDL either (the functions warn)
        f"BEGIN; DROP TABLE rlog_snaprepl_guard CASCADE; ALTER TABLE {unique_name} DISABLE TRIGGER ALL; ROLLBACK",
    )
    assert run(f"UPDATE SNAPSHOT {snapshot}")[0].kind == "incremental"
    run(f"DROP SNAPSHOT {snapshot}; DROP SNAPSHOT LOG FOR {unique_name}@{pg_db.conn_id}")
    assert pg_db.triggers_on(unique_name) == []
    watched = pg_db.rows("SELECT count(*) FROM pg_tables WHERE tablename = 'rlog_snaprepl_guard'")[0][0]
    left = pg_db.rows("SELECT count(*) FROM rlog_snaprepl_guard WHERE event = 'watch'")[0][0] if watched else 0
    if not left:  # the last log of the schema: every guard object is gone
        assert pg_db.rows("SELECT evtname FROM pg_event_trigger WHERE evtname LIKE 'snaprepl%'") == []
        assert pg_db.rows("SELECT proname FROM pg_proc WHERE proname LIKE 'snaprepl_guard%'") == []
        assert not watched
    else:
        assert pg_db.rows(f"SELECT count(*) FROM rlog_snaprepl_guard WHERE tbl = '{unique_name}'") == [(0,)]


def test_mysql_truncate_and_a_recreated_trigger_need_a_complete_refresh(
    mysql_db, sqlite_db, run, fallback, catalog, unique_name
) -> None:
    _, snapshot = _logged(mysql_db, sqlite_db, run, unique_name)
    mysql_db.run(f"TRUNCATE TABLE {unique_name}")
    mysql_db.run(f"INSERT INTO {unique_name} SELECT seq, CONCAT('new', seq) FROM seq_1_to_50")
    with pytest.raises(CompleteRefreshRequired, match=rf"table {mysql_db.name}\.{unique_name} was truncated"):
        run(f"UPDATE SNAPSHOT {snapshot}")
    fallback(snapshot)
    assert _same(mysql_db, sqlite_db, unique_name)
    trigger = f"{mysql_db.name}_{unique_name}_D_log"
    body = mysql_db.rows(f"SHOW CREATE TRIGGER `{trigger}`")[0][2]
    mysql_db.run(f"DROP TRIGGER `{trigger}`", f"DELETE FROM {unique_name} WHERE id > 40", "DO SLEEP(0.05)", body)
    with pytest.raises(CompleteRefreshRequired, match=f"trigger {trigger} .* dropped and created again"):
        run(f"UPDATE SNAPSHOT {snapshot}")
    _converges_completely(mysql_db, sqlite_db, run, unique_name, snapshot)
    mysql_db.run(f"DROP TRIGGER `{trigger}`")
    with pytest.raises(LogBypassed, match=f"trigger {trigger} of table .* is missing"):
        run(f"UPDATE SNAPSHOT {snapshot}")


def test_sqlite_delete_without_where_logs_every_row_and_a_dropped_trigger_fails(
    sqlite_db, pg_db, run, unique_name
) -> None:
    """SQLite has no TRUNCATE: its DELETE without WHERE fires the row triggers for every row."""
    sqlite_db.run(f"CREATE TABLE {unique_name} (id int PRIMARY KEY, v varchar(40))")
    sqlite_db.run(f"INSERT INTO {unique_name} (id, v) VALUES " + ", ".join(f"({i}, 'v{i}')" for i in range(1, 201)))
    run(f"CREATE SNAPSHOT LOG FOR {unique_name}@{sqlite_db.conn_id}")
    run(f"CREATE SNAPSHOT {unique_name}_c@{pg_db.conn_id} FROM {unique_name}@{sqlite_db.conn_id}")
    sqlite_db.run(f"DELETE FROM {unique_name}")
    assert sqlite_db.rows(f'SELECT "DMLTYPE", count(*) FROM "RLOG_{unique_name}" GROUP BY 1') == [("D", 200)]
    sqlite_db.run(f"INSERT INTO {unique_name} VALUES (7, 'seven')")
    run(f"UPDATE SNAPSHOT {unique_name}_c@{pg_db.conn_id}")
    assert pg_db.rows(f"SELECT id, v FROM {unique_name}_c") == [(7, "seven")]
    trigger = f"main_{unique_name}_U_log"
    sqlite_db.run(f'DROP TRIGGER "{trigger}"')
    with pytest.raises(LogBypassed, match=f"trigger {trigger} of table main.{unique_name} is missing"):
        run(f"UPDATE SNAPSHOT {unique_name}_c@{pg_db.conn_id}")


def test_postgres_without_a_superuser_skips_the_event_trigger_and_says_so(
    pg_db, sqlite_db, run, catalog, settings, unique_name, monkeypatch
) -> None:
    """The log's owner is no superuser: no event trigger (said once, and in status); TRUNCATE and the
    per-refresh check still work."""
    from snaprepl.reporting.render import render_text
    from snaprepl.reporting.status import collect_status

    role, conn_id = f"r_{unique_name}", f"pg_{unique_name}"
    pg_db.run(f"CREATE ROLE {role} LOGIN", f"CREATE SCHEMA {role} AUTHORIZATION {role}")
    monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}", f"postgresql://{role}@127.0.0.1:5432/{pg_db.name}")
    table = f"{role}.{unique_name}"
    try:
        pg_db.run(
            f"CREATE TABLE {table} (id int PRIMARY KEY, v varchar(40))",
            f"INSERT INTO {table} SELECT g, 'v' || g FROM generate_series(1, 200) g",
            f"ALTER TABLE {table} OWNER TO {role}",
        )
        created = str(run(f"CREATE SNAPSHOT LOG FOR {table}@{conn_id}")[0])
        assert created.count("note: no event trigger (it needs a superuser") == 1
        run(f"CREATE SNAPSHOT {unique_name}_c@{sqlite_db.conn_id} FROM {table}@{conn_id}")
        text = render_text(collect_status(catalog, settings, probe=False))
        assert f"note: {table}@{conn_id}: no event trigger" in text
        pg_db.run(f"TRUNCATE {table}", f"INSERT INTO {table} VALUES (1, 'one')")
        with pytest.raises(CompleteRefreshRequired, match=rf"table {role}\.{unique_name} was truncated"):
            run(f"UPDATE SNAPSHOT {unique_name}_c@{sqlite_db.conn_id}")
        run(f"UPDATE SNAPSHOT {unique_name}_c@{sqlite_db.conn_id} AS NONINCREMENTAL")
        assert sqlite_db.rows(f"SELECT id, v FROM {unique_name}_c") == [(1, "one")]
        run(f"DROP SNAPSHOT {unique_name}_c@{sqlite_db.conn_id}; DROP SNAPSHOT LOG FOR {table}@{conn_id}")
        assert pg_db.rows(f"SELECT count(*) FROM pg_tables WHERE schemaname = '{role}'") == [(1,)]
    finally:
        from snaprepl.database.sessions import forget_databases

        forget_databases()
        pg_db.run(f"DROP SCHEMA {role} CASCADE", f"DROP ROLE {role}")

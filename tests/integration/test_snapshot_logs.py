"""Snapshot logs on real PostgreSQL, MariaDB and SQLite (SEMANTICS section 3)."""

from __future__ import annotations

import os
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from snaprepl import api
from snaprepl.errors import (
    ConnectionNotFound,
    DdlFailed,
    NoPrimaryKey,
    SnapshotLogExists,
    SnapshotLogNotFound,
    StatementSyntaxError,
    TableNotFound,
)
from tests.support.databases import RealDatabase


def make_table(db: RealDatabase, name: str, *, composite: bool = False) -> None:
    i, t = db.int_type(), db.text_type()
    if composite:
        db.run(f"CREATE TABLE {db.q(name)} (a {i} NOT NULL, b {t} NOT NULL, v {i}, PRIMARY KEY (a, b))")
    else:
        db.run(f"CREATE TABLE {db.q(name)} (id {i} NOT NULL PRIMARY KEY, v {t})")


def rlog_rows(db: RealDatabase, name: str) -> list[tuple[object, ...]]:
    """RLOG_<name>'s rows as the seed has them (keys, SNAPTIME, DMLTYPE, RLOG_ROWGUID): a PostgreSQL log
    also ends with SNAPXID, the writer's transaction id (exact watermarks), which must be there."""
    rows = db.rows(f"SELECT * FROM {db.q('RLOG_' + name)}")
    if db.dialect != "postgres":
        return rows
    assert all(isinstance(r[-1], (int, str)) for r in rows), "SNAPXID holds the writer's transaction id"
    return [r[:-1] for r in rows]


def log_rows(db: RealDatabase, name: str) -> dict[tuple[object, ...], str]:
    """Key -> DMLTYPE of RLOG_<name>."""
    return {tuple(r[:-3]): r[-2] for r in rlog_rows(db, name)}


def test_create_log_makes_rlog_and_three_seed_named_triggers(real_db: RealDatabase, catalog, unique_name: str) -> None:
    make_table(real_db, unique_name)
    created = api.repl_create_snapshot_log(f"{unique_name}@{real_db.conn_id}", catalog=catalog)
    assert real_db.table_exists(f"RLOG_{unique_name}")
    prefix = f"{real_db.schema}_{unique_name}"
    row_triggers = [f"{prefix}_D_log", f"{prefix}_I_log", f"{prefix}_U_log"]
    # PostgreSQL adds the TRUNCATE trigger of the log's guard (issue 20)
    truncate = [f"{prefix}_T_log"] if real_db.dialect == "postgres" else []
    assert real_db.triggers_on(unique_name) == sorted(row_triggers + truncate)
    record = catalog.log(f"{real_db.schema}.{unique_name}@{real_db.conn_id}")
    assert record is not None and record.key_columns == ["id"] and record.snl_kind == "snapshot"
    assert record.objects.triggers == created.record.objects.triggers
    columns = [r for r in real_db.rows(f"SELECT * FROM {real_db.q('RLOG_' + unique_name)} WHERE 1 = 0")]
    assert columns == []


def test_insert_update_delete_and_key_change_are_logged_latest_wins(
    real_db: RealDatabase, catalog, unique_name: str
) -> None:
    make_table(real_db, unique_name)
    api.repl_create_snapshot_log(f"{unique_name}@{real_db.conn_id}", catalog=catalog)
    t = real_db.q(unique_name)
    real_db.run(
        f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')",
        f"UPDATE {t} SET v = 'x' WHERE id = 2",
        f"UPDATE {t} SET id = 10 WHERE id = 3",
        f"DELETE FROM {t} WHERE id = 1",
    )
    assert log_rows(real_db, unique_name) == {(1,): "D", (2,): "U", (3,): "D", (4,): "I", (10,): "I"}
    real_db.run(f"INSERT INTO {t} VALUES (1, 'again')", f"DELETE FROM {t} WHERE id = 4")
    assert log_rows(real_db, unique_name) == {(1,): "I", (2,): "U", (3,): "D", (4,): "D", (10,): "I"}


def test_every_change_gets_a_fresh_rowguid_and_a_utc_snaptime(real_db: RealDatabase, catalog, unique_name: str) -> None:
    make_table(real_db, unique_name)
    api.repl_create_snapshot_log(f"{unique_name}@{real_db.conn_id}", catalog=catalog)
    t = real_db.q(unique_name)
    before = datetime.now(UTC).replace(tzinfo=None) - timedelta(seconds=2)
    real_db.run(f"INSERT INTO {t} VALUES (1, 'a')")
    first = rlog_rows(real_db, unique_name)[0]
    real_db.run(f"UPDATE {t} SET v = 'b' WHERE id = 1")
    second = rlog_rows(real_db, unique_name)[0]
    after = datetime.now(UTC).replace(tzinfo=None) + timedelta(seconds=2)
    assert first[-1] != second[-1] and len(second[-1]) >= 32
    snaptime = second[1] if isinstance(second[1], datetime) else datetime.fromisoformat(second[1])
    assert before <= snaptime <= after


def test_multi_row_statement_in_one_transaction_shares_a_snaptime_on_postgres(pg_db, catalog, unique_name) -> None:
    make_table(pg_db, unique_name)
    api.repl_create_snapshot_log(f"{unique_name}@{pg_db.conn_id}", catalog=catalog)
    t = pg_db.q(unique_name)
    pg_db.transaction(
        f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b')", f"UPDATE {t} SET v = 'z'", f"INSERT INTO {t} VALUES (3, 'c')"
    )
    times = {r[0] for r in pg_db.rows(f'SELECT "SNAPTIME" FROM "RLOG_{unique_name}"')}
    assert len(times) == 1, "one source transaction is one SNAPTIME group"
    assert log_rows(pg_db, unique_name) == {(1,): "U", (2,): "U", (3,): "I"}


def test_composite_keys_and_key_part_changes(real_db: RealDatabase, catalog, unique_name: str) -> None:
    make_table(real_db, unique_name, composite=True)
    api.repl_create_snapshot_log(f"{unique_name}@{real_db.conn_id}", catalog=catalog)
    t = real_db.q(unique_name)
    real_db.run(
        f"INSERT INTO {t} VALUES (1, 'x', 1), (1, 'y', 2), (2, 'x', 3)",
        f"UPDATE {t} SET b = 'z' WHERE a = 1 AND b = 'y'",
        f"UPDATE {t} SET v = 9 WHERE a = 2",
    )
    assert log_rows(real_db, unique_name) == {(1, "x"): "I", (1, "y"): "D", (1, "z"): "I", (2, "x"): "U"}


def test_mixed_case_quoted_names(real_db: RealDatabase, catalog) -> None:
    name = f"Mixed Case {uuid.uuid4().hex[:6]}"
    i = real_db.int_type()
    real_db.run(f"CREATE TABLE {real_db.q(name)} ({real_db.q('Key Col')} {i} PRIMARY KEY, {real_db.q('Val')} {i})")
    quoted = real_db.q(name)
    api.repl_create_snapshot_log(f"{quoted}@{real_db.conn_id}", catalog=catalog)
    real_db.run(f"INSERT INTO {quoted} VALUES (7, 1)")
    assert log_rows(real_db, name) == {(7,): "I"}
    rlog_columns = rlog_rows(real_db, name)
    assert len(rlog_columns[0]) == 4


def test_schema_qualified_names(pg_db: RealDatabase, catalog, unique_name: str) -> None:
    schema = f"s_{uuid.uuid4().hex[:6]}"
    pg_db.run(f"CREATE SCHEMA {schema}", f"CREATE TABLE {schema}.{unique_name} (id int PRIMARY KEY, v text)")
    created = api.repl_create_snapshot_log(f"{schema}.{unique_name}@{pg_db.conn_id}", catalog=catalog)
    assert created.record.snl_source == f"{schema}.{unique_name}@{pg_db.conn_id}"
    assert created.record.objects.triggers[0] == f"{schema}_{unique_name}_I_log"
    pg_db.run(f"INSERT INTO {schema}.{unique_name} VALUES (1, 'a')")
    assert pg_db.rows(f'SELECT "RLOG_id", "DMLTYPE" FROM {schema}."RLOG_{unique_name}"') == [(1, "I")]


def test_case_sensitive_key_collation_keeps_one_log_row_per_distinct_key(mysql_db, catalog, unique_name) -> None:
    mysql_db.run(f"CREATE TABLE {unique_name} (k varchar(10) COLLATE utf8mb4_bin PRIMARY KEY, v int)")
    api.repl_create_snapshot_log(f"{unique_name}@{mysql_db.conn_id}", catalog=catalog)
    mysql_db.run(f"INSERT INTO {unique_name} VALUES ('a', 1), ('A', 2)")
    assert log_rows(mysql_db, unique_name) == {("a",): "I", ("A",): "I"}


def test_user_insert_or_ignore_does_not_weaken_the_sqlite_log(sqlite_db, catalog, unique_name) -> None:
    make_table(sqlite_db, unique_name)
    api.repl_create_snapshot_log(f"{unique_name}@{sqlite_db.conn_id}", catalog=catalog)
    t = sqlite_db.q(unique_name)
    sqlite_db.run(f"INSERT INTO {t} VALUES (1, 'a')", f"DELETE FROM {t}", f"INSERT OR IGNORE INTO {t} VALUES (1, 'b')")
    assert log_rows(sqlite_db, unique_name) == {(1,): "I"}


def test_drop_log_removes_triggers_and_rlog_and_unregisters(real_db: RealDatabase, catalog, unique_name) -> None:
    make_table(real_db, unique_name)
    api.repl_create_snapshot_log(f"{unique_name}@{real_db.conn_id}", catalog=catalog)
    result = api.repl_drop_snapshot_log(f"{unique_name}@{real_db.conn_id}", catalog=catalog)
    assert result.source_existed
    assert real_db.triggers_on(unique_name) == []
    assert not real_db.table_exists(f"RLOG_{unique_name}")
    assert catalog.log(f"{real_db.schema}.{unique_name}@{real_db.conn_id}") is None
    real_db.run(f"INSERT INTO {real_db.q(unique_name)} VALUES (1, 'a')")  # no trigger left to fail


def test_drop_log_after_the_source_table_was_dropped(real_db: RealDatabase, catalog, unique_name) -> None:
    make_table(real_db, unique_name)
    api.repl_create_snapshot_log(f"{unique_name}@{real_db.conn_id}", catalog=catalog)
    real_db.run(f"DROP TABLE {real_db.q(unique_name)}")
    result = api.repl_drop_snapshot_log(f"{unique_name}@{real_db.conn_id}", catalog=catalog)
    assert not result.source_existed
    assert not real_db.table_exists(f"RLOG_{unique_name}")
    assert catalog.log(f"{real_db.schema}.{unique_name}@{real_db.conn_id}") is None


def test_table_without_primary_key_is_refused_and_nothing_is_made(real_db: RealDatabase, catalog, unique_name) -> None:
    real_db.run(f"CREATE TABLE {real_db.q(unique_name)} (a {real_db.int_type()})")
    with pytest.raises(NoPrimaryKey, match=f"{unique_name}.*no primary key.*ADD PRIMARY KEY"):
        api.repl_create_snapshot_log(f"{unique_name}@{real_db.conn_id}", catalog=catalog)
    assert not real_db.table_exists(f"RLOG_{unique_name}")
    assert real_db.triggers_on(unique_name) == []


def test_missing_table_and_unknown_connection(real_db: RealDatabase, catalog, unique_name) -> None:
    with pytest.raises(TableNotFound, match=f"{unique_name}.*does not exist on connection '{real_db.conn_id}'"):
        api.repl_create_snapshot_log(f"{unique_name}@{real_db.conn_id}", catalog=catalog)
    with pytest.raises(ConnectionNotFound, match=r"'nowhere' is not defined.*AIRFLOW_CONN_NOWHERE"):
        api.repl_create_snapshot_log(f"{unique_name}@nowhere", catalog=catalog)


def test_wrong_case_of_a_postgres_name_gets_a_hint(pg_db: RealDatabase, catalog) -> None:
    name = f"Camel{uuid.uuid4().hex[:6]}"
    pg_db.run(f'CREATE TABLE "{name}" (id int PRIMARY KEY)')
    with pytest.raises(TableNotFound, match=f'did you mean "{name}"'):
        api.repl_create_snapshot_log(f"{name}@{pg_db.conn_id}", catalog=catalog)


def test_log_that_exists_or_does_not(real_db: RealDatabase, catalog, unique_name) -> None:
    make_table(real_db, unique_name)
    api.repl_create_snapshot_log(f"{unique_name}@{real_db.conn_id}", catalog=catalog)
    with pytest.raises(SnapshotLogExists, match="already exists"):
        api.repl_create_snapshot_log(f"{unique_name}@{real_db.conn_id}", catalog=catalog)
    api.repl_drop_snapshot_log(f"{unique_name}@{real_db.conn_id}", catalog=catalog)
    with pytest.raises(SnapshotLogNotFound, match="no snapshot log"):
        api.repl_drop_snapshot_log(f"{unique_name}@{real_db.conn_id}", catalog=catalog)


def test_unregistered_rlog_table_in_the_way_is_reported(real_db: RealDatabase, catalog, unique_name) -> None:
    make_table(real_db, unique_name)
    real_db.run(f"CREATE TABLE {real_db.q('RLOG_' + unique_name)} (x {real_db.int_type()})")
    with pytest.raises(SnapshotLogExists, match="not a registered snapshot log"):
        api.repl_create_snapshot_log(f"{unique_name}@{real_db.conn_id}", catalog=catalog)
    assert real_db.triggers_on(unique_name) == []


@pytest.mark.parametrize(
    "name",
    [
        'orders"; DROP TABLE victim; --',
        "orders; DROP TABLE victim",
        "victim' OR '1'='1",
    ],
)
def test_sql_injected_into_names_is_inert(real_db: RealDatabase, catalog, name: str) -> None:
    victim = f"victim_{uuid.uuid4().hex[:6]}"
    make_table(real_db, victim)
    attempt = name.replace("victim", victim)
    quoted = real_db.q(attempt) if '"' in attempt else attempt
    with pytest.raises((TableNotFound, StatementSyntaxError)):
        api.repl_create_snapshot_log(f"{quoted}@{real_db.conn_id}", catalog=catalog)
    assert real_db.table_exists(victim)


def test_failed_trigger_creation_leaves_nothing_behind(real_db: RealDatabase, catalog, unique_name) -> None:
    make_table(real_db, unique_name)
    other = f"other_{uuid.uuid4().hex[:6]}"
    make_table(real_db, other)
    clash = f"{real_db.schema}_{unique_name}_D_log"
    # A trigger of that name already exists elsewhere, so the last step (the delete trigger) fails.
    if real_db.dialect == "postgres":
        real_db.run(
            f"CREATE FUNCTION {clash}_f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$",
            f'CREATE TRIGGER "{clash}" AFTER DELETE ON {unique_name} FOR EACH ROW EXECUTE FUNCTION {clash}_f()',
        )
    elif real_db.dialect == "mysql":
        real_db.run(f"CREATE TRIGGER `{clash}` AFTER DELETE ON `{other}` FOR EACH ROW SET @x = 1")
    else:
        real_db.run(f'CREATE TRIGGER "{clash}" AFTER DELETE ON "{other}" BEGIN SELECT 1; END')
    with pytest.raises(DdlFailed, match="nothing of it was left behind"):
        api.repl_create_snapshot_log(f"{unique_name}@{real_db.conn_id}", catalog=catalog)
    assert not real_db.table_exists(f"RLOG_{unique_name}")
    ours = [t for t in real_db.triggers_on(unique_name) if t.endswith(("_I_log", "_U_log")) and unique_name in t]
    assert ours == []
    assert catalog.log(f"{real_db.schema}.{unique_name}@{real_db.conn_id}") is None


def test_purge_without_snapshots_deletes_nothing(real_db: RealDatabase, catalog, settings, unique_name) -> None:
    make_table(real_db, unique_name)
    api.repl_create_snapshot_log(f"{unique_name}@{real_db.conn_id}", catalog=catalog)
    real_db.run(f"INSERT INTO {real_db.q(unique_name)} VALUES (1, 'a')")
    result = api.repl_purge_snapshot_log(f"{unique_name}@{real_db.conn_id}", catalog=catalog, settings=settings)
    assert "pull replication" in str(result) and result.deleted == 0
    assert log_rows(real_db, unique_name) == {(1,): "I"}


def test_jdbc_connection_type_runs_through_the_jdbc_hook(pg_db: RealDatabase, catalog, unique_name) -> None:
    conn_id = "test_pg_jdbc"
    os.environ[f"AIRFLOW_CONN_{conn_id.upper()}"] = (
        '{"conn_type": "jdbc", "host": "jdbc:postgresql://127.0.0.1:5432/' + pg_db.name + '", "login": "postgres"}'
    )
    make_table(pg_db, unique_name)
    created = api.repl_create_snapshot_log(f"{unique_name}@{conn_id}", catalog=catalog)
    assert created.record.snl_dialect == "postgres"
    pg_db.run(f"INSERT INTO {unique_name} VALUES (5, 'x')")
    assert log_rows(pg_db, unique_name) == {(5,): "I"}
    api.repl_drop_snapshot_log(f"{unique_name}@{conn_id}", catalog=catalog)
    assert pg_db.triggers_on(unique_name) == []

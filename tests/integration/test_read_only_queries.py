"""Issue 14.5: "a query cannot write" is true. Snapshot queries run in read-only transactions (the
creation probe, a complete refresh's planning queries, Spark's JDBC reads); on SQLite, which has
none, functions snaprepl cannot vouch for are refused when the query is parsed."""

from __future__ import annotations

import pytest

from snaprepl import api
from snaprepl.errors import InvalidCondition, RefreshFailed
from tests.support.databases import RealDatabase

pytestmark = [pytest.mark.spark]


def setval_query(db: RealDatabase, table: str, seq: str) -> str:
    call = f"setval(''{seq}'', 4242)" if db.dialect == "postgres" else f"SETVAL({seq}, 4242)"
    return f"SELECT id, {call} AS s FROM {table}@{db.conn_id}"


def sequence_value(db: RealDatabase, seq: str) -> int:
    if db.dialect == "postgres":
        return int(db.rows(f"SELECT last_value FROM {seq}")[0][0])
    return int(db.rows(f"SELECT next_not_cached_value FROM {seq}")[0][0])


@pytest.fixture(params=["postgres", "mysql"])
def writable(request: pytest.FixtureRequest, unique_name: str) -> tuple[RealDatabase, str, str]:
    """A database with a table and a sequence the issue's query would move."""
    db: RealDatabase = request.getfixturevalue({"postgres": "pg_db", "mysql": "mysql_db"}[request.param])
    table, seq = f"{unique_name}_v", f"{unique_name}_seq"
    db.run(f"CREATE SEQUENCE {seq}", f"CREATE TABLE {table} (id int PRIMARY KEY)")
    return db, table, seq


def test_a_query_that_writes_is_refused_at_creation_and_changes_nothing(
    writable, catalog, settings, refresher, unique_name
) -> None:
    db, table, seq = writable
    db.run(f"INSERT INTO {table} VALUES (1), (2), (3)")
    before = sequence_value(db, seq)
    query = setval_query(db, table, seq).replace("''", "'")

    with pytest.raises(InvalidCondition, match=r"(?i)read.only") as failure:
        api.repl_create_snapshot(
            query, f"{unique_name}@{db.conn_id}", catalog=catalog, settings=settings, refresher=refresher
        )

    assert "may not write" in str(failure.value)
    assert sequence_value(db, seq) == before
    assert not db.table_exists(unique_name) and catalog.snapshot(f"{db.schema}.{unique_name}@{db.conn_id}") is None


def test_a_query_that_writes_fails_its_refresh_and_changes_nothing(
    pg_db, catalog, settings, refresher, unique_name
) -> None:
    table, seq = f"{unique_name}_v", f"{unique_name}_seq"
    pg_db.run(f"CREATE SEQUENCE {seq}", f"CREATE TABLE {table} (id int PRIMARY KEY)")
    query = setval_query(pg_db, table, seq).replace("''", "'")
    dest = f"{unique_name}@{pg_db.conn_id}"
    api.repl_create_snapshot(query, dest, catalog=catalog, settings=settings, refresher=refresher)  # no rows yet
    pg_db.run(f"INSERT INTO {table} SELECT generate_series(1, 50)")
    before = sequence_value(pg_db, seq)

    with pytest.raises(RefreshFailed, match="read-only transaction"):
        api.repl_refresh_noninc_snapshot(dest, catalog=catalog, settings=settings, refresher=refresher)

    assert sequence_value(pg_db, seq) == before == 1
    assert pg_db.rows(f"SELECT count(*) FROM {unique_name}") == [(0,)]


@pytest.mark.parametrize("call", ["load_extension('/tmp/evil.so')", "my_udf(id)", "fts3_tokenizer('x')"])
def test_sqlite_refuses_functions_it_cannot_vouch_for(
    sqlite_db, catalog, settings, refresher, unique_name, call
) -> None:
    sqlite_db.run(f"CREATE TABLE {unique_name}_v (id INTEGER PRIMARY KEY)")
    query = f"SELECT id, {call} AS x FROM {unique_name}_v@{sqlite_db.conn_id}"
    with pytest.raises(InvalidCondition, match="cannot vouch for on SQLite"):
        api.repl_create_snapshot(
            query, f"{unique_name}@{sqlite_db.conn_id}", catalog=catalog, settings=settings, refresher=refresher
        )
    assert not sqlite_db.table_exists(unique_name)


def test_sqlite_read_only_sessions_refuse_writes_and_leave_the_connection_writable(sqlite_db, unique_name) -> None:
    from snaprepl.database.sessions import Database

    sqlite_db.run(f"CREATE TABLE {unique_name} (id INTEGER PRIMARY KEY)")
    database = Database.for_conn_id(sqlite_db.conn_id)
    with pytest.raises(Exception, match=r"readonly|read-only|attempt to write"), database.session(read_only=True) as s:
        s.execute(f"INSERT INTO {unique_name} VALUES (1)")
    with database.session() as session:  # the pooled connection is writable again
        session.execute(f"INSERT INTO {unique_name} VALUES (2)")
    assert sqlite_db.rows(f"SELECT id FROM {unique_name}") == [(2,)]

"""Servers, publications, subscriptions and resolvers: their life cycle, the initial load, and bad
input, which gets a clear error and leaves nothing half-made."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from snaprepl import api
from snaprepl.errors import (
    ConnectionNotFound,
    InvalidArgument,
    InvalidName,
    NoPrimaryKey,
    SnapshotExists,
    SnapshotLogInUse,
    SnapshotNotFound,
    StatementSyntaxError,
    TableNotFound,
)
from tests.support.bidir import Servers, change, item_rows
from tests.support.databases import RealDatabase


def _columns(db: RealDatabase, table: str) -> list[str]:
    with db.connect() as conn:
        cur = conn.cursor()
        cur.execute(f"SELECT * FROM {db.q(table)} WHERE 1 = 0")
        return [d[0] for d in cur.description]


def fresh_table(db: RealDatabase, rows: int = 3, key: bool = True) -> str:
    table = f"pub_{uuid.uuid4().hex[:8]}"
    pk = " PRIMARY KEY" if key else ""
    db.run(f"CREATE TABLE {table} (id int{pk}, v varchar(20))")
    if rows:
        db.run(f"INSERT INTO {table} SELECT g, 'v' || g FROM generate_series(1, {rows}) g")
    return table


def test_servers_have_unique_replication_names(servers: Servers, pg_db: RealDatabase, mysql_db: RealDatabase) -> None:
    assert api.repl_snp_server(servers.pub.conn_id) == servers.name(servers.pub), "registering again is harmless"
    assert api.repl_server_name(servers.lite.conn_id) == servers.name(servers.lite)
    # Two test databases of one session share their name: the second registration must fail.
    first = api.repl_snp_server(pg_db.conn_id)
    with pytest.raises(InvalidArgument, match=f"replication name '{first}' already belongs") as failure:
        api.repl_snp_server(mysql_db.conn_id)
    assert "replication_name" in str(failure.value), "the error says how to give it another name"
    with pytest.raises(InvalidArgument, match="is not a registered replication server"):
        api.repl_server_name(mysql_db.conn_id)
    with pytest.raises(ConnectionNotFound):
        api.repl_snp_server("no_such_connection")


def test_publish_subscribe_and_drop_leave_no_trace(
    servers: Servers, sql: Callable[[str], list[Any]], catalog: Any
) -> None:
    table = fresh_table(servers.pub)
    item = f"public.{table}@bd_pub"
    my = servers.name(servers.my)
    sql(f"REPL_CREATE_SNAPSHOT_PUB('{table}@bd_pub', 2); REPL_CREATE_SNAPSHOT_SUB('{my}', '{table}@bd_pub', 2)")
    assert "ROWGUID" in _columns(servers.pub, table) and "ROWGUID" in _columns(servers.my, table)
    # PostgreSQL's fourth is the TRUNCATE trigger of the log's guard (MariaDB has none)
    assert len(servers.pub.triggers_on(table)) == 4 and len(servers.my.triggers_on(table)) == 3
    assert {r[2].split("@")[0] for r in servers.pub.rows(f'SELECT id, v, "ROWGUID" FROM {table}')} == {
        servers.name(servers.pub)
    }, "existing rows get versions of the publisher"
    with pytest.raises(SnapshotExists):
        sql(f"REPL_CREATE_SNAPSHOT_PUB('{table}@bd_pub', 2)")
    with pytest.raises(SnapshotLogInUse, match="REPL_DROP_SNAPSHOT_PUB"):
        sql(f"DROP SNAPSHOT LOG FOR {table}@bd_pub")

    sql(f"REPL_DROP_SNAPSHOT_SUB('{my}', '{table}@bd_pub', 2)")
    assert not servers.my.table_exists(table) and catalog.subscription(my, item) is None
    sql(f"REPL_DROP_SNAPSHOT_PUB('{table}@bd_pub', 2)")
    assert _columns(servers.pub, table) == ["id", "v"] and servers.pub.triggers_on(table) == []
    assert not servers.pub.table_exists(f"RLOG_{table}")
    assert catalog.publication(item) is None and catalog.log(item) is None
    assert servers.pub.rows(f"SELECT COUNT(*) FROM {table}") == [(3,)], "the data stays"


def test_dropping_a_publication_drops_its_subscriptions(
    servers: Servers, items: Callable[..., str], sql: Callable[[str], list[Any]], catalog: Any
) -> None:
    table = items([(1, "a", "1.00")], [("U", 1, "max", "price")])
    item = f"public.{table}@bd_pub"
    sql(f"REPL_DROP_SNAPSHOT_PUB('{item}', 2)")
    for db in servers.subscribers:
        assert not db.table_exists(table) and not db.table_exists(f"RLOG_{table}")
    assert catalog.subscriptions(item) == [] and catalog.resolvers(item) == []


@pytest.mark.parametrize(
    ("statement", "error", "message"),
    [
        ("REPL_CREATE_SNAPSHOT_PUB('{t}@bd_pub', 1)", InvalidArgument, "type 1"),
        ("REPL_CREATE_SNAPSHOT_PUB('{t}@bd_pub', 3)", InvalidArgument, "type 3 is unknown"),
        ("REPL_CREATE_SNAPSHOT_PUB('missing_table@bd_pub', 2)", TableNotFound, "missing_table"),
        ("REPL_CREATE_SNAPSHOT_PUB('{t}@no_such_conn', 2)", ConnectionNotFound, "no_such_conn"),
        ("REPL_CREATE_SNAPSHOT_PUB('{t}; DROP TABLE x@bd_pub', 2)", StatementSyntaxError, "not a table reference"),
        ("REPL_CREATE_SNAPSHOT_PUB('Other.public.{t}@bd_pub', 2)", InvalidName, "qualifier"),
        ("REPL_CREATE_SNAPSHOT_SUB('nobody', '{t}@bd_pub', 2)", SnapshotNotFound, "not published"),
        ("REPL_UPDATE_SNAPSHOT('{t}@bd_pub', 2)", SnapshotNotFound, "not published"),
    ],
)
def test_bad_publication_input_is_refused_and_changes_nothing(
    servers: Servers, sql: Callable[[str], list[Any]], statement: str, error: type, message: str
) -> None:
    table = fresh_table(servers.pub)
    with pytest.raises(error, match=message):
        sql(statement.format(t=table))
    assert _columns(servers.pub, table) == ["id", "v"] and servers.pub.triggers_on(table) == []


def test_a_table_without_primary_key_cannot_be_published(servers: Servers, sql: Callable[[str], list[Any]]) -> None:
    table = fresh_table(servers.pub, key=False)
    with pytest.raises(NoPrimaryKey, match="add a primary key"):
        sql(f"REPL_CREATE_SNAPSHOT_PUB('{table}@bd_pub', 2)")
    assert _columns(servers.pub, table) == ["id", "v"] and servers.pub.triggers_on(table) == []


def test_bad_subscriptions_and_resolvers_are_refused(
    servers: Servers, sql: Callable[[str], list[Any]], catalog: Any
) -> None:
    table = fresh_table(servers.pub)
    item = f"{table}@bd_pub"
    sql(f"REPL_CREATE_SNAPSHOT_PUB('{item}', 2)")
    lite = servers.name(servers.lite)
    with pytest.raises(InvalidArgument, match="there is no replication server 'nobody'"):
        sql(f"REPL_CREATE_SNAPSHOT_SUB('nobody', '{item}', 2)")
    with pytest.raises(InvalidArgument, match="is the publisher"):
        sql(f"REPL_CREATE_SNAPSHOT_SUB('{servers.name(servers.pub)}', '{item}', 2)")
    servers.lite.run(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, mine TEXT)")
    with pytest.raises(SnapshotExists, match="already exists on server"):
        sql(f"REPL_CREATE_SNAPSHOT_SUB('{lite}', '{item}', 2)")
    assert _columns(servers.lite, table) == ["id", "mine"], "the subscriber's own table is left alone"
    for klass, column, kind, message in [
        ("no_such_module:resolver", None, "U", "cannot be imported"),
        ("not a path", None, "U", "neither a generated class"),
        ("min", None, "U", "needs the column"),
        ("max", "no_such_column", "U", "no column 'no_such_column'"),
        ("min", "v", "D", "only have the key"),
        ("pub_wins", None, "X", "conflict type 'X' is unknown"),
    ]:
        extra = f", '{column}'" if column else ""
        with pytest.raises(InvalidArgument, match=message):
            sql(f"REPL_ADD_SNAPSHOT_CR('{item}', '', '{kind}', 1, '{klass}'{extra})")
    sql(f"REPL_ADD_SNAPSHOT_CR('{item}', '', 'U', 1, 'pub_wins')")
    with pytest.raises(InvalidArgument, match="already has a 'U' resolver at order 1"):
        sql(f"REPL_ADD_SNAPSHOT_CR('{item}', '', 'U', 1, 'sub_wins')")
    assert [r.cr_class for r in catalog.resolvers(f"public.{item}")] == ["pub_wins"]


def test_a_resolver_that_breaks_fails_the_sync_and_loses_nothing(
    servers: Servers, items: Callable[..., str], sql: Callable[[str], list[Any]]
) -> None:
    table = items([(1, "a", "1.00")], [("U", 1, "tests.support.items_resolvers:broken", None)])
    change(servers.pub, f"UPDATE {table} SET price = ? WHERE item_id = ?", "2.00", 1)
    change(servers.my, f"UPDATE {table} SET price = ? WHERE item_id = ?", "3.00", 1)
    before = item_rows(servers.pub, table)

    with pytest.raises(InvalidArgument, match="returned 7, not a code 0-4"):
        sql(f"REPL_UPDATE_SNAPSHOT('{table}@bd_pub', 2)")

    assert item_rows(servers.pub, table) == before, "the publisher's transaction rolled back"
    assert servers.my.rows(f"SELECT COUNT(*) FROM RLOG_{table}") == [(1,)], "the change waits for the next sync"


def test_initial_load_commits_as_it_goes_and_loses_no_concurrent_change(
    servers: Servers, sql: Callable[[str], list[Any]]
) -> None:
    table = fresh_table(servers.pub, rows=20_000)
    item = f"{table}@bd_pub"
    my = servers.name(servers.my)
    sql(f"REPL_CREATE_SNAPSHOT_PUB('{item}', 2); REPL_CREATE_SNAPSHOT_SUB('{my}', '{item}', 2)")
    seen: set[int] = set()
    writes = 0
    done = threading.Event()

    def watch_and_write() -> None:
        nonlocal writes
        while not done.is_set():
            seen.add(servers.my.rows(f"SELECT COUNT(*) FROM {table}")[0][0])
            key = 20_001 + writes
            servers.pub.run(
                f"INSERT INTO {table} (id, v) VALUES ({key}, 'during')",
                f"UPDATE {table} SET v = 'changed during' WHERE id = {1 + writes * 7 % 20_000}",
                f"DELETE FROM {table} WHERE id = {2 + writes * 13 % 20_000}",
            )
            writes += 1
            time.sleep(0.02)

    watcher = threading.Thread(target=watch_and_write)
    watcher.start()
    try:
        [result] = sql(f"REPL_INIT_SNAPSHOT('{my}', '{item}', 2, 500)")
    finally:
        done.set()
        watcher.join()
    assert "rows copied" in str(result)
    partial = {n for n in seen if 0 < n < 20_000}
    assert len(partial) > 1, f"the replica filled in commits of about 500 rows, seen counts: {sorted(seen)[:20]}"
    assert writes > 3, "the publisher changed while the load ran"

    sql(f"REPL_UPDATE_SNAPSHOT('{item}', 2)")

    publisher = sorted(servers.pub.rows(f'SELECT id, v, "ROWGUID" FROM {table}'))
    assert sorted(servers.my.rows(f"SELECT id, v, ROWGUID FROM {table}")) == publisher


@pytest.mark.parametrize("atomic", [False, True])
def test_an_atomic_reload_changes_the_replica_all_at_once_or_not_at_all(
    servers: Servers, sql: Callable[[str], list[Any]], spark: Any, catalog: Any, settings: Any, atomic: bool
) -> None:
    """A backfill reloads a replica with ``--atomic``: a reload that fails half way leaves it as it was.
    Without ``atomic`` the same failure leaves the chunks committed before it (REPL_INIT_SNAPSHOT's
    seed semantics), which shows the failure really comes half way."""

    from snaprepl.bidir import job
    from snaprepl.publications.request import SyncRequest

    table = fresh_table(servers.pub, rows=300)
    item = f"{table}@bd_pub"
    lite = servers.name(servers.lite)
    sql(f"REPL_CREATE_SNAPSHOT_PUB('{item}', 2); REPL_CREATE_SNAPSHOT_SUB('{lite}', '{item}', 2)")
    sql(f"REPL_INIT_SNAPSHOT('{lite}', '{item}', 2, 50)")
    servers.pub.run(f"UPDATE {table} SET v = 'new'")
    for event in ("INSERT", "UPDATE"):
        servers.lite.run(
            f"CREATE TRIGGER boom_{event.lower()}_{table} BEFORE {event} ON {table} "
            "WHEN NEW.id = 250 BEGIN SELECT RAISE(ABORT, 'boom'); END"
        )
    [stored] = [p.sp_item for p in catalog.publications() if p.sp_item.endswith(f"{table}@bd_pub")]
    args = SyncRequest(
        item=stored,
        action="init",
        server=lite,
        rows_per_commit=50,
        atomic=atomic,
        tolerance_minutes=settings.snp_repl_tolerance_offset,
        commit_rows=settings.refresh_commit_rows,
    )
    with pytest.raises(Exception, match="boom"):
        job.run(spark, args, catalog)
    reloaded = servers.lite.rows(f"SELECT COUNT(*) FROM {table} WHERE v = 'new'")[0][0]
    if atomic:
        assert reloaded == 0, "a failed atomic reload left the replica as it was"
    else:
        assert 0 < reloaded < 300, "without atomic, the commits before the failure stay"
    for event in ("insert", "update"):
        servers.lite.run(f"DROP TRIGGER boom_{event}_{table}")
    job.run(spark, args, catalog)
    assert servers.lite.rows(f"SELECT COUNT(*) FROM {table} WHERE v = 'new'") == [(300,)]

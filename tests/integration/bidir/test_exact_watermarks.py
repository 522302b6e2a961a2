"""Exact watermarks in syncs (issue 20): a change whose transaction stays open on the publisher (or on
a subscriber) while other sessions commit and syncs run reaches the other side once it commits, with
the tolerance window at its minimum (0 minutes)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from tests.support.bidir import Servers
from tests.support.databases import RealDatabase

pytestmark = pytest.mark.spark


@pytest.fixture
def strict_sql(catalog: Any, settings: Any, syncer: Any) -> Callable[[str], list[Any]]:
    from snaprepl.api.script import run_script

    strict = replace(settings, snp_repl_tolerance_offset=0)
    return lambda text: run_script(text, catalog=catalog, settings=strict, syncer=syncer)


def _published(servers: Servers, pub: RealDatabase, sub: RealDatabase, sql: Callable[[str], list[Any]]) -> str:
    table = f"wm_{uuid.uuid4().hex[:8]}"
    pub.run(f"CREATE TABLE {table} (id integer PRIMARY KEY, v varchar(40))")
    pub.run(f"INSERT INTO {table} (id, v) VALUES (1, 'v1')", f"INSERT INTO {table} (id, v) VALUES (2, 'a')")
    item, name = f"{table}@{pub.conn_id}", servers.name(sub)
    sql(
        f"REPL_CREATE_SNAPSHOT_PUB('{item}', 2); REPL_CREATE_SNAPSHOT_SUB('{name}', '{item}', 2); "
        f"REPL_INIT_SNAPSHOT('{name}', '{item}', 2)"
    )
    return table


def _hold_and_sync(writer: RealDatabase, table: str, item: str, sql: Callable[[str], list[Any]]) -> None:
    """Change row 1 in a transaction held open while row 2 changes and the publication syncs three times."""
    with writer.connect() as conn:
        cur = conn.cursor()
        cur.execute("BEGIN")
        cur.execute(f"UPDATE {table} SET v = 'from-long-tx' WHERE id = 1")
        for n in range(3):
            time.sleep(1.1)  # later stamps; MariaDB's trx_started has whole seconds
            writer.run(f"UPDATE {table} SET v = 'b{n}' WHERE id = 2")
            sql(f"REPL_UPDATE_SNAPSHOT('{item}', 2)")
        cur.execute("COMMIT")
    sql(f"REPL_UPDATE_SNAPSHOT('{item}', 2)")


@pytest.mark.parametrize("pub_sub", [("pub", "my"), ("my", "lite")], ids=lambda p: f"{p[0]}-to-{p[1]}")
def test_a_long_publisher_transaction_is_pushed_once_it_commits(
    servers: Servers, strict_sql: Callable[[str], list[Any]], pub_sub: tuple[str, str]
) -> None:
    pub, sub = (getattr(servers, side) for side in pub_sub)
    table = _published(servers, pub, sub, strict_sql)
    _hold_and_sync(pub, table, f"{table}@{pub.conn_id}", strict_sql)
    expected = [(1, "from-long-tx"), (2, "b2")]
    assert pub.rows(f"SELECT id, v FROM {table} ORDER BY id") == expected
    assert sub.rows(f"SELECT id, v FROM {table} ORDER BY id") == expected


@pytest.mark.parametrize("sub_side", ["my"])  # SQLite: no other session commits while a writer is open
def test_a_long_subscriber_transaction_is_pulled_once_it_commits(
    servers: Servers, strict_sql: Callable[[str], list[Any]], sub_side: str
) -> None:
    sub = getattr(servers, sub_side)
    table = _published(servers, servers.pub, sub, strict_sql)
    _hold_and_sync(sub, table, f"{table}@{servers.pub.conn_id}", strict_sql)
    expected = [(1, "from-long-tx"), (2, "b2")]
    assert sub.rows(f"SELECT id, v FROM {table} ORDER BY id") == expected
    assert servers.pub.rows(f"SELECT id, v FROM {table} ORDER BY id") == expected

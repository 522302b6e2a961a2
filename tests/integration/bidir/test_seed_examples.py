"""The seed's bi-directional examples, run as written (table names adapted by their ``@conn_id``),
through the statement interface, on a PostgreSQL publisher with MariaDB and SQLite subscribers."""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from tests.support.bidir import Servers, change, item_rows
from tests.support.databases import RealDatabase

RESOLVERS = "tests.support.items_resolvers"


def replica_rows(db: RealDatabase, table: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in db.rows(f"SELECT * FROM {db.q(table)}"))


def test_shippers_publication_subscription_initial_load_and_sync(
    servers: Servers, sql: Callable[[str], list[Any]], catalog: Any
) -> None:
    pub, my = servers.pub, servers.my
    pub.run(
        "CREATE TABLE demo.Shippers "
        "(ShipperID integer PRIMARY KEY, CompanyName varchar(40) NOT NULL, Phone varchar(24))",
        "INSERT INTO demo.Shippers VALUES (1, 'Speedy Express', '(503) 555-9831'), "
        "(2, 'United Package', '(503) 555-3199'), (3, 'Federal Shipping', '(503) 555-9931')",
    )

    # The seed, line by line: REPL_CREATE_SNAPSHOT_PUB ('Demo.demo.Shippers', 2); ...
    published = sql("REPL_CREATE_SNAPSHOT_PUB ('Demo.demo.Shippers@bd_pub', 2);")
    registered = sql("REPL_SNP_SERVER ('bd_my', 'dba', 'dba');")
    sql(
        "REPL_CREATE_SNAPSHOT_SUB (REPL_SERVER_NAME ('bd_my'), 'Demo.demo.Shippers@bd_pub', 2); "
        "REPL_INIT_SNAPSHOT (REPL_SERVER_NAME ('bd_my'), 'Demo.demo.Shippers@bd_pub', 2);"
    )

    assert "RLOG_shippers" in str(published[0])
    assert registered == [servers.name(my)]
    assert "dba" not in json.dumps([vars(s) for s in catalog.servers()], default=str), "credentials were stored"
    publisher_rows = pub.rows('SELECT shipperid, companyname, phone, "ROWGUID" FROM demo.shippers ORDER BY 1')
    assert [r[3].split("@")[0] for r in publisher_rows] == [servers.name(pub)] * 3
    assert replica_rows(my, "shippers") == [tuple(r) for r in publisher_rows]

    # Changes on both sides, then the seed's sync: REPL_UPDATE_SNAPSHOT ('Demo.demo.Shippers', 2);
    pub.run("UPDATE demo.shippers SET phone = '(503) 555-0000' WHERE shipperid = 1")
    my.run(
        "INSERT INTO shippers (ShipperID, CompanyName, Phone) VALUES (4, 'Alpine Cargo', NULL)",
        "DELETE FROM shippers WHERE ShipperID = 3",
    )
    result = sql("REPL_UPDATE_SNAPSHOT ('Demo.demo.Shippers@bd_pub', 2);")

    publisher_rows = pub.rows('SELECT shipperid, companyname, phone, "ROWGUID" FROM demo.shippers ORDER BY 1')
    assert [r[:3] for r in publisher_rows] == [
        (1, "Speedy Express", "(503) 555-0000"),
        (2, "United Package", "(503) 555-3199"),
        (4, "Alpine Cargo", None),
    ]
    assert publisher_rows[2][3].startswith(servers.name(my) + "@"), "the subscriber's version travels unchanged"
    assert replica_rows(my, "shippers") == [tuple(r) for r in publisher_rows]
    assert "0 conflicts" in str(result[0])
    # Replicated writes are not logged again (no echo): both logs are empty after the sync.
    assert my.rows("SELECT COUNT(*) FROM RLOG_shippers") == [(0,)]
    assert pub.rows('SELECT COUNT(*) FROM demo."RLOG_shippers" WHERE "ORIGIN" = %s', [servers.name(my)]) == [(2,)]


def assert_converged(servers: Servers, table: str) -> dict[int, tuple[Any, ...]]:
    publisher = item_rows(servers.pub, table)
    for db in servers.subscribers:
        assert item_rows(db, table) == publisher, f"{db.dialect} differs from the publisher"
    return publisher


def test_seed_items_table_replicates_to_mariadb_and_sqlite(servers: Servers, items: Callable[..., str]) -> None:
    table = items([(1, "apple", "1.25"), (2, "pear", "2.50")])
    rows = assert_converged(servers, table)
    assert {k: v[:2] for k, v in rows.items()} == {1: ("apple", Decimal("1.25")), 2: ("pear", Decimal("2.50"))}


def test_publisher_wins_insert_resolver(
    servers: Servers, items: Callable[..., str], sql: Callable[[str], list[Any]], catalog: Any
) -> None:
    table = items([(1, "apple", "1.00")], [("I", 10, f"{RESOLVERS}:publisher_wins", None)])
    change(servers.pub, f"INSERT INTO {table} (item_id, name, price) VALUES (?, ?, ?)", 7, "publisher's", "7.00")
    change(servers.my, f"INSERT INTO {table} (item_id, name, price) VALUES (?, ?, ?)", 7, "mariadb's", "6.00")

    sql(f"REPL_UPDATE_SNAPSHOT('{table}@bd_pub', 2)")

    rows = assert_converged(servers, table)
    assert rows[7][:2] == ("publisher's", Decimal("7.00"))
    assert rows[7][2].startswith(servers.name(servers.pub) + "@")
    [conflict] = catalog.conflicts(f"public.{table}@bd_pub")
    assert (conflict["CF_TYPE"], conflict["CF_DECISION"], conflict["CF_ORIGIN"]) == ("I", 3, servers.name(servers.my))
    assert conflict["CF_RESOLVER"] == f"{RESOLVERS}:publisher_wins"
    assert json.loads(conflict["CF_LOSER"])["row"]["name"] == "mariadb's", "the losing row is in the ledger"


def test_minimal_price_update_resolver_then_next_in_order(
    servers: Servers, items: Callable[..., str], sql: Callable[[str], list[Any]], catalog: Any
) -> None:
    table = items(
        [(1, "apple", "5.00"), (2, "pear", "5.00"), (3, "plum", "5.00")],
        [("U", 10, f"{RESOLVERS}:minimal_price", None), ("U", 20, "sub_wins", None)],
    )
    # Key 1: the subscriber's price is lower (subscriber wins); key 2: higher (publisher wins);
    # key 3: equal, so minimal_price cannot decide and the next resolver (sub_wins) does.
    for key, pub_price, sub_price in [(1, "4.00", "3.00"), (2, "4.00", "4.50"), (3, "4.00", "4.00")]:
        change(servers.pub, f"UPDATE {table} SET price = ? WHERE item_id = ?", pub_price, key)
        change(servers.lite, f"UPDATE {table} SET price = ?, name = ? WHERE item_id = ?", sub_price, "lite", key)

    sql(f"REPL_UPDATE_SNAPSHOT('{table}@bd_pub', 2)")

    rows = assert_converged(servers, table)
    lite = servers.name(servers.lite)
    assert rows[1][:2] == ("lite", Decimal("3.00")) and rows[1][2].startswith(lite + "@")
    assert rows[2][:2] == ("pear", Decimal("4.00"))
    assert rows[3][:2] == ("lite", Decimal("4.00"))
    decided = {
        json.loads(c["CF_KEY"])[0]: (c["CF_TYPE"], c["CF_RESOLVER"], c["CF_DECISION"])
        for c in catalog.conflicts(f"public.{table}@bd_pub")
    }
    assert decided == {
        1: ("U", f"{RESOLVERS}:minimal_price", 1),
        2: ("U", f"{RESOLVERS}:minimal_price", 3),
        3: ("U", "sub_wins", 1),
    }


def test_resolver_that_changes_the_row_sends_it_to_everyone(
    servers: Servers, items: Callable[..., str], sql: Callable[[str], list[Any]], catalog: Any
) -> None:
    table = items([(1, "apple", "5.00")], [("U", 10, f"{RESOLVERS}:change_to_minimal_price", None)])
    change(servers.pub, f"UPDATE {table} SET price = ? WHERE item_id = ?", "2.00", 1)
    change(servers.my, f"UPDATE {table} SET price = ?, name = ? WHERE item_id = ?", "3.00", "green apple", 1)

    sql(f"REPL_UPDATE_SNAPSHOT('{table}@bd_pub', 2)")

    rows = assert_converged(servers, table)  # the originator receives the changed row too
    assert rows[1][:2] == ("green apple", Decimal("2.00"))
    assert rows[1][2].startswith(servers.name(servers.pub) + "@"), "code 2 makes the publisher the origin"
    [conflict] = catalog.conflicts(f"public.{table}@bd_pub")
    assert conflict["CF_DECISION"] == 2


def test_generated_resolvers_min_max_and_defaults(
    servers: Servers, items: Callable[..., str], sql: Callable[[str], list[Any]], catalog: Any
) -> None:
    table = items(
        [(1, "a", "5.00"), (2, "b", "5.00"), (3, "c", "5.00"), (4, "d", "5.00")],
        [("U", 1, "max", "price"), ("I", 1, "min", "price")],
    )
    change(servers.pub, f"UPDATE {table} SET price = ? WHERE item_id = ?", "6.00", 1)
    change(servers.my, f"UPDATE {table} SET price = ? WHERE item_id = ?", "7.00", 1)  # max: MariaDB wins
    change(servers.pub, f"INSERT INTO {table} (item_id, name, price) VALUES (?, ?, ?)", 9, "pub", "9.00")
    change(servers.lite, f"INSERT INTO {table} (item_id, name, price) VALUES (?, ?, ?)", 9, "lite", "8.00")
    change(servers.pub, f"DELETE FROM {table} WHERE item_id = ?", 2)
    change(servers.my, f"UPDATE {table} SET name = ? WHERE item_id = ?", "updated after delete", 2)
    change(servers.pub, f"UPDATE {table} SET name = ? WHERE item_id = ?", "pub", 3)
    change(servers.lite, f"DELETE FROM {table} WHERE item_id = ?", 3)

    sql(f"REPL_UPDATE_SNAPSHOT('{table}@bd_pub', 2)")

    rows = assert_converged(servers, table)
    assert rows[1][1] == Decimal("7.00")
    assert rows[9][:2] == ("lite", Decimal("8.00"))
    assert 2 not in rows, "an update of a row the publisher deleted is a 'D' conflict, ignored by default"
    assert rows[3][0] == "pub", "a delete of another version is a 'D' conflict, ignored by default"
    decided = {
        json.loads(c["CF_KEY"])[0]: (c["CF_TYPE"], c["CF_RESOLVER"], c["CF_DECISION"])
        for c in catalog.conflicts(f"public.{table}@bd_pub")
    }
    assert decided == {
        1: ("U", "max(price)", 1),
        9: ("I", "min(price)", 1),
        2: ("D", "default", 4),
        3: ("D", "default", 4),
    }

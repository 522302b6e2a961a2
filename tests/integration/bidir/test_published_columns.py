"""A published table whose columns change (issue 25, item 3): ``ADD COLUMN`` on the publisher reaches
both subscribers (MariaDB and SQLite) at the next sync, filled with the publisher's values and without
their triggers logging the fill (nothing is pulled back); a local change made meanwhile is pulled
without NULLing the new column; the logs' triggers keep working (they log keys and versions only).
Any other change of a published table's columns is refused in one line naming the column."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from snaprepl.errors import ReplicationError
from tests.support.bidir import Servers, change, item_rows

pytestmark = pytest.mark.spark


def _notes(db: Any, table: str) -> dict[int, Any]:
    return dict(db.rows(f"SELECT item_id, note FROM {db.q(table)} ORDER BY item_id"))


def test_add_column_on_the_publisher_reaches_every_subscriber(
    servers: Servers, items: Callable[..., str], sql: Callable[[str], list[Any]]
) -> None:
    table = items([(1, "a", "1.00"), (2, "b", "2.00"), (3, "c", "3.00")])
    servers.pub.run(f"ALTER TABLE {table} ADD COLUMN note varchar(20) DEFAULT 'dflt'")
    change(servers.pub, f"UPDATE {table} SET note = 'one' WHERE item_id = ?", 1)
    change(servers.my, f"UPDATE {table} SET name = 'local' WHERE item_id = ?", 2)  # pulled after the fill
    sql(f"REPL_UPDATE_SNAPSHOT('{table}@bd_pub', 2)")
    expected = {1: "one", 2: "dflt", 3: "dflt"}
    assert all(_notes(db, table) == expected for db in servers.all), "filled everywhere, never NULLed"
    rows = item_rows(servers.pub, table)
    assert rows[2][0] == "local" and all(item_rows(db, table) == rows for db in servers.subscribers)

    # the triggers log as before on every side, the new column included
    change(servers.lite, f"UPDATE {table} SET note = 'lite' WHERE item_id = ?", 3)
    change(servers.pub, f"INSERT INTO {table} (item_id, name, price, note) VALUES (?, ?, ?, ?)", 4, "d", 4, "four")
    sql(f"REPL_UPDATE_SNAPSHOT('{table}@bd_pub', 2)")
    expected = {1: "one", 2: "dflt", 3: "lite", 4: "four"}
    assert all(_notes(db, table) == expected for db in servers.all)

    # a reload after an ADD COLUMN: the replica gets the column, the load fills it
    servers.pub.run(f"ALTER TABLE {table} ADD COLUMN extra int DEFAULT 7")
    sql(f"REPL_INIT_SNAPSHOT('{servers.name(servers.my)}', '{table}@bd_pub', 2)")
    assert servers.my.rows(f"SELECT item_id, extra FROM {table} ORDER BY item_id") == [(k, 7) for k in (1, 2, 3, 4)]

    servers.pub.run(f"ALTER TABLE {table} DROP COLUMN note")
    with pytest.raises(ReplicationError, match=r"column note of .* is not in the publisher's table") as refused:
        sql(f"REPL_UPDATE_SNAPSHOT('{table}@bd_pub', 2)")
    lines = refused.value.message.splitlines()  # one per subscriber, each naming the column
    assert len(lines) == 2 and all("column note of" in line for line in lines) and refused.value.hint

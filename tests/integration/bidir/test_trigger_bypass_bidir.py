"""A publication's logs get the guards of one-way snapshot logs (issue 20, item 3): a TRUNCATE of the
publisher's table, or a trigger dropped on a subscriber's replica, fails the sync step naming the
table and the trigger, and the replicas concerned need (and get) a new initial load."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from snaprepl.errors import LogBypassed, ReplicationError
from tests.support.bidir import Servers, change, item_rows

pytestmark = pytest.mark.spark


def _values(rows: dict[int, tuple[Any, Any, str]]) -> dict[int, tuple[Any, Any]]:
    return {key: (name, price) for key, (name, price, _) in rows.items()}


def test_truncate_on_the_publisher_and_a_dropped_subscriber_trigger_need_a_new_load(
    servers: Servers, items: Callable[..., str], sql: Callable[[str], list[Any]], catalog: Any
) -> None:
    table = items([(1, "a", "1.00"), (2, "b", "2.00"), (3, "c", "3.00")])
    item = f"public.{table}@bd_pub"
    my, lite = servers.name(servers.my), servers.name(servers.lite)
    servers.pub.run(f"TRUNCATE {table}", f"INSERT INTO {table} (item_id, name, price) VALUES (4, 'd', 4)")
    with pytest.raises(LogBypassed, match=rf"table public\.{table} was truncated") as failure:
        sql(f"REPL_UPDATE_SNAPSHOT('{table}@bd_pub', 2)")
    assert f"REPL_INIT_SNAPSHOT('{my}'" in failure.value.hint and f"REPL_INIT_SNAPSHOT('{lite}'" in failure.value.hint
    assert all(catalog.subscription(s, item).ss_needs_init for s in (my, lite))
    with pytest.raises(ReplicationError, match="needs a new initial load"):
        sql(f"REPL_UPDATE_SNAPSHOT('{table}@bd_pub', 2)")
    for server in (my, lite):
        sql(f"REPL_INIT_SNAPSHOT('{server}', '{table}@bd_pub', 2)")
    sql(f"REPL_UPDATE_SNAPSHOT('{table}@bd_pub', 2)")
    expected = _values(item_rows(servers.pub, table))
    assert list(expected) == [4]
    assert all(_values(item_rows(db, table)) == expected for db in servers.subscribers)

    trigger = catalog.log(f"{servers.my.name}.{table}@bd_my").objects.triggers[1]
    servers.my.run(f"DROP TRIGGER `{trigger}`")
    change(servers.my, f"UPDATE {table} SET name = 'unlogged' WHERE item_id = ?", 4)
    with pytest.raises(LogBypassed, match=rf"trigger {trigger} of table .*{table} is missing"):
        sql(f"REPL_UPDATE_SNAPSHOT('{table}@bd_pub', 2)")
    assert catalog.subscription(my, item).ss_needs_init and not catalog.subscription(lite, item).ss_needs_init

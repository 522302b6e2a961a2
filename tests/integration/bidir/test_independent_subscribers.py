"""A subscriber that cannot be reached stops no other: REPL_UPDATE_SNAPSHOT pulls and pushes every
other subscriber, then fails with one line per failed subscriber, and the history and the status say
which one failed and why."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

from snaprepl.errors import SnapreplError
from tests.support.bidir import Servers, change, item_rows
from tests.support.databases import MYSQL_ADMIN
from tests.support.unreachable import closed_port, unreachable

GONE = "bd_gone"


def test_an_unreachable_subscriber_stops_no_other_and_is_named(
    servers: Servers, items: Callable[..., str], sql: Callable[[str], list[Any]], catalog: Any
) -> None:
    table = items([(1, "a", "1.00"), (2, "b", "2.00")])
    item = f"public.{table}@bd_pub"
    my, lite = servers.name(servers.my), servers.name(servers.lite)
    os.environ[f"AIRFLOW_CONN_{GONE.upper()}"] = f"mysql://{MYSQL_ADMIN['user']}@127.0.0.1:{closed_port()}/gone"
    change(servers.pub, f"UPDATE {table} SET name = ? WHERE item_id = ?", "from pub", 1)
    change(servers.lite, f"UPDATE {table} SET name = ? WHERE item_id = ?", "from lite", 2)
    change(servers.my, f"INSERT INTO {table} (item_id, name, price) VALUES (?, ?, ?)", 3, "from my", "3.00")

    with unreachable(catalog, my, GONE), pytest.raises(SnapreplError) as failed:
        sql(f"REPL_UPDATE_SNAPSHOT('{item}', 2)")

    [line] = str(failed.value).splitlines()
    assert line.startswith(f"{item}: subscriber {my} failed its pull (1 of 2 synced): "), line
    # Its server now points at another connection (as if moved): the line says so, the hint what to run.
    assert f"on connection {GONE} (it was created on connection " in line, line
    assert f"REPL_DROP_SNAPSHOT_SUB('{my}', '{item}', 2)" in (failed.value.hint or ""), failed.value.hint
    # The reachable subscriber was pulled and pushed: both changes are on the publisher and on it.
    rows = item_rows(servers.pub, table)
    assert {k: v[0] for k, v in rows.items()} == {1: "from pub", 2: "from lite"}
    assert item_rows(servers.lite, table) == rows
    history = {(r.rh_kind, r.rh_server): r for r in catalog.history(item)[:3]}
    assert set(history) == {("pull", my), ("pull", lite), ("push", lite)}
    assert history[("pull", my)].rh_outcome == "failed" and history[("pull", my)].rh_error
    assert history[("push", lite)].rh_outcome == "ok"
    assert catalog.subscription(my, item).ss_last_status == "failed"
    assert catalog.subscription(lite, item).ss_last_status == "succeeded"
    publication = catalog.publication(item)
    assert publication.sp_last_status == "failed" and my in publication.sp_last_error

    # Back again, the next sync brings its change in and the publisher's out: all replicas converge.
    sql(f"REPL_UPDATE_SNAPSHOT('{item}', 2)")
    rows = item_rows(servers.pub, table)
    assert sorted(rows) == [1, 2, 3] and item_rows(servers.my, table) == rows == item_rows(servers.lite, table)
    assert catalog.subscription(my, item).ss_last_status == "succeeded"

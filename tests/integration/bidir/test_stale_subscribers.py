"""A subscriber gone longer than its publication's stale threshold: shown stale and alerted once by
the watchdog (a real SMTP server); with detach_stale the publisher's log purge goes past it; back,
its sync says it needs REPL_INIT_SNAPSHOT, or with its publication's reinit rule pulls its local changes and
reloads it; every replica converges, and the watchdog says the condition cleared."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from snaprepl.catalog.records import utcnow
from snaprepl.errors import SnapreplError
from tests.support.bidir import Servers, change, item_rows
from tests.support.databases import MYSQL_ADMIN
from tests.support.smtp import Inbox, smtp_server
from tests.support.unreachable import closed_port, unreachable

__all__ = ["smtp_server"]  # the fixture

GONE = "bd_gone_stale"


def test_a_stale_subscriber_is_alerted_detached_and_reloaded_without_losing_its_changes(
    servers: Servers, items: Callable[..., str], catalog: Any, settings: Any, syncer: Any, smtp_server: Inbox
) -> None:
    from snaprepl.api.script import run_script
    from snaprepl.ops.snapshot_logs import purge_log
    from snaprepl.ops.watchdog import check
    from snaprepl.reporting.status import collect_status, render_text

    table = items([(1, "a", "1.00"), (2, "b", "2.00")])
    item = f"public.{table}@bd_pub"
    my = servers.name(servers.my)
    own = dataclasses.replace(
        settings, conflict_notifier="email", conflict_email_to="ops@example.com", smtp_conn_id="test_smtp",
        snp_repl_tolerance_offset=0, snp_repl_purge_offset=0,
    )  # fmt: skip
    sync = lambda s: run_script(f"REPL_UPDATE_SNAPSHOT('{item}', 2)", catalog=catalog, settings=s, syncer=syncer)  # noqa: E731
    run_script(f"REPL_SET_PUBLICATION_STALE('{item}', 2, 1, 1)", catalog=catalog)  # 1 hour, detach
    # The MariaDB subscriber was last in touch two hours ago, and is unreachable now.
    two_hours_ago = utcnow() - timedelta(hours=2)
    catalog.update_subscription(my, item, ss_last_pull_at=two_hours_ago, ss_last_push_at=two_hours_ago)
    os.environ[f"AIRFLOW_CONN_{GONE.upper()}"] = f"mysql://{MYSQL_ADMIN['user']}@127.0.0.1:{closed_port()}/gone"

    status = collect_status(catalog, own, probe=False)
    [sub] = [s for p in status["publications"] if p["item"] == item for s in p["subscribers"] if s["server"] == my]
    assert sub["stale"] is True and sub["detached_at"] is None and "stale, " in render_text(status)
    assert "stale after 1 h, detach" in render_text(status), "the publication's rule in force"
    check(catalog, own, paused=set())
    check(catalog, own, paused=set())  # alerted once, not at every check
    assert [b for b in smtp_server.bodies() if item in b and my in b and ": stale: " in b] != []
    assert len([b for b in smtp_server.bodies() if f"{item} with {my}: stale" in b]) == 1, smtp_server.bodies()

    # Two publisher changes reach the SQLite subscriber, never the MariaDB one.
    with unreachable(catalog, my, GONE):
        for statement, args in (
            (f"UPDATE {table} SET name = ? WHERE item_id = ?", ("pub", 1)),
            (f"INSERT INTO {table} (item_id, name, price) VALUES (?, ?, ?)", (3, "new", "3.00")),
        ):
            change(servers.pub, statement, *args)
            with pytest.raises(SnapreplError):
                sync(own)
    change(servers.my, f"UPDATE {table} SET name = ? WHERE item_id = ?", "mine while away", 2)
    logged = lambda: sorted(r[0] for r in servers.pub.rows(f'SELECT "RLOG_item_id" FROM "RLOG_{table}"'))  # noqa: E731
    assert logged() == [1, 3]
    log_entry = lambda: next(e for e in collect_status(catalog, own)["snapshot_logs"] if e["source"] == item)  # noqa: E731
    entry = log_entry()  # the gone subscriber holds the publisher's log back: it grows with every change
    assert entry["purge_held_by"]["kind"] == "subscriber" and entry["purge_held_by"]["name"] == my, entry
    assert entry["rows"] == 2 and entry["oldest_entry"] is not None, entry
    purged = purge_log(catalog.log(item), catalog=catalog, settings=own)

    assert catalog.subscription(my, item).ss_detached_at is not None, purged
    assert logged() == [3], f"the purge waited for the detached subscriber: {purged}"
    # Status says which copy holds the log back now (the healthy one), and how big and old the log is.
    entry, lite = log_entry(), servers.name(servers.lite)
    assert entry["purge_waits_for"].startswith(f"subscriber {lite} ") and entry["backlog"]["oldest_snaptime"], entry
    assert entry["purge_held_by"]["name"] == lite and entry["rows"] == 1 and entry["oldest_entry"], entry
    # Back, without reinit_detached: its pull brings its change in; its push says what it needs.
    with pytest.raises(SnapreplError) as failed:
        sync(own)
    [line] = str(failed.value).splitlines()
    assert f"subscriber {my} failed its push" in line and "needs REPL_INIT_SNAPSHOT" in line, line
    assert item_rows(servers.pub, table)[2][0] == "mine while away"

    change(servers.my, f"INSERT INTO {table} (item_id, name, price) VALUES (?, ?, ?)", 4, "mine too", "4.00")
    run_script(f"REPL_SET_PUBLICATION_REINIT('{item}', 2, 1)", catalog=catalog)  # reinit_detached, its own
    sync(own)

    rows = item_rows(servers.pub, table)
    assert {k: v[0] for k, v in rows.items()} == {1: "pub", 2: "mine while away", 3: "new", 4: "mine too"}
    assert item_rows(servers.my, table) == rows == item_rows(servers.lite, table)
    assert catalog.subscription(my, item).ss_detached_at is None
    check(catalog, own, paused=set())
    assert [b for b in smtp_server.bodies() if f"{item} with {my}: stale cleared" in b] != [], smtp_server.bodies()

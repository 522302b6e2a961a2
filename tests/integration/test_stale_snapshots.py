"""A forgotten one-way snapshot: with ``detach_stale`` the purge of its log stops waiting for it once
it has not refreshed for the stale threshold; it then needs a complete refresh (ORA-12034's message,
or ``fallback_complete``)."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest

from snaprepl import api
from snaprepl.catalog.records import utcnow
from snaprepl.errors import CompleteRefreshRequired
from snaprepl.settings import Settings

pytestmark = pytest.mark.spark


def test_a_stale_snapshot_stops_holding_its_log_back_and_then_needs_a_complete_refresh(
    sqlite_db, catalog, refresher, unique_name
) -> None:
    from snaprepl.reporting.status import collect_status

    src, conn = f"{unique_name}_s", sqlite_db.conn_id
    keep = Settings(snp_repl_tolerance_offset=0, snp_repl_purge_offset=0, stale_after_hours=1)
    detach = Settings(snp_repl_tolerance_offset=0, snp_repl_purge_offset=0, stale_after_hours=1, detach_stale=True)
    sqlite_db.run(f"CREATE TABLE {src} (id INTEGER PRIMARY KEY, v INTEGER)")
    api.repl_create_snapshot_log(f"{src}@{conn}", catalog=catalog)
    for copy in ("live", "gone"):
        api.repl_create_inc_snapshot(
            None, f"{src}@{conn}", None, f"{unique_name}_{copy}@{conn}", catalog=catalog, settings=keep,
            refresher=refresher,
        )  # fmt: skip
    for key in (1, 2):
        sqlite_db.run(f"INSERT INTO {src} VALUES ({key}, {key})")
        time.sleep(0.01)
    live, gone = (f"main.{unique_name}_{c}@{conn}" for c in ("live", "gone"))
    api.repl_refresh_inc_snapshot(live, catalog=catalog, settings=keep, refresher=refresher)
    catalog.update_snapshot(gone, sn_last_refresh_at=utcnow() - timedelta(hours=2))  # forgotten two hours ago
    entries = lambda: sqlite_db.rows(f'SELECT COUNT(*) FROM "RLOG_{src}"')[0][0]  # noqa: E731

    [entry] = [s for s in collect_status(catalog, keep, probe=False)["snapshots"] if s["name"] == gone]
    assert entry["stale"] is True
    api.repl_purge_snapshot_log(f"{src}@{conn}", catalog=catalog, settings=keep)
    assert entries() == 2, "without detach_stale the purge waits for the stale snapshot"

    purged = api.repl_purge_snapshot_log(f"{src}@{conn}", catalog=catalog, settings=detach)

    # What the live snapshot applied goes (the newest entry it applied stays, as every purge keeps it).
    assert purged.deleted == 1 and entries() == 1, purged
    assert "detach_stale" in (catalog.snapshot(gone).sn_needs_complete or "")
    assert catalog.snapshot(live).sn_needs_complete is None
    with pytest.raises(CompleteRefreshRequired, match="needs a complete refresh"):
        api.repl_refresh_inc_snapshot(gone, catalog=catalog, settings=detach, refresher=refresher)
    api.repl_refresh_noninc_snapshot(gone, catalog=catalog, settings=detach, refresher=refresher)
    assert sorted(sqlite_db.rows(f"SELECT id FROM {unique_name}_gone")) == [(1,), (2,)]
    assert catalog.snapshot(gone).sn_needs_complete is None

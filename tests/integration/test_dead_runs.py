"""A run that died (its driver SIGKILLed) leaves its lease, a snapshot marked ``running`` and its staging
tables. ``snaprepl status`` says it died, and the replay-log purge drops its staging tables, while a
live run's are left alone."""

from __future__ import annotations

import socket
import subprocess
import time
from datetime import timedelta

import pytest

from snaprepl import api
from snaprepl.catalog.records import utcnow
from snaprepl.catalog.run_lock import LEASE, snapshot_lock_name, this_holder
from snaprepl.errors import RefreshFailed
from snaprepl.refresh.endpoints import Endpoints
from snaprepl.refresh.stale import why_dead
from snaprepl.reporting.status import collect_status, render_text
from tests.support.databases import RealDatabase


def _dead_pid() -> int:
    gone = subprocess.Popen(["true"])
    gone.wait()
    return gone.pid


def _leave_run(catalog, db: RealDatabase, name: str, holder: str) -> str:
    """What a run of snapshot ``name`` holding its lease as ``holder`` leaves while it stages rows."""
    record = catalog.snapshot(name)
    stage = Endpoints.of(record).staging_name("inc")
    db.run(f"CREATE TABLE {stage} (id int)")
    assert catalog.take_lock(snapshot_lock_name(name), expected=None, run_id=f"run-{holder}", holder=holder)
    catalog.update_snapshot(name, sn_last_status="running")
    return stage


def test_a_dead_run_shows_as_died_and_its_staging_table_is_purged(
    pg_db, catalog, settings, refresher, unique_name
) -> None:
    src = f"{unique_name}_s"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v int)", f"INSERT INTO {src} VALUES (1, 1)")
    api.repl_create_snapshot_log(f"{src}@{pg_db.conn_id}", catalog=catalog)
    names = {}
    for role in ("dead", "live"):
        created = api.repl_create_inc_snapshot(
            None, f"{src}@{pg_db.conn_id}", None, f"{unique_name}_{role}@{pg_db.conn_id}",
            catalog=catalog, settings=settings, refresher=refresher,
        )  # fmt: skip
        names[role] = created.record.sn_name
    dead_holder = f"{socket.gethostname()}:{_dead_pid()}"
    dead_stage = _leave_run(catalog, pg_db, names["dead"], dead_holder)
    live_stage = _leave_run(catalog, pg_db, names["live"], this_holder())
    try:
        report = {s["name"]: s for s in collect_status(catalog, settings, probe=False)["snapshots"]}
        dead, live = report[names["dead"]], report[names["live"]]
        assert dead["last_refresh"]["status"] == "died" and dead["running"] is None
        assert dead["died"]["run_id"] == f"run-{dead_holder}" and "is gone" in dead["died"]["why"]
        assert live["last_refresh"]["status"] == "running" and live["died"] is None
        assert live["running"]["holder"] == this_holder()
        text = render_text(collect_status(catalog, settings, probe=False))
        assert f"DIED: run run-{dead_holder}: its process {dead_holder} is gone" in text

        api.repl_purge_rplogs(catalog=catalog, settings=settings)

        assert not pg_db.table_exists(dead_stage), "the dead run's staging table is dropped"
        assert pg_db.table_exists(live_stage), "a live run's staging table is its own"
        locks = catalog.locks()
        assert snapshot_lock_name(names["dead"]) not in locks
        assert locks[snapshot_lock_name(names["live"])][0] == f"run-{this_holder()}"
        record = catalog.snapshot(names["dead"])
        assert record.sn_last_status == "failed" and f"run run-{dead_holder} died" in record.sn_last_error
    finally:
        catalog.release_lock(snapshot_lock_name(names["live"]), f"run-{this_holder()}")
        catalog.release_lock(snapshot_lock_name(names["dead"]), f"run-{dead_holder}")
        pg_db.run(f"DROP TABLE IF EXISTS {live_stage}", f"DROP TABLE IF EXISTS {dead_stage}")


def test_a_lease_dies_with_its_process_or_its_heartbeat() -> None:
    now = utcnow()
    assert why_dead(this_holder(), now) is None
    assert why_dead("elsewhere:1", now) is None, "a process on another host cannot be checked: it may live"
    assert "no heartbeat since" in (why_dead("elsewhere:1", now - LEASE - timedelta(seconds=1)) or "")
    assert "is gone" in (why_dead(f"{socket.gethostname()}:{_dead_pid()}", now) or "")
    zombie = subprocess.Popen(["true"])  # ended, not reaped: what a driver killed with its JVM can be
    try:
        time.sleep(0.5)
        assert "is gone" in (why_dead(f"{socket.gethostname()}:{zombie.pid}", now) or ""), "a zombie holds nothing"
    finally:
        zombie.wait()


def test_a_failed_refresh_shows_its_own_counts_not_the_last_runs(
    pg_db, catalog, settings, refresher, unique_name
) -> None:
    """Issue 27, item 6: a complete refresh that failed mid-copy showed the previous run's rows_copied."""
    src = f"{unique_name}_s"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v text)", f"INSERT INTO {src} VALUES (1, '1'), (2, '2')")
    query = f"SELECT id, CAST(v AS int) AS n FROM {src}@{pg_db.conn_id}"
    created = api.repl_create_snapshot(
        query, f"{unique_name}@{pg_db.conn_id}", catalog=catalog, settings=settings, refresher=refresher
    )
    name = created.record.sn_name
    before = {s["name"]: s for s in collect_status(catalog, settings, probe=False)["snapshots"]}[name]
    assert before["last_refresh"]["rows_copied"] == 2
    pg_db.run(f"UPDATE {src} SET v = 'two' WHERE id = 2")  # the next copy fails while reading rows

    with pytest.raises(RefreshFailed, match="invalid input syntax"):
        api.repl_refresh_noninc_snapshot(name, catalog=catalog, settings=settings, refresher=refresher)

    last = {s["name"]: s for s in collect_status(catalog, settings, probe=False)["snapshots"]}[name]["last_refresh"]
    assert last["status"] == "failed" and "invalid input syntax" in last["error"]
    assert (last["rows_copied"], last["rows_upserted"], last["rows_deleted"]) == (None, None, None), last
    record = catalog.snapshot(name)
    assert record.sn_last_rows_copied is None, "the catalog holds no other run's counts either"

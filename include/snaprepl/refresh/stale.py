"""Runs that died: what ``snaprepl status`` says of them, and the staging tables they left behind.

A run that is killed (its driver SIGKILLed, its machine lost) cannot record its outcome: its snapshot
still says ``running`` and its lease stays in SYS_REPL_LOCK. The lease tells whether the run lives:
its holder is ``host:pid`` and it renews a heartbeat (see :mod:`snaprepl.catalog.run_lock`). A holder on
this host whose process is gone is dead at once; any holder is dead once its heartbeat is older than
the lease time. The next run takes such a lease over; until then status reports the run as died, and
the purge DAG drops the staging tables it left (holding the lease itself while it does, so a run
starting meanwhile is never robbed of its staging table).
"""

from __future__ import annotations

import json
import logging
import uuid
from datetime import datetime
from typing import Any

from snaprepl.catalog.records import SnapshotRecord, utcnow
from snaprepl.catalog.run_lock import LEASE, RunLock, holder_is_dead, snapshot_lock_name
from snaprepl.catalog.store import Catalog
from snaprepl.errors import SnapshotBusy
from snaprepl.refresh.endpoints import Endpoints

log = logging.getLogger(__name__)

#: Kinds of staging table a refresh of a snapshot makes (see Endpoints.staging_name).
STAGING_PURPOSES = ("inc", "full", "grp")  # grp: a snapshot group's refresh (refresh/group.py)


def why_dead(holder: str | None, heartbeat: datetime | None) -> str | None:
    """Why the run holding a lease is dead, or None when it may be alive."""
    if holder_is_dead(holder):
        return f"its process {holder} is gone"
    if heartbeat is not None and utcnow() - heartbeat > LEASE:
        return f"no heartbeat since {heartbeat:%Y-%m-%d %H:%M:%S} UTC"
    return None


def run_state(held: tuple[str, str, datetime] | None, last_status: str | None) -> dict[str, Any] | None:
    """The death of the run behind ``held`` (run id, holder, heartbeat of a lease), as status reports
    it; None when the lease's holder may live, or when there is no lease and no run left ``running``."""
    if held is None:
        if last_status != "running":
            return None
        return {"run_id": None, "holder": None, "heartbeat": None, "why": "it ended without recording an outcome"}
    run_id, holder, heartbeat = held
    why = why_dead(holder, heartbeat)
    if why is None:
        return None
    return {"run_id": run_id, "holder": holder, "heartbeat": heartbeat.isoformat(), "why": why}


def staging_tables(snapshot: SnapshotRecord, ends: Endpoints) -> list[str]:
    """The staging tables refreshes of ``snapshot`` create (and the one its last complete refresh
    recorded in SN_LAST_UPD_BM)."""
    names = [ends.staging_name(purpose) for purpose in STAGING_PURPOSES]
    try:
        recorded = json.loads(snapshot.sn_last_upd_bm or "{}").get("staging")
    except (ValueError, AttributeError):
        recorded = None
    return list(dict.fromkeys([*names, *([recorded] if isinstance(recorded, str) else [])]))


def drop_staging_tables(snapshot: SnapshotRecord) -> list[str]:
    """Drop the staging tables of ``snapshot`` found in its destination; those dropped. The caller
    knows that no live run uses them (a dead run's, or a killed task's own)."""
    ends = Endpoints.of(snapshot)
    try:
        dest, schema = ends.dest_db.dialect, snapshot.sn_dest_schema
        with ends.dest_db.session() as session:
            found = [t for t in staging_tables(snapshot, ends) if dest.table_exists(session, schema, t)]
            for table in found:
                session.execute(dest.drop_table_sql(schema, table))
        return found
    finally:
        ends.dispose()


def _died(dead: dict[str, Any]) -> str:
    return (
        f"run {dead['run_id'] or '?'} died: {dead['why']}; its staging tables were dropped, "
        "the destination keeps its last consistent content"
    )


def drop_stale_staging(catalog: Catalog) -> dict[str, list[str]]:
    """Drop the staging tables runs that died left in destinations; per snapshot, those dropped.

    Only snapshots whose last run died are looked at. One whose lease a live run holds is left alone;
    otherwise its lease is taken (over) while the tables are dropped. A destination that cannot be
    reached is logged and skipped."""
    dropped: dict[str, list[str]] = {}
    locks = catalog.locks()
    for snapshot in catalog.snapshots():
        dead = run_state(locks.get(snapshot_lock_name(snapshot.sn_name)), snapshot.sn_last_status)
        if dead is None:
            continue  # its last run ended (and dropped its staging tables) or lives
        lock = RunLock(catalog, snapshot_lock_name(snapshot.sn_name), uuid.uuid4().hex, what=snapshot.sn_name)
        try:
            lock.acquire()
        except SnapshotBusy:
            continue  # a live run: its staging table is its own
        try:
            found = drop_staging_tables(snapshot)
            if found:
                dropped[snapshot.sn_name] = found
                log.info("dropped staging tables %s that a dead run of %s left", found, snapshot.sn_name)
            if snapshot.sn_last_status == "running":  # nobody else will say so: record the death
                catalog.update_snapshot(snapshot.sn_name, sn_last_status="failed", sn_last_error=_died(dead))
        except Exception as err:  # an unreachable destination: the purge goes on with the others
            log.warning("staging tables of %s not checked: %s", snapshot.sn_name, err)
        finally:
            lock.release()
    return dropped

"""A collection's sync steps with nothing to do, answered without Spark (what :mod:`snaprepl.submit.idle`
asks before it starts a sync job, as :mod:`snaprepl.bidir.idle` answers for tables).

Only a scan tells whether a collection changed, so the check scans, as the job's pull would, under
the step's lease: a pull has nothing to do when the subscriber's scan finds no change since its last
sync; a push when every resource of the publisher's manifest (as its latest scan saw it, which is
what the job's push carries) is already the subscriber's version. The scans are kept (the job would
make the same ones); the outcomes are recorded as the job records them. Resources waiting on locks,
a detached subscriber, and an init always leave the decision to the job.
"""

from __future__ import annotations

import time
from datetime import datetime

from snaprepl.catalog import run_history
from snaprepl.catalog.records import utcnow
from snaprepl.catalog.run_lock import RunLock
from snaprepl.catalog.store import Catalog
from snaprepl.collections.job import open_sync
from snaprepl.collections.scan import scan
from snaprepl.collections.sync import CollectionSync, Counts
from snaprepl.publications.leases import step_lease
from snaprepl.publications.outcome import Outcome
from snaprepl.publications.steps import is_detached, planned_steps, record_step_succeeded, record_sync_succeeded


def collection_sync_if_idle(
    catalog: Catalog, item: str, action: str, server: str | None, run_id: str
) -> list[Outcome] | None:
    """The outcomes of sync job ``action`` (``pull``, ``push`` or a whole ``sync``) of collection
    publication ``item`` if no step has anything to do (recorded in the catalog); None otherwise."""
    steps = planned_steps(catalog, item, action, server)
    if steps is None or catalog.waiting(item) or any(is_detached(catalog, item, name) for _, name in steps):
        return None
    syncer = open_sync(catalog, item, None, run_id)
    outcomes: list[tuple[Outcome, datetime]] = []
    for step, name in steps:
        started, started_at = time.monotonic(), utcnow()
        with RunLock(catalog, step_lease(item, step, name), run_id, what=f"publication {item} ({step} {name})"):
            if _has_work(syncer, step, name):
                return None
        outcomes.append((Outcome(step, name, duration_s=time.monotonic() - started, summary=str(Counts())), started_at))
    for outcome, started_at in outcomes:
        now = utcnow()
        catalog.update_subscription(
            outcome.server, item, **{f"ss_last_{outcome.step}_ts": now, f"ss_last_{outcome.step}_at": now}
        )
        run_history.record_sync(
            catalog, item, outcome.step, outcome.server, started_at, "idle", rh_rows_in=0, rh_rows_out=0, rh_conflicts=0
        )
        record_step_succeeded(catalog, item, outcome.server)
    record_sync_succeeded(catalog, item)
    return [outcome for outcome, _ in outcomes]


def _has_work(syncer: CollectionSync, step: str, server: str) -> bool:
    sub = next(s for s in syncer.subs if s.server == server)
    if step == "pull":
        syncer.pub.check()
        sub.check()
        scan(syncer.catalog, syncer.item, syncer.pub, publisher=True)
        return any(entry.pending for entry in scan(syncer.catalog, syncer.item, sub).values())
    mine = syncer.catalog.manifest(syncer.item, syncer.pub.server)
    theirs = syncer.catalog.manifest(syncer.item, server)
    for rel, p in mine.items():
        s = theirs.get(rel)
        if p.deleted:
            if s is not None and s.live:
                return True
        elif s is None or s.rowguid != p.rowguid:
            return True
    return bool(syncer.forgettable_tombstones()[1])  # the job's push forgets them

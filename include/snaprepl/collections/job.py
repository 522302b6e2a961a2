"""The sync job's actions for a publication of a collection (type 1), as :mod:`snaprepl.bidir.job`
runs them for tables: ``init`` (REPL_INIT_SNAPSHOT of one subscriber), ``pull`` and ``push`` (one
subscriber: the tasks of the publication's DAG), ``sync`` (REPL_UPDATE_SNAPSHOT: pull every loaded
subscriber, in name order, then push to every one whose pull succeeded: a failing subscriber stops
no other, see :mod:`snaprepl.publications.steps`).

Each step holds the lease a table's step holds (``pull:<item>``, ``push:<item>:<server>``), so a step
of the CLI and one of a DAG never run at once, and is recorded in the run history and the
publication's and subscription's status. A pull scans the publisher and the subscriber; a push
carries the publisher as its latest scan saw it (the pulls before it scanned it; parallel pushes do
not scan, so they never race on the publisher's manifest), then forgets the deletions every side
has applied. An init scans the publisher under the pull lease, then pushes.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from snaprepl.catalog import run_history
from snaprepl.catalog.records import utcnow
from snaprepl.catalog.run_lock import RunLock
from snaprepl.catalog.store import Catalog
from snaprepl.collections.reload import reload
from snaprepl.collections.scan import scan
from snaprepl.collections.stores import Store, parse_item
from snaprepl.collections.sync import CollectionSync, Counts
from snaprepl.errors import CompleteRefreshRequired, ReplicationError
from snaprepl.publications.job import sync_main
from snaprepl.publications.leases import pull_lease, step_lease
from snaprepl.publications.outcome import Outcome
from snaprepl.publications.request import SyncRequest
from snaprepl.publications.steps import (
    detached_message,
    failure_recorded,
    loaded_servers,
    reinits_detached,
    run_steps,
    subscription_step,
)


def open_sync(catalog: Catalog, item: str, spark: Any, run_id: str) -> CollectionSync:
    """The publication's :class:`CollectionSync` with every subscriber's store (a push forgets
    tombstones against all of them)."""
    publication = catalog.publication(item)
    if publication is None:
        raise ReplicationError(f"there is no publication {item}")
    root, conn_id = parse_item(item)
    subs = []
    for sub in sorted(catalog.subscriptions(item), key=lambda s: s.ss_server):
        known = catalog.server(sub.ss_server)
        if known is None:
            raise ReplicationError(f"replication server {sub.ss_server} of {item} is not registered")
        subs.append(Store.open(known.db_address, root))
    syncer = CollectionSync(catalog, item, Store.open(conn_id, root), subs, spark=spark)
    syncer.run_id = run_id  # the conflict ledger names the job's run
    return syncer


def run(spark: Any, args: SyncRequest, catalog: Catalog) -> list[Outcome]:
    """Run the job's action on the collection; return one outcome per step.

    :param spark: a SparkSession, or a function returning one when first needed (for the body copies).
    """
    if args.action in {"init", "pull", "push"} and not args.server:
        raise ReplicationError(f"the {args.action} action needs --server")
    syncer = open_sync(catalog, args.item, spark, args.run_id)
    if args.action == "init":
        assert args.server is not None
        return [_recorded(syncer, "init", args.server)]
    servers = [args.server] if args.server else loaded_servers(catalog, args.item)
    kinds = [args.action] if args.action in {"pull", "push"} else ["pull", "push"]
    reinit = reinits_detached(catalog.publication(args.item), args.reinit_detached)
    step = lambda kind, server: _step(syncer, _detached_kind(syncer, kind, server, args.action, reinit), server)  # noqa: E731
    return run_steps(catalog, args.item, kinds, servers, step)


def _detached_kind(syncer: CollectionSync, kind: str, server: str, action: str, reinit: bool) -> str:
    """The step a push to a detached subscriber becomes with ``reinit``: ``init`` (a DAG's push task
    pulls its local changes first all the same); without, the push fails naming what to run."""
    sub = syncer.catalog.subscription(server, syncer.item) if kind == "push" and reinit else None
    if sub is None or sub.ss_detached_at is None:
        return kind
    if action == "push":
        _step(syncer, "pull", server)
    return "init"


def _store(syncer: CollectionSync, server: str) -> Store:
    for store in syncer.subs:
        if store.server == server:
            return store
    raise ReplicationError(f"server {server} does not subscribe to {syncer.item}")


def _scan_publisher(syncer: CollectionSync) -> None:
    """Scan the publisher under the pull lease: two scans at once (the loads of a backfill's parallel
    pushes) would both write its manifest."""
    what = f"publication {syncer.item} (scan of {syncer.pub.server})"
    with RunLock(syncer.catalog, pull_lease(syncer.item), syncer.run_id, what=what):
        scan(syncer.catalog, syncer.item, syncer.pub, publisher=True)


def _init(syncer: CollectionSync, sub: Store) -> None:
    """REPL_INIT_SNAPSHOT: ``sub`` reloaded from the publisher (:mod:`snaprepl.collections.reload`; the
    publisher's scan leased), attached again if it was detached."""
    syncer.pub.check()
    sub.check()
    _scan_publisher(syncer)
    reload(syncer, sub)
    syncer._mark(sub, "push")
    syncer.catalog.update_subscription(sub.server, syncer.item, ss_detached_at=None)


def _pull(syncer: CollectionSync, sub: Store) -> None:
    syncer.pub.check()
    sub.check()
    scan(syncer.catalog, syncer.item, syncer.pub, publisher=True)  # under the pull lease already
    syncer.pull(sub)
    syncer._mark(sub, "pull")


def _push(syncer: CollectionSync, sub: Store) -> None:
    record = syncer.catalog.subscription(sub.server, syncer.item)
    if record is not None and record.ss_detached_at is not None:  # tombstones were forgotten past it
        raise CompleteRefreshRequired(detached_message(record))
    syncer.pub.check()
    sub.check()
    syncer.push(sub)
    syncer._mark(sub, "push")
    syncer._forget_tombstones()


_ACTIONS: dict[str, Callable[[CollectionSync, Store], None]] = {"init": _init, "pull": _pull, "push": _push}


def _recorded(syncer: CollectionSync, kind: str, server: str) -> Outcome:
    """Step ``kind`` with ``server`` under its lease, recorded in the history however it ends."""
    started, clock = utcnow(), time.monotonic()
    syncer.counts = Counts()
    with failure_recorded(syncer.catalog, syncer.item, kind, server, started):
        sub = _store(syncer, server)
        what = f"publication {syncer.item} ({kind} {server})"
        with RunLock(syncer.catalog, step_lease(syncer.item, kind, server), syncer.run_id, what=what):
            syncer.locks.load()  # the resources earlier steps left waiting on locks
            _ACTIONS[kind](syncer, sub)
            syncer.locks.sweep([syncer.pub, *syncer.subs])  # forget the waiting versions no longer wanted
    counts = syncer.counts
    outcome = outcome_of(kind, server, counts, time.monotonic() - clock)
    run_history.record_sync(
        syncer.catalog, syncer.item, kind, server, started, "ok" if outcome.changes or kind == "init" else "idle",
        rh_rows_in=outcome.changes, rh_rows_out=counts.copied + counts.conflicts, rh_rows_deleted=counts.deleted,
        rh_conflicts=counts.conflicts,
    )  # fmt: skip
    return outcome


def outcome_of(kind: str, server: str, counts: Counts, seconds: float) -> Outcome:
    """The step's outcome: resources copied, deleted, in conflict, and those left for the next run."""
    applied = counts.copied + counts.deleted + counts.conflicts
    return Outcome(
        kind, server, changes=applied + counts.skipped + len(counts.locked), applied=applied,
        conflicts=counts.conflicts, skipped=counts.skipped, rows=counts.copied if kind == "init" else 0,
        duration_s=seconds, summary=str(counts),
    )  # fmt: skip


def _step(syncer: CollectionSync, kind: str, server: str) -> Outcome:
    return subscription_step(syncer.catalog, syncer.item, server, lambda: _recorded(syncer, kind, server))


def main(argv: Sequence[str] | None = None) -> int:
    """The job ``spark_jobs/sync_collection.py`` runs (the same arguments as a table's sync job)."""
    return sync_main(run, argv)


if __name__ == "__main__":
    sys.exit(main())

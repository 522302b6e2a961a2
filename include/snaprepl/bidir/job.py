"""The sync job that ``spark-submit`` runs for a publication of tables (see :mod:`snaprepl.bidir.sync`;
a publication of a collection runs :mod:`snaprepl.collections.job`, as ``submit/sync.py`` chooses).

Actions: ``init`` (REPL_INIT_SNAPSHOT of one subscriber), ``pull`` and ``push`` (one subscriber: the
tasks of a publication's DAG), ``sync`` (REPL_UPDATE_SNAPSHOT: pull every loaded subscriber, in
name order, then push to every one whose pull succeeded; see :mod:`snaprepl.publications.steps`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from snaprepl.bidir.guard import guard_step
from snaprepl.bidir.lost import naming_losses
from snaprepl.bidir.sync import PublicationSync
from snaprepl.catalog import run_history
from snaprepl.catalog.records import utcnow
from snaprepl.errors import CompleteRefreshRequired, ReplicationError
from snaprepl.publications.job import sync_main
from snaprepl.publications.request import SyncRequest
from snaprepl.publications.steps import (
    detached_message,
    failure_recorded,
    loaded_servers,
    reinits_detached,
    run_steps,
    subscription_step,
)


def run(spark: Any, args: SyncRequest, catalog: Any) -> list[Any]:
    """Run the job's action; return one outcome per step.

    :param spark: a SparkSession, or a function returning one when the job first needs it.
    """
    run_id = args.run_id
    sync = PublicationSync(
        spark, catalog, args.item, run_id, tolerance_minutes=args.tolerance_minutes, commit_rows=args.commit_rows
    )
    try:
        if args.action in {"init", "pull", "push"} and not args.server:
            raise ReplicationError(f"the {args.action} action needs --server")
        if args.action == "init":
            assert args.server is not None  # checked above
            outcome = _recorded(catalog, sync.item, "init", args.server, naming_losses(sync, "init", _load(sync, args)))
            catalog.update_subscription(args.server, sync.item, ss_detached_at=None)  # reloaded: attached again
            return [outcome]
        # A DAG runs the sync as separate pull and push steps: each one counts as the publication's
        # latest sync activity, so status shows DAG runs and their failures too.
        kinds = [args.action] if args.action in {"pull", "push"} else ["pull", "push"]
        servers = [args.server] if args.server else loaded_servers(catalog, args.item)
        step = lambda kind, server: _step(catalog, sync, server, kind, args)  # noqa: E731
        return run_steps(catalog, args.item, kinds, servers, step)
    finally:
        sync.dispose()


def _recorded(catalog: Any, item: str, kind: str, server: str, action: Any) -> Any:
    """``action(server)``, recorded in the history however it ends."""
    started = utcnow()
    with failure_recorded(catalog, item, kind, server, started):
        outcome = action(server)
    rows_in = outcome.rows if kind == "init" else outcome.changes
    rows_out = outcome.rows if kind == "init" else outcome.applied
    run_history.record_sync(
        catalog, item, kind, server, started, "ok" if rows_in or kind == "init" else "idle",
        rh_rows_in=rows_in, rh_rows_out=rows_out, rh_conflicts=outcome.conflicts,
    )  # fmt: skip
    return outcome


def _step(catalog: Any, sync: Any, server: str, kind: str, args: SyncRequest) -> Any:
    """One pull or push, recorded; the push to a detached subscriber fails saying it needs a reload,
    or (``reinit_detached``, or the publication's SP_REINIT_DETACHED) reloads it: its pull, before,
    took its local changes."""
    action = getattr(sync, kind)
    sub = catalog.subscription(server, sync.item) if kind == "push" else None
    if sub is not None and sub.ss_detached_at is not None:
        if reinits_detached(sync.publication, args.reinit_detached):
            if args.action == "push":  # a DAG's push task: take its local changes first all the same
                _step(catalog, sync, server, "pull", args)
            kind, action = "init", _load(sync, args)
        else:
            action = _failing(CompleteRefreshRequired(detached_message(sub)))
    if kind != "init":  # a reload checks its guards itself (bidir.guard.guard_init)
        action = _guarded(sync, action)
    recorded = lambda: _recorded(catalog, sync.item, kind, server, naming_losses(sync, kind, action))  # noqa: E731
    outcome = subscription_step(catalog, sync.item, server, recorded)
    if kind == "init":
        catalog.update_subscription(server, sync.item, ss_detached_at=None)
    return outcome


def _load(sync: Any, args: SyncRequest) -> Callable[[str], Any]:
    """A subscriber's initial load with the request's commit size, partitions and atomicity."""
    return lambda server: sync.init(server, args.rows_per_commit, args.max_partitions, atomic=args.atomic)


def _guarded(sync: Any, action: Callable[[str], Any]) -> Callable[[str], Any]:
    """``action``, after the guards of both sides' logs (:func:`snaprepl.bidir.guard.guard_step`)."""

    def guarded(server: str) -> Any:
        guard_step(sync, server)
        return action(server)

    return guarded


def _failing(error: Exception) -> Callable[[str], Any]:
    def fail(server: str) -> Any:
        raise error

    return fail


def main(argv: Sequence[str] | None = None) -> int:
    return sync_main(run, argv)


if __name__ == "__main__":
    sys.exit(main())

"""The sync job that ``spark-submit`` runs for a publication of tables (see :mod:`snaprepl.bidir.sync`;
a publication of a collection runs :mod:`snaprepl.collections.job`, as ``submit/sync.py`` chooses).

Actions: ``init`` (REPL_INIT_SNAPSHOT of one subscriber), ``pull`` and ``push`` (one subscriber: the
tasks of a publication's DAG), ``sync`` (REPL_UPDATE_SNAPSHOT: pull every loaded subscriber, in
name order, then push to every one).
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from snaprepl import run_history
from snaprepl.bidir.guard import guard_step
from snaprepl.bidir.state import loaded_servers, record_step_succeeded, record_sync_succeeded
from snaprepl.bidir.sync import PublicationSync
from snaprepl.catalog.records import utcnow
from snaprepl.errors import ReplicationError
from snaprepl.spark.entrypoint import JobRun
from snaprepl.spark.job_args import SyncJobArgs


def run(spark: Any, args: SyncJobArgs, catalog: Any) -> list[Any]:
    """Run the job's action; return one outcome per step.

    :param spark: a SparkSession, or a function returning one when the job first needs it.
    """
    run_id = args.run_id or uuid.uuid4().hex
    sync = PublicationSync(
        spark, catalog, args.item, run_id, tolerance_minutes=args.tolerance_minutes, commit_rows=args.commit_rows
    )
    try:
        if args.action in {"init", "pull", "push"} and not args.server:
            raise ReplicationError(f"the {args.action} action needs --server")
        if args.action == "init":
            init = lambda server: sync.init(server, args.rows_per_commit, atomic=args.atomic)  # noqa: E731
            return [_recorded(catalog, sync.item, "init", args.server, init)]
        # A DAG runs the sync as separate pull and push steps: each one counts as the publication's
        # latest sync activity, so status shows DAG runs and their failures too.
        steps = {"pull": [(args.server, sync.pull)], "push": [(args.server, sync.push)]}.get(args.action)
        if steps is None:
            loaded = loaded_servers(catalog, args.item)
            steps = [(server, sync.pull) for server in loaded] + [(server, sync.push) for server in loaded]
        try:
            outcomes = [_step(catalog, sync, server, action) for server, action in steps]
        except BaseException as err:
            catalog.update_publication(
                args.item, sp_last_status="failed", sp_last_error=str(err)[:4000], sp_last_sync_at=utcnow()
            )
            raise
        record_sync_succeeded(catalog, args.item)
        return outcomes
    finally:
        sync.dispose()


def _recorded(catalog: Any, item: str, kind: str, server: str, action: Any) -> Any:
    """``action(server)``, recorded in the history however it ends."""
    started = utcnow()
    try:
        outcome = action(server)
    except BaseException as err:
        run_history.record_sync(catalog, item, kind, server, started, "failed", rh_error=run_history.clean_error(err))
        raise
    rows_in = outcome.rows if kind == "init" else outcome.changes
    rows_out = outcome.rows if kind == "init" else outcome.applied
    run_history.record_sync(
        catalog, item, kind, server, started, "ok" if rows_in or kind == "init" else "idle",
        rh_rows_in=rows_in, rh_rows_out=rows_out, rh_conflicts=outcome.conflicts,
    )  # fmt: skip
    return outcome


def _step(catalog: Any, sync: Any, server: str, action: Any) -> Any:
    kind = "pull" if action == sync.pull else "push"
    try:
        outcome = _recorded(catalog, sync.item, kind, server, lambda s: (guard_step(sync, s), action(s))[1])
    except BaseException as err:
        catalog.update_subscription(server, sync.item, ss_last_status="failed", ss_last_error=str(err)[:4000])
        raise
    record_step_succeeded(catalog, sync.item, server)
    return outcome


def main(argv: Sequence[str] | None = None) -> int:
    return sync_main(run, argv)


def sync_main(runner: Callable[[Any, SyncJobArgs, Any], list[Any]], argv: Sequence[str] | None) -> int:
    """A sync job's process (tables here, collections in :mod:`snaprepl.collections.job`): its
    arguments, ``runner``'s outcomes as the result, failures as :class:`ReplicationError`."""
    args = SyncJobArgs.from_argv(argv)
    with JobRun(f"snaprepl-sync-{args.action}", args.catalog_conn, failure=ReplicationError) as job:
        job.result = {"outcomes": [o.to_dict() for o in runner(job.spark, args, job.open_catalog())]}
    return job.exit_code


if __name__ == "__main__":
    sys.exit(main())

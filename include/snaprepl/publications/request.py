"""What a sync job is asked to do: one request object, built by the submitter (the CLI, the Python API,
the Airflow operators) and read by the job of a publication of tables (:mod:`snaprepl.bidir.job`) or of
a collection (:mod:`snaprepl.collections.job`). Its command line is derived from its fields
(:func:`snaprepl.spark.job_args.job_argv`)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from snaprepl.settings import Settings

#: Rows per commit of a sync step when the publication sets none (its SP_ROWS_PER_COMMIT).
DEFAULT_ROWS_PER_COMMIT = 100
#: A sync job's actions: REPL_INIT_SNAPSHOT of one subscriber, a DAG's pull or push step with one
#: subscriber, REPL_UPDATE_SNAPSHOT (pull every loaded subscriber, then push to each).
SYNC_ACTIONS = ("init", "pull", "push", "sync")


@dataclass(frozen=True)
class SyncRequest:
    """One sync action of one publication.

    :param item: SP_ITEM of the publication.
    :param action: one of :data:`SYNC_ACTIONS`.
    :param server: the subscriber (init, pull, push); None: every loaded subscriber.
    :param rows_per_commit: rows per commit of an initial load.
    :param atomic: an init replaces the replica in one transaction (readers see the old rows or the new).
    :param max_partitions: most parallel reads of the publisher's table in an initial load.
    :param tolerance_minutes: how far before its watermark a push reads the log where the watermark is
        not exact.
    :param commit_rows: rows per commit of a pull or push.
    :param reinit_detached: a detached subscriber's push reloads it instead of failing.
    :param run_id: identifies this run in the catalog's leases and conflict ledger.
    """

    item: str
    action: str
    server: str | None = None
    rows_per_commit: int = DEFAULT_ROWS_PER_COMMIT
    atomic: bool = False
    max_partitions: int = Settings.refresh_max_partitions
    tolerance_minutes: int = Settings.snp_repl_tolerance_offset
    commit_rows: int = Settings.refresh_commit_rows
    reinit_detached: bool = Settings.reinit_detached
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)

    def __post_init__(self) -> None:
        if self.action not in SYNC_ACTIONS:
            raise ValueError(f"sync action must be one of {SYNC_ACTIONS}, not {self.action!r}")

    @classmethod
    def configured(
        cls,
        action: str,
        item: str,
        settings: Settings,
        *,
        server: str | None = None,
        rows_per_commit: int = DEFAULT_ROWS_PER_COMMIT,
        atomic: bool = False,
    ) -> SyncRequest:
        """``action`` of ``item`` with the partitions, tolerance, commit size and reloads of ``settings``."""
        return cls(
            item=item,
            action=action,
            server=server,
            rows_per_commit=rows_per_commit,
            atomic=atomic,
            max_partitions=settings.refresh_max_partitions,
            tolerance_minutes=settings.snp_repl_tolerance_offset,
            commit_rows=settings.refresh_commit_rows,
            reinit_detached=settings.reinit_detached,
        )

"""The run history (SYS_REPL_HISTORY): one row per refresh, pull, push and initial load.

Rows are written once, when a run ends (ok, idle or failed), and read newest first by
``snaprepl status``, ``snaprepl history`` and the Replication page; the purge DAG drops rows older
than ``[snaprepl] history_keep_days``.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from snaprepl.catalog import models as m
from snaprepl.catalog.base import CatalogDatabase
from snaprepl.catalog.records import HistoryRecord

#: Kinds of runs (RH_KIND).
KINDS = ("incremental", "complete", "pull", "push", "init", "verify", "repair")
#: Kinds of runs that check a copy rather than replicate into it.
CHECK_KINDS = ("verify", "repair")
#: How a run ended (RH_OUTCOME): it applied something or found nothing to do, or it failed; a verify
#: found its copy equal (ok) or not (differences: RH_CONFLICTS of them).
OUTCOMES = ("ok", "idle", "failed", "differences")


class History(CatalogDatabase):
    """Recording runs, reading them back, and forgetting old ones."""

    def record_run(self, run: HistoryRecord) -> int:
        """Add ``run`` to the history; its RH_ID."""
        if run.rh_kind not in KINDS or run.rh_outcome not in OUTCOMES:
            raise ValueError(f"not a run kind and outcome: {run.rh_kind!r}, {run.rh_outcome!r}")
        values = run.to_values()
        values.pop("RH_ID")
        with self.begin() as conn:
            key = conn.execute(sa.insert(m.SYS_REPL_HISTORY).values(**values)).inserted_primary_key
        return int(key[0]) if key else 0

    def history(
        self, copy: str | None = None, *, since: datetime | None = None, limit: int | None = 200
    ) -> list[HistoryRecord]:
        """Runs of ``copy`` (every copy when None) started at or after ``since``, newest first."""
        t = m.SYS_REPL_HISTORY.c
        query = sa.select(m.SYS_REPL_HISTORY).order_by(t.RH_STARTED.desc(), t.RH_ID.desc())
        if copy is not None:
            query = query.where(t.RH_COPY == copy)
        if since is not None:
            query = query.where(t.RH_STARTED >= since)
        if limit is not None:
            query = query.limit(limit)
        with self.begin() as conn:
            return [HistoryRecord.from_row(row) for row in conn.execute(query)]

    def last_runs(self, *, checks: bool = False) -> dict[tuple[str, str | None], HistoryRecord]:
        """The newest run of each copy and server (snapshots: server None): of its replication runs,
        or with ``checks`` of its verifies and repairs."""
        t = m.SYS_REPL_HISTORY.c
        kinds = t.RH_KIND.in_(CHECK_KINDS)
        newest = (
            sa.select(sa.func.max(t.RH_ID).label("id"))
            .where(kinds if checks else sa.not_(kinds))
            .group_by(t.RH_COPY, t.RH_SERVER)
            .subquery()
        )
        query = sa.select(m.SYS_REPL_HISTORY).where(t.RH_ID.in_(sa.select(newest.c.id)))
        with self.begin() as conn:
            runs = [HistoryRecord.from_row(row) for row in conn.execute(query)]
        return {(r.rh_copy, r.rh_server): r for r in runs}

    def purge_history(self, older_than: datetime) -> int:
        """Forget runs that started before ``older_than``; how many."""
        t = m.SYS_REPL_HISTORY.c
        with self.begin() as conn:
            return conn.execute(sa.delete(m.SYS_REPL_HISTORY).where(t.RH_STARTED < older_than)).rowcount or 0

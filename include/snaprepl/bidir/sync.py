"""The sync engine of a publication: initial load, pull (subscriber to publisher, with conflict
resolution) and push (publisher to subscribers).

Reads go through Spark (JDBC, pushed-down joins of log and table); conflict resolution runs in the
driver, since resolvers are Python callables; writes are replicated DML the triggers do not log.

* **pull** from S: mark S's pending log entries as in flight; read every in-flight entry with S's
  current row; per batch (along SNAPTIME groups), in one publisher transaction, judge each change
  against the publisher's locked current row, apply it, and log it in the publisher's log with its
  ORIGIN; then record the entries in SYS_URPLOG (with the conflicts) and delete them from S's log.
  A pull killed anywhere is run again: entries already applied are recognised by SYS_URPLOG, or by
  the publisher already holding their version.
* **push** to S: read the publisher's log since SS_LAST_PUSH_TS minus the tolerance, except
  entries whose ORIGIN is S, with the publisher's current rows; apply them to S, except keys with a
  local change not yet pulled (they are retried at the next push, after the pull decided them).
* **init** of S: copy the publisher's rows into S, committing every ``rows_per_commit`` rows; the
  push watermark is taken before the copy, so changes made meanwhile are pushed afterwards.
"""

from __future__ import annotations

from snaprepl.bidir.init import init
from snaprepl.bidir.pull import pull
from snaprepl.bidir.push import push
from snaprepl.bidir.state import PublicationState
from snaprepl.publications.outcome import Outcome
from snaprepl.settings import Settings

__all__ = ["Outcome", "PublicationSync"]


class PublicationSync(PublicationState):
    """Syncs of one publication: :meth:`init`, :meth:`pull` and :meth:`push` of its subscribers."""

    def init(
        self,
        server: str,
        rows_per_commit: int,
        max_partitions: int = Settings.refresh_max_partitions,
        *,
        atomic: bool = False,
    ) -> Outcome:
        """REPL_INIT_SNAPSHOT of ``server`` (see :func:`snaprepl.bidir.init.init`)."""
        return init(self, server, rows_per_commit, max_partitions, atomic=atomic)

    def pull(self, server: str) -> Outcome:
        """Pull ``server``'s changes into the publisher (see :func:`snaprepl.bidir.pull.pull`)."""
        return pull(self, server)

    def push(self, server: str) -> Outcome:
        """Push the publisher's changes to ``server`` (see :func:`snaprepl.bidir.push.push`)."""
        return push(self, server)

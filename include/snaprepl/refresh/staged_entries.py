"""The log entries of an incremental refresh's staging table, read beside the apply statements.

Each commit of a batch records the batch's log entries (RLOG_ROWGUID, SNAPTIME) in the replay log. The
staging table does not change once loaded, so its entries are read in a thread of their own, on a
session of their own, while the destination runs the batches' deletes and upserts: 1,000,000 entries
read and converted took as long as the upsert of their rows, one after the other. A SNAPTIME is
converted once per distinct value (a source transaction's entries share one), and each batch's
entries are sorted in the replay log's key order (SNAPTIME, RLOG_ROWGUID), so its one index is written
page after page.
"""

from __future__ import annotations

import contextvars
import threading
from datetime import datetime
from typing import Any

from snaprepl.catalog.snapshots import replay_order
from snaprepl.refresh.endpoints import Endpoints
from snaprepl.sql.change_queries import staged_all_entries_sql

#: A batch's log entries: (RLOG_ROWGUID, SNAPTIME).
Entries = list[tuple[str, datetime]]


class StagedEntries:
    """The entries of staging table ``staged`` (qualified) of ``ends``' destination, by batch; read by
    a thread started at once, waited for by :meth:`of`."""

    def __init__(self, ends: Endpoints, staged: str) -> None:
        self._ends, self._staged = ends, staged
        self._batches: dict[int, Entries] = {}
        self._error: BaseException | None = None
        context = contextvars.copy_context()  # the run's timeouts and connections
        self._thread = threading.Thread(target=context.run, args=(self._read,), name="snaprepl-entries", daemon=True)
        self._thread.start()

    def of(self, batch: int) -> Entries:
        """Batch ``batch``'s entries (none if it has none), once the read has ended; its error if it failed."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._batches.get(batch, [])

    def _read(self) -> None:
        try:
            dest = self._ends.dest_db.dialect
            with self._ends.dest_db.session() as session:
                rows = session.query(staged_all_entries_sql(dest, self._staged))
            times: dict[Any, Any] = {ts: dest.snaptime_value(ts) for ts in {row[2] for row in rows}}
            for batch, guid, ts in rows:
                self._batches.setdefault(int(batch), []).append((guid, times[ts]))
            for entries in self._batches.values():
                entries.sort(key=replay_order)  # the replay log's key order: written page after page
        except BaseException as err:  # handed to the run's own thread by of()
            self._error = err

"""The log entries of an incremental refresh's staging table, read beside the apply statements.

Each commit of a batch records the batch's log entries (RLOG_ROWGUID, SNAPTIME) in the replay log. The
staging table does not change once loaded, so its entries are read in a thread of their own, on a
session of their own, while the destination runs the batches' deletes and upserts: 1,000,000 entries
read and converted took as long as the upsert of their rows, one after the other. A SNAPTIME is
converted once per distinct value (a source transaction's entries share one), and each batch's
entries are sorted in the replay log's key order (SNAPTIME, RLOG_ROWGUID), so its one index is written
page after page.

:class:`BatchRecords` writes each batch's entries to the catalog's replay log while the destination
applies the batch, seen once the destination has committed (:mod:`snaprepl.catalog.applied`):
1,000,000 entries took 3.3 s after the apply's commit, one after the other. A window cut by
transaction ids reads no replay log (:attr:`Window.needs_replay_log`): then no entry is read, grouped
or written, and each commit only moves SN_LAST_TS (1,000,000 entries read back from a PostgreSQL
staging table took 2.6 s beside the apply, and 0.6-1.0 s went into a SQLite catalog after the commit).
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from snaprepl.catalog.applied import PendingApplied
from snaprepl.catalog.snapshots import in_replay_order
from snaprepl.catalog.store import Catalog
from snaprepl.common.background import in_background
from snaprepl.common.collector import collector_paused
from snaprepl.dialects import Dialect
from snaprepl.dialects.model import SqlSession
from snaprepl.refresh.endpoints import Endpoints
from snaprepl.sql.change_queries import staged_all_entries_sql, staged_batches_sql

#: A batch's log entries: (RLOG_ROWGUID, SNAPTIME).
Entries = list[tuple[str, datetime]]


@dataclass
class StagedBatch:
    """One commit batch of a staging table: its rows by operation (``U``, ``D``) and its newest SNAPTIME."""

    counts: dict[str, int]
    newest: datetime

    @property
    def rows(self) -> int:
        return sum(self.counts.values())


def staged_batches(session: SqlSession, dest: Dialect, staged: str) -> dict[int, StagedBatch]:
    """The batches of staging table ``staged`` (qualified) by number: one aggregate of the table."""
    batches: dict[int, StagedBatch] = {}
    for batch, op, count, newest in session.query(staged_batches_sql(dest, staged)):
        ts = cast(datetime, dest.snaptime_value(newest))  # SNAPTIME is NOT NULL
        found = batches.setdefault(int(batch), StagedBatch({}, ts))
        found.counts[str(op).strip()] = int(count)
        found.newest = max(found.newest, ts)
    return batches


class SeenEntries:
    """The entries of the rows a bulk pipe writes into the staging table (batch, operation,
    RLOG_ROWGUID, SNAPTIME, then the data), grouped by batch and SNAPTIME by a thread as the pipe shows
    each block (:meth:`see`), until :meth:`end`: no reading them back from the staging table (SQLite:
    1.1-1.5 s of 1,000,000 entries, beside the apply)."""

    def __init__(self) -> None:
        self._blocks: queue.SimpleQueue[list[Any] | None] = queue.SimpleQueue()
        self._grouped = in_background(self._group, name="snaprepl-seen-entries")

    def see(self, block: list[Any]) -> None:
        """A block of rows written (in the pipe's thread)."""
        self._blocks.put(block)

    def end(self) -> None:
        """No more blocks (the load ended, or failed)."""
        self._blocks.put(None)

    def grouped(self) -> dict[Any, dict[Any, list[str]]]:
        """The RLOG_ROWGUIDs by batch, then by SNAPTIME as written, once :meth:`end` was called."""
        return self._grouped.result()

    def _group(self) -> dict[Any, dict[Any, list[str]]]:
        grouped: dict[Any, dict[Any, list[str]]] = {}
        with collector_paused():
            while (block := self._blocks.get()) is not None:
                _add(grouped, ((row[0], row[2], row[3]) for row in block))
        return grouped


class StagedEntries:
    """The entries of staging table ``staged`` (qualified) of ``ends``' destination, by batch: those the
    pipe showed as it wrote them (``seen``), or read by a thread started at once; waited for by :meth:`of`."""

    def __init__(self, ends: Endpoints, staged: str, seen: SeenEntries | None = None) -> None:
        self._ends, self._staged, self._seen = ends, staged, seen
        self._batches = in_background(self._read, name="snaprepl-entries")

    def of(self, batch: int) -> Entries:
        """Batch ``batch``'s entries (none if it has none), once the read has ended; its error if it failed."""
        return self._batches.result().get(batch, [])

    def settled(self) -> bool:
        """Wait until the read has ended; whether it succeeded."""
        return self._batches.exception() is None

    def _read(self) -> dict[int, Entries]:
        dest = self._ends.dest_db.dialect
        if self._seen is not None:
            grouped = self._seen.grouped()
        else:
            with self._ends.dest_db.session(beside_writer=True) as session:  # SQLite: the apply writes meanwhile
                rows = session.fetch_rows(staged_all_entries_sql(dest, self._staged))
            grouped = _by_batch_and_time(rows)
            del rows
        with collector_paused():  # a million new tuples: no full collection every few hundred thousand
            return {int(batch): _in_replay_order(dest, times) for batch, times in grouped.items()}


def _by_batch_and_time(rows: list[Any]) -> dict[Any, dict[Any, list[str]]]:
    """The RLOG_ROWGUIDs of rows (batch, RLOG_ROWGUID, SNAPTIME) by batch, then by SNAPTIME as read."""
    grouped: dict[Any, dict[Any, list[str]]] = {}
    with collector_paused():
        _add(grouped, rows)
    return grouped


def _add(grouped: dict[Any, dict[Any, list[str]]], rows: Iterable[tuple[Any, str, Any]]) -> None:
    for batch, guid, ts in rows:
        try:
            grouped[batch][ts].append(guid)
        except KeyError:
            grouped.setdefault(batch, {}).setdefault(ts, []).append(guid)


def _in_replay_order(dest: Dialect, times: dict[Any, list[str]]) -> Entries:
    """One batch's entries in the replay log's key order, each SNAPTIME as read converted once (a
    source transaction's entries share one)."""
    by_time: dict[datetime, list[str]] = {}
    for ts, guids in times.items():
        by_time.setdefault(cast(datetime, dest.snaptime_value(ts)), []).extend(guids)  # SNAPTIME is NOT NULL
    return in_replay_order(by_time)


class BatchRecords:
    """Each batch of ``batches`` recorded as applied to snapshot ``name``: its entries of ``entries``
    written by a thread while the destination applies the batch (:meth:`start`), committed with
    SN_LAST_TS's move once it has (:meth:`commit`), forgotten if it has not (:meth:`abandon`). Without
    ``entries`` (a window that needs no replay log) a commit only moves SN_LAST_TS."""

    def __init__(
        self, catalog: Catalog, name: str, batches: Mapping[int, StagedBatch], entries: StagedEntries | None
    ) -> None:
        self._catalog, self._name, self._batches, self._entries = catalog, name, batches, entries
        self._batch: int | None = None
        self._written: Future[tuple[Entries, PendingApplied | None]] | None = None

    def start(self, batch: int) -> None:
        """Begin writing ``batch``'s entries (the batch about to be applied)."""
        self._batch = batch
        if self._entries is not None:
            self._written = in_background(self._write, batch, name="snaprepl-replay-log")

    def settled(self) -> bool:
        """Wait until the entries are read (if any are); whether nothing more reads the staging table."""
        return self._entries is None or self._entries.settled()

    def commit(self, watermark: Callable[[datetime], datetime | None]) -> datetime | None:
        """After the destination committed the batch: record it, SN_LAST_TS moved to ``watermark``
        of its newest SNAPTIME; return that."""
        assert self._batch is not None, "start() first"
        last_ts = watermark(self._batches[self._batch].newest)
        if self._written is None:
            self._catalog.record_applied(self._name, [], last_ts)
            return last_ts
        entries, pending = self._written.result()
        if pending is None:  # a rerun the catalog found at once: written now, skipping those listed
            self._catalog.record_applied(self._name, entries, last_ts)
        else:
            pending.commit(last_ts)
        return last_ts

    def abandon(self) -> None:
        """The batch was not committed: its entries are not recorded (never raises over the run's error)."""
        if self._written is None:
            return
        try:
            _, pending = self._written.result()
        except BaseException:
            return
        if pending is not None:
            pending.rollback()

    def _write(self, batch: int) -> tuple[Entries, PendingApplied | None]:
        assert self._entries is not None
        entries = self._entries.of(batch)
        return entries, self._catalog.write_applied(self._name, entries)

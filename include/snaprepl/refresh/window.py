"""The window of an incremental refresh (docs/semantics.md section 4, step 1) and whether it holds work.

SQL only, no Spark: the job asks before it starts a SparkSession, and the submitter
(:mod:`snaprepl.refresh.idle`) asks before it starts a job at all.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from snaprepl.catalog.records import LogRecord, SnapshotRecord
from snaprepl.catalog.store import Catalog
from snaprepl.dialects import Dialect
from snaprepl.dialects.model import SqlSession
from snaprepl.dialects.watermarks import XID_COLUMN, HighWater
from snaprepl.errors import CompleteRefreshRequired, SnapshotLogNotFound
from snaprepl.refresh.endpoints import Endpoints
from snaprepl.refresh.log_upgrade import upgrade_to_xids
from snaprepl.refresh.model import INCREMENTAL, RefreshOutcome, RefreshRequest
from snaprepl.sql.change_queries import log_entries_sql


def complete_required(name: str, why: str) -> CompleteRefreshRequired:
    return CompleteRefreshRequired(
        f"snapshot {name} needs a complete refresh: {why}",
        f"run UPDATE SNAPSHOT {name} AS NONINCREMENTAL, or trigger its DAG with mode nonincremental",
    )


@dataclass(frozen=True)
class Window:
    """Which log entries an incremental refresh reads, and where its watermarks may move.

    :param log: the snapshot's log.
    :param start: the SNAPTIME the entries are read from (entries without a transaction id, when
        the log is read by transaction ids).
    :param prev: the transaction-id snapshot of the last refresh, when the log records transaction ids
        (then entries are read by visibility: in ``high.xids`` and not in ``prev``); None otherwise.
    :param by_xids: whether the log is read by transaction ids.
    :param replayed: RLOG_ROWGUIDs the replay log lists since ``start`` (empty when read by xids).
    :param high: the source's high water, taken before the log is read.
    """

    log: LogRecord
    start: datetime
    by_xids: bool
    prev: str | None
    replayed: list[str]
    high: HighWater

    def condition(self, dialect: Dialect, prefix: str = "") -> str:
        """The window as a condition on the log's columns (``prefix``: the log's alias and a dot)."""
        snaptime = f"{prefix}{dialect.quote(dialect.log_columns.snaptime)} >= {dialect.timestamp_literal(self.start)}"
        if not self.by_xids or self.high.xids is None:
            return snaptime
        return dialect.xid_window_sql(f"{prefix}{dialect.quote(XID_COLUMN)}", snaptime, self.prev, self.high.xids)

    def watermark(self, applied: datetime | None) -> datetime | None:
        """SN_LAST_TS after applying entries up to SNAPTIME ``applied``: never past an open transaction."""
        return self.high.limit(applied)

    @property
    def needs_replay_log(self) -> bool:
        """Whether the entries applied from this window go to the replay log. A window cut by
        transaction ids reads none (:func:`log_window`) and leaves the next refresh's window cut by
        them too: its entries would only be written, never read."""
        return not self.by_xids or self.high.xids is None

    @property
    def note(self) -> str | None:
        return None if self.by_xids else self.high.note


def pending_window(catalog: Catalog, request: RefreshRequest, ends: Endpoints) -> Window | None:
    """The snapshot's window (:class:`Window`); None when no entry in it is left to apply (the usual
    scheduled no-op: then the transaction-id watermark, if any, has moved on).

    :raises CompleteRefreshRequired: when the snapshot needs a complete refresh first.
    :raises SnapshotLogNotFound: when its log is gone.
    """
    window = log_window(catalog, request, ends)
    if not entries_to_apply(ends, window):
        record_xids(catalog, ends.snapshot, window)
        return None
    return window


def record_xids(catalog: Catalog, snapshot: SnapshotRecord, window: Window) -> None:
    """After every entry of ``window`` was applied: the log is read up to its transaction-id snapshot."""
    if window.by_xids and window.high.xids != snapshot.sn_xid_snapshot:
        catalog.update_snapshot(snapshot.sn_name, sn_xid_snapshot=window.high.xids)


def nothing_applied(snapshot: SnapshotRecord, started: float, note: str | None = None) -> RefreshOutcome:
    """The outcome of an incremental refresh that found nothing to apply."""
    return RefreshOutcome(
        snapshot=snapshot.sn_name,
        kind=INCREMENTAL,
        last_ts=snapshot.sn_last_ts,
        duration_s=time.monotonic() - started,
        note=note,
    )


def copy_mark(catalog: Catalog, snapshot: SnapshotRecord, session: SqlSession, source: Dialect) -> HighWater:
    """The high water a complete refresh of ``snapshot`` takes before it copies: its ``mark`` becomes
    SN_LAST_TS, and its transaction-id snapshot (kept only if the log records transaction ids)
    SN_XID_SNAPSHOT, so every change the copy may miss is in the next incremental window."""
    high = source.high_water(session)
    log = catalog.log(snapshot.sn_source_table or "")
    if high.xids is not None and not (log and source.log_has_xids(session, log.snl_schema, log.objects.rlog)):
        high = replace(high, xids=None)
    return high


def log_window(catalog: Catalog, request: RefreshRequest, ends: Endpoints, shared: HighWater | None = None) -> Window:
    """The snapshot's window: by transaction ids where the log records them, else by SNAPTIME from the
    watermark (minus the tolerance where the watermark is not exact, or the source's clock went back).

    :param shared: the source's high water taken once for a whole snapshot group (every member gets the
        same bound), instead of one taken now.

    :raises CompleteRefreshRequired: when the snapshot needs a complete refresh first.
    :raises SnapshotLogNotFound: when its log is gone.
    """
    snapshot = ends.snapshot
    name = snapshot.sn_name
    if snapshot.sn_needs_complete:
        raise complete_required(name, snapshot.sn_needs_complete)
    if snapshot.sn_last_ts is None:
        raise complete_required(name, "it has never completed a copy")
    log = catalog.log(snapshot.sn_source_table or "")
    if log is None:
        raise SnapshotLogNotFound(
            f"the snapshot log of {snapshot.sn_source_table}, which snapshot {name} reads, is gone",
            f"create it again and refresh {name} completely",
        )
    minutes = snapshot.sn_tolerance_min if snapshot.sn_tolerance_min is not None else request.tolerance_minutes
    reach = snapshot.sn_last_ts - timedelta(minutes=minutes)
    if purged_past(log.snl_purged_before, reach, snapshot.sn_complete_ts):
        raise complete_required(
            name,
            f"its log was purged up to {log.snl_purged_before:%Y-%m-%d %H:%M:%S} but it needs entries from "
            f"{reach:%Y-%m-%d %H:%M:%S} (Oracle's ORA-12034)",
        )
    source = ends.source_db.dialect
    high, by_xids = _high_water(ends, log, shared)
    upgraded, upgrade = False, None
    if source.logs_xids and not by_xids and shared is None:  # a log made before transaction ids: upgrade it
        upgraded, upgrade = upgrade_to_xids(catalog, ends.source_db, log)
        if upgraded:
            high, by_xids = _high_water(ends, log)
    prev = snapshot.sn_xid_snapshot if by_xids and not upgraded else None
    # Exact: the watermark never passed an entry that could still commit, so only the boundary is
    # read again; the tolerance covers what is not exact, and a clock that went back.
    exact = (by_xids and prev is not None) or (high.exact and high.clock >= snapshot.sn_last_ts)
    start = snapshot.sn_last_ts if exact else reach
    replayed = [] if by_xids and prev is not None else catalog.replayed_since(name, start)
    if upgrade:
        high = replace(high, note="; ".join(n for n in (high.note, upgrade) if n))
    return Window(log, start, by_xids, prev, replayed, high)


def _high_water(ends: Endpoints, log: LogRecord, shared: HighWater | None = None) -> tuple[HighWater, bool]:
    """The source's high water (``shared`` when given), and whether ``log`` records transaction ids."""
    source = ends.source_db.dialect
    with ends.source_db.session() as session:
        high = shared if shared is not None else source.high_water(session)
        return high, source.logs_xids and source.log_has_xids(session, log.snl_schema, log.objects.rlog)


def purged_past(purged_before: datetime | None, start: datetime, complete_ts: datetime | None) -> bool:
    """Whether the log may have lost entries the refresh needs: it was purged past ``start``, and past
    the mark the last complete copy started from (entries purged before that mark are in the copy)."""
    if purged_before is None or start >= purged_before:
        return False
    return complete_ts is None or complete_ts < purged_before


def entries_to_apply(ends: Endpoints, window: Window) -> bool:
    """Whether the window holds entries the replay log does not list: a count (no further than one
    more than the replay log lists: 1,000,000 entries counted twice took 0.1-0.2 s of a refresh), and
    only when the count does not already tell, the entries' RLOG_ROWGUIDs."""
    source = ends.source_db.dialect
    condition = window.condition(source)
    replayed = set(window.replayed)
    counted = log_entries_sql(source, window.log, condition, count=True, at_most=len(replayed) + 1)
    with ends.source_db.session() as session:
        count = int(session.query(counted)[0][0])
        if count == 0 or count > len(replayed):
            return count > 0
        rows = session.query(log_entries_sql(source, window.log, condition, count=False))
        return any(row[0] not in replayed for row in rows)

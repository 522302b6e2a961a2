"""Long source transactions, reported once by the alerting around a run (:mod:`snaprepl.submit.alerts`).

A source transaction open longer than ``[snaprepl] long_transaction_warn_minutes`` holds the
watermarks of the copies fed by that source's log back (its changes wait until it commits, see
:mod:`snaprepl.dialects.watermarks`). Each copy alerts about it once: at its first run after the
transaction crossed the threshold (the run before that one started before it did).
"""

from __future__ import annotations

from datetime import datetime

from snaprepl.catalog.records import LogRecord, utcnow
from snaprepl.catalog.store import Catalog
from snaprepl.database.sessions import Database
from snaprepl.settings import Settings


def long_transaction_alerts(catalog: Catalog, settings: Settings, copy: str, since: datetime) -> list[str]:
    """Alerts about long transactions at the source of ``copy`` (a snapshot or a publication) not
    reported by an earlier run of it (``since``: when this run started)."""
    minutes = settings.long_transaction_warn_minutes
    log = _log_of(catalog, copy)
    if not minutes or log is None:
        return []
    database = Database.for_conn_id(log.snl_conn)
    with database.session() as session:
        found = database.dialect.open_transactions(session, minutes) or []
    earlier = [r.rh_started for r in catalog.history(copy, limit=20) if r.rh_started < since]
    checked = (utcnow() - max(earlier)).total_seconds() if earlier else float("inf")
    return [
        f"{copy}: source transaction {t.describe()} holds its watermarks back "
        f"(open over long_transaction_warn_minutes = {minutes}; its changes wait until it commits)"
        for t in found
        if t.age_seconds - checked < minutes * 60  # crossed the threshold since the last run looked
    ]


def _log_of(catalog: Catalog, copy: str) -> LogRecord | None:
    snapshot = catalog.snapshot(copy)
    if snapshot is not None:
        return catalog.log(snapshot.sn_source_table or "") if snapshot.incremental else None
    return catalog.log(copy)

"""Purging the update replay log (REPL_PURGE_URPLOGS), publishers' logs, and the run history."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from snaprepl.catalog.records import COLLECTION_TYPE, LogRecord, utcnow
from snaprepl.catalog.store import Catalog
from snaprepl.ops.staleness import detach_stale_subscribers
from snaprepl.settings import Settings


@dataclass(frozen=True)
class PurgedUrplogs:
    deleted: dict[str, int] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"update replay logs purged: {sum(self.deleted.values())} entries in {len(self.deleted)} directions"


def purge_urplogs(*, catalog: Catalog, settings: Settings) -> PurgedUrplogs:
    """Per publication, subscriber and direction, delete entries older than that direction's own
    watermark (SS_LAST_PUSH_TS publisher to subscriber, SS_LAST_PULL_TS subscriber to publisher) minus
    ``snp_repl_purge_offset``. A collection's stale subscribers are detached first if its rule says so
    (a table's are when its publisher's log is purged): its deletions stop waiting for them."""
    offset = timedelta(minutes=settings.snp_repl_purge_offset)
    deleted: dict[str, int] = {}
    for publication in catalog.publications():
        if publication.sp_type == COLLECTION_TYPE:
            detach_stale_subscribers(catalog, publication.sp_item, settings)
        for sub in catalog.subscriptions(publication.sp_item):
            if sub.ss_last_push_ts is not None:
                direction = f"{publication.sp_item}: {publication.sp_server} -> {sub.ss_server}"
                deleted[direction] = catalog.purge_urplog(
                    publication.sp_item, publication.sp_server, sub.ss_server, sub.ss_last_push_ts - offset
                )
            if sub.ss_last_pull_ts is not None:
                direction = f"{publication.sp_item}: {sub.ss_server} -> {publication.sp_server}"
                deleted[direction] = catalog.purge_urplog(
                    publication.sp_item, sub.ss_server, publication.sp_server, sub.ss_last_pull_ts - offset
                )
    return PurgedUrplogs(deleted)


def publisher_log_cutoff(
    catalog: Catalog, record: LogRecord, tolerance: timedelta, settings: Settings | None = None
) -> tuple[datetime | None, str]:
    """Entries of a publisher's log older than this are pushed to every loaded subscriber that is not
    detached: min over them of SS_LAST_PUSH_TS minus the tolerance. None when there is none (nothing
    is purged then). With ``settings``, the publication's stale subscribers are detached first if its
    rule says so (see :mod:`snaprepl.ops.staleness`)."""
    if settings is not None:
        detach_stale_subscribers(catalog, record.snl_source, settings)
    subs = [s for s in catalog.subscriptions(record.snl_source) if s.ss_last_push_ts is not None]
    loaded = [s for s in subs if s.ss_detached_at is None]
    if not loaded:
        return (
            None,
            "every loaded subscriber is detached: nothing purged" if subs else "no loaded subscriber: nothing purged",
        )
    return min(pushed for s in loaded if (pushed := s.ss_last_push_ts) is not None) - tolerance, ""


def purge_history(*, catalog: Catalog, settings: Settings, now: datetime | None = None) -> int:
    """Forget runs that started more than ``history_keep_days`` before ``now``; how many."""
    return catalog.purge_history((now or utcnow()) - timedelta(days=settings.history_keep_days))

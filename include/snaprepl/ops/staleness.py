"""Stale copies, and the rule that detaches them from the logs they hold back.

A loaded subscriber is *stale* when it has completed no pull or push for ``[snaprepl] stale_after_hours``
(its publication's SP_STALE_AFTER_HOURS overrides it); an incremental snapshot when it has not
refreshed successfully for that long. With ``[snaprepl] detach_stale`` (SP_DETACH_STALE overrides it
per publication) the purge detaches them first: a subscriber gets SS_DETACHED_AT and the publisher's
log purge no longer waits for it; its next push says it needs REPL_INIT_SNAPSHOT (or, with
``reinit_detached``, SP_REINIT_DETACHED per publication, reloads it after its pull). A snapshot gets
SN_NEEDS_COMPLETE, which already keeps it out of its log's purge and makes its next incremental
refresh fail with ORA-12034's message (or refresh completely with ``fallback_complete``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from snaprepl.catalog.records import PublicationRecord, SnapshotRecord, SubscriptionRecord, utcnow
from snaprepl.catalog.store import Catalog
from snaprepl.publications.steps import reinits_detached
from snaprepl.settings import Settings

#: Run outcomes that count as a successful run.
SUCCEEDED = ("ok", "idle")


def stale_after(publication: PublicationRecord | None, settings: Settings) -> timedelta:
    """How long a copy may go without a successful run before it is stale."""
    hours = publication.sp_stale_after_hours if publication is not None else None
    return timedelta(hours=hours or settings.stale_after_hours)


def detaches(publication: PublicationRecord | None, settings: Settings) -> bool:
    """Whether stale copies (of ``publication``, or snapshots when None) are detached."""
    own = publication.sp_detach_stale if publication is not None else None
    return bool(settings.detach_stale if own is None else own)


def reinits(publication: PublicationRecord | None, settings: Settings) -> bool:
    """Whether a detached subscriber of ``publication`` is reloaded at its next sync (SP_REINIT_DETACHED,
    else ``[snaprepl] reinit_detached``; see :func:`snaprepl.publications.steps.reinits_detached`)."""
    return reinits_detached(publication, settings.reinit_detached)


def stale_rule(publication: PublicationRecord | None, settings: Settings) -> dict[str, object]:
    """The publication's rule as in force (its own values, else the settings'), for ``status``."""
    own = publication is not None and any(
        v is not None
        for v in (publication.sp_stale_after_hours, publication.sp_detach_stale, publication.sp_reinit_detached)
    )
    return {
        "stale_after_hours": stale_after(publication, settings) / timedelta(hours=1),
        "detach_stale": detaches(publication, settings),
        "reinit_detached": reinits(publication, settings),
        "own": own,
    }


def subscriber_last_success(sub: SubscriptionRecord) -> datetime:
    """When the subscriber last completed a pull or push (its creation if never)."""
    done = [t for t in (sub.ss_last_pull_at, sub.ss_last_push_at) if t is not None]
    return max(done) if done else sub.ss_created_at


def subscriber_is_stale(
    sub: SubscriptionRecord, publication: PublicationRecord | None, settings: Settings, now: datetime
) -> bool:
    loaded = sub.ss_init_state == "done"
    return loaded and now - subscriber_last_success(sub) > stale_after(publication, settings)


def snapshot_last_success(catalog: Catalog, snapshot: SnapshotRecord) -> datetime:
    """When the snapshot last refreshed successfully (its creation if never, as far as the history says)."""
    if snapshot.sn_last_status == "succeeded" and snapshot.sn_last_refresh_at is not None:
        return snapshot.sn_last_refresh_at
    runs = [r.rh_ended for r in catalog.history(snapshot.sn_name) if r.rh_outcome in SUCCEEDED and not r.rh_server]
    return max(runs, default=snapshot.sn_created_at)


def snapshot_is_stale(catalog: Catalog, snapshot: SnapshotRecord, settings: Settings, now: datetime) -> bool:
    return now - snapshot_last_success(catalog, snapshot) > stale_after(None, settings)


def detach_stale_subscribers(catalog: Catalog, item: str, settings: Settings, now: datetime | None = None) -> list[str]:
    """Detach the stale subscribers of publication ``item`` if its rule says so; return their names."""
    publication = catalog.publication(item)
    if publication is None or not detaches(publication, settings):
        return []
    now = now or utcnow()
    detached = []
    for sub in catalog.subscriptions(item):
        if sub.ss_detached_at is None and subscriber_is_stale(sub, publication, settings, now):
            catalog.update_subscription(sub.ss_server, item, ss_detached_at=now)
            detached.append(sub.ss_server)
    return detached


def detach_stale_snapshots(catalog: Catalog, source: str, settings: Settings, now: datetime | None = None) -> list[str]:
    """With ``detach_stale``, mark the stale incremental snapshots of log ``source`` as needing a
    complete refresh (they stop holding the log back); return their names."""
    if not settings.detach_stale:
        return []
    now = now or utcnow()
    detached = []
    for snapshot in catalog.snapshots_of_log(source):
        live = snapshot.incremental and snapshot.sn_needs_complete is None
        if not live or not snapshot_is_stale(catalog, snapshot, settings, now):
            continue
        since = snapshot_last_success(catalog, snapshot)
        catalog.update_snapshot(
            snapshot.sn_name,
            sn_needs_complete=f"no successful refresh since {since:%Y-%m-%d %H:%M:%S} UTC (stale_after_hours = "
            f"{settings.stale_after_hours}, detach_stale): detached from the log of {source}",
        )
        detached.append(snapshot.sn_name)
    return detached

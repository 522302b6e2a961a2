"""Which copy holds a snapshot log's purge back, and how big and old the log is (issue 22, "logs stay
bounded"): the figures ``snaprepl status`` and the Replication page show per log.

A log's purge keeps every entry some copy has not applied yet: for a one-way log, the incremental
snapshot refreshed longest ago (or never); for a publisher's log, the attached subscriber pushed to
longest ago. A detached subscriber, or a snapshot that needs a complete refresh, holds nothing back.
"""

from __future__ import annotations

from typing import Any

from snaprepl.catalog.records import SnapshotRecord, SubscriptionRecord
from snaprepl.reporting.runs import iso as _iso


def snapshot_holder(snapshots: list[SnapshotRecord]) -> dict[str, Any] | None:
    """The incremental snapshot the next purge of a log waits for: never refreshed, or the oldest."""
    live = [s for s in snapshots if s.incremental and s.sn_needs_complete is None]
    if not live:
        return None
    never = [s for s in live if s.sn_last_ts is None]
    if never:
        return {"kind": "snapshot", "name": never[0].sn_name, "since": None}
    oldest = min(live, key=lambda s: s.sn_last_ts)  # type: ignore[arg-type, return-value]
    return {"kind": "snapshot", "name": oldest.sn_name, "since": _iso(oldest.sn_last_ts)}


def subscriber_holder(subscribers: list[SubscriptionRecord]) -> dict[str, Any] | None:
    """The subscriber a purge of the publisher's log waits for (detached ones hold nothing back)."""
    held = [s for s in subscribers if s.ss_last_push_ts is not None and s.ss_detached_at is None]
    if not held:
        return None
    oldest = min(held, key=lambda s: s.ss_last_push_ts)  # type: ignore[arg-type, return-value]
    return {"kind": "subscriber", "name": oldest.ss_server, "since": _iso(oldest.ss_last_push_ts)}


def purge_holder(
    source: str, snapshots: list[SnapshotRecord], subscribers: list[SubscriptionRecord]
) -> dict[str, Any] | None:
    """``{"kind": "snapshot" | "subscriber", "name", "since"}``: the copy the next purge of the log of
    ``source`` waits for (``since``: the snapshot's SN_LAST_TS, None if never refreshed, or the
    subscriber's last push watermark); None when nothing holds it back."""
    if subscribers:  # a publisher's log: its purge waits for the loaded subscriber pushed to longest ago
        return subscriber_holder(subscribers)
    return snapshot_holder([s for s in snapshots if s.sn_source_table == source])


def describe_holder(holder: dict[str, Any] | None) -> str | None:
    """The holder as one line: ``snap (SN_LAST_TS …)``, ``snap (never refreshed)`` or
    ``subscriber S (pushed up to …)``."""
    if holder is None:
        return None
    if holder["kind"] == "subscriber":
        return f"subscriber {holder['name']} (pushed up to {holder['since']})"
    since = f"SN_LAST_TS {holder['since']}" if holder["since"] else "never refreshed"
    return f"{holder['name']} ({since})"


def bounds(backlog: dict[str, Any] | None) -> dict[str, Any]:
    """A log's ``rows`` and ``oldest_entry`` (its oldest SNAPTIME), from the probe (None unprobed)."""
    return {"rows": (backlog or {}).get("rows"), "oldest_entry": (backlog or {}).get("oldest_snaptime")}

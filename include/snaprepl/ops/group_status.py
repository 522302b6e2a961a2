"""What ``snaprepl status`` shows of snapshot groups: members, the consistent point of the last group
refresh per source, its lag, and the source tables left out (issue 25)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from snaprepl.catalog.records import utcnow
from snaprepl.catalog.run_history import group_lag
from snaprepl.catalog.store import Catalog
from snaprepl.common.dag_names import group_dag_id


def group_entries(catalog: Catalog, now: datetime | None = None) -> list[dict[str, Any]]:
    """One entry per group, as plain data. ``lag_seconds``: the group's lag, the largest of its members'
    lags at the end of their last runs (as a snapshot's: 0 when its log held nothing more; None before
    any was measured), which ``lag_alert_minutes`` watches; ``point_age_seconds``: now minus the oldest
    point (the sources' clocks are taken to agree with this one), None before the first group refresh."""
    now = now or utcnow()
    grouped, runs = catalog.grouped_snapshots(), catalog.last_runs()
    entries = []
    for group in catalog.groups():
        points = group.points
        members = sorted(name for name, g in grouped.items() if g == group.sg_name)
        entries.append(
            {
                "name": group.sg_name,
                "source": f"{group.sg_source_schema}@{group.sg_source_conn}",
                "destination": f"{group.sg_dest_schema}@{group.sg_dest_conn}",
                "schedule": group.sg_schedule,
                "include_new_tables": bool(group.sg_include_new),
                "exclude": group.exclude,
                "members": members,
                "points": {conn: mark.isoformat() + "Z" for conn, mark in sorted(points.items())},
                "lag_seconds": group_lag(runs[(m, None)] for m in members if (m, None) in runs),
                "point_age_seconds": max(0.0, (now - min(points.values())).total_seconds()) if points else None,
                "last_refresh_at": group.sg_last_refresh_at.isoformat() + "Z" if group.sg_last_refresh_at else None,
                "last_status": group.sg_last_status,
                "last_error": group.sg_last_error,
                "skipped": group.skipped,
                "dag_id": group_dag_id(group.sg_name),
            }
        )
    return entries

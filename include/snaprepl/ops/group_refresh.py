"""``UPDATE SNAPSHOT GROUP g@dst [AS NONINCREMENTAL]``: bring every member of a group to one point per
source (:mod:`snaprepl.refresh.group`), parents before children, and record that point.

``AS NONINCREMENTAL`` first refreshes every member completely, each as its own job (at its own moment),
then runs the group's incremental pass, which brings them all to one point. New source tables join first
when the group includes new tables, and are reported otherwise.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

from snaprepl.catalog.records import GroupRecord
from snaprepl.catalog.run_history import clean_error
from snaprepl.catalog.store import Catalog
from snaprepl.common.table_names import TableRef
from snaprepl.ops.group_members import EXCLUDED, add_member, dependency_order, excluded, source_layout
from snaprepl.ops.groups import find_group
from snaprepl.ops.snapshots import Refresher
from snaprepl.refresh.group import refresh_group
from snaprepl.refresh.model import COMPLETE, RefreshOutcome, RefreshRequest
from snaprepl.settings import Settings
from snaprepl.submit.alerts import group_alerting
from snaprepl.submit.refresh import submit_refresh


@dataclass(frozen=True)
class RefreshedGroup:
    group: str
    outcomes: list[RefreshOutcome]
    points: dict[str, datetime]
    joined: list[str] = field(default_factory=list)
    not_joined: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"snapshot group {self.group}: {len(self.outcomes)} refreshes"]
        lines += [f"  {o}" for o in self.outcomes]
        lines += [f"  new table {t} joined the group" for t in self.joined]
        lines += [f"  new table {t} is not in the group (it does not include new tables)" for t in self.not_joined]
        lines += [f"  point on {conn}: {mark:%Y-%m-%d %H:%M:%S.%f} UTC" for conn, mark in sorted(self.points.items())]
        return "\n".join(lines)


def update_group(
    name: TableRef,
    *,
    nonincremental: bool = False,
    fallback_complete: bool = False,
    catalog: Catalog,
    settings: Settings,
    refresher: Refresher = submit_refresh,
    run_id: str | None = None,
) -> RefreshedGroup:
    """Refresh every member of the group (completely with ``nonincremental``), parents first; a failure
    or a lag over ``lag_alert_minutes`` is alerted once for the group (:func:`group_alerting`).

    :param fallback_complete: a member that needs a complete refresh (its log bypassed or purged) is read
        in full at the group's point, in the group's transaction, instead of failing the group.
    """
    group = find_group(catalog, name)
    catalog.update_group(group.sg_name, sg_last_status="running", sg_last_error=None)
    with group_alerting(catalog, settings, group.sg_name):
        return _update(group, (nonincremental, fallback_complete), catalog, settings, refresher, run_id)


def _update(
    group: GroupRecord,
    modes: tuple[bool, bool],
    catalog: Catalog,
    settings: Settings,
    refresher: Refresher,
    run_id: str | None,
) -> RefreshedGroup:
    """:param modes: (nonincremental, fallback_complete), as :func:`update_group` takes them."""
    nonincremental, fallback_complete = modes
    try:
        joined, not_joined, order = _follow_schema(group, catalog, settings, refresher)
        members = _ordered_members(catalog, group, order)
        completes = []
        for member in members if nonincremental else []:
            request = RefreshRequest.configured(member, settings, mode=COMPLETE, run_id=run_id)
            completes.append(refresher(request, catalog, settings))
        request = RefreshRequest.configured(group.sg_name, settings, run_id=run_id, fallback_complete=fallback_complete)
        done = refresh_group(catalog, members, request)
    except BaseException as err:
        why = clean_error(err) if isinstance(err, Exception) else type(err).__name__
        catalog.update_group(group.sg_name, sg_last_status="failed", sg_last_error=why)
        raise
    catalog.record_group_point(group.sg_name, done.points)
    return RefreshedGroup(group.sg_name, completes + done.outcomes, done.points, joined, not_joined)


def _follow_schema(
    group: GroupRecord, catalog: Catalog, settings: Settings, refresher: Refresher
) -> tuple[list[str], list[str], list[str]]:
    """New source tables: made members when the group includes new tables (a table without a primary
    key is skipped and said so), else reported. Returns (joined, not joined, dependency order)."""
    tables, edges = source_layout(group, catalog)
    members = (catalog.snapshot(m) for m in catalog.group_members(group.sg_name))
    known = {member.sn_dest_table for member in members if member is not None}
    skipped = group.skipped
    joined, not_joined = [], []
    order = dependency_order(tables, edges)
    for table in order:
        if table in known or excluded(table, group.exclude) or skipped.get(table) == EXCLUDED:
            continue
        if not group.sg_include_new:
            if table not in skipped:
                not_joined.append(table)
            continue
        why = add_member(group, table, catalog=catalog, settings=settings, refresher=refresher)
        if why is None:
            joined.append(table)
            skipped.pop(table, None)
        else:
            skipped[table] = why
    if group.sg_include_new:
        catalog.update_group(group.sg_name, sg_skipped=json.dumps(skipped, sort_keys=True) if skipped else None)
    return joined, not_joined, order


def _ordered_members(catalog: Catalog, group: GroupRecord, order: list[str]) -> list[str]:
    """The group's members in the source's dependency order (members from elsewhere last, by name)."""
    members = catalog.group_members(group.sg_name)
    rank = {f"{group.sg_dest_schema}.{t}@{group.sg_dest_conn}": i for i, t in enumerate(order)}
    return sorted(members, key=lambda m: (rank.get(m, len(rank)), m))

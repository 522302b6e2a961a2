"""Snapshot groups in the catalog (SYS_SNAPSHOT_GROUP) and their members (SYS_SNAPSHOT_GROUP_MEMBER)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from snaprepl.catalog import models as m
from snaprepl.catalog.base import CatalogDatabase, column_values
from snaprepl.catalog.records import GroupMemberRecord, GroupRecord, utcnow
from snaprepl.errors import SnapreplError


class Groups(CatalogDatabase):
    """Registered snapshot groups, their members and the consistent point of their last refresh."""

    def groups(self) -> list[GroupRecord]:
        return self._all(GroupRecord, order_by=[m.SYS_SNAPSHOT_GROUP.c.SG_NAME])

    def group(self, name: str) -> GroupRecord | None:
        return self._one(GroupRecord, m.SYS_SNAPSHOT_GROUP.c.SG_NAME == name)

    def add_group(self, record: GroupRecord, duplicate: SnapreplError) -> None:
        self._insert(record, duplicate)

    def update_group(self, name: str, **values: Any) -> None:
        """Set columns of one group; keyword names are the record's field names."""
        with self.begin() as conn:
            conn.execute(
                sa.update(m.SYS_SNAPSHOT_GROUP)
                .where(m.SYS_SNAPSHOT_GROUP.c.SG_NAME == name)
                .values(**column_values(values))
            )

    def delete_group(self, name: str) -> None:
        """Forget the group and its membership (the member snapshots stay, refreshed on their own again)."""
        with self.begin() as conn:
            conn.execute(sa.delete(m.SYS_SNAPSHOT_GROUP_MEMBER).where(m.SYS_SNAPSHOT_GROUP_MEMBER.c.SGM_GROUP == name))
            conn.execute(sa.delete(m.SYS_SNAPSHOT_GROUP).where(m.SYS_SNAPSHOT_GROUP.c.SG_NAME == name))

    def group_members(self, name: str) -> list[str]:
        """SN_NAMEs of the group's members, by name."""
        t = m.SYS_SNAPSHOT_GROUP_MEMBER.c
        return [r.sgm_snapshot for r in self._all(GroupMemberRecord, t.SGM_GROUP == name, order_by=[t.SGM_SNAPSHOT])]

    def group_of(self, snapshot: str) -> str | None:
        """The group snapshot ``snapshot`` is in, if any."""
        found = self._one(GroupMemberRecord, m.SYS_SNAPSHOT_GROUP_MEMBER.c.SGM_SNAPSHOT == snapshot)
        return found.sgm_group if found else None

    def grouped_snapshots(self) -> dict[str, str]:
        """Every snapshot in a group: SN_NAME -> SG_NAME (one query, for the DAG factory and status)."""
        return {r.sgm_snapshot: r.sgm_group for r in self._all(GroupMemberRecord)}

    def add_member(self, group: str, snapshot: str, duplicate: SnapreplError) -> None:
        self._insert(GroupMemberRecord(snapshot, group, utcnow()), duplicate)

    def remove_member(self, group: str, snapshot: str) -> bool:
        t = m.SYS_SNAPSHOT_GROUP_MEMBER.c
        with self.begin() as conn:
            done = conn.execute(
                sa.delete(m.SYS_SNAPSHOT_GROUP_MEMBER).where(t.SGM_GROUP == group, t.SGM_SNAPSHOT == snapshot)
            )
            return bool(done.rowcount)

    def record_group_point(self, name: str, points: dict[str, datetime]) -> None:
        """After a group refresh: every member is at ``points`` (a high-water mark per source conn)."""
        self.update_group(
            name,
            sg_points=json.dumps({c: p.isoformat() for c, p in sorted(points.items())}),
            sg_last_refresh_at=utcnow(),
            sg_last_status="succeeded",
            sg_last_error=None,
        )

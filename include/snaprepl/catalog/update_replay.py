"""The update replay log (SYS_URPLOG): the entries of a publication already applied from one server to another."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from snaprepl.catalog import models as m
from snaprepl.catalog.base import CatalogDatabase, column_values


class UpdateReplayLog(CatalogDatabase):
    """What two-way syncs applied, so that a repeated run applies nothing twice."""

    def urplog_contains(self, item: str, source: str, target: str, guids: Sequence[str]) -> set[str]:
        t = m.SYS_URPLOG.c
        found: set[str] = set()
        with self.begin() as conn:
            for start in range(0, len(guids), 500):
                chunk = list(guids[start : start + 500])
                query = sa.select(t.RLOG_ROWGUID).where(
                    t.ITEM == item, t.SOURCE_SERVER == source, t.TARGET_SERVER == target, t.RLOG_ROWGUID.in_(chunk)
                )
                found.update(row[0] for row in conn.execute(query))
        return found

    def record_replayed(
        self,
        item: str,
        source: str,
        target: str,
        entries: Sequence[tuple[str, datetime]],
        subscription: tuple[str, dict[str, Any]] | None = None,
    ) -> None:
        """Record entries of ``item`` applied from ``source`` to ``target`` (and the subscription's new
        watermarks), in one transaction."""
        with self.begin() as conn:
            if entries:
                conn.execute(
                    sa.insert(m.SYS_URPLOG),
                    [
                        {
                            "ITEM": item,
                            "SOURCE_SERVER": source,
                            "TARGET_SERVER": target,
                            "RLOG_ROWGUID": g,
                            "SNAPTIME": ts,
                        }
                        for g, ts in entries
                    ],
                )
            if subscription is not None:
                server, values = subscription
                t = m.SYS_SNAPSHOT_SUB.c
                conn.execute(
                    sa.update(m.SYS_SNAPSHOT_SUB)
                    .where(t.SS_SERVER == server, t.SS_ITEM == item)
                    .values(**column_values(values))
                )

    def purge_urplog(self, item: str, source: str, target: str, before: datetime) -> int:
        t = m.SYS_URPLOG.c
        with self.begin() as conn:
            return conn.execute(
                sa.delete(m.SYS_URPLOG).where(
                    t.ITEM == item, t.SOURCE_SERVER == source, t.TARGET_SERVER == target, t.SNAPTIME < before
                )
            ).rowcount

    def urplog_size(self, item: str, source: str, target: str) -> int:
        t = m.SYS_URPLOG.c
        with self.begin() as conn:
            return conn.execute(
                sa.select(sa.func.count())
                .select_from(m.SYS_URPLOG)
                .where(t.ITEM == item, t.SOURCE_SERVER == source, t.TARGET_SERVER == target)
            ).scalar_one()

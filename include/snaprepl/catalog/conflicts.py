"""The conflict ledger (SYS_SNAPSHOT_CONFLICT): conflicts two-way syncs met, and who was told of them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from snaprepl.catalog import models as m
from snaprepl.catalog.base import CatalogDatabase


class Conflicts(CatalogDatabase):
    """Conflicts recorded once per log entry, summarised, and marked once notified."""

    def record_conflicts(
        self, item: str, origin: str, conflicts: Sequence[dict[str, Any]], cleared: Sequence[str] = ()
    ) -> None:
        """Put conflicts met replaying ``origin``'s entries in the ledger, once per entry (CF_ENTRY): a
        conflict judged again by a run repeating a killed one replaces its earlier record if the
        decision changed. Entries in ``cleared`` were judged no conflict this time: an unnotified
        record of them (from a run killed before it applied them) is removed."""
        t = m.SYS_SNAPSHOT_CONFLICT.c
        entries = [c["CF_ENTRY"] for c in conflicts]
        with self.begin() as conn:
            known: dict[str, tuple[int, int]] = {}
            for start in range(0, len(entries), 500):
                query = sa.select(t.CF_ENTRY, t.CF_ID, t.CF_DECISION).where(
                    t.CF_ITEM == item, t.CF_ORIGIN == origin, t.CF_ENTRY.in_(entries[start : start + 500])
                )
                known.update({row[0]: (row[1], row[2]) for row in conn.execute(query)})
            new = [c for c in conflicts if c["CF_ENTRY"] not in known]
            if new:
                conn.execute(sa.insert(m.SYS_SNAPSHOT_CONFLICT), new)
            for conflict in conflicts:
                earlier = known.get(conflict["CF_ENTRY"])
                if earlier is not None and earlier[1] != conflict["CF_DECISION"]:
                    values = {k: v for k, v in conflict.items() if k != "CF_ID"}
                    conn.execute(sa.update(m.SYS_SNAPSHOT_CONFLICT).where(t.CF_ID == earlier[0]).values(**values))
            for start in range(0, len(cleared), 500):
                conn.execute(
                    sa.delete(m.SYS_SNAPSHOT_CONFLICT).where(
                        t.CF_ITEM == item,
                        t.CF_ORIGIN == origin,
                        t.CF_ENTRY.in_(list(cleared[start : start + 500])),
                        t.CF_NOTIFIED.is_(False),
                    )
                )

    def conflicts(self, item: str | None = None, *, unnotified: bool = False) -> list[dict[str, Any]]:
        t = m.SYS_SNAPSHOT_CONFLICT.c
        query = sa.select(m.SYS_SNAPSHOT_CONFLICT).order_by(t.CF_ID)
        if item is not None:
            query = query.where(t.CF_ITEM == item)
        if unnotified:
            query = query.where(t.CF_NOTIFIED.is_(False))
        with self.begin() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

    def conflict_page(
        self,
        items: Sequence[str],
        *,
        kind: str | None = None,
        decision: int | None = None,
        offset: int = 0,
        limit: int = 50,
    ) -> tuple[int, list[dict[str, Any]]]:
        """Conflicts of publications ``items`` (of one type and decision, if given), newest first:
        how many match, and the page of them from ``offset``."""
        t = m.SYS_SNAPSHOT_CONFLICT.c
        where: list[sa.ColumnElement[bool]] = [t.CF_ITEM.in_(list(items))]
        if kind is not None:
            where.append(t.CF_TYPE == kind)
        if decision is not None:
            where.append(t.CF_DECISION == decision)
        page = sa.select(m.SYS_SNAPSHOT_CONFLICT).where(*where).order_by(t.CF_AT.desc(), t.CF_ID.desc())
        with self.begin() as conn:
            total = conn.execute(sa.select(sa.func.count()).select_from(m.SYS_SNAPSHOT_CONFLICT).where(*where))
            count = int(total.scalar_one())
            rows = [dict(row._mapping) for row in conn.execute(page.offset(offset).limit(limit))]
        return count, rows

    def conflict_summary(self) -> list[dict[str, Any]]:
        t = m.SYS_SNAPSHOT_CONFLICT.c
        query = (
            sa.select(
                t.CF_ITEM,
                t.CF_TYPE,
                t.CF_DECISION,
                sa.func.count(),
                sa.func.max(t.CF_AT),
                sa.func.sum(sa.case((t.CF_NOTIFIED.is_(False), 1), else_=0)),
            )
            .group_by(t.CF_ITEM, t.CF_TYPE, t.CF_DECISION)
            .order_by(t.CF_ITEM, t.CF_TYPE, t.CF_DECISION)
        )
        with self.begin() as conn:
            return [
                {"item": r[0], "type": r[1], "decision": r[2], "count": r[3], "last_at": r[4], "unnotified": r[5]}
                for r in conn.execute(query)
            ]

    def mark_notified(self, ids: Sequence[int]) -> None:
        if not ids:
            return
        t = m.SYS_SNAPSHOT_CONFLICT.c
        with self.begin() as conn:
            conn.execute(sa.update(m.SYS_SNAPSHOT_CONFLICT).where(t.CF_ID.in_(list(ids))).values(CF_NOTIFIED=True))

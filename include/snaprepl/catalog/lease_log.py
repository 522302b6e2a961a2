"""The history of each run lease (SYS_REPL_LEASE_LOG): when which run took it and let it go.

:class:`snaprepl.catalog.store.Catalog` writes it in the same transaction as the lease itself, so the
history cannot disagree with SYS_REPL_LOCK. It answers "did two runs of one snapshot or publication
ever overlap?" after the fact; entries released more than :data:`KEEP` ago are deleted as new ones come.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa

from snaprepl.catalog import models as m

KEEP = timedelta(days=7)


@dataclass(frozen=True)
class Lease:
    name: str
    run_id: str
    holder: str
    acquired_at: datetime
    released_at: datetime | None


def acquired(conn: sa.Connection, name: str, run_id: str, holder: str, at: datetime) -> None:
    """Record that ``run_id`` took lease ``name`` at ``at``; any earlier holder's open entry (a
    takeover of a dead run) is closed at the same time."""
    t = m.SYS_REPL_LEASE_LOG.c
    conn.execute(sa.delete(m.SYS_REPL_LEASE_LOG).where(t.LL_LOCK_NAME == name, t.LL_RELEASED_AT < at - KEEP))
    conn.execute(
        sa.update(m.SYS_REPL_LEASE_LOG)
        .where(t.LL_LOCK_NAME == name, t.LL_RELEASED_AT.is_(None))
        .values(LL_RELEASED_AT=at)
    )
    conn.execute(
        sa.insert(m.SYS_REPL_LEASE_LOG).values(LL_LOCK_NAME=name, LL_RUN_ID=run_id, LL_HOLDER=holder, LL_ACQUIRED_AT=at)
    )


def released(conn: sa.Connection, name: str, run_id: str, at: datetime) -> None:
    t = m.SYS_REPL_LEASE_LOG.c
    conn.execute(
        sa.update(m.SYS_REPL_LEASE_LOG)
        .where(t.LL_LOCK_NAME == name, t.LL_RUN_ID == run_id, t.LL_RELEASED_AT.is_(None))
        .values(LL_RELEASED_AT=at)
    )


def history(conn: sa.Connection, name: str | None = None) -> list[Lease]:
    """Every recorded lease (of ``name``), oldest first."""
    t = m.SYS_REPL_LEASE_LOG.c
    query = sa.select(t.LL_LOCK_NAME, t.LL_RUN_ID, t.LL_HOLDER, t.LL_ACQUIRED_AT, t.LL_RELEASED_AT)
    if name is not None:
        query = query.where(t.LL_LOCK_NAME == name)
    rows = conn.execute(query.order_by(t.LL_ACQUIRED_AT, t.LL_ID)).fetchall()
    return [Lease(*row) for row in rows]


def overlaps(leases: list[Lease]) -> list[tuple[Lease, Lease]]:
    """Pairs of entries of one lease whose holding times overlap (an open entry lasts forever)."""
    found = []
    by_name: dict[str, list[Lease]] = {}
    for lease in leases:
        by_name.setdefault(lease.name, []).append(lease)
    for group in by_name.values():
        latest: Lease | None = None  # the entry released last so far
        for lease in group:
            if latest is not None and (latest.released_at is None or latest.released_at > lease.acquired_at):
                found.append((latest, lease))
            if latest is None or latest.released_at is None:
                latest = lease if latest is None else latest
            elif lease.released_at is None or lease.released_at > latest.released_at:
                latest = lease
    return found

"""The run leases in the catalog (SYS_REPL_LOCK), each taken and let go with its history (lease_log)."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from snaprepl.catalog import lease_log
from snaprepl.catalog import models as m
from snaprepl.catalog.base import CatalogDatabase
from snaprepl.catalog.records import utcnow


class Leases(CatalogDatabase):
    """One run at a time per snapshot or publication: who holds which lease, since its last heartbeat."""

    def lock_holder(self, name: str) -> tuple[str, str, datetime] | None:
        """(run id, holder, heartbeat) of lock ``name``, if held."""
        t = m.SYS_REPL_LOCK.c
        with self.begin() as conn:
            row = conn.execute(sa.select(t.RUN_ID, t.HOLDER, t.HEARTBEAT).where(t.LOCK_NAME == name)).first()
        return (row[0], row[1], row[2]) if row else None

    def locks(self) -> dict[str, tuple[str, str, datetime]]:
        t = m.SYS_REPL_LOCK.c
        with self.begin() as conn:
            return {
                r[0]: (r[1], r[2], r[3]) for r in conn.execute(sa.select(t.LOCK_NAME, t.RUN_ID, t.HOLDER, t.HEARTBEAT))
            }

    def take_lock(self, name: str, *, expected: str | None, run_id: str, holder: str) -> bool:
        """Take lock ``name`` if it is free (``expected`` None) or still held by run ``expected``."""
        t = m.SYS_REPL_LOCK.c
        now = utcnow()
        values = {"RUN_ID": run_id, "HOLDER": holder, "HEARTBEAT": now}
        try:
            with self.begin() as conn:
                if expected is None:
                    conn.execute(sa.insert(m.SYS_REPL_LOCK).values(LOCK_NAME=name, **values))
                else:
                    result = conn.execute(
                        sa.update(m.SYS_REPL_LOCK).where(t.LOCK_NAME == name, t.RUN_ID == expected).values(**values)
                    )
                    if result.rowcount != 1:
                        return False
                lease_log.acquired(conn, name, run_id, holder, now)
                return True
        except IntegrityError:
            return False

    def heartbeat_lock(self, name: str, run_id: str) -> None:
        t = m.SYS_REPL_LOCK.c
        with self.begin() as conn:
            conn.execute(
                sa.update(m.SYS_REPL_LOCK).where(t.LOCK_NAME == name, t.RUN_ID == run_id).values(HEARTBEAT=utcnow())
            )

    def release_lock(self, name: str, run_id: str) -> None:
        t = m.SYS_REPL_LOCK.c
        with self.begin() as conn:
            if conn.execute(sa.delete(m.SYS_REPL_LOCK).where(t.LOCK_NAME == name, t.RUN_ID == run_id)).rowcount:
                lease_log.released(conn, name, run_id, utcnow())

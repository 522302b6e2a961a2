"""The snapshot logs in the catalog (SYS_SNAPSHOT_LOG)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa

from snaprepl.catalog import models as m
from snaprepl.catalog.base import CatalogDatabase
from snaprepl.catalog.records import LogRecord, utcnow
from snaprepl.errors import SnapreplError


class SnapshotLogs(CatalogDatabase):
    """Registered snapshot logs, and when each was purged."""

    def logs(self) -> list[LogRecord]:
        return self._all(LogRecord, order_by=[m.SYS_SNAPSHOT_LOG.c.SNL_SOURCE])

    def log(self, source_key: str) -> LogRecord | None:
        return self._one(LogRecord, m.SYS_SNAPSHOT_LOG.c.SNL_SOURCE == source_key)

    def add_log(self, record: LogRecord, duplicate: SnapreplError) -> None:
        self._insert(record, duplicate)

    def delete_log(self, source_key: str) -> None:
        with self.begin() as conn:
            conn.execute(sa.delete(m.SYS_SNAPSHOT_LOG).where(m.SYS_SNAPSHOT_LOG.c.SNL_SOURCE == source_key))

    def record_log_purge(self, source_key: str, purged_before: datetime | None) -> None:
        """Record a purge; the watermark only moves forward."""
        t = m.SYS_SNAPSHOT_LOG.c
        with self.begin() as conn:
            values: dict[str, Any] = {"SNL_LAST_PURGE_AT": utcnow()}
            if purged_before is not None:
                current = conn.execute(sa.select(t.SNL_PURGED_BEFORE).where(t.SNL_SOURCE == source_key)).scalar()
                if current is None or purged_before > current:
                    values["SNL_PURGED_BEFORE"] = purged_before
            conn.execute(sa.update(m.SYS_SNAPSHOT_LOG).where(t.SNL_SOURCE == source_key).values(**values))

    def set_log_guard(self, source_key: str, guard: str | None) -> None:
        """Record what the guards of the log's triggers saw last (JSON, see :mod:`snaprepl.catalog.log_guard`)."""
        t = m.SYS_SNAPSHOT_LOG.c
        with self.begin() as conn:
            conn.execute(sa.update(m.SYS_SNAPSHOT_LOG).where(t.SNL_SOURCE == source_key).values(SNL_GUARD=guard))

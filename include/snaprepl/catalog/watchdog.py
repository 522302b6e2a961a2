"""The freshness watchdog's state in the catalog (SYS_WATCHDOG): each condition it has alerted on and
not yet seen clear, so that it alerts once when a condition starts and once when it clears."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa

from snaprepl.catalog import models as m
from snaprepl.catalog.base import CatalogDatabase


@dataclass(frozen=True)
class Condition:
    """``condition`` (lag, stale, paused, backlog) holds for ``copy`` (and subscriber ``server``)."""

    condition: str
    copy: str
    server: str | None
    detail: str

    @property
    def key(self) -> str:
        return ":".join([self.condition, self.copy, *([self.server] if self.server else [])])


@dataclass(frozen=True)
class Watched:
    """A condition alerted on at ``since`` and not yet cleared."""

    condition: Condition
    since: datetime


class Watchdog(CatalogDatabase):
    """The conditions the watchdog has alerted on and not yet seen clear."""

    def watched(self) -> dict[str, Watched]:
        t = m.SYS_WATCHDOG.c
        with self.begin() as conn:
            rows = conn.execute(sa.select(m.SYS_WATCHDOG).order_by(t.WD_SINCE, t.WD_KEY)).fetchall()
        return {
            r.WD_KEY: Watched(Condition(r.WD_CONDITION, r.WD_COPY, r.WD_SERVER, r.WD_DETAIL or ""), r.WD_SINCE)
            for r in rows
        }

    def start_watching(self, condition: Condition, since: datetime) -> None:
        """Record ``condition`` as alerted (a check running at the same time may have recorded it first)."""
        try:
            with self.begin() as conn:
                conn.execute(
                    sa.insert(m.SYS_WATCHDOG).values(
                        WD_KEY=condition.key, WD_CONDITION=condition.condition, WD_COPY=condition.copy,
                        WD_SERVER=condition.server, WD_SINCE=since, WD_DETAIL=condition.detail[:4000],
                    )
                )  # fmt: skip
        except sa.exc.IntegrityError:
            pass

    def stop_watching(self, key: str) -> None:
        with self.begin() as conn:
            conn.execute(sa.delete(m.SYS_WATCHDOG).where(m.SYS_WATCHDOG.c.WD_KEY == key))

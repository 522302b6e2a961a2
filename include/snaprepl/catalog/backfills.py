"""Backfills refresh completely once (SYS_REPL_BACKFILL).

An Airflow backfill of N intervals makes N runs. The first of them to reach a snapshot (or a sync
step of a publication) does the complete refresh and records it here, keyed by the backfill's id;
the others find the record and say so instead of refreshing again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from snaprepl.catalog import models as m
from snaprepl.catalog.base import CatalogDatabase
from snaprepl.catalog.records import utcnow


@dataclass(frozen=True)
class BackfillRefresh:
    backfill_id: str
    target: str
    dag_id: str
    run_id: str
    at: datetime

    def __str__(self) -> str:
        return (
            f"backfill {self.backfill_id}'s complete refresh of {self.target} already happened "
            f"in run {self.run_id} at {self.at:%Y-%m-%d %H:%M:%S} UTC"
        )


def done(catalog: CatalogDatabase, backfill_id: str, target: str) -> BackfillRefresh | None:
    """The complete refresh backfill ``backfill_id`` made of ``target``, if it made one."""
    t = m.SYS_REPL_BACKFILL.c
    with catalog.begin() as conn:
        row = conn.execute(
            sa.select(t.BF_ID, t.BF_TARGET, t.BF_DAG_ID, t.BF_RUN_ID, t.BF_AT).where(
                t.BF_ID == backfill_id, t.BF_TARGET == target
            )
        ).first()
    return BackfillRefresh(*row) if row else None


def record(catalog: CatalogDatabase, backfill_id: str, target: str, dag_id: str, run_id: str) -> None:
    """Record that run ``run_id`` of backfill ``backfill_id`` refreshed ``target`` completely."""
    try:
        with catalog.begin() as conn:
            conn.execute(
                sa.insert(m.SYS_REPL_BACKFILL).values(
                    BF_ID=backfill_id, BF_TARGET=target, BF_DAG_ID=dag_id, BF_RUN_ID=run_id, BF_AT=utcnow()
                )
            )
    except IntegrityError:  # recorded already (a retry of the same run): the first record stands
        pass

"""Catalog records the Replication page's tests draw: a snapshot's past runs and a publication's
conflicts, written with the catalog's own methods (tests/integration/airflow/test_replication_page.py)."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

from snaprepl.catalog.records import HistoryRecord, utcnow
from snaprepl.catalog.store import Catalog


def record_history(catalog: Catalog, snapshot: str, shift: int = 0) -> None:
    """Four past runs of a snapshot, for the charts (``shift``: its runs come that many figures later)."""
    start = utcnow() - timedelta(hours=4, minutes=20 * shift)
    figures = [(40.0, 120, 300), (15.0, 30, 120), (75.0, 210, 500), (5.0, 0, 80)]
    for n, (lag, backlog, rows) in enumerate(figures[shift:] + figures[:shift]):
        began = start + timedelta(hours=n)
        catalog.record_run(
            HistoryRecord(
                rh_copy=snapshot, rh_kind="incremental", rh_started=began, rh_ended=began + timedelta(seconds=20),
                rh_outcome="ok", rh_rows_in=rows, rh_rows_out=rows, rh_rows_deleted=0, rh_lag_seconds=lag,
                rh_backlog=backlog,
            )
        )  # fmt: skip
    ended = start + timedelta(hours=len(figures))  # then a verify that found 3 differences
    catalog.record_run(
        HistoryRecord(
            rh_copy=snapshot, rh_kind="verify", rh_started=ended, rh_ended=ended + timedelta(seconds=9),
            rh_outcome="differences", rh_rows_in=500, rh_rows_out=0, rh_rows_deleted=0, rh_conflicts=3,
        )
    )  # fmt: skip


def record_conflict(catalog: Catalog, item: str, origin: str) -> int:
    """An update conflict the publisher won (its id), and a newer delete conflict that was ignored."""
    catalog.record_conflicts(
        item,
        origin,
        [
            {
                "CF_ITEM": item, "CF_TYPE": "U", "CF_ORIGIN": origin, "CF_KEY": "[1]",
                "CF_INCOMING": json.dumps({"op": "U", "old": {"id": 1, "v": "a"}, "row": {"id": 1, "v": "from-sub"}}),
                "CF_CURRENT": json.dumps({"id": 1, "v": "from-pub"}), "CF_RESOLVER": "default", "CF_DECISION": 3,
                "CF_LOSER": json.dumps({"side": origin, "row": {"id": 1, "v": "from-sub"}}), "CF_AT": utcnow(),
                "CF_NOTIFIED": False, "CF_RUN_ID": "test", "CF_ENTRY": uuid.uuid4().hex,
            }
        ],
    )  # fmt: skip
    [conflict] = catalog.conflicts(item)
    deleted = {**conflict, "CF_TYPE": "D", "CF_DECISION": 4, "CF_ENTRY": uuid.uuid4().hex, "CF_AT": utcnow()}
    deleted.pop("CF_ID")
    catalog.record_conflicts(item, origin, [deleted])  # a second one, newer: the ledger's first page
    return int(conflict["CF_ID"])

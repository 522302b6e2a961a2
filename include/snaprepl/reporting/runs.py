"""The history's part of ``snaprepl status``: each snapshot's and subscriber's newest run and newest
verify or repair."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from snaprepl.catalog.records import HistoryRecord
from snaprepl.catalog.store import Catalog


def iso(value: datetime | None) -> str | None:
    """A timestamp as the report writes it (None stays None)."""
    return value.isoformat(sep=" ", timespec="microseconds") if value else None


def add_last_runs(report: dict[str, Any], catalog: Catalog) -> None:
    """Each snapshot's and subscriber's newest run from the history (``last_run``: its lag at the end,
    its duration and rows) and newest verify or repair (``last_verify``); None where there is none.
    A replica's runs are recorded as (item, server)."""
    runs = catalog.last_runs()
    checks = catalog.last_runs(checks=True)
    for entry in report["snapshots"]:
        entry["last_run"] = _run(runs.get((entry["name"], None)))
        entry["last_verify"] = _verify(checks.get((entry["name"], None)))
    for publication in report["publications"]:
        for sub in publication["subscribers"]:
            key = (publication["item"], sub["server"])
            sub["last_run"] = _run(runs.get(key))
            sub["last_verify"] = _verify(checks.get(key))


def _verify(run: HistoryRecord | None) -> dict[str, Any] | None:
    """A copy's newest verify or repair: when, whether the copy was equal, how many differences."""
    if run is None:
        return None
    return {
        "at": iso(run.rh_ended), "kind": run.rh_kind, "outcome": run.rh_outcome,
        "equal": run.rh_outcome == "ok",
        "differences": run.rh_conflicts, "error": run.rh_error,
    }  # fmt: skip


def _run(run: HistoryRecord | None) -> dict[str, Any] | None:
    return None if run is None else {**run.to_json(), "duration_s": round(run.duration_s, 3)}

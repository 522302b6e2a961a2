"""The Replication page's data: what ``snaprepl status`` reports, the conflict ledger and the run
history, each cut down to the DAGs the user may read.

Everything here reads the catalog (through :class:`~snaprepl.catalog.store.Catalog`) and Airflow's
metadata database (the api-server's own session) for each DAG's last and next run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from airflow.models.dag import DagModel
from airflow.models.dagrun import DagRun
from airflow.utils.session import create_session
from sqlalchemy import func, select

from snaprepl.catalog.records import HistoryRecord
from snaprepl.catalog.store import Catalog
from snaprepl.common.dag_names import (
    group_dag_id,
    publication_dag_id,
    publication_verify_dag_id,
    snapshot_dag_id,
    verify_dag_id,
)
from snaprepl.publications.outcome import DECISIONS
from snaprepl.reporting.status import collect_status
from snaprepl.settings import Settings

#: The most conflicts one page of the ledger holds.
MAX_PAGE = 200


def open_catalog() -> tuple[Catalog, Settings]:
    settings = Settings.load()
    return Catalog.open(settings), settings


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def dag_runs(dag_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Each DAG's last run (id, state, start) and next scheduled run, from Airflow's database."""
    wanted = sorted(set(dag_ids))
    found: dict[str, dict[str, Any]] = {dag_id: {"last": None, "next": None} for dag_id in wanted}
    if not wanted:
        return found
    with create_session() as session:
        for dag_id, next_run in session.execute(
            select(DagModel.dag_id, DagModel.next_dagrun_create_after).where(DagModel.dag_id.in_(wanted))
        ):
            found[dag_id]["next"] = _iso(next_run)
        newest = (
            select(DagRun.dag_id, func.max(DagRun.id).label("id"))
            .where(DagRun.dag_id.in_(wanted))
            .group_by(DagRun.dag_id)
            .subquery()
        )
        query = select(DagRun.dag_id, DagRun.run_id, DagRun.state, DagRun.start_date).join(
            newest, DagRun.id == newest.c.id
        )
        for dag_id, run_id, state, started in session.execute(query):
            found[dag_id]["last"] = {"run_id": run_id, "state": str(state), "started": _iso(started)}
    return found


def _snapshot_rows(report: dict[str, Any], readable: set[str]) -> list[dict[str, Any]]:
    """The report's snapshots the user may read, with their lag (at the end of the last run, from
    the history), backlog and the snapshot a purge of their log waits for."""
    blockers = {log["source"]: log["purge_waits_for"] for log in report["snapshot_logs"]}
    logs = report["snapshot_logs"]
    held = {log["source"]: (log.get("watermarks") or {}).get("long_transactions", []) for log in logs}
    rows = []
    for entry in report["snapshots"]:
        if entry["dag_id"] not in readable:
            continue
        rows.append(
            {
                **entry,
                "lag_seconds": (entry.get("last_run") or {}).get("lag_seconds"),
                "backlog_rows": (entry.get("pending") or {}).get("rows"),
                "purge_blocker": blockers.get(entry["source"]),
                # Source transactions open over long_transaction_warn_minutes: its changes wait for them.
                "held_back_by": held.get(entry["source"], []),
            }
        )
    return rows


def overview(user_dags: set[str]) -> dict[str, Any]:
    """Snapshots (with lag, backlog, last and next run, purge blocker), snapshot groups (members, point,
    lag, last and next run), their logs, publications and their subscribers, and conflict counts: those
    whose DAG is in ``user_dags`` (a group's member's is its group's)."""
    catalog, settings = open_catalog()
    report = collect_status(catalog, settings, probe=True)
    snapshots = _snapshot_rows(report, user_dags)
    runs = dag_runs([s["dag_id"] for s in snapshots] + [p["dag_id"] for p in report["publications"]])
    for snapshot in snapshots:
        snapshot["dag"] = runs.get(snapshot["dag_id"])
    publications = [p for p in report["publications"] if p["dag_id"] in user_dags]
    for publication in publications:
        publication["dag"] = runs.get(publication["dag_id"])
    groups = [g for g in report["groups"] if g["dag_id"] in user_dags]
    runs.update(dag_runs([g["dag_id"] for g in groups]))
    for group in groups:
        group["dag"] = runs.get(group["dag_id"])
    _add_alerts(catalog, snapshots + groups, publications)
    _add_verify_dags(catalog, snapshots, publications)
    return {
        "snapshots": snapshots,
        "groups": groups,
        "snapshot_logs": log_rows(report["snapshot_logs"], snapshots, publications),
        "publications": publications,
        "conflicts": [c for c in report["conflicts"] if publication_dag_id(c["item"]) in user_dags],
    }


def log_rows(
    logs: list[dict[str, Any]], snapshots: list[dict[str, Any]], publications: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The logs read by the snapshots and publications shown (a publication's log is its publisher's),
    each with ``copies`` (who reads it), ``rows``, ``oldest_entry`` and ``purge_held_by`` (the snapshot
    or subscriber its purge waits for): what keeps a log from growing without bound."""
    readers: dict[str, list[str]] = {}
    for snapshot in snapshots:
        readers.setdefault(snapshot["source"], []).append(snapshot["name"])
    for publication in publications:
        readers.setdefault(publication["item"], []).append(publication["item"])
    return [
        {**log, "copies": readers[log["source"]], "error": (log.get("backlog") or {}).get("error")}
        for log in logs
        if log["source"] in readers
    ]


def _add_alerts(catalog: Catalog, snapshots: list[dict[str, Any]], publications: list[dict[str, Any]]) -> None:
    """Each copy's conditions the watchdog found (``alerts``: "<condition>: <detail>"); ``snapshots``
    holds the snapshot groups too (a group's conditions are under its name)."""
    held: dict[tuple[str, str | None], list[str]] = {}
    for watched in catalog.watched().values():
        c = watched.condition
        held.setdefault((c.copy, c.server), []).append(f"{c.condition}: {c.detail}")
    for snapshot in snapshots:
        snapshot["alerts"] = held.get((snapshot["name"], None), [])
    for publication in publications:
        publication["alerts"] = held.get((publication["item"], None), [])
        for sub in publication["subscribers"]:
            sub["alerts"] = held.get((publication["item"], sub["server"]), [])


def _add_verify_dags(catalog: Catalog, snapshots: list[dict[str, Any]], publications: list[dict[str, Any]]) -> None:
    """Each copy's verify DAG (``verify_dag_id``; None without a verify schedule): the page's "Verify"."""
    checked = {s.sn_name for s in catalog.snapshots() if s.sn_verify_schedule}
    for snapshot in snapshots:
        snapshot["verify_dag_id"] = verify_dag_id(snapshot["name"]) if snapshot["name"] in checked else None
    checked = {p.sp_item for p in catalog.publications() if p.sp_verify_schedule}
    for publication in publications:
        item = publication["item"]
        publication["verify_dag_id"] = publication_verify_dag_id(item) if item in checked else None


def readable_items(catalog: Catalog, user_dags: set[str]) -> list[str]:
    """The publications whose sync DAG the user may read."""
    return [p.sp_item for p in catalog.publications() if publication_dag_id(p.sp_item) in user_dags]


def _decoded(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def _incoming(text: str | None) -> tuple[str | None, Any]:
    """The incoming change's operation and row (the old row of a delete), as the pull recorded it."""
    change = _decoded(text)
    if not isinstance(change, dict) or "op" not in change:
        return None, change
    return change.get("op"), change.get("row") if change.get("row") is not None else change.get("old")


def conflicts_page(user_dags: set[str], filters: dict[str, Any], offset: int, limit: int) -> dict[str, Any]:
    """One page of the conflict ledger, newest first: both versions of each row side by side."""
    catalog, _ = open_catalog()
    items = readable_items(catalog, user_dags)
    if filters.get("item"):
        items = [i for i in items if i == filters["item"]]
    total, rows = catalog.conflict_page(
        items, kind=filters.get("type"), decision=filters.get("decision"), offset=offset, limit=min(limit, MAX_PAGE)
    )
    return {
        "total": total,
        "offset": offset,
        "items": items if not filters.get("item") else readable_items(catalog, user_dags),
        "conflicts": [
            {
                "id": row["CF_ID"],
                "op": _incoming(row["CF_INCOMING"])[0],
                "item": row["CF_ITEM"],
                "type": row["CF_TYPE"],
                "origin": row["CF_ORIGIN"],
                "key": _decoded(row["CF_KEY"]),
                "incoming": _incoming(row["CF_INCOMING"])[1],
                "current": _decoded(row["CF_CURRENT"]),
                "resolver": row["CF_RESOLVER"],
                "decision": DECISIONS.get(row["CF_DECISION"], row["CF_DECISION"]),
                "at": _iso(row["CF_AT"]),
                "notified": bool(row["CF_NOTIFIED"]),
            }
            for row in rows
        ],
    }


def _dag_of(run: HistoryRecord, snapshots: set[str], grouped: dict[str, str]) -> str:
    """The DAG that runs the copy: a snapshot's, its group's for a member, or a publication's."""
    if run.rh_copy in grouped:
        return group_dag_id(grouped[run.rh_copy])
    return snapshot_dag_id(run.rh_copy) if run.rh_copy in snapshots else publication_dag_id(run.rh_copy)


def history(user_dags: set[str], days: int, limit: int = 2000) -> dict[str, Any]:
    """Runs of the last ``days`` days of the copies the user may read, oldest first, per copy."""
    catalog, _ = open_catalog()
    snapshots, grouped = {s.sn_name for s in catalog.snapshots()}, catalog.grouped_snapshots()
    since = datetime.now(UTC).replace(tzinfo=None) - timedelta(days=days)
    series: dict[str, list[dict[str, Any]]] = {}
    for run in reversed(catalog.history(since=since, limit=limit)):
        if _dag_of(run, snapshots, grouped) in user_dags:
            series.setdefault(run.rh_copy, []).append(run.to_json())
    return {"since": _iso(since), "copies": series}

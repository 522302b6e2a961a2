"""``snaprepl status`` and ``snaprepl history`` as text for people, or JSON for machines: rendering
only; :mod:`snaprepl.reporting.status` collects the report."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from snaprepl.catalog.records import HistoryRecord
from snaprepl.common.terminal import visible


def _table(title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A table for a terminal; every cell with its control characters made visible (names and values
    come from the databases: see :mod:`snaprepl.common.terminal`)."""
    if not rows:
        return f"{title}: none"
    cells = [[("" if v is None else visible(v)) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    line = "  ".join("-" * w for w in widths)
    header = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()
    out = [f"{title}:", header, line]
    out += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    return "\n".join(out)


def lag_text(seconds: float | None) -> str | None:
    """A lag for people: ``caught up``, seconds, minutes or hours (None: unknown)."""
    if seconds is None:
        return None
    if seconds == 0:
        return "caught up"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def _last_run(run: dict[str, Any] | None) -> str | None:
    """The "last run" cell: outcome, duration and rows of the newest run in the history."""
    if run is None:
        return None
    rows = f"{run['rows_in'] or 0} in/{run['rows_out'] or 0} out"
    rows += f"/{run['rows_deleted']} del" if run.get("rows_deleted") else ""
    return f"{run['kind']} {run['outcome']}, {run['duration_s']:.1f} s, {rows}"


def _last_verify(check: dict[str, Any] | None) -> str | None:
    """The "last verify" cell: when, and equal or how many differences."""
    if check is None:
        return None
    if check["outcome"] == "failed":
        return f"{check['kind']} failed {check['at']}"
    found = "equal" if check["equal"] else f"{check['differences']} differences"
    repaired = ", repaired" if check["kind"] == "repair" and check["outcome"] == "ok" and check["differences"] else ""
    return f"{found}{repaired} {check['at']}"


def _lag(run: dict[str, Any] | None) -> str | None:
    return lag_text(run["lag_seconds"]) if run else None


def _cell(probed: dict[str, Any] | None) -> Any:
    """A probed count's cell: why it could not be read, else the count (empty when not probed)."""
    return (probed or {}).get("error") or (probed or {}).get("rows")


def _held(entry: dict[str, Any]) -> str | None:
    """The copy a log's purge waits for, named with its kind (snapshot or subscriber)."""
    holder, line = entry.get("purge_held_by"), entry["purge_waits_for"]
    return f"snapshot {line}" if holder and holder["kind"] == "snapshot" else line


def _logs_table(logs: list[dict[str, Any]]) -> str:
    rows = [
        [
            entry["source"],
            entry["kind"],
            entry["rlog"],
            ", ".join(entry["key_columns"]),
            _cell(entry.get("backlog")),
            (entry.get("backlog") or {}).get("newest_snaptime"),
            (entry.get("backlog") or {}).get("oldest_snaptime"),
            entry["purged_before"],
            _held(entry),
            (entry.get("watermarks") or {}).get("mode") or (entry.get("watermarks") or {}).get("error"),
        ]
        for entry in logs
    ]
    headers = [
        "source",
        "kind",
        "log table",
        "key",
        "rows",
        "newest SNAPTIME",
        "oldest",
        "purged before",
        "purge waits for",
        "watermarks",
    ]
    notes = [f"note: {entry['source']}: {note}" for entry in logs for note in entry.get("guard_notes") or []]
    table = _table("snapshot logs", headers, rows)
    return "\n".join([table, *(f"  ! {line}" for line in long_transaction_lines(logs)), *notes])


def _refresh_outcome(entry: dict[str, Any]) -> str:
    """The snapshot's "last refresh" cell."""
    if entry["needs_complete_refresh"]:
        return "COMPLETE REFRESH REQUIRED"
    if entry.get("stale"):
        return f"stale, last {entry['last_refresh']['status'] or 'never'} {entry['last_refresh']['at'] or ''}".rstrip()
    if entry.get("waiting"):
        return f"running, {entry['waiting'][0]}"
    last = entry["last_refresh"]
    if last["status"] == "succeeded":
        rows = (
            last["rows_copied"] if last["kind"] == "complete" else f"+{last['rows_upserted']}/-{last['rows_deleted']}"
        )
        return f"{last['kind']} ok, {rows} rows, {last['at']}"
    if last["status"] == "failed":
        return f"failed {last['at']}: {(last['error'] or '')[:80]}"
    if last["status"] == "died":
        return f"DIED: run {entry['died']['run_id'] or '?'}: {entry['died']['why']}"
    return str(last["status"] or "never")


def _snapshots_table(snapshots: list[dict[str, Any]]) -> str:
    rows = [
        [
            entry["name"],
            entry["type"],
            entry["source"],
            entry["schedule"] or "manual",
            entry["last_ts"],
            _refresh_outcome(entry),
            _cell(entry.get("pending")),
            _lag(entry.get("last_run")),
            _last_run(entry.get("last_run")),
            _last_verify(entry.get("last_verify")),
            entry["dag_id"],
        ]
        for entry in snapshots
    ]
    headers = ["snapshot", "type", "source", "schedule", "SN_LAST_TS", "last refresh", "pending", "lag", "last run"]
    headers += ["last verify", "DAG"]
    notes = [f"note: {entry['name']}: {line}" for entry in snapshots for line in column_change_lines(entry)]
    return "\n".join([_table("snapshots", headers, rows), *notes])


def column_change_lines(entry: dict[str, Any]) -> list[str]:
    """What a snapshot followed of its source's columns (:mod:`snaprepl.refresh.columns`)."""
    changes = entry.get("column_changes") or {}
    what = {
        "kept": "dropped at the source, kept in the destination with their values (no longer refreshed)",
        "added": "added at the source and to the destination",
        "widened": "widened at the source and in the destination",
    }
    return [f"columns {visible(', '.join(changes[k]))} {text}" for k, text in what.items() if changes.get(k)]


def _groups_table(groups: list[dict[str, Any]]) -> str:
    """Snapshot groups: members, the consistent point of the last refresh per source, and its lag."""
    rows = [
        [
            g["name"],
            g["source"],
            g["destination"],
            len(g["members"]),
            "; ".join(f"{conn} {mark}" for conn, mark in g["points"].items()) or "none yet",
            lag_text(g["lag_seconds"]),
            g["last_status"] if not g["last_error"] else f"{g['last_status']}: {g['last_error']}",
            ", ".join(f"{t} ({why.split(':')[0]})" for t, why in sorted(g["skipped"].items())) or None,
            g["dag_id"],
        ]
        for g in groups
    ]
    headers = ["group", "source schema", "destination", "members", "point", "lag", "last refresh", "not members"]
    return _table("snapshot groups", [*headers, "DAG"], rows)


def _sync_outcome(publication: dict[str, Any]) -> str:
    """The publication's "last sync" cell."""
    if publication["died"]:
        return f"DIED: pull run {publication['died']['run_id']}: {publication['died']['why']}"
    last = publication["last_sync"]
    if not last["status"]:
        return "never"
    return f"{last['status']} {last['at']}" + (f": {(last['error'] or '')[:80]}" if last["error"] else "")


def _resolver(r: dict[str, Any]) -> str:
    """A table's resolver as ``<type><order>:<resolver>``, a collection's as ``<collection> <order>:<resolver>``."""
    return (
        f"{r['collection']} {r['order']}:{r['resolver']}"
        if "collection" in r
        else f"{r['type']}{r['order']}:{r['resolver']}"
    )


def _publications_table(publications: list[dict[str, Any]]) -> str:
    rows = [
        [
            publication["item"],
            publication["publisher"],
            publication["schedule"] or "manual",
            _sync_outcome(publication),
            ", ".join(_resolver(r) for r in publication["resolvers"]) or "defaults",
            _stale_rule(publication.get("stale_rule")),
            publication["dag_id"],
        ]
        for publication in publications
    ]
    headers = ["publication", "publisher", "schedule", "last sync", "resolvers", "stale rule", "DAG"]
    return _table("publications", headers, rows)


def _stale_rule(rule: dict[str, Any] | None) -> str:
    """``stale after 72 h, detach, reinit``: when its subscribers are stale and what happens then."""
    if not rule:
        return ""
    text = f"stale after {rule['stale_after_hours']:g} h"
    text += ", detach" if rule["detach_stale"] else ""
    return text + (", reinit" if rule["reinit_detached"] else "")


def _subscriber_state(sub: dict[str, Any], rule: dict[str, Any]) -> str:
    """The subscriber's "state" cell (``rule``: its publication's stale rule)."""
    if sub["died"]:
        return f"DIED: push run {sub['died']['run_id']}: {sub['died']['why']}"
    if sub.get("needs_init"):
        return f"NEEDS REPL_INIT_SNAPSHOT: {sub['needs_init'][:80]}"
    state = sub["status"] or ("loaded" if sub["loaded"] else f"not loaded ({sub['init_state'] or 'no init'})")
    if sub.get("detached_at"):
        then = "reloaded at its next sync" if rule.get("reinit_detached") else "needs REPL_INIT_SNAPSHOT"
        state = f"DETACHED {sub['detached_at']} ({then}), {state}"
    elif sub.get("stale"):
        state = f"stale, {state}"
    return state + (f": {sub['error'][:80]}" if sub["error"] else "")


def _subscriptions_table(publications: list[dict[str, Any]]) -> str:
    rows = [
        [
            publication["item"],
            sub["server"],
            sub["replica"],
            _subscriber_state(sub, publication.get("stale_rule") or {}),
            sub["last_pull_at"],
            sub["last_push_at"],
            _cell(sub.get("to_pull")),
            _cell(sub.get("to_push")),
            _lag(sub.get("last_run")),
            _last_run(sub.get("last_run")),
            _last_verify(sub.get("last_verify")),
        ]
        for publication in publications
        for sub in publication["subscribers"]
    ]
    headers = ["publication", "server", "replica", "state", "last pull", "last push", "to pull", "to push", "lag"]
    headers += ["last run", "last verify"]
    return _table("subscriptions", headers, rows)


def _waiting_table(publications: list[dict[str, Any]]) -> str:
    rows = [
        [p["item"], w["path"], w["server"], w["origin"], w["waits_as"], w["since"], w["temp"]]
        for p in publications
        for w in p.get("waiting_on_locks", [])
    ]
    headers = ["publication", "resource", "locked on", "from", "waits as", "since", "body waits at"]
    return _table("resources waiting on locks", headers, rows)


def render_text(status: dict[str, Any]) -> str:
    """The report :func:`collect_status` gathered, as tables for people."""
    servers = [[s["server"], s["conn_id"]] for s in status["servers"]]
    columns = ("item", "type", "decision", "count", "unnotified", "last_at")
    conflicts = [[c[k] for k in columns] for c in status["conflicts"]]
    return "\n\n".join(
        [
            f"catalog: {visible(status['catalog'])}",
            _logs_table(status["snapshot_logs"]),
            _snapshots_table(status.get("snapshots", [])),
            _groups_table(status.get("groups", [])),
            _table("replication servers", ["server", "connection"], servers),
            _publications_table(status["publications"]),
            _subscriptions_table(status["publications"]),
            _waiting_table(status["publications"]),
            _table("conflicts", ["publication", "type", "decision", "count", "not notified", "last"], conflicts),
        ]
    )


def render_json(status: dict[str, Any]) -> str:
    return json.dumps(status, indent=2, sort_keys=True)


def render_history(runs: Sequence[HistoryRecord]) -> str:
    """``snaprepl history``: one line per run, newest first."""
    rows = [
        [
            f"{r.rh_started:%Y-%m-%d %H:%M:%S}",
            f"{r.duration_s:.1f} s",
            r.rh_copy,
            r.rh_kind,
            r.rh_server,
            r.rh_outcome,
            r.rh_rows_in,
            r.rh_rows_out,
            r.rh_rows_deleted,
            r.rh_conflicts,
            lag_text(r.rh_lag_seconds),
            r.rh_backlog,
            r.rh_dag_run_id or "CLI",
            (r.rh_error or "")[:80],
        ]
        for r in runs
    ]
    headers = ["started (UTC)", "took", "copy", "kind", "server", "outcome", "in", "out", "deleted", "conflicts"]
    return _table("runs", [*headers, "lag", "backlog", "DAG run", "error"], rows)


def render_history_json(runs: Sequence[HistoryRecord]) -> str:
    return json.dumps([r.to_json() for r in runs], indent=2)


def long_transaction_lines(logs: list[dict[str, Any]]) -> list[str]:
    """One line per long transaction holding a log's watermarks back, and per watermark note."""
    lines = []
    for entry in logs:
        marks = entry.get("watermarks") or {}
        lines += [f"{entry['source']}: {t} holds its watermarks back" for t in marks.get("long_transactions", [])]
        if marks.get("note"):
            lines.append(f"{entry['source']}: {marks['note']}")
    return lines

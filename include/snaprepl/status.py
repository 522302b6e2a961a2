"""``snaprepl status``: the catalog as a readable report, or as JSON for machines."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from snaprepl.bidir.resolvers import DECISIONS
from snaprepl.catalog.records import LogRecord, PublicationRecord, SnapshotRecord, SubscriptionRecord
from snaprepl.catalog.store import Catalog
from snaprepl.dag_names import publication_dag_id, snapshot_dag_id
from snaprepl.db import Database
from snaprepl.dialects.base import BIDIR
from snaprepl.errors import SnapreplError
from snaprepl.refresh.lock import snapshot_lock_name
from snaprepl.refresh.stale import run_state
from snaprepl.settings import Settings

Locks = dict[str, tuple[str, str, datetime]]


@dataclass(frozen=True)
class _PublicationContext:
    """What each subscriber's entry reads: servers' connections, leases, the publisher's log, probing."""

    servers: dict[str, str]
    locks: Locks
    log: LogRecord | None
    probe: bool


def _iso(value: datetime | None) -> str | None:
    return value.isoformat(sep=" ", timespec="microseconds") if value else None


def _why(err: Exception) -> str:
    """An error as one line of the report."""
    return f"{type(err).__name__}: {(str(err).splitlines() or [''])[0]}"


def _log_backlog(record: LogRecord) -> dict[str, Any]:
    """Rows in the log and the newest SNAPTIME, read from the source database."""
    try:
        database = Database.for_conn_id(record.snl_conn)
        dialect = database.dialect
        rlog = dialect.qualified(record.snl_schema, record.snl_rlog)
        snaptime = dialect.quote(dialect.log_columns.snaptime)
        with database.session() as session:
            rows, newest = session.query(f"SELECT COUNT(*), MAX({snaptime}) FROM {rlog}")[0]
        return {"rows": int(rows), "newest_snaptime": _iso(dialect.snaptime_value(newest)), "error": None}
    except SnapreplError as err:
        return {"rows": None, "newest_snaptime": None, "error": str(err)}
    except Exception as err:  # an unreachable or broken source must not hide the rest of the report
        return {"rows": None, "newest_snaptime": None, "error": _why(err)}


def _log_rows(log: LogRecord, since: datetime | None = None, not_from: str | None = None) -> dict[str, Any]:
    """``{"rows": n}``: the entries of ``log`` newer than ``since`` and not from replication server
    ``not_from`` (either optional), or why they could not be counted."""
    try:
        database = Database.for_conn_id(log.snl_conn)
        dialect = database.dialect
        conditions: list[str] = []
        params: dict[str, Any] = {}
        if not_from is not None:
            conditions.append(f"{dialect.quote(BIDIR.origin)} <> {dialect.literal(not_from)}")
        if since is not None:
            conditions.append(f"{dialect.quote(dialect.log_columns.snaptime)} > :since")
            params["since"] = dialect.snaptime_param(since)
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        with database.session() as session:
            rlog = dialect.qualified(log.snl_schema, log.snl_rlog)
            rows = session.query(f"SELECT COUNT(*) FROM {rlog}{where}", params or None)[0][0]
        return {"rows": int(rows), "error": None}
    except Exception as err:  # an unreachable server must not hide the rest of the report
        return {"rows": None, "error": _why(err)}


def _pending(snapshot: SnapshotRecord, log: LogRecord | None) -> dict[str, Any]:
    """Log entries newer than the snapshot's SN_LAST_TS: what its next incremental refresh applies."""
    if log is None or snapshot.sn_last_ts is None:
        return {"rows": None, "error": None}
    return _log_rows(log, since=snapshot.sn_last_ts)


def _subscriber(catalog: Catalog, item: str, sub: SubscriptionRecord, context: _PublicationContext) -> dict[str, Any]:
    """One subscriber of publication ``item``: its state, and with ``probe`` what its next sync moves."""
    replica = f"{sub.ss_schema}.{sub.ss_table}@{context.servers.get(sub.ss_server, '?')}"
    push_lease = f"push:{item}:{sub.ss_server}"
    entry: dict[str, Any] = {
        "server": sub.ss_server,
        "replica": replica,
        "loaded": sub.ss_init_state == "done",
        "init_state": sub.ss_init_state,
        "last_pull_at": _iso(sub.ss_last_pull_at),
        "last_push_at": _iso(sub.ss_last_push_at),
        "last_pull_ts": _iso(sub.ss_last_pull_ts),
        "last_push_ts": _iso(sub.ss_last_push_ts),
        "status": sub.ss_last_status,
        "error": sub.ss_last_error,
        "running": _running(context.locks, push_lease),
        "died": run_state(context.locks.get(push_lease), None),
    }
    replica_log = catalog.log(replica)
    if context.probe and replica_log is not None:
        entry["to_pull"] = _log_rows(replica_log)
    if context.probe and context.log is not None and entry["loaded"]:
        # What the next push to this subscriber reads: the publisher's entries newer than its watermark.
        entry["to_push"] = _log_rows(context.log, since=sub.ss_last_push_ts, not_from=sub.ss_server)
    return entry


def _publication(catalog: Catalog, publication: PublicationRecord, context: _PublicationContext) -> dict[str, Any]:
    item, locks = publication.sp_item, context.locks
    return {
        "item": item,
        "publisher": publication.sp_server,
        "schedule": publication.sp_schedule,
        "dag_id": publication_dag_id(item),
        "last_sync": {
            "at": _iso(publication.sp_last_sync_at),
            "status": publication.sp_last_status,
            "error": publication.sp_last_error,
        },
        "running": _running(locks, f"pull:{item}"),
        "died": run_state(locks.get(f"pull:{item}"), None),
        "resolvers": [
            {
                "type": r.cr_type,
                "order": r.cr_order,
                "resolver": (r.cr_class or r.cr_proc) + (f"({r.cr_column})" if r.cr_column else ""),
            }
            for r in catalog.resolvers(item)
        ],
        "subscribers": [_subscriber(catalog, item, sub, context) for sub in catalog.subscriptions(item)],
    }


def _publications(catalog: Catalog, locks: Locks, probe: bool) -> list[dict[str, Any]]:
    servers = {s.server: s.db_address for s in catalog.servers()}
    return [
        _publication(catalog, publication, _PublicationContext(servers, locks, catalog.log(publication.sp_item), probe))
        for publication in catalog.publications()
    ]


def _lock_waits(snapshot: SnapshotRecord) -> list[str] | None:
    """Sessions waiting for a lock held on the destination (a running refresh stuck behind another)."""
    try:
        database = Database.for_conn_id(snapshot.sn_dest_conn)
        with database.session() as session:
            return database.dialect.lock_waits(session, snapshot.sn_dest_schema, snapshot.sn_dest_table)
    except Exception as err:  # an unreachable server must not hide the rest of the report
        return [f"cannot tell: {_why(err)}"]


def _running(locks: Locks, name: str) -> dict[str, Any] | None:
    """The live run holding lease ``name`` (a dead one is reported by :func:`run_state`)."""
    held = locks.get(name)
    if not held or run_state(held, None) is not None:
        return None
    return {"run_id": held[0], "holder": held[1], "heartbeat": _iso(held[2])}


def _purge_blocker(snapshots: list[SnapshotRecord]) -> str | None:
    """The incremental snapshot the next purge of a log waits for: never refreshed, or the oldest."""
    live = [s for s in snapshots if s.incremental and s.sn_needs_complete is None]
    if not live:
        return None
    never = [s for s in live if s.sn_last_ts is None]
    if never:
        return f"{never[0].sn_name} (never refreshed)"
    oldest = min(live, key=lambda s: s.sn_last_ts)  # type: ignore[arg-type, return-value]
    return f"{oldest.sn_name} (SN_LAST_TS {_iso(oldest.sn_last_ts)})"


def _log_entry(record: LogRecord, snapshots: list[SnapshotRecord], probe: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "source": record.snl_source,
        "dialect": record.snl_dialect,
        "kind": record.snl_kind,
        "rlog": record.objects.rlog,
        "key_columns": record.key_columns,
        "triggers": list(record.objects.triggers),
        "created_at": _iso(record.snl_created_at),
        "purged_before": _iso(record.snl_purged_before),
        "last_purge_at": _iso(record.snl_last_purge_at),
        "purge_waits_for": _purge_blocker([s for s in snapshots if s.sn_source_table == record.snl_source]),
    }
    if probe:
        entry["backlog"] = _log_backlog(record)
    return entry


def _snapshot_entry(snapshot: SnapshotRecord, locks: Locks, logs: dict[str, LogRecord], probe: bool) -> dict[str, Any]:
    lease = snapshot_lock_name(snapshot.sn_name)
    died = run_state(locks.get(lease), snapshot.sn_last_status)
    entry: dict[str, Any] = {
        "name": snapshot.sn_name,
        "type": "incremental" if snapshot.incremental else "nonincremental",
        "source": snapshot.sn_source_table or f"query on {snapshot.sn_source_conn}",
        "destination": f"{snapshot.sn_dest_schema}.{snapshot.sn_dest_table}@{snapshot.sn_dest_conn}",
        "query": snapshot.sn_query,
        "schedule": snapshot.sn_schedule,
        "dag_id": snapshot_dag_id(snapshot.sn_name),
        "last_ts": _iso(snapshot.sn_last_ts),
        "needs_complete_refresh": snapshot.sn_needs_complete,
        "last_refresh": {
            "at": _iso(snapshot.sn_last_refresh_at),
            "kind": snapshot.sn_last_refresh_kind,
            "status": "died" if died and snapshot.sn_last_status == "running" else snapshot.sn_last_status,
            "error": snapshot.sn_last_error,
            "rows_copied": snapshot.sn_last_rows_copied,
            "rows_upserted": snapshot.sn_last_rows_upserted,
            "rows_deleted": snapshot.sn_last_rows_deleted,
            "duration_s": snapshot.sn_last_duration_s,
        },
        "running": _running(locks, lease),
        "died": died,
    }
    if probe and snapshot.incremental:
        entry["pending"] = _pending(snapshot, logs.get(snapshot.sn_source_table or ""))
    if probe and entry["running"]:
        entry["waiting"] = _lock_waits(snapshot)
    return entry


def collect_status(catalog: Catalog, settings: Settings, *, probe: bool = True) -> dict[str, Any]:
    """The whole catalog as plain data.

    :param probe: also connect to sources to count pending log rows.
    """
    catalog.ensure_ready()
    snapshots = catalog.snapshots()
    locks = catalog.locks()
    log_records = {r.snl_source: r for r in catalog.logs()}
    return {
        "catalog": catalog.describe(),
        "settings": {
            "snp_repl_tolerance_offset": settings.snp_repl_tolerance_offset,
            "snp_repl_purge_offset": settings.snp_repl_purge_offset,
        },
        "snapshot_logs": [_log_entry(record, snapshots, probe) for record in log_records.values()],
        "snapshots": [_snapshot_entry(snapshot, locks, log_records, probe) for snapshot in snapshots],
        "servers": [{"server": s.server, "conn_id": s.db_address} for s in catalog.servers()],
        "publications": _publications(catalog, locks, probe),
        "conflicts": [
            {**c, "last_at": _iso(c["last_at"]), "decision": DECISIONS.get(c["decision"], c["decision"])}
            for c in catalog.conflict_summary()
        ],
    }


def _table(title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    if not rows:
        return f"{title}: none"
    cells = [[("" if v is None else str(v)) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    line = "  ".join("-" * w for w in widths)
    header = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()
    out = [f"{title}:", header, line]
    out += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    return "\n".join(out)


def _cell(probed: dict[str, Any] | None) -> Any:
    """A probed count's cell: why it could not be read, else the count (empty when not probed)."""
    return (probed or {}).get("error") or (probed or {}).get("rows")


def _logs_table(logs: list[dict[str, Any]]) -> str:
    rows = [
        [
            entry["source"],
            entry["kind"],
            entry["rlog"],
            ", ".join(entry["key_columns"]),
            _cell(entry.get("backlog")),
            (entry.get("backlog") or {}).get("newest_snaptime"),
            entry["purged_before"],
            entry["purge_waits_for"],
        ]
        for entry in logs
    ]
    headers = ["source", "kind", "log table", "key", "rows", "newest SNAPTIME", "purged before", "purge waits for"]
    return _table("snapshot logs", headers, rows)


def _refresh_outcome(entry: dict[str, Any]) -> str:
    """The snapshot's "last refresh" cell."""
    if entry["needs_complete_refresh"]:
        return "COMPLETE REFRESH REQUIRED"
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
            entry["dag_id"],
        ]
        for entry in snapshots
    ]
    headers = ["snapshot", "type", "source", "schedule", "SN_LAST_TS", "last refresh", "pending", "DAG"]
    return _table("snapshots", headers, rows)


def _sync_outcome(publication: dict[str, Any]) -> str:
    """The publication's "last sync" cell."""
    if publication["died"]:
        return f"DIED: pull run {publication['died']['run_id']}: {publication['died']['why']}"
    last = publication["last_sync"]
    if not last["status"]:
        return "never"
    return f"{last['status']} {last['at']}" + (f": {(last['error'] or '')[:80]}" if last["error"] else "")


def _publications_table(publications: list[dict[str, Any]]) -> str:
    rows = [
        [
            publication["item"],
            publication["publisher"],
            publication["schedule"] or "manual",
            _sync_outcome(publication),
            ", ".join(f"{r['type']}{r['order']}:{r['resolver']}" for r in publication["resolvers"]) or "defaults",
            publication["dag_id"],
        ]
        for publication in publications
    ]
    return _table("publications", ["publication", "publisher", "schedule", "last sync", "resolvers", "DAG"], rows)


def _subscriber_state(sub: dict[str, Any]) -> str:
    """The subscriber's "state" cell."""
    if sub["died"]:
        return f"DIED: push run {sub['died']['run_id']}: {sub['died']['why']}"
    state = sub["status"] or ("loaded" if sub["loaded"] else f"not loaded ({sub['init_state'] or 'no init'})")
    return state + (f": {sub['error'][:80]}" if sub["error"] else "")


def _subscriptions_table(publications: list[dict[str, Any]]) -> str:
    rows = [
        [
            publication["item"],
            sub["server"],
            sub["replica"],
            _subscriber_state(sub),
            sub["last_pull_at"],
            sub["last_push_at"],
            _cell(sub.get("to_pull")),
            _cell(sub.get("to_push")),
        ]
        for publication in publications
        for sub in publication["subscribers"]
    ]
    headers = ["publication", "server", "replica", "state", "last pull", "last push", "to pull", "to push"]
    return _table("subscriptions", headers, rows)


def render_text(status: dict[str, Any]) -> str:
    """The report :func:`collect_status` gathered, as tables for people."""
    servers = [[s["server"], s["conn_id"]] for s in status["servers"]]
    columns = ("item", "type", "decision", "count", "unnotified", "last_at")
    conflicts = [[c[k] for k in columns] for c in status["conflicts"]]
    return "\n\n".join(
        [
            f"catalog: {status['catalog']}",
            _logs_table(status["snapshot_logs"]),
            _snapshots_table(status.get("snapshots", [])),
            _table("replication servers", ["server", "connection"], servers),
            _publications_table(status["publications"]),
            _subscriptions_table(status["publications"]),
            _table("conflicts", ["publication", "type", "decision", "count", "not notified", "last"], conflicts),
        ]
    )


def render_json(status: dict[str, Any]) -> str:
    return json.dumps(status, indent=2, sort_keys=True)

"""``snaprepl status``: the catalog as a readable report, or as JSON for machines."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from snaprepl.bidir.resolvers import DECISIONS
from snaprepl.catalog.store import Catalog, LogRecord, SnapshotRecord
from snaprepl.db import Database
from snaprepl.errors import SnapreplError
from snaprepl.refresh.lock import snapshot_lock_name
from snaprepl.refresh.stale import run_state
from snaprepl.settings import Settings


def _iso(value: datetime | None) -> str | None:
    return value.isoformat(sep=" ", timespec="microseconds") if value else None


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
        return {
            "rows": None,
            "newest_snaptime": None,
            "error": f"{type(err).__name__}: {str(err).splitlines()[0]}",
        }


def _pending(snapshot: SnapshotRecord, log: LogRecord | None) -> dict[str, Any]:
    """Log entries newer than the snapshot's SN_LAST_TS: what its next incremental refresh applies."""
    if log is None or snapshot.sn_last_ts is None:
        return {"rows": None, "error": None}
    try:
        database = Database.for_conn_id(log.snl_conn)
        dialect = database.dialect
        rlog = dialect.qualified(log.snl_schema, log.snl_rlog)
        snaptime = dialect.quote(dialect.log_columns.snaptime)
        with database.session() as session:
            rows = session.query(
                f"SELECT COUNT(*) FROM {rlog} WHERE {snaptime} > :since",
                {"since": dialect.snaptime_param(snapshot.sn_last_ts)},
            )[0][0]
        return {"rows": int(rows), "error": None}
    except Exception as err:
        return {"rows": None, "error": f"{type(err).__name__}: {(str(err).splitlines() or [''])[0]}"}


def _count(conn_id: str, sql: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{"rows": n}`` of a COUNT query on a connection, or why it could not be read."""
    try:
        with Database.for_conn_id(conn_id).session() as session:
            return {"rows": int(session.query(sql, params)[0][0]), "error": None}
    except Exception as err:  # an unreachable server must not hide the rest of the report
        return {"rows": None, "error": f"{type(err).__name__}: {(str(err).splitlines() or [''])[0]}"}


def _to_push(log: LogRecord, server: str, since: datetime | None) -> dict[str, Any]:
    """Entries of the publisher's log the next push to ``server`` reads (newer than its watermark)."""
    from snaprepl.dialects.base import BIDIR
    from snaprepl.lookup import dialect_of

    dialect = dialect_of(log.snl_conn)
    q = dialect.quote
    sql = (
        f"SELECT COUNT(*) FROM {dialect.qualified(log.snl_schema, log.snl_rlog)} "
        f"WHERE {q(BIDIR.origin)} <> {dialect.literal(server)}"
    )
    if since is None:
        return _count(log.snl_conn, sql)
    sql += f" AND {q(dialect.log_columns.snaptime)} > :since"
    return _count(log.snl_conn, sql, {"since": dialect.snaptime_param(since)})


def _publications(catalog: Catalog, locks: dict[str, tuple[str, str, datetime]], probe: bool) -> list[dict[str, Any]]:
    from snaprepl.airflow.naming import publication_dag_id

    servers = {s.server: s.db_address for s in catalog.servers()}
    out = []
    for publication in catalog.publications():
        log = catalog.log(publication.sp_item)
        subscribers = []
        for sub in catalog.subscriptions(publication.sp_item):
            replica = f"{sub.ss_schema}.{sub.ss_table}@{servers.get(sub.ss_server, '?')}"
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
                "running": _running(locks, f"push:{publication.sp_item}:{sub.ss_server}"),
                "died": run_state(locks.get(f"push:{publication.sp_item}:{sub.ss_server}"), None),
            }
            replica_log = catalog.log(replica)
            if probe and replica_log is not None:
                dialect = Database.for_conn_id(replica_log.snl_conn).dialect
                rlog = dialect.qualified(replica_log.snl_schema, replica_log.snl_rlog)
                entry["to_pull"] = _count(replica_log.snl_conn, f"SELECT COUNT(*) FROM {rlog}")
            if probe and log is not None and entry["loaded"]:
                entry["to_push"] = _to_push(log, sub.ss_server, sub.ss_last_push_ts)
            subscribers.append(entry)
        out.append(
            {
                "item": publication.sp_item,
                "publisher": publication.sp_server,
                "schedule": publication.sp_schedule,
                "dag_id": publication_dag_id(publication.sp_item),
                "last_sync": {
                    "at": _iso(publication.sp_last_sync_at),
                    "status": publication.sp_last_status,
                    "error": publication.sp_last_error,
                },
                "running": _running(locks, f"pull:{publication.sp_item}"),
                "died": run_state(locks.get(f"pull:{publication.sp_item}"), None),
                "resolvers": [
                    {
                        "type": r.cr_type,
                        "order": r.cr_order,
                        "resolver": (r.cr_class or r.cr_proc) + (f"({r.cr_column})" if r.cr_column else ""),
                    }
                    for r in catalog.resolvers(publication.sp_item)
                ],
                "subscribers": subscribers,
            }
        )
    return out


def _lock_waits(snapshot: SnapshotRecord) -> list[str] | None:
    """Sessions waiting for a lock held on the destination (a running refresh stuck behind another)."""
    try:
        database = Database.for_conn_id(snapshot.sn_dest_conn)
        with database.session() as session:
            return database.dialect.lock_waits(session, snapshot.sn_dest_schema, snapshot.sn_dest_table)
    except Exception as err:  # an unreachable server must not hide the rest of the report
        return [f"cannot tell: {type(err).__name__}: {(str(err).splitlines() or [''])[0]}"]


def _running(locks: dict[str, tuple[str, str, datetime]], name: str) -> dict[str, Any] | None:
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


def collect_status(catalog: Catalog, settings: Settings, *, probe: bool = True) -> dict[str, Any]:
    """The whole catalog as plain data.

    :param probe: also connect to sources to count pending log rows.
    """
    from snaprepl.airflow.naming import snapshot_dag_id

    catalog.ensure_ready()
    snapshots = catalog.snapshots()
    locks = catalog.locks()
    log_records = {r.snl_source: r for r in catalog.logs()}
    logs = []
    for record in log_records.values():
        objects = record.objects
        entry: dict[str, Any] = {
            "source": record.snl_source,
            "dialect": record.snl_dialect,
            "kind": record.snl_kind,
            "rlog": objects.rlog,
            "key_columns": record.key_columns,
            "triggers": list(objects.triggers),
            "created_at": _iso(record.snl_created_at),
            "purged_before": _iso(record.snl_purged_before),
            "last_purge_at": _iso(record.snl_last_purge_at),
            "purge_waits_for": _purge_blocker([s for s in snapshots if s.sn_source_table == record.snl_source]),
        }
        if probe:
            entry["backlog"] = _log_backlog(record)
        logs.append(entry)
    snapshot_entries = []
    for snapshot in snapshots:
        died = run_state(locks.get(snapshot_lock_name(snapshot.sn_name)), snapshot.sn_last_status)
        entry = {
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
            "running": _running(locks, snapshot_lock_name(snapshot.sn_name)),
            "died": died,
        }
        if probe and snapshot.incremental:
            entry["pending"] = _pending(snapshot, log_records.get(snapshot.sn_source_table or ""))
        if probe and entry["running"]:
            entry["waiting"] = _lock_waits(snapshot)
        snapshot_entries.append(entry)
    return {
        "catalog": catalog.describe(),
        "settings": {
            "snp_repl_tolerance_offset": settings.snp_repl_tolerance_offset,
            "snp_repl_purge_offset": settings.snp_repl_purge_offset,
        },
        "snapshot_logs": logs,
        "snapshots": snapshot_entries,
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


def render_text(status: dict[str, Any]) -> str:
    parts = [f"catalog: {status['catalog']}"]
    log_rows = []
    for entry in status["snapshot_logs"]:
        backlog = entry.get("backlog") or {}
        pending = backlog.get("error") or backlog.get("rows")
        log_rows.append(
            [
                entry["source"],
                entry["kind"],
                entry["rlog"],
                ", ".join(entry["key_columns"]),
                pending,
                backlog.get("newest_snaptime"),
                entry["purged_before"],
                entry["purge_waits_for"],
            ]
        )
    parts.append(
        _table(
            "snapshot logs",
            ["source", "kind", "log table", "key", "rows", "newest SNAPTIME", "purged before", "purge waits for"],
            log_rows,
        )
    )
    snapshot_rows = []
    for entry in status.get("snapshots", []):
        last = entry["last_refresh"]
        outcome = last["status"] or "never"
        if last["status"] == "succeeded":
            rows = (
                last["rows_copied"]
                if last["kind"] == "complete"
                else f"+{last['rows_upserted']}/-{last['rows_deleted']}"
            )
            outcome = f"{last['kind']} ok, {rows} rows, {last['at']}"
        elif last["status"] == "failed":
            outcome = f"failed {last['at']}: {(last['error'] or '')[:80]}"
        elif last["status"] == "died":
            outcome = f"DIED: run {entry['died']['run_id'] or '?'}: {entry['died']['why']}"
        if entry.get("waiting"):
            outcome = f"running, {entry['waiting'][0]}"
        pending = entry.get("pending") or {}
        snapshot_rows.append(
            [
                entry["name"],
                entry["type"],
                entry["source"],
                entry["schedule"] or "manual",
                entry["last_ts"],
                "COMPLETE REFRESH REQUIRED" if entry["needs_complete_refresh"] else outcome,
                pending.get("error") or pending.get("rows"),
                entry["dag_id"],
            ]
        )
    parts.append(
        _table(
            "snapshots",
            ["snapshot", "type", "source", "schedule", "SN_LAST_TS", "last refresh", "pending", "DAG"],
            snapshot_rows,
        )
    )
    parts.append(
        _table(
            "replication servers", ["server", "connection"], [[s["server"], s["conn_id"]] for s in status["servers"]]
        )
    )
    pub_rows = []
    for publication in status["publications"]:
        last = publication["last_sync"]
        outcome = last["status"] or "never"
        if last["status"]:
            outcome = f"{last['status']} {last['at']}" + (f": {(last['error'] or '')[:80]}" if last["error"] else "")
        if publication["died"]:
            outcome = f"DIED: pull run {publication['died']['run_id']}: {publication['died']['why']}"
        resolvers = ", ".join(f"{r['type']}{r['order']}:{r['resolver']}" for r in publication["resolvers"])
        pub_rows.append(
            [
                publication["item"],
                publication["publisher"],
                publication["schedule"] or "manual",
                outcome,
                resolvers or "defaults",
                publication["dag_id"],
            ]
        )
    parts.append(
        _table("publications", ["publication", "publisher", "schedule", "last sync", "resolvers", "DAG"], pub_rows)
    )
    sub_rows = []
    for publication in status["publications"]:
        for sub in publication["subscribers"]:
            to_pull, to_push = sub.get("to_pull") or {}, sub.get("to_push") or {}
            state = sub["status"] or ("loaded" if sub["loaded"] else f"not loaded ({sub['init_state'] or 'no init'})")
            if sub["error"]:
                state += f": {sub['error'][:80]}"
            if sub["died"]:
                state = f"DIED: push run {sub['died']['run_id']}: {sub['died']['why']}"
            sub_rows.append(
                [
                    publication["item"],
                    sub["server"],
                    sub["replica"],
                    state,
                    sub["last_pull_at"],
                    sub["last_push_at"],
                    to_pull.get("error") or to_pull.get("rows"),
                    to_push.get("error") or to_push.get("rows"),
                ]
            )
    parts.append(
        _table(
            "subscriptions",
            ["publication", "server", "replica", "state", "last pull", "last push", "to pull", "to push"],
            sub_rows,
        )
    )
    parts.append(
        _table(
            "conflicts",
            ["publication", "type", "decision", "count", "not notified", "last"],
            [
                [c["item"], c["type"], c["decision"], c["count"], c["unnotified"], c["last_at"]]
                for c in status["conflicts"]
            ],
        )
    )
    return "\n\n".join(parts)


def render_json(status: dict[str, Any]) -> str:
    return json.dumps(status, indent=2, sort_keys=True)

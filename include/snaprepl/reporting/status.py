"""``snaprepl status``: the catalog as plain data (rendered by :mod:`snaprepl.reporting.render`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from snaprepl.catalog.dav_waiting import WaitingResource
from snaprepl.catalog.log_guard import guard_notes
from snaprepl.catalog.records import (
    COLLECTION_TYPE,
    LogRecord,
    PublicationRecord,
    SnapshotRecord,
    SubscriptionRecord,
    utcnow,
)
from snaprepl.catalog.run_lock import snapshot_lock_name
from snaprepl.catalog.store import Catalog
from snaprepl.common.dag_names import group_dag_id, publication_dag_id, snapshot_dag_id
from snaprepl.database.sessions import Database
from snaprepl.dialects.base import BIDIR
from snaprepl.errors import SnapreplError
from snaprepl.ops.group_status import group_entries
from snaprepl.ops.staleness import snapshot_is_stale, stale_rule, subscriber_is_stale
from snaprepl.publications.leases import pull_lease, push_lease
from snaprepl.publications.outcome import DECISIONS
from snaprepl.refresh.stale import run_state
from snaprepl.reporting.log_bounds import bounds, describe_holder, purge_holder
from snaprepl.reporting.render import render_json, render_text
from snaprepl.reporting.runs import add_last_runs
from snaprepl.reporting.runs import iso as _iso
from snaprepl.reporting.watermarks import log_watermarks
from snaprepl.settings import Settings

Locks = dict[str, tuple[str, str, datetime]]


@dataclass(frozen=True)
class _PublicationContext:
    """What each subscriber's entry reads: servers' connections, leases, the publisher's log, probing."""

    servers: dict[str, str]
    locks: Locks
    log: LogRecord | None
    probe: bool
    settings: Settings
    now: datetime


def _why(err: Exception) -> str:
    """An error as one line of the report."""
    return f"{type(err).__name__}: {(str(err).splitlines() or [''])[0]}"


def _log_backlog(record: LogRecord) -> dict[str, Any]:
    """Rows in the log, its newest and oldest SNAPTIME, read from the source database."""
    try:
        database = Database.for_conn_id(record.snl_conn)
        dialect = database.dialect
        rlog = dialect.qualified(record.snl_schema, record.snl_rlog)
        snaptime = dialect.quote(dialect.log_columns.snaptime)
        with database.session() as session:
            rows, newest, oldest = session.query(f"SELECT COUNT(*), MAX({snaptime}), MIN({snaptime}) FROM {rlog}")[0]
        return {
            "rows": int(rows),
            "newest_snaptime": _iso(dialect.snaptime_value(newest)),
            "oldest_snaptime": _iso(dialect.snaptime_value(oldest)),
            "error": None,
        }
    except SnapreplError as err:
        return {"rows": None, "newest_snaptime": None, "oldest_snaptime": None, "error": str(err)}
    except Exception as err:  # an unreachable or broken source must not hide the rest of the report
        return {"rows": None, "newest_snaptime": None, "oldest_snaptime": None, "error": _why(err)}


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
    conn = context.servers.get(sub.ss_server, "?")
    collection = sub.ss_type == COLLECTION_TYPE  # the publisher's collection, on the subscriber's connection
    replica = f"{item.rpartition('@')[0]}@{conn}" if collection else f"{sub.ss_schema}.{sub.ss_table}@{conn}"
    push = push_lease(item, sub.ss_server)
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
        "needs_init": sub.ss_needs_init,
        "running": _running(context.locks, push),
        "died": run_state(context.locks.get(push), None),
        "stale": subscriber_is_stale(sub, catalog.publication(item), context.settings, context.now),
        "detached_at": _iso(sub.ss_detached_at),
    }
    replica_log = None if collection else catalog.log(replica)
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
        "spark_conn": publication.sp_spark_conn,
        "dag_id": publication_dag_id(item),
        "last_sync": {
            "at": _iso(publication.sp_last_sync_at),
            "status": publication.sp_last_status,
            "error": publication.sp_last_error,
        },
        "running": _running(locks, pull_lease(item)),
        "died": run_state(locks.get(pull_lease(item)), None),
        "resolvers": _resolvers(catalog, publication),
        "stale_rule": stale_rule(publication, context.settings),
        "subscribers": [_subscriber(catalog, item, sub, context) for sub in catalog.subscriptions(item)],
    }


def _resolvers(catalog: Catalog, publication: PublicationRecord) -> list[dict[str, Any]]:
    """A table's conflict resolvers (REPL_ADD_SNAPSHOT_CR), or those set with REPL_ADD_DAV_CR on the
    collections under a collection publication (with each one's collection)."""
    if publication.sp_type == COLLECTION_TYPE:
        root, _, conn_id = publication.sp_item.rpartition("@")
        return [
            {"collection": r.collection.rpartition("@")[0], "order": r.order, "resolver": r.klass,
             "notify_email": r.notify_email}
            for r in catalog.dav_resolvers_under(root, conn_id)
        ]  # fmt: skip
    return [
        {
            "type": r.cr_type,
            "order": r.cr_order,
            "resolver": (r.cr_class or r.cr_proc) + (f"({r.cr_column})" if r.cr_column else ""),
        }
        for r in catalog.resolvers(publication.sp_item)
    ]


def _waiting(publication: PublicationRecord, waiting: WaitingResource) -> dict[str, Any]:
    """A collection's resource waiting for a lock on ``waiting.server`` to be released."""
    if waiting.temp is None:
        what = "deletion"
    elif waiting.origin == publication.sp_server:
        what = "publisher update (replaces)"
    else:
        what = "subscriber update (judged when applied)"
    return {
        "path": waiting.path,
        "server": waiting.server,
        "origin": waiting.origin,
        "version": waiting.rowguid,
        "waits_as": what,
        "temp": waiting.temp and publication.sp_item.rpartition("@")[0] + waiting.temp,
        "since": _iso(waiting.since),
        "last_try": _iso(waiting.last_try),
    }


def _publications(catalog: Catalog, locks: Locks, probe: bool, settings: Settings) -> list[dict[str, Any]]:
    servers = {s.server: s.db_address for s in catalog.servers()}
    waiting: dict[str, list[WaitingResource]] = {}
    for entry in catalog.waiting():
        waiting.setdefault(entry.item, []).append(entry)
    found = []
    for publication in catalog.publications():
        context = _PublicationContext(servers, locks, catalog.log(publication.sp_item), probe, settings, utcnow())
        entry = _publication(catalog, publication, context)
        entry["waiting_on_locks"] = [_waiting(publication, w) for w in waiting.get(publication.sp_item, [])]
        found.append(entry)
    return found


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


def _log_entry(
    record: LogRecord,
    snapshots: list[SnapshotRecord],
    probe: bool,
    subscribers: list[SubscriptionRecord],
    settings: Settings,
) -> dict[str, Any]:
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
        "guard_notes": guard_notes(record),
    }
    holder = purge_holder(record.snl_source, snapshots, subscribers)
    entry.update(purge_held_by=holder, purge_waits_for=describe_holder(holder))
    if probe:
        entry["backlog"] = _log_backlog(record)
        entry["watermarks"] = log_watermarks(record, settings)
    entry.update(bounds(entry.get("backlog")))
    return entry


def _counts(snapshot: SnapshotRecord) -> dict[str, int | None]:
    """The last refresh's row counts: a succeeded run's own; none for a run that failed, died or runs
    (a catalog written before runs cleared them may still hold an earlier run's counts then)."""
    done = snapshot.sn_last_status == "succeeded"
    return {
        "rows_copied": snapshot.sn_last_rows_copied if done else None,
        "rows_upserted": snapshot.sn_last_rows_upserted if done else None,
        "rows_deleted": snapshot.sn_last_rows_deleted if done else None,
    }


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
        "spark_conn": snapshot.sn_spark_conn,
        "dag_id": snapshot_dag_id(snapshot.sn_name),
        "last_ts": _iso(snapshot.sn_last_ts),
        "needs_complete_refresh": snapshot.sn_needs_complete,
        "column_changes": snapshot.column_changes,
        "last_refresh": {
            "at": _iso(snapshot.sn_last_refresh_at),
            "kind": snapshot.sn_last_refresh_kind,
            "status": "died" if died and snapshot.sn_last_status == "running" else snapshot.sn_last_status,
            "error": snapshot.sn_last_error,
            **_counts(snapshot),
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
    report = {
        "catalog": catalog.describe(),
        "settings": {
            "snp_repl_tolerance_offset": settings.snp_repl_tolerance_offset,
            "snp_repl_purge_offset": settings.snp_repl_purge_offset,
        },
        "snapshot_logs": [
            _log_entry(record, snapshots, probe, catalog.subscriptions(record.snl_source), settings)
            for record in log_records.values()
        ],
        "snapshots": [_snapshot_entry(snapshot, locks, log_records, probe) for snapshot in snapshots],
        "servers": [{"server": s.server, "conn_id": s.db_address} for s in catalog.servers()],
        "publications": _publications(catalog, locks, probe, settings),
        "conflicts": [
            {**c, "last_at": _iso(c["last_at"]), "decision": DECISIONS.get(c["decision"], c["decision"])}
            for c in catalog.conflict_summary()
        ],
    }
    add_last_runs(report, catalog)
    for entry, snapshot in zip(report["snapshots"], snapshots, strict=True):
        entry["stale"] = snapshot.incremental and snapshot_is_stale(catalog, snapshot, settings, utcnow())
    report["settings"].update(
        stale_after_hours=settings.stale_after_hours,
        detach_stale=settings.detach_stale,
        reinit_detached=settings.reinit_detached,
    )
    report["groups"] = group_entries(catalog)
    grouped = catalog.grouped_snapshots()  # a member is refreshed by its group's DAG
    for entry in report["snapshots"]:
        if entry["name"] in grouped:
            entry.update(group=grouped[entry["name"]], dag_id=group_dag_id(grouped[entry["name"]]))
    return report


__all__ = ["collect_status", "render_json", "render_text"]

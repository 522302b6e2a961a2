"""The snapshot statements that run no refresh: ``DROP SNAPSHOT``, ``ALTER SNAPSHOT ... SCHEDULE`` and
``REPL_PURGE_RPLOGS()`` (docs/semantics.md section 4)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from snaprepl.catalog.lookup import executable_database, find_snapshot
from snaprepl.catalog.store import Catalog
from snaprepl.common.schedules import validate_schedule
from snaprepl.common.table_names import ResolvedTable, TableRef
from snaprepl.ops.destinations import drop_table
from snaprepl.ops.snapshot_guards import check_drop_with_delete, holding_run_lease
from snaprepl.refresh.stale import drop_stale_staging
from snaprepl.settings import Settings


@dataclass(frozen=True)
class DroppedSnapshot:
    name: str
    dropped_table: bool

    def __str__(self) -> str:
        return f"snapshot {self.name} dropped" + (" with its table" if self.dropped_table else "")


@dataclass(frozen=True)
class ScheduledSnapshot:
    name: str
    schedule: str | None

    def __str__(self) -> str:
        return f"snapshot {self.name}: schedule {self.schedule or 'none (manual refreshes only)'}"


@dataclass(frozen=True)
class PurgedReplayLogs:
    deleted: dict[str, int]

    def __str__(self) -> str:
        total = sum(self.deleted.values())
        return f"replay logs purged: {total} entries of {len(self.deleted)} snapshots"


def drop_snapshot(name: TableRef, *, with_delete: bool = False, catalog: Catalog) -> DroppedSnapshot:
    """``DROP SNAPSHOT name [WITH DELETE]``: unregister; WITH DELETE also drops the destination table."""
    record = find_snapshot(catalog, name)
    if with_delete:
        check_drop_with_delete(catalog, record)
    with holding_run_lease(catalog, record):  # "busy" while a live run refreshes it
        catalog.delete_snapshot(record.sn_name)
        if with_delete:
            table = ResolvedTable(record.sn_dest_conn, record.sn_dest_schema, record.sn_dest_table)
            drop_table(executable_database(record.sn_dest_conn), table)
    return DroppedSnapshot(record.sn_name, with_delete)


def set_schedule(name: TableRef, schedule: str | None, *, catalog: Catalog) -> ScheduledSnapshot:
    """``ALTER SNAPSHOT name SCHEDULE 'cron' | NONE``: the schedule of the snapshot's refresh DAG."""
    record = find_snapshot(catalog, name)
    value = validate_schedule(schedule)
    catalog.update_snapshot(record.sn_name, sn_schedule=value)
    return ScheduledSnapshot(record.sn_name, value)


def purge_replay_logs(*, catalog: Catalog, settings: Settings) -> PurgedReplayLogs:
    """``REPL_PURGE_RPLOGS()``: drop replay-log entries older than each snapshot's SN_LAST_TS minus
    ``snp_repl_purge_offset`` (they are outside every future tolerance window)."""
    offset = timedelta(minutes=settings.snp_repl_purge_offset)
    deleted = {}
    for record in catalog.snapshots():
        if record.incremental and record.sn_last_ts is not None:
            deleted[record.sn_name] = catalog.purge_replay_log(record.sn_name, record.sn_last_ts - offset)
    drop_stale_staging(catalog)  # staging tables runs that died left behind
    return PurgedReplayLogs(deleted)

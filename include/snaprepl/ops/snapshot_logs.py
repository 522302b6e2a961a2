"""Snapshot logs: ``CREATE``, ``DROP`` and ``PURGE SNAPSHOT LOG`` (docs/semantics.md sections 3 and 5)."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from snaprepl.catalog.lookup import executable_database, find_log
from snaprepl.catalog.records import LogRecord, SnapshotRecord, utcnow
from snaprepl.catalog.store import Catalog
from snaprepl.common.table_names import ResolvedTable, TableRef
from snaprepl.database.sessions import Database
from snaprepl.dialects import DdlStep, Dialect, LogObjects, TableInfo
from snaprepl.dialects.cascades import CascadePlan
from snaprepl.errors import (
    DdlFailed,
    NoPrimaryKey,
    SnapreplError,
    SnapshotLogExists,
    SnapshotLogInUse,
)
from snaprepl.ops.log_cascades import drop_cascades, plan_cascades
from snaprepl.ops.log_guard_ddl import guard_record, with_guards
from snaprepl.ops.purge import publisher_log_cutoff
from snaprepl.ops.readonly import first_line
from snaprepl.ops.snapshot_guards import refuse_snaprepl_table
from snaprepl.ops.staleness import detach_stale_snapshots
from snaprepl.settings import Settings

log = logging.getLogger(__name__)

REPLAY_LOG_TABLE = "SYS_RPLOG"


@dataclass(frozen=True)
class CreatedLog:
    record: LogRecord
    #: What the guards of its triggers cannot catch (no superuser, no PROCESS privilege).
    notes: tuple[str, ...] = ()

    def __str__(self) -> str:
        objects = self.record.objects
        cascades = CascadePlan.from_json(self.record.snl_cascades).triggers
        also = f"; for foreign-key cascades {', '.join(f'{t.name} on {t.table}' for t in cascades)}" if cascades else ""
        return (
            f"snapshot log created for {self.record.snl_source}: table {objects.rlog}, "
            f"triggers {', '.join(objects.triggers)}{also}"
        ) + "".join(f"\nnote: {note}" for note in self.notes)


@dataclass(frozen=True)
class DroppedLog:
    source: str
    source_existed: bool

    def __str__(self) -> str:
        note = "" if self.source_existed else " (the source table was already gone)"
        return f"snapshot log dropped for {self.source}{note}"


@dataclass(frozen=True)
class PurgeResult:
    """What a purge did.

    :param deleted: log rows deleted.
    :param cutoff: rows with SNAPTIME earlier than this were deleted (source clock).
    :param blocked_by: the snapshot that kept the purge from deleting anything, if one did.
    :param stale: snapshots a forced purge marked as needing a complete refresh.
    """

    source: str
    deleted: int = 0
    cutoff: datetime | None = None
    blocked_by: str | None = None
    note: str | None = None
    stale: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        if self.note:
            return f"snapshot log of {self.source}: {self.note}"
        text = f"snapshot log of {self.source}: purged {self.deleted} rows older than {self.cutoff}"
        if self.stale:
            text += f"; marked as needing a complete refresh: {', '.join(self.stale)}"
        return text


BIDIR_KIND = "bidir"


def _purge_bidir_log(record: LogRecord, *, catalog: Catalog, settings: Settings) -> PurgeResult:
    if catalog.publication(record.snl_source) is None:
        return PurgeResult(record.snl_source, note="a subscriber's log: pulls consume it, nothing to purge")
    tolerance = timedelta(minutes=settings.snp_repl_tolerance_offset)
    cutoff, note = publisher_log_cutoff(catalog, record, tolerance, settings)
    if cutoff is None:
        return PurgeResult(record.snl_source, note=note)
    database = executable_database(record.snl_conn)
    dialect = database.dialect
    catalog.record_log_purge(record.snl_source, cutoff)
    q = dialect.quote
    with database.session() as session:
        deleted = session.execute(
            f"DELETE FROM {dialect.qualified(record.snl_schema, record.snl_rlog)} "
            f"WHERE {q(dialect.log_columns.snaptime)} < :cutoff AND {q('SYNC_ID')} = ''",
            {"cutoff": dialect.snaptime_param(cutoff)},
        )
    return PurgeResult(record.snl_source, deleted=max(deleted, 0), cutoff=cutoff)


def run_ddl(database: Database, steps: Sequence[DdlStep], what: str) -> None:
    """Run DDL steps; if one fails, leave nothing of them behind.

    Dialects with transactional DDL roll back; the others run each step's undo in reverse order.

    :raises DdlFailed: naming the step that failed and the database's message.
    """
    done: list[DdlStep] = []
    current: DdlStep | None = None
    try:
        if database.dialect.transactional_ddl:
            with database.session() as session:
                for current in steps:
                    session.execute(current.sql)
        else:
            for current in steps:
                with database.session() as session:
                    session.execute(current.sql)
                done.append(current)
    except SnapreplError:
        raise
    except Exception as err:
        for step in reversed(done):
            if step.undo:
                try:
                    with database.session() as session:
                        session.execute(step.undo)
                except Exception:  # keep undoing the rest; report the original failure
                    log.exception("could not undo %s", step.undo.splitlines()[0])
        statement = current.sql.splitlines()[0][:120] if current else "?"
        raise DdlFailed(
            f"creating {what} on {database.describe_target()} failed at `{statement}`: {first_line(err)}",
            "nothing of it was left behind; fix the cause and run the statement again",
        ) from None


def create_snapshot_log(source: TableRef, *, catalog: Catalog) -> CreatedLog:
    """``CREATE SNAPSHOT LOG FOR source``: the RLOG table, its triggers, and the catalog entry.

    :raises TableNotFound: the source does not exist.
    :raises NoPrimaryKey: the source has no primary key.
    :raises SnapshotLogExists: a log is registered, or an RLOG table of that name exists.
    :raises DdlFailed: creating the objects failed; nothing was left behind.
    """
    catalog.ensure_ready()
    database = executable_database(source.conn_id)
    dialect = database.dialect
    with database.session() as session:
        info = database.describe(session, source)
        refuse_snaprepl_table(info.table, "logged", catalog)
        if not info.primary_key:
            raise NoPrimaryKey(
                f"table {info.table} has no primary key, so its changes cannot be logged by key",
                f"add one (ALTER TABLE {dialect.qualified(info.table.schema, info.table.table)} "
                "ADD PRIMARY KEY (...)) and create the log again",
            )
        if catalog.log(info.table.key) is not None:
            raise SnapshotLogExists(f"a snapshot log for {info.table} already exists", "use it, or drop it first")
        objects = dialect.log_objects(info.table, [c.name for c in info.primary_key])
        if dialect.table_exists(session, info.table.schema, objects.rlog):
            raise SnapshotLogExists(
                f"table {info.table.schema}.{objects.rlog} already exists on connection '{source.conn_id}' "
                "but is not a registered snapshot log",
                "drop or rename that table, then create the log",
            )
        # Triggers on the tables whose foreign-key cascades fire none on this one (InnoDB's).
        cascades = plan_cascades(dialect, session, info, objects)
    steps, ddl_guard = with_guards(database, info, objects, [*dialect.create_log_ddl(info, objects), *cascades.steps])
    run_ddl(database, steps, f"the snapshot log of {info.table}")
    try:
        guard, notes = guard_record(database, info, objects, ddl_guard)
    except BaseException:
        _drop_objects(database, info.table.schema, info.table.table, objects, info)
        drop_cascades(database, cascades.to_json())
        raise
    record = replace(
        _log_record(info, objects, dialect, kind="snapshot"), snl_cascades=cascades.to_json(), snl_guard=guard
    )
    try:
        catalog.add_log(record, SnapshotLogExists(f"a snapshot log for {info.table} was created concurrently"))
    except BaseException:
        _drop_objects(database, info.table.schema, info.table.table, objects, info)
        drop_cascades(database, record.snl_cascades)
        raise
    return CreatedLog(record, tuple(notes))


def _log_record(info: TableInfo, objects: LogObjects, dialect: Dialect, kind: str) -> LogRecord:
    return LogRecord(
        snl_source=info.table.key,
        snl_rlog=objects.rlog,
        snl_rplog=REPLAY_LOG_TABLE,
        snl_conn=info.table.conn_id,
        snl_schema=info.table.schema,
        snl_table=info.table.table,
        snl_dialect=dialect.name,
        snl_key_columns=json.dumps([c.name for c in info.primary_key]),
        snl_objects=objects.to_json(),
        snl_kind=kind,
        snl_created_at=utcnow(),
    )


def _drop_objects(
    database: Database, schema: str, table: str, objects: LogObjects, info: TableInfo | None = None
) -> bool:
    dialect = database.dialect
    resolved = info.table if info else ResolvedTable(database.conn.conn_id, schema, table)
    with database.session() as session:
        source_exists = dialect.table_exists(session, schema, table)
        statements = [
            *dialect.drop_log_ddl(resolved, objects, source_exists=source_exists),
            *dialect.guard_drop_sql(resolved, objects, source_exists=source_exists),
        ]
        if dialect.transactional_ddl:
            for statement in statements:
                session.execute(statement)
    if not dialect.transactional_ddl:
        for statement in statements:
            with database.session() as session:
                session.execute(statement)
    return source_exists


def drop_snapshot_log(source: TableRef, *, catalog: Catalog) -> DroppedLog:
    """``DROP SNAPSHOT LOG FOR source``: drop the three triggers, RLOG and the log's cascade triggers
    on other tables, and unregister.

    Works when the source table is already gone (its triggers went with it).

    :raises SnapshotLogNotFound: no log is registered for the table.
    :raises SnapshotLogInUse: snapshots are refreshed from it.
    """
    record = find_log(catalog, source)
    if record.snl_kind == BIDIR_KIND:
        raise SnapshotLogInUse(
            f"the log of {record.snl_source} belongs to bi-directional replication",
            "drop the publication (REPL_DROP_SNAPSHOT_PUB) or subscription (REPL_DROP_SNAPSHOT_SUB) instead",
        )
    dependents = [s.sn_name for s in catalog.snapshots_of_log(record.snl_source)]
    if dependents:
        raise SnapshotLogInUse(
            f"the snapshot log of {record.snl_source} feeds snapshots {', '.join(dependents)}",
            "drop those snapshots first (DROP SNAPSHOT name)",
        )
    database = executable_database(record.snl_conn)
    existed = _drop_objects(database, record.snl_schema, record.snl_table, record.objects)
    drop_cascades(database, record.snl_cascades)
    catalog.delete_log(record.snl_source)
    return DroppedLog(record.snl_source, existed)


def _tolerance(snapshot: SnapshotRecord, settings: Settings) -> timedelta:
    minutes = snapshot.sn_tolerance_min
    return timedelta(minutes=settings.snp_repl_tolerance_offset if minutes is None else minutes)


def purge_snapshot_log(source: TableRef, *, catalog: Catalog, settings: Settings, force: bool = False) -> PurgeResult:
    """``PURGE SNAPSHOT LOG FOR source [FORCE]`` (docs/semantics.md section 5).

    Without FORCE: delete the entries every incremental snapshot of the log has applied, i.e. those
    older than min(SN_LAST_TS - tolerance); if no snapshot uses the log it serves pull replication
    and nothing is deleted; a snapshot that never completed a refresh blocks the purge and is named.

    With FORCE: delete everything older than the source's clock minus ``snp_repl_purge_offset``, and
    mark the snapshots that still needed some of it as needing a complete refresh (Oracle's
    DBMS_SNAPSHOT.PURGE_LOG for a lost snapshot).
    """
    return purge_log(find_log(catalog, source), catalog=catalog, settings=settings, force=force)


def purge_log(record: LogRecord, *, catalog: Catalog, settings: Settings, force: bool = False) -> PurgeResult:
    """Purge the snapshot log ``record`` (see :func:`purge_snapshot_log`)."""
    if record.snl_kind == BIDIR_KIND:
        return _purge_bidir_log(record, catalog=catalog, settings=settings)
    detach_stale_snapshots(catalog, record.snl_source, settings)  # with detach_stale: they need a complete refresh
    snapshots = [s for s in catalog.snapshots_of_log(record.snl_source) if s.incremental]
    if not snapshots and not force:
        return PurgeResult(record.snl_source, note="no snapshot refreshes from it (pull replication): nothing purged")
    database = executable_database(record.snl_conn)
    dialect = database.dialect
    stale: list[SnapshotRecord] = []
    if force:
        with database.session() as session:
            cutoff = dialect.now_utc(session) - timedelta(minutes=settings.snp_repl_purge_offset)
        stale = [
            s
            for s in snapshots
            if s.sn_needs_complete is None and (s.sn_last_ts is None or s.sn_last_ts - _tolerance(s, settings) < cutoff)
        ]
    else:
        never = [s for s in snapshots if s.sn_last_ts is None and s.sn_needs_complete is None]
        if never:
            return PurgeResult(
                record.snl_source,
                blocked_by=never[0].sn_name,
                note=(
                    f"purge blocked by snapshot {never[0].sn_name}, which has not completed a refresh; "
                    "refresh or drop it, or purge with FORCE"
                ),
            )
        healthy = [s for s in snapshots if s.sn_needs_complete is None and s.sn_last_ts is not None]
        if not healthy:
            return PurgeResult(record.snl_source, note="every snapshot of it needs a complete refresh: nothing purged")
        cutoff = min(last - _tolerance(s, settings) for s in healthy if (last := s.sn_last_ts) is not None)
    # The watermark goes first: a refresh that reads it before the rows are gone refuses to run on a
    # log that may be missing its entries, never the other way round.
    catalog.record_log_purge(record.snl_source, cutoff)
    for snapshot in stale:
        catalog.update_snapshot(
            snapshot.sn_name,
            sn_needs_complete=f"forced purge of {record.snl_source} at {utcnow():%Y-%m-%d %H:%M:%S} UTC "
            f"deleted log entries it had not applied",
        )
    rlog = dialect.qualified(record.snl_schema, record.snl_rlog)
    snaptime = dialect.quote(dialect.log_columns.snaptime)
    with database.session() as session:
        deleted = session.execute(
            f"DELETE FROM {rlog} WHERE {snaptime} < :cutoff",
            {"cutoff": dialect.snaptime_param(cutoff)},
        )
    return PurgeResult(record.snl_source, deleted=max(deleted, 0), cutoff=cutoff, stale=[s.sn_name for s in stale])

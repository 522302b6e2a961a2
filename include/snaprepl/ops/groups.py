"""Snapshot groups (issue 25): ``CREATE SNAPSHOT GROUP``, ``ALTER SNAPSHOT GROUP ... ADD | REMOVE`` and
``DROP SNAPSHOT GROUP`` (the group refresh, ``UPDATE SNAPSHOT GROUP``, is in
:mod:`snaprepl.ops.group_refresh`).

A group replicates the tables of one source schema into one destination schema: one snapshot log and
one incremental snapshot per table with a primary key; a table without one is reported and skipped,
never failing the group. Its members are refreshed by the group's DAG only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from snaprepl.catalog.lookup import executable_database, find_snapshot
from snaprepl.catalog.records import GroupRecord, utcnow
from snaprepl.catalog.run_history import clean_error
from snaprepl.catalog.store import Catalog
from snaprepl.common.schedules import validate_schedule
from snaprepl.common.table_names import Ident, TableRef
from snaprepl.errors import InvalidArgument, SnapshotGroupExists, SnapshotGroupNotFound
from snaprepl.ops.group_members import (
    EXCLUDED,
    add_member,
    dependency_order,
    excluded,
    parse_patterns,
    source_layout,
)
from snaprepl.ops.snapshots import Refresher
from snaprepl.refresh.group import refresh_group
from snaprepl.refresh.model import RefreshRequest
from snaprepl.settings import Settings
from snaprepl.submit.refresh import submit_refresh


@dataclass(frozen=True)
class CreatedGroup:
    record: GroupRecord
    members: list[str]
    skipped: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        lines = [f"snapshot group {self.record.sg_name} created: {len(self.members)} members"]
        lines += [f"  {table}: {why}" for table, why in sorted(self.skipped.items()) if why != EXCLUDED]
        return "\n".join(lines)


@dataclass(frozen=True)
class ChangedGroup:
    group: str
    text: str

    def __str__(self) -> str:
        return self.text


def group_key(ref: TableRef) -> str:
    """``name@conn``: a group is named by one identifier and its destination connection."""
    if ref.schema is not None:
        raise InvalidArgument(f"{ref} is not a group name", "name a group with one name: g@dest_conn")
    return f"{ref.table.text}@{ref.conn_id}"


def find_group(catalog: Catalog, ref: TableRef) -> GroupRecord:
    key = group_key(ref)
    record = catalog.group(key)
    if record is None:
        raise SnapshotGroupNotFound(f"there is no snapshot group {key}", "`snaprepl status` lists the groups")
    return record


def create_group(
    name: TableRef,
    source: TableRef,
    into: Ident | None = None,
    exclude: str | None = None,
    include_new: bool = False,
    schedule: str | None = None,
    *,
    catalog: Catalog,
    settings: Settings,
    refresher: Refresher = submit_refresh,
) -> CreatedGroup:
    """``CREATE SNAPSHOT GROUP g@dst FROM SCHEMA s@src [INTO SCHEMA t] [EXCLUDE 'p, ...'] [INCLUDE NEW
    TABLES] [SCHEDULE 'cron']``: the group and one member per table of ``s`` with a primary key, parents
    first; the others are listed in the result, one line each."""
    catalog.ensure_ready()
    record = _new_record(name, source, into, exclude, include_new, validate_schedule(schedule))
    if catalog.group(record.sg_name) is not None:
        raise SnapshotGroupExists(f"snapshot group {record.sg_name} already exists", "drop it first or pick a name")
    catalog.add_group(record, SnapshotGroupExists(f"snapshot group {record.sg_name} already exists"))
    try:
        tables, edges = source_layout(record, catalog)
    except BaseException:
        catalog.delete_group(record.sg_name)  # nothing was made yet: the statement can simply be run again
        raise
    skipped: dict[str, str] = {}
    for table in dependency_order(tables, edges):
        why = EXCLUDED if excluded(table, record.exclude) else None
        why = why or add_member(record, table, catalog=catalog, settings=settings, refresher=refresher)
        if why is not None:
            skipped[table] = why
    catalog.update_group(record.sg_name, sg_skipped=json.dumps(skipped, sort_keys=True) if skipped else None)
    members = [f"{record.sg_dest_schema}.{t}@{record.sg_dest_conn}" for t in dependency_order(tables, edges)]
    members = [m for m in members if m in set(catalog.group_members(record.sg_name))]
    _first_point(record, members, catalog, settings)
    return CreatedGroup(catalog.group(record.sg_name) or record, members, skipped)


def _first_point(record: GroupRecord, members: list[str], catalog: Catalog, settings: Settings) -> None:
    """Each member was filled at its own moment: one incremental pass brings all to one point. Its end
    (or failure) ends the group's ``creating`` state: its DAG appears (:attr:`GroupRecord.CREATING`)."""
    if not members:
        catalog.update_group(record.sg_name, sg_last_status=None)
        return
    request = RefreshRequest.configured(record.sg_name, settings)
    try:
        catalog.record_group_point(record.sg_name, refresh_group(catalog, members, request).points)
    except BaseException as err:
        why = clean_error(err) if isinstance(err, Exception) else type(err).__name__
        catalog.update_group(record.sg_name, sg_last_status="failed", sg_last_error=why)
        raise


def _new_record(
    name: TableRef, source: TableRef, into: Ident | None, exclude: str | None, include_new: bool, schedule: str | None
) -> GroupRecord:
    if source.schema is not None:
        raise InvalidArgument(f"{source} is not a schema", "write FROM SCHEMA schema@conn")
    key = group_key(name)
    src_db, dst_db = executable_database(source.conn_id), executable_database(name.conn_id)
    with src_db.session() as session:
        src_schema = src_db.dialect.fold(source.table)
        if not src_db.dialect.schema_exists(session, src_schema):
            raise InvalidArgument(f"schema {src_schema} does not exist on '{source.conn_id}'", "check the name")
    with dst_db.session() as session:
        dst_schema = dst_db.dialect.fold(into) if into else dst_db.dialect.default_schema(session)
        if not dst_db.dialect.schema_exists(session, dst_schema):
            raise InvalidArgument(f"schema {dst_schema} does not exist on '{name.conn_id}'", "create it first")
    return GroupRecord(
        sg_name=key,
        sg_dest_conn=name.conn_id,
        sg_dest_schema=dst_schema,
        sg_source_conn=source.conn_id,
        sg_source_schema=src_schema,
        sg_created_at=utcnow(),
        sg_include_new=int(include_new),
        sg_exclude=json.dumps(parse_patterns(exclude)) if exclude else None,
        sg_schedule=schedule,
        sg_last_status=GroupRecord.CREATING,  # no DAG until its members are made
    )


def alter_group(
    name: TableRef,
    member: TableRef,
    *,
    add: bool,
    catalog: Catalog,
) -> ChangedGroup:
    """``ALTER SNAPSHOT GROUP g@dst ADD | REMOVE d@dst``: an existing incremental snapshot joins the
    group (refreshed by the group's DAG from then on), or leaves it (refreshed on its own again)."""
    group = find_group(catalog, name)
    snapshot = find_snapshot(catalog, member)
    if add:
        if not snapshot.incremental:
            raise InvalidArgument(f"snapshot {snapshot.sn_name} is nonincremental", "only incremental snapshots join")
        if snapshot.sn_dest_conn != group.sg_dest_conn:  # one destination: one transaction applies the group
            raise InvalidArgument(
                f"snapshot {snapshot.sn_name} is not on the group's destination '{group.sg_dest_conn}'",
                "a group's members share one destination connection",
            )
        other = catalog.group_of(snapshot.sn_name)
        if other is not None:
            raise SnapshotGroupExists(f"snapshot {snapshot.sn_name} is already in group {other}", "remove it first")
        catalog.add_member(group.sg_name, snapshot.sn_name, SnapshotGroupExists(f"{snapshot.sn_name} joined already"))
        return ChangedGroup(group.sg_name, f"snapshot {snapshot.sn_name} joined group {group.sg_name}")
    if not catalog.remove_member(group.sg_name, snapshot.sn_name):
        raise InvalidArgument(f"snapshot {snapshot.sn_name} is not in group {group.sg_name}", "see `snaprepl status`")
    return ChangedGroup(group.sg_name, f"snapshot {snapshot.sn_name} left group {group.sg_name}")


def set_group_schedule(name: TableRef, schedule: str | None, *, catalog: Catalog) -> ChangedGroup:
    """``ALTER SNAPSHOT GROUP g@dst SCHEDULE 'cron' | NONE``: the schedule of the group's DAG."""
    group = find_group(catalog, name)
    value = validate_schedule(schedule)
    catalog.update_group(group.sg_name, sg_schedule=value)
    return ChangedGroup(group.sg_name, f"snapshot group {group.sg_name}: schedule {value or 'none (manual only)'}")


def drop_group(name: TableRef, *, catalog: Catalog) -> ChangedGroup:
    """``DROP SNAPSHOT GROUP g@dst``: forget the group; its snapshots stay, each on its own schedule again."""
    group = find_group(catalog, name)
    members = catalog.group_members(group.sg_name)
    catalog.delete_group(group.sg_name)
    return ChangedGroup(group.sg_name, f"snapshot group {group.sg_name} dropped; its {len(members)} snapshots are kept")

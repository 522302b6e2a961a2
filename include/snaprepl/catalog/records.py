"""The catalog's rows as frozen dataclasses, one class per SYS_* table, and the time they are stamped with."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any, ClassVar, TypeVar

import sqlalchemy as sa

from snaprepl.catalog import models as m
from snaprepl.dialects import LogObjects


def utcnow() -> datetime:
    """Now, as the naive UTC time the catalog stores."""
    return datetime.now(UTC).replace(tzinfo=None)


R = TypeVar("R", bound="Record")


@dataclass(frozen=True)
class Record:
    """A catalog row as a dataclass; fields are named like the table's columns, in lower case."""

    table: ClassVar[sa.Table]

    @classmethod
    def from_row(cls: type[R], row: sa.Row[Any]) -> R:
        mapping = row._mapping
        return cls(**{f.name: mapping[f.name.upper()] for f in fields(cls)})

    def to_values(self) -> dict[str, Any]:
        return {f.name.upper(): getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class LogRecord(Record):
    """A SYS_SNAPSHOT_LOG row: one snapshot log."""

    table: ClassVar[sa.Table] = m.SYS_SNAPSHOT_LOG

    snl_source: str
    snl_rlog: str
    snl_rplog: str
    snl_conn: str
    snl_schema: str
    snl_table: str
    snl_dialect: str
    snl_key_columns: str
    snl_objects: str
    snl_kind: str
    snl_created_at: datetime
    snl_purged_before: datetime | None = None
    snl_last_purge_at: datetime | None = None
    #: JSON of :class:`snaprepl.dialects.cascades.CascadePlan` (where cascades fire no trigger).
    snl_cascades: str | None = None
    snl_guard: str | None = None

    @property
    def key_columns(self) -> list[str]:
        columns: list[str] = json.loads(self.snl_key_columns)
        return columns

    @property
    def objects(self) -> LogObjects:
        return LogObjects.from_json(self.snl_objects)


@dataclass(frozen=True)
class SnapshotRecord(Record):
    """A SYS_SNAPSHOT row: one snapshot."""

    table: ClassVar[sa.Table] = m.SYS_SNAPSHOT

    sn_name: str
    sn_query: str
    sn_source_conn: str
    sn_dest_conn: str
    sn_dest_schema: str
    sn_dest_table: str
    sn_created_at: datetime
    sn_last_ts: datetime | None = None
    sn_is_incremental: int | None = None
    sn_source_table: str | None = None
    sn_last_upd_bm: str | None = None
    sn_columns: str | None = None
    sn_condition: str | None = None
    sn_key_columns: str | None = None
    sn_schedule: str | None = None
    sn_spark_conn: str | None = None
    sn_verify_schedule: str | None = None
    sn_tolerance_min: int | None = None
    sn_needs_complete: str | None = None
    sn_complete_ts: datetime | None = None
    sn_xid_snapshot: str | None = None
    sn_column_changes: str | None = None
    sn_last_refresh_at: datetime | None = None
    sn_last_refresh_kind: str | None = None
    sn_last_status: str | None = None
    sn_last_error: str | None = None
    sn_last_rows_upserted: int | None = None
    sn_last_rows_deleted: int | None = None
    sn_last_rows_copied: int | None = None
    sn_last_duration_s: float | None = None

    @property
    def incremental(self) -> bool:
        return self.sn_is_incremental is not None

    @property
    def key_columns(self) -> list[str]:
        return json.loads(self.sn_key_columns) if self.sn_key_columns else []

    @property
    def columns(self) -> list[str] | None:
        return json.loads(self.sn_columns) if self.sn_columns else None

    @property
    def column_changes(self) -> dict[str, list[str]]:
        """Schema changes seen at the source: ``added``, ``kept`` (dropped there, kept here), ``widened``."""
        return json.loads(self.sn_column_changes) if self.sn_column_changes else {}


@dataclass(frozen=True)
class ServerRecord(Record):
    """A SYS_SERVERS row: a replication server (its unique name and its connection)."""

    table: ClassVar[sa.Table] = m.SYS_SERVERS

    server: str
    db_address: str
    created_at: datetime


#: SP_TYPE / SS_TYPE of a publication of a collection of files (WebDAV or a folder); tables are 2.
COLLECTION_TYPE = 1


@dataclass(frozen=True)
class PublicationRecord(Record):
    """A SYS_SNAPSHOT_PUB row: a published table."""

    table: ClassVar[sa.Table] = m.SYS_SNAPSHOT_PUB

    sp_item: str
    sp_type: int
    sp_server: str
    sp_created_at: datetime
    sp_last_ts: datetime | None = None
    sp_schedule: str | None = None
    sp_spark_conn: str | None = None
    sp_last_sync_at: datetime | None = None
    sp_rows_per_commit: int | None = None
    sp_last_status: str | None = None
    sp_last_error: str | None = None
    sp_stale_after_hours: int | None = None
    sp_detach_stale: int | None = None
    sp_reinit_detached: int | None = None
    sp_verify_schedule: str | None = None


@dataclass(frozen=True)
class SubscriptionRecord(Record):
    """A SYS_SNAPSHOT_SUB row: one subscriber's replica of a publication."""

    table: ClassVar[sa.Table] = m.SYS_SNAPSHOT_SUB

    ss_server: str
    ss_item: str
    ss_type: int
    ss_created_at: datetime
    ss_schema: str | None = None
    ss_table: str | None = None
    ss_last_pull_ts: datetime | None = None
    ss_last_push_ts: datetime | None = None
    ss_init_state: str | None = None
    ss_init_bm: str | None = None
    ss_last_pull_at: datetime | None = None
    ss_last_push_at: datetime | None = None
    ss_last_status: str | None = None
    ss_last_error: str | None = None
    ss_detached_at: datetime | None = None
    ss_needs_init: str | None = None


@dataclass(frozen=True)
class ResolverRecord(Record):
    """A SYS_SNAPSHOT_CR row: one conflict resolver of a published table."""

    table: ClassVar[sa.Table] = m.SYS_SNAPSHOT_CR

    cr_id: int | None
    cr_table_name: str
    cr_type: str
    cr_proc: str
    cr_order: int
    cr_class: str | None = None
    cr_column: str | None = None
    cr_suffix: str | None = None


@dataclass(frozen=True)
class HistoryRecord(Record):
    """A SYS_REPL_HISTORY row: one refresh, pull, push or initial load, however it ended.

    ``rh_lag_seconds`` is the source database's clock at the end of the run minus the newest
    SNAPTIME applied (0 when the log had nothing pending); ``rh_backlog`` the log rows still pending.
    """

    table: ClassVar[sa.Table] = m.SYS_REPL_HISTORY

    rh_copy: str
    rh_kind: str
    rh_started: datetime
    rh_ended: datetime
    rh_outcome: str
    rh_server: str | None = None
    rh_rows_in: int | None = None
    rh_rows_out: int | None = None
    rh_rows_deleted: int | None = None
    rh_conflicts: int | None = None
    rh_error: str | None = None
    rh_dag_run_id: str | None = None
    rh_lag_seconds: float | None = None
    rh_backlog: int | None = None
    rh_id: int | None = None

    @property
    def duration_s(self) -> float:
        return (self.rh_ended - self.rh_started).total_seconds()

    def to_json(self) -> dict[str, Any]:
        """The row with plain JSON values (times as ISO 8601 UTC)."""
        return {
            f.name[3:]: (v.isoformat() + "Z" if isinstance(v, datetime) else v)
            for f in fields(self)
            for v in [getattr(self, f.name)]
        }


@dataclass(frozen=True)
class GroupRecord(Record):
    """A SYS_SNAPSHOT_GROUP row: a snapshot group over one source schema (issue 25)."""

    table: ClassVar[sa.Table] = m.SYS_SNAPSHOT_GROUP

    sg_name: str
    sg_dest_conn: str
    sg_dest_schema: str
    sg_source_conn: str
    sg_source_schema: str
    sg_created_at: datetime
    sg_include_new: int = 0
    sg_exclude: str | None = None
    sg_schedule: str | None = None
    sg_points: str | None = None
    sg_last_refresh_at: datetime | None = None
    sg_last_status: str | None = None
    sg_last_error: str | None = None
    sg_skipped: str | None = None

    #: SG_LAST_STATUS while ``CREATE SNAPSHOT GROUP`` makes the members: the group gets no DAG yet, so
    #: no run refreshes a half-made group (nor takes a member's lease from the statement's own first
    #: pass). A statement that was interrupted leaves it; ``UPDATE SNAPSHOT GROUP`` ends it.
    CREATING: ClassVar[str] = "creating"

    @property
    def creating(self) -> bool:
        return self.sg_last_status == self.CREATING

    @property
    def exclude(self) -> list[str]:
        return json.loads(self.sg_exclude) if self.sg_exclude else []

    @property
    def points(self) -> dict[str, datetime]:
        """The consistent point of the last group refresh, per source connection."""
        raw: dict[str, str] = json.loads(self.sg_points) if self.sg_points else {}
        return {conn: datetime.fromisoformat(mark) for conn, mark in raw.items()}

    @property
    def skipped(self) -> dict[str, str]:
        return json.loads(self.sg_skipped) if self.sg_skipped else {}


@dataclass(frozen=True)
class GroupMemberRecord(Record):
    """A SYS_SNAPSHOT_GROUP_MEMBER row: snapshot ``sgm_snapshot`` is in group ``sgm_group``."""

    table: ClassVar[sa.Table] = m.SYS_SNAPSHOT_GROUP_MEMBER

    sgm_snapshot: str
    sgm_group: str
    sgm_added_at: datetime

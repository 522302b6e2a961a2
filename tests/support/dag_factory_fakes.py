"""An in-memory catalog and records for the DAG factory's unit tests (no services)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from snaprepl.catalog.records import GroupRecord, LogRecord, PublicationRecord, SnapshotRecord, SubscriptionRecord

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def snapshot(name: str, *, schedule: str | None = None, incremental: bool = True, **extra: Any) -> SnapshotRecord:
    table, _, conn = name.rpartition("@")
    schema, _, table = table.partition(".")
    return SnapshotRecord(
        sn_name=name, sn_query=f"SELECT * FROM {table}", sn_source_conn="src", sn_dest_conn=conn,
        sn_dest_schema=schema, sn_dest_table=table, sn_created_at=NOW, sn_schedule=schedule,
        sn_is_incremental=1 if incremental else None, sn_source_table="public.t@src" if incremental else None,
        **extra,
    )  # fmt: skip


def group(name: str, schedule: str | None = None) -> GroupRecord:
    return GroupRecord(
        sg_name=name, sg_dest_conn=name.rpartition("@")[2], sg_dest_schema="main", sg_source_conn="src",
        sg_source_schema="public", sg_created_at=NOW, sg_schedule=schedule,
    )  # fmt: skip


def log(source: str) -> LogRecord:
    return LogRecord(
        snl_source=source, snl_rlog="rlog", snl_rplog="rplog", snl_conn="src", snl_schema="public",
        snl_table="t", snl_dialect="postgres", snl_key_columns="[]", snl_objects="{}", snl_kind="snapshot",
        snl_created_at=NOW,
    )  # fmt: skip


class FakeCatalog:
    def __init__(self, snapshots=(), logs=(), publications=(), subscriptions=(), groups=None) -> None:
        self._snapshots, self._logs = list(snapshots), list(logs)
        self._publications, self._subscriptions = list(publications), list(subscriptions)
        self._groups: dict[GroupRecord, list[str]] = dict(groups or {})

    def groups(self) -> list[GroupRecord]:
        return sorted(self._groups, key=lambda g: g.sg_name)

    def grouped_snapshots(self) -> dict[str, str]:
        return {m: g.sg_name for g, members in self._groups.items() for m in members}

    def snapshots(self) -> list[SnapshotRecord]:
        return self._snapshots

    def logs(self) -> list[LogRecord]:
        return self._logs

    def publications(self) -> list[PublicationRecord]:
        return self._publications

    def subscriptions(self, item: str | None = None) -> list[SubscriptionRecord]:
        return [s for s in self._subscriptions if item is None or s.ss_item == item]

    def purge_history(self, older_than: datetime) -> int:
        self.history_purged_before = older_than
        return 3


def edges(dag: Any) -> dict[str, list[str]]:
    """``{task id: sorted ids of its downstream tasks}``: the DAG's shape."""
    return {t.task_id: sorted(t.downstream_task_ids) for t in dag.tasks}


PUB = "public.items@pub"


def publication(schedule: str | None = "*/5 * * * *") -> FakeCatalog:
    return FakeCatalog(
        publications=[
            PublicationRecord(sp_item=PUB, sp_type=2, sp_server="p", sp_created_at=NOW, sp_schedule=schedule)
        ],
        subscriptions=[
            SubscriptionRecord(ss_server=s, ss_item=PUB, ss_type=2, ss_created_at=NOW, ss_init_state=state)
            for s, state in (("s_b", "done"), ("s_a", "done"), ("s_c", None))
        ],
    )

"""A snapshot group's DAG (issue 25): one task refreshing every member to one point per source.

Members of a group get no DAG of their own (the DAG factory leaves them out). The run's ``mode`` param
chooses an incremental pass or a complete refresh of every member followed by one; a backfill refreshes
every member completely once per backfill, as a snapshot's DAG does. A run that finds a member busy
with another run is rescheduled, like the snapshot DAGs' tasks.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from airflow.sdk import DAG, Asset, BaseOperator, Context, Param
from airflow.sdk.exceptions import AirflowFailException, AirflowRescheduleException

from snaprepl.airflow.dag_common import TAG, snaprepl_dag, timetable
from snaprepl.airflow.metrics import group_metrics
from snaprepl.airflow.operators import drop_in_background, failing_fast, lease_busy
from snaprepl.airflow.runs import INCREMENTAL, NONINCREMENTAL, backfill_id, is_backfill, resolve_mode
from snaprepl.catalog import backfills
from snaprepl.catalog.records import GroupRecord
from snaprepl.catalog.run_lock import snapshot_lock_name
from snaprepl.catalog.store import Catalog
from snaprepl.common.dag_names import group_dag_id
from snaprepl.common.table_names import Ident, TableRef
from snaprepl.settings import Settings
from snaprepl.submit.refresh import submit_refresh

MODE_LABELS = {
    INCREMENTAL: "incremental: every member to one point per source, in one destination transaction",
    NONINCREMENTAL: "nonincremental: copy every member completely, then bring them to one point",
}


class SnapshotGroupOperator(BaseOperator):
    """Refresh snapshot group ``group`` (its SG_NAME) as ``UPDATE SNAPSHOT GROUP`` does."""

    template_fields = ("group",)
    ui_color = "#cfe2f3"

    def __init__(self, *, group: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.group = group

    @failing_fast
    def execute(self, context: Context) -> dict[str, Any]:
        settings = Settings.load()
        catalog = Catalog.open(settings)
        if catalog.group(self.group) is None:
            raise AirflowFailException(f"there is no snapshot group {self.group}")
        mode, _ = resolve_mode(None, context)
        backfill = backfill_id(context) if is_backfill(context) else None
        if backfill is not None and (done := backfills.done(catalog, backfill, self.group)) is not None:
            self.log.info("%s: nothing to do", done)
            return {"group": self.group, "backfill_id": backfill, "already_done": str(done)}
        for member in catalog.group_members(self.group):
            holder = lease_busy(catalog, snapshot_lock_name(member))
            if holder is not None:
                self.log.info(
                    "member %s is busy with %s: trying again in %d s", member, holder, settings.busy_wait_seconds
                )
                raise AirflowRescheduleException(datetime.now(UTC) + timedelta(seconds=settings.busy_wait_seconds))
        from snaprepl.ops.group_refresh import update_group  # noqa: PLC0415  (heavy: creating members parses SQL)

        name, _, conn = self.group.rpartition("@")
        result = update_group(
            TableRef(Ident(name, True), conn_id=conn, explicit_conn=True),
            nonincremental=mode == "complete",
            catalog=catalog,
            settings=settings,
            refresher=submit_refresh,
            run_id=uuid.uuid4().hex,
        )
        self.log.info("%s", result)
        group_metrics(self.group, [o.to_dict() for o in result.outcomes])
        if backfill is not None:
            dag_run = context["dag_run"]
            backfills.record(catalog, backfill, self.group, dag_run.dag_id, dag_run.run_id)
        return {
            "group": self.group,
            "points": {conn: mark.isoformat() for conn, mark in result.points.items()},
            "refreshes": len(result.outcomes),
            "joined": result.joined,
            "not_joined": result.not_joined,
        }

    def on_kill(self) -> None:
        """Drop the members' staging tables (a killed run commits nothing: its one destination
        transaction rolls back), as a snapshot's task does."""
        catalog = Catalog.open(Settings.load())
        for member in catalog.group_members(self.group):
            record = catalog.snapshot(member)
            if record is not None:
                drop_in_background(record, self.log, wait=1.0)


def group_dag(
    group: GroupRecord, members: list[str], settings: Settings, outlets: list[Asset], args: dict[str, Any]
) -> DAG:
    """The group's DAG: ``members`` (SN_NAMEs) for its doc, ``outlets`` their assets, ``args`` the task's
    shared arguments (pool, timeout: :func:`snaprepl.airflow.dag_factory.task_args`)."""
    doc = (
        f"### snaprepl snapshot group `{group.sg_name}`\n\nThe tables of schema `{group.sg_source_schema}` on "
        f"`{group.sg_source_conn}`, into `{group.sg_dest_schema}` on `{group.sg_dest_conn}`: "
        f"{', '.join(f'`{m}`' for m in members) or 'no members yet'}.\n\nEvery run brings every member to one "
        "point per source, applied in one destination transaction. Trigger with `mode` = `nonincremental` to "
        "copy every member completely first; a backfill does so once, in its first run.\n"
    )
    with snaprepl_dag(
        settings,
        dag_id=group_dag_id(group.sg_name),
        description=f"refresh snaprepl snapshot group {group.sg_name}",
        schedule=timetable(group.sg_schedule),
        tags=[TAG, "group"],
        doc_md=doc,
        params={
            "mode": Param(
                INCREMENTAL,
                enum=[INCREMENTAL, NONINCREMENTAL],
                values_display=MODE_LABELS,
                title="Refresh mode",
                description="Incremental applies what the members' logs recorded; nonincremental copies them again.",
            )
        },
    ) as dag:
        SnapshotGroupOperator(task_id="refresh_group", group=group.sg_name, outlets=outlets, **args)
    return dag

"""What a DAG run does with its run type, params and settings (backfills, directions, the listener,
leases, history purge), against the in-memory catalog (no services)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from airflow.sdk.api.datamodels._generated import DagRunType as SdkDagRunType
from airflow.utils.types import DagRunType as CoreDagRunType

from snaprepl.airflow.dag_factory import build_dags
from snaprepl.airflow.listener import label_backfill_run
from snaprepl.airflow.runs import BACKFILL_CONF_KEY, backfill_id, resolve_mode, runs_step
from snaprepl.common.dag_names import RPLOG_PURGE_DAG
from snaprepl.errors import InvalidArgument
from snaprepl.settings import Settings
from tests.support.dag_factory_fakes import FakeCatalog, log


class Run:
    def __init__(self, run_type: Any, conf: dict | None = None, backfill_id: int | None = None) -> None:
        self.run_type, self.conf, self.backfill_id, self.dag_id = run_type, conf, backfill_id, "snaprepl_refresh__x"


@pytest.mark.parametrize("enum", [SdkDagRunType, CoreDagRunType], ids=["task-sdk", "core"])
def test_a_backfill_run_refreshes_completely_whichever_enum_says_so(enum: Any) -> None:
    backfill = enum.BACKFILL if enum is SdkDagRunType else enum.BACKFILL_JOB
    assert str(SdkDagRunType.BACKFILL) == "DagRunType.BACKFILL"  # why str() cannot be compared
    assert resolve_mode("incremental", {"dag_run": Run(backfill), "params": {"mode": "incremental"}}) == (
        "complete",
        False,
    )
    for other in (enum.SCHEDULED, enum.MANUAL):
        assert resolve_mode("incremental", {"dag_run": Run(other)}) == ("incremental", False)
    assert resolve_mode(None, {"dag_run": Run(enum.MANUAL), "params": {"mode": "nonincremental"}})[0] == "complete"
    assert runs_step("push", {"dag_run": Run(backfill), "params": {"direction": "pull only"}})


@pytest.mark.parametrize(
    ("direction", "pull", "push"),
    [(None, True, True), ("pull and push", True, True), ("pull only", True, False), ("push only", False, True)],
)
def test_the_direction_param_chooses_the_sync_steps(direction: str | None, pull: bool, push: bool) -> None:
    context = {"dag_run": Run(SdkDagRunType.MANUAL), "params": {"direction": direction}}
    assert (runs_step("pull", context), runs_step("push", context)) == (pull, push)
    with pytest.raises(InvalidArgument):
        runs_step("pull", {"params": {"direction": "sideways"}})


def test_the_listener_labels_backfill_runs_of_snaprepl_dags_only() -> None:
    run = Run(CoreDagRunType.BACKFILL_JOB, {"mode": "incremental"}, backfill_id=7)
    assert label_backfill_run(run) and run.conf == {"mode": "incremental", BACKFILL_CONF_KEY: "7"}
    assert backfill_id({"dag_run": run}) == "7"
    assert not label_backfill_run(run), "labelled once"
    manual = Run(CoreDagRunType.MANUAL, {}, backfill_id=None)
    other = Run(CoreDagRunType.BACKFILL_JOB, None, backfill_id=8)
    other.dag_id = "someone_elses_dag"
    assert not label_backfill_run(manual) and not label_backfill_run(other) and other.conf is None


def test_lease_history_overlaps_are_found_and_back_to_back_leases_are_not() -> None:
    from snaprepl.catalog.lease_log import Lease, overlaps

    def at(minute: int) -> datetime:
        return datetime(2026, 1, 1, 0, minute)

    apart = [
        Lease("s", "a", "h:1", at(0), at(5)),
        Lease("s", "b", "h:2", at(5), at(9)),
        Lease("t", "c", "h:3", at(1), None),
    ]
    assert overlaps(apart) == []
    long_one = Lease("s", "a", "h:1", at(0), at(10))
    inside = [long_one, Lease("s", "b", "h:2", at(2), at(3)), Lease("s", "c", "h:3", at(4), at(6))]
    assert [(x.run_id, y.run_id) for x, y in overlaps(inside)] == [("a", "b"), ("a", "c")]
    still_held = [Lease("s", "a", "h:1", at(0), None), Lease("s", "b", "h:2", at(1), at(2))]
    assert len(overlaps(still_held)) == 1


def test_the_replay_log_purge_dag_forgets_runs_older_than_history_keep_days(monkeypatch: Any) -> None:
    from snaprepl.airflow import dag_factory

    catalog = FakeCatalog(logs=[log("public.t@src")])
    monkeypatch.setattr(dag_factory.Catalog, "open", classmethod(lambda cls, settings: catalog))
    dag = build_dags(catalog=catalog, settings=Settings(history_keep_days=7))[RPLOG_PURGE_DAG]
    before = datetime.now(UTC).replace(tzinfo=None)
    assert dag.get_task("purge_history").python_callable() == 3
    after = datetime.now(UTC).replace(tzinfo=None)
    assert before - timedelta(days=7) <= catalog.history_purged_before <= after - timedelta(days=7)


@pytest.mark.parametrize(
    ("name", "raw"), [("history_keep_days", "0"), ("history_keep_days", "1.5"), ("lag_alert_minutes", "-1")]
)
def test_history_and_lag_alert_settings_are_strict(monkeypatch: Any, name: str, raw: str) -> None:
    monkeypatch.setenv(f"AIRFLOW__SNAPREPL__{name.upper()}", raw)
    with pytest.raises(InvalidArgument, match=name):
        Settings.load()

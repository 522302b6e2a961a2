"""The DAG factory against an in-memory catalog (no services): which DAGs, tasks and edges each
catalog content gives, how odd names are kept apart, and how a bad record is reported."""

from __future__ import annotations

import os
from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from airflow.sdk.api.datamodels._generated import DagRunType as SdkDagRunType
from airflow.utils.types import DagRunType as CoreDagRunType

from snaprepl.airflow.dag_factory import build_dags, unbuildable_records
from snaprepl.airflow.listener import label_backfill_run
from snaprepl.airflow.runs import BACKFILL_CONF_KEY, backfill_id, resolve_mode, runs_step
from snaprepl.catalog.records import LogRecord, PublicationRecord, SnapshotRecord, SubscriptionRecord
from snaprepl.dag_names import (
    LOG_PURGE_DAG,
    RPLOG_PURGE_DAG,
    URPLOG_PURGE_DAG,
    asset_uri,
    dag_id_collision,
    publication_dag_id,
    snapshot_dag_id,
    task_key,
)
from snaprepl.errors import InvalidArgument, SnapreplError
from snaprepl.settings import Settings

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


def log(source: str) -> LogRecord:
    return LogRecord(
        snl_source=source, snl_rlog="rlog", snl_rplog="rplog", snl_conn="src", snl_schema="public",
        snl_table="t", snl_dialect="postgres", snl_key_columns="[]", snl_objects="{}", snl_kind="snapshot",
        snl_created_at=NOW,
    )  # fmt: skip


class FakeCatalog:
    def __init__(self, snapshots=(), logs=(), publications=(), subscriptions=()) -> None:
        self._snapshots, self._logs = list(snapshots), list(logs)
        self._publications, self._subscriptions = list(publications), list(subscriptions)

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


def test_every_record_gives_its_dag_with_the_tasks_and_edges_it_needs() -> None:
    catalog = publication()
    catalog._snapshots = [snapshot("main.copy@dst", schedule="*/10 * * * *")]
    catalog._logs = [log("public.t@src")]

    dags = build_dags(catalog=catalog, settings=Settings())

    assert set(dags) == {
        snapshot_dag_id("main.copy@dst"),
        publication_dag_id(PUB),
        URPLOG_PURGE_DAG,
        RPLOG_PURGE_DAG,
        LOG_PURGE_DAG,
    }
    assert edges(dags["snaprepl_refresh__dst__main__copy"]) == {"refresh": []}
    # Loaded subscribers only (s_c is not), pulled one after another in name order, then pushed in parallel.
    assert edges(dags["snaprepl_sync__pub__public__items"]) == {
        "pull__s_a": ["pull__s_b"],
        "pull__s_b": ["push__s_a", "push__s_b"],
        "push__s_a": [],
        "push__s_b": [],
    }
    assert edges(dags[LOG_PURGE_DAG]) == {"purge__src__public__t": []}
    assert edges(dags[RPLOG_PURGE_DAG]) == {"purge_replay_logs": [], "purge_history": []}
    assert edges(dags[URPLOG_PURGE_DAG]) == {"purge_update_replay_logs": []}


def test_a_publication_pulls_its_subscribers_in_turn_then_pushes_to_all() -> None:
    servers = ["zeta", "alpha", "odd name", "mid"]
    catalog = FakeCatalog(
        publications=[PublicationRecord(sp_item=PUB, sp_type=2, sp_server="p", sp_created_at=NOW)],
        subscriptions=[
            SubscriptionRecord(ss_server=s, ss_item=PUB, ss_type=2, ss_created_at=NOW, ss_init_state="done")
            for s in servers
        ],
    )

    [sync] = [
        dag for dag_id, dag in build_dags(catalog=catalog, settings=Settings()).items() if dag_id != URPLOG_PURGE_DAG
    ]

    pushes = sorted(f"push__{task_key(s)}" for s in servers)
    assert task_key("odd name") != "odd name" and task_key("odd name").isascii()
    assert edges(sync) == {
        "pull__alpha": ["pull__mid"],
        "pull__mid": [f"pull__{task_key('odd name')}"],
        f"pull__{task_key('odd name')}": ["pull__zeta"],
        "pull__zeta": pushes,
        **{push: [] for push in pushes},
    }


COLL = "/flow/docs/@dav1"


def test_a_collection_publication_gets_the_publication_dag_shape() -> None:
    """Type 1 as type 2: loaded subscribers pulled in name order, then pushed in parallel, on the
    publication's schedule, under the DAG id status names; the update replay log purge covers it."""
    catalog = FakeCatalog(
        publications=[
            PublicationRecord(sp_item=COLL, sp_type=1, sp_server="dav1", sp_created_at=NOW, sp_schedule="@hourly")
        ],
        subscriptions=[
            SubscriptionRecord(ss_server=s, ss_item=COLL, ss_type=1, ss_created_at=NOW, ss_init_state=state)
            for s, state in (("folder", "done"), ("dav2", "done"), ("dav3", None))
        ],
    )

    dags = build_dags(catalog=catalog, settings=Settings())

    assert set(dags) == {publication_dag_id(COLL), URPLOG_PURGE_DAG}
    assert publication_dag_id(COLL).startswith("snaprepl_sync__dav1__flow_docs") and publication_dag_id(COLL).isascii()
    sync = dags[publication_dag_id(COLL)]
    assert edges(sync) == {
        "pull__dav2": ["pull__folder"],
        "pull__folder": ["push__dav2", "push__folder"],
        "push__dav2": [],
        "push__folder": [],
    }
    steps = {t.task_id: (t.item, t.action, t.server) for t in sync.tasks}
    assert steps["pull__dav2"] == (COLL, "pull", "dav2") and steps["push__folder"] == (COLL, "push", "folder")
    assert sync.timetable.expression == "0 * * * *" and "collection of files" in (sync.doc_md or "")
    assert unbuildable_records(catalog=catalog, settings=Settings()) == []


def test_a_publication_without_loaded_subscribers_gives_no_sync_dag_but_its_purge() -> None:
    catalog = publication()
    catalog._subscriptions = [replace(s, ss_init_state=None) for s in catalog._subscriptions]

    assert set(build_dags(catalog=catalog, settings=Settings())) == {URPLOG_PURGE_DAG}
    assert unbuildable_records(catalog=catalog, settings=Settings()) == []


def test_the_snapshot_log_purge_has_one_task_per_log_and_no_edges() -> None:
    catalog = FakeCatalog(logs=[log("public.t@src"), log("public.u@src"), log('main."a b"@other')])

    dags = build_dags(catalog=catalog, settings=Settings())

    assert set(dags) == {LOG_PURGE_DAG, RPLOG_PURGE_DAG}
    purge = edges(dags[LOG_PURGE_DAG])
    assert {"purge__src__public__t": [], "purge__src__public__u": []}.items() <= purge.items()
    assert len(purge) == 3 and all(t.startswith("purge__other__main__") and t.isascii() for t in purge if "other" in t)
    assert edges(dags[RPLOG_PURGE_DAG]) == {"purge_replay_logs": [], "purge_history": []}


def test_scheduled_and_purge_dags_are_created_unpaused_unless_the_setting_says_otherwise() -> None:
    catalog = FakeCatalog([snapshot("main.a@dst", schedule="@hourly"), snapshot("main.b@dst")], [log("public.t@src")])

    unpaused = build_dags(catalog=catalog, settings=Settings())
    paused = build_dags(catalog=catalog, settings=Settings(dags_paused_at_creation=True))

    assert {d: dag.is_paused_upon_creation for d, dag in unpaused.items()} == dict.fromkeys(unpaused, False)
    assert {d: dag.is_paused_upon_creation for d, dag in paused.items()} == dict.fromkeys(paused, True)


@pytest.mark.parametrize("name", [f.name for f in fields(Settings) if f.type in {"bool", bool}])
def test_boolean_settings_are_bools_parsed_strictly(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert {"dags_paused_at_creation", "strict_dags", "pool_per_connection", "spark_ui"} <= {
        f.name for f in fields(Settings) if f.type in {"bool", bool}
    }
    assert getattr(Settings(), name) is False
    monkeypatch.setenv(f"AIRFLOW__SNAPREPL__{name.upper()}", "TRUE")
    assert getattr(Settings.load(), name) is True
    monkeypatch.setenv(f"AIRFLOW__SNAPREPL__{name.upper()}", "0")
    assert getattr(Settings.load(), name) is False
    for wrong in ("no", "yes", "2", "paused"):
        monkeypatch.setenv(f"AIRFLOW__SNAPREPL__{name.upper()}", wrong)
        with pytest.raises(InvalidArgument, match="is not a boolean"):
            Settings.load()


def test_refresh_and_sync_tasks_run_one_at_a_time_with_timeout_and_pool() -> None:
    catalog = publication()
    catalog._snapshots = [snapshot("main.copy@dst")]
    settings = Settings(execution_timeout_minutes=30, pool_per_connection=True)

    dags = build_dags(catalog=catalog, settings=settings)

    refresh = dags["snaprepl_refresh__dst__main__copy"].get_task("refresh")
    assert (refresh.max_active_tis_per_dag, refresh.execution_timeout.total_seconds(), refresh.pool) == (
        1, 1800, "snaprepl__src"
    )  # fmt: skip
    sync = dags[publication_dag_id(PUB)]
    assert {(t.max_active_tis_per_dag, t.pool, t.trigger_rule) for t in sync.tasks} == {
        (1, "snaprepl__pub", "none_failed")
    }
    plain = build_dags(catalog=catalog, settings=Settings(pool="replication"))
    assert plain["snaprepl_refresh__dst__main__copy"].get_task("refresh").pool == "replication"
    assert plain["snaprepl_refresh__dst__main__copy"].get_task("refresh").execution_timeout is None


def test_params_read_well_and_a_nonincremental_snapshot_offers_no_incremental_mode() -> None:
    catalog = publication()
    catalog._snapshots = [snapshot("main.inc@dst"), snapshot("main.full@dst", incremental=False)]
    dags = build_dags(catalog=catalog, settings=Settings())

    inc = dags["snaprepl_refresh__dst__main__inc"].params
    mode = inc.get_param("mode").schema
    assert mode["enum"] == ["incremental", "nonincremental"] and mode["title"] == "Refresh mode"
    assert set(mode["values_display"]) == {"incremental", "nonincremental"} and inc.get_param("mode").description
    assert inc.get_param("fallback_complete").schema["title"]
    full = dags["snaprepl_refresh__dst__main__full"].params
    assert full.get_param("mode").schema["enum"] == ["nonincremental"] and "fallback_complete" not in full
    direction = dags[publication_dag_id(PUB)].params.get_param("direction").schema
    assert direction["enum"] == ["pull and push", "pull only", "push only"]
    assert set(direction["values_display"]) == set(direction["enum"]) and direction["title"] == "Steps"


def test_odd_names_give_distinct_ascii_dag_ids_and_asset_uris() -> None:
    names = ['main."with space"@myx', "main.with_space@myx", "main.ünïcødé@sq", "main.a__b@x", "a__main.b@x"]
    catalog = FakeCatalog([snapshot(n) for n in names])

    dags = build_dags(catalog=catalog, settings=Settings())

    assert len(dags) == len(names), sorted(dags)
    assert all(d.isascii() and len(d) <= 250 for d in dags)
    assert snapshot_dag_id("main.with_space@myx") == "snaprepl_refresh__myx__main__with_space"
    uris = [dags[snapshot_dag_id(n)].get_task("refresh").outlets[0].uri for n in names]
    assert all(u.isascii() for u in uris) and len(set(uris)) == len(names)
    assert asset_uri("sq", "main", "ünïcødé") == "snaprepl://sq/main/%C3%BCn%C3%AFc%C3%B8d%C3%A9"
    long_name = f"main.{'x' * 300}@dst"
    assert len(snapshot_dag_id(long_name)) <= 250 and snapshot_dag_id(long_name) != snapshot_dag_id(long_name + "y")


def test_dag_id_collision_names_the_other_record() -> None:
    catalog = FakeCatalog([snapshot("main.orders@dst")])
    assert dag_id_collision(catalog, "main.orders@dst") is None  # itself
    assert dag_id_collision(catalog, "main.customers@dst") is None
    # Only a hash collision could make two names share an id: simulate one.
    from snaprepl import dag_names as naming

    original = naming.digest
    naming.digest = lambda text: "0" * 10
    try:
        odd = FakeCatalog([snapshot("main.a b@dst")])
        assert dag_id_collision(odd, "main.a-b@dst") == "main.a b@dst"
    finally:
        naming.digest = original


def test_a_bad_record_is_reported_by_name_while_every_other_dag_loads() -> None:
    bad = snapshot("main.bad@dst", schedule="every tuesday")
    broken = replace(snapshot("main.broken@dst"), sn_dest_table=None)
    catalog = FakeCatalog([snapshot("main.good@dst"), bad, broken], [log("public.t@src")])

    dags = build_dags(catalog=catalog, settings=Settings())
    problems = unbuildable_records(catalog=catalog, settings=Settings())

    assert {"snaprepl_refresh__dst__main__good", LOG_PURGE_DAG, RPLOG_PURGE_DAG} == set(dags)
    assert [p.split(":")[0] for p in problems] == ["snapshot main.bad@dst", "snapshot main.broken@dst"]
    assert "AirflowTimetableInvalid" in problems[0]
    with pytest.raises(SnapreplError, match=r"catalog record snapshot main\.bad@dst cannot become a DAG"):
        build_dags(catalog=catalog, settings=Settings(strict_dags=True))


def test_a_bad_publication_is_left_out_while_snapshots_and_purges_load() -> None:
    catalog = publication(schedule="now and then")
    catalog._snapshots = [snapshot("main.good@dst")]
    catalog._logs = [log("public.t@src")]

    dags = build_dags(catalog=catalog, settings=Settings())

    assert set(dags) == {"snaprepl_refresh__dst__main__good", URPLOG_PURGE_DAG, RPLOG_PURGE_DAG, LOG_PURGE_DAG}
    assert [p.split(":")[0] for p in unbuildable_records(catalog=catalog, settings=Settings())] == [
        f"publication {PUB}"
    ]
    with pytest.raises(SnapreplError, match=f"catalog record publication {PUB} cannot become a DAG"):
        build_dags(catalog=catalog, settings=Settings(strict_dags=True))


@pytest.mark.parametrize(
    "wanted",
    ["snaprepl_refresh__dst__main__a", "snaprepl_sync__pub__public__items", LOG_PURGE_DAG, URPLOG_PURGE_DAG],
)
def test_a_task_process_builds_only_its_own_dag(wanted: str, monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = publication()
    # main.b cannot become a DAG: a task of another DAG does not build it, so does not see that.
    catalog._snapshots = [snapshot("main.a@dst"), snapshot("main.b@dst", schedule="every tuesday")]
    catalog._logs = [log("public.t@src")]
    monkeypatch.setitem(os.environ, "_AIRFLOW_PARSING_CONTEXT_DAG_ID", wanted)

    assert list(build_dags(catalog=catalog, settings=Settings(strict_dags=True))) == [wanted]


def test_a_task_process_of_a_dag_no_longer_in_the_catalog_builds_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(os.environ, "_AIRFLOW_PARSING_CONTEXT_DAG_ID", "snaprepl_refresh__dst__main__gone")

    assert build_dags(catalog=publication(), settings=Settings()) == {}


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

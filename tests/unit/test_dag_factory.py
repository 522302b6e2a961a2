"""The DAG factory against an in-memory catalog (no services): which DAGs, tasks and edges each
catalog content gives, how odd names are kept apart, and how a bad record is reported."""

from __future__ import annotations

import os
from dataclasses import fields, replace

import pytest

from snaprepl.airflow.dag_factory import build_dags, unbuildable_records
from snaprepl.airflow.watchdog import WATCHDOG_DAG
from snaprepl.catalog.records import GroupRecord, PublicationRecord, SubscriptionRecord
from snaprepl.common.dag_names import (
    LOG_PURGE_DAG,
    RPLOG_PURGE_DAG,
    URPLOG_PURGE_DAG,
    asset_uri,
    dag_id_collision,
    group_dag_id,
    publication_dag_id,
    snapshot_dag_id,
    task_key,
)
from snaprepl.errors import InvalidArgument, SnapreplError
from snaprepl.settings import Settings
from tests.support.dag_factory_fakes import NOW, PUB, FakeCatalog, edges, group, log, publication, snapshot


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
        WATCHDOG_DAG,
    }
    assert edges(dags["snaprepl_refresh__dst__main__copy"]) == {"refresh": []}
    # Loaded subscribers only (s_c is not), pulled one after another in name order, then pushed in
    # parallel once every pull is done; each push also waits for its own subscriber's pull.
    assert edges(dags["snaprepl_sync__pub__public__items"]) == {
        "pull__s_a": ["pull__s_b", "push__s_a"],
        "pull__s_b": ["pulls_done", "push__s_b"],
        "pulls_done": ["push__s_a", "push__s_b"],
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
        dag
        for dag_id, dag in build_dags(catalog=catalog, settings=Settings()).items()
        if dag_id not in {URPLOG_PURGE_DAG, WATCHDOG_DAG}
    ]

    pushes = sorted(f"push__{task_key(s)}" for s in servers)
    assert task_key("odd name") != "odd name" and task_key("odd name").isascii()
    odd = task_key("odd name")
    assert edges(sync) == {
        "pull__alpha": ["pull__mid", "push__alpha"],
        "pull__mid": [f"pull__{odd}", "push__mid"],
        f"pull__{odd}": ["pull__zeta", f"push__{odd}"],
        "pull__zeta": ["pulls_done", "push__zeta"],
        "pulls_done": pushes,
        **{push: [] for push in pushes},
    }


def test_a_failing_subscriber_stops_neither_the_other_pulls_nor_the_other_pushes() -> None:
    """Each pull runs once the one before it is done however it ended; ``pulls_done`` once every
    pull is done; a push once its own pull did not fail and every pull is done (a skipped pull, in a
    push-only run, lets it run). Its upstreams are exactly those two."""
    sync = build_dags(catalog=publication(), settings=Settings())[publication_dag_id(PUB)]

    rules = {t.task_id: t.trigger_rule for t in sync.tasks}
    assert rules == {
        "pull__s_a": "all_done", "pull__s_b": "all_done", "pulls_done": "all_done",
        "push__s_a": "none_failed", "push__s_b": "none_failed",
    }  # fmt: skip
    for server in ("s_a", "s_b"):
        assert sorted(sync.get_task(f"push__{server}").upstream_task_ids) == [f"pull__{server}", "pulls_done"]
    assert sync.get_task("pull__s_b").upstream_task_ids == {"pull__s_a"}
    # The pushes are the leaves: a failed pull leaves its push upstream_failed, so the run fails.
    assert sorted(t.task_id for t in sync.leaves) == ["push__s_a", "push__s_b"]


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

    assert set(dags) == {publication_dag_id(COLL), URPLOG_PURGE_DAG, WATCHDOG_DAG}
    assert publication_dag_id(COLL).startswith("snaprepl_sync__dav1__flow_docs") and publication_dag_id(COLL).isascii()
    sync = dags[publication_dag_id(COLL)]
    assert edges(sync) == {
        "pull__dav2": ["pull__folder", "push__dav2"],
        "pull__folder": ["pulls_done", "push__folder"],
        "pulls_done": ["push__dav2", "push__folder"],
        "push__dav2": [],
        "push__folder": [],
    }
    steps = {t.task_id: (t.item, t.action, t.server) for t in sync.tasks if t.task_id != "pulls_done"}
    assert steps["pull__dav2"] == (COLL, "pull", "dav2") and steps["push__folder"] == (COLL, "push", "folder")
    assert sync.timetable.expression == "0 * * * *" and "collection of files" in (sync.doc_md or "")
    assert unbuildable_records(catalog=catalog, settings=Settings()) == []


def test_a_publication_without_loaded_subscribers_gives_no_sync_dag_but_its_purge() -> None:
    catalog = publication()
    catalog._subscriptions = [replace(s, ss_init_state=None) for s in catalog._subscriptions]

    assert set(build_dags(catalog=catalog, settings=Settings())) == {URPLOG_PURGE_DAG, WATCHDOG_DAG}
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


def test_the_watchdog_dag_checks_every_five_minutes_unpaused_once_there_is_a_copy() -> None:
    dags = build_dags(catalog=FakeCatalog([snapshot("main.a@dst")]), settings=Settings())

    watchdog = dags[WATCHDOG_DAG]
    assert edges(watchdog) == {"check": []} and watchdog.timetable.expression == "*/5 * * * *"
    assert watchdog.is_paused_upon_creation is False and "snaprepl" in watchdog.tags
    hourly = build_dags(catalog=FakeCatalog([snapshot("main.a@dst")]), settings=Settings(watchdog_schedule="@hourly"))
    assert hourly[WATCHDOG_DAG].timetable.expression == "0 * * * *"
    assert WATCHDOG_DAG not in build_dags(catalog=FakeCatalog(logs=[log("public.t@src")]), settings=Settings())


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
    steps = [t for t in sync.tasks if t.task_id != "pulls_done"]
    assert {(t.max_active_tis_per_dag, t.pool) for t in steps} == {(1, "snaprepl__pub")}
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

    assert len(dags) == len(names) + 1 and WATCHDOG_DAG in dags, sorted(dags)
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
    from snaprepl.common import dag_names as naming

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

    assert {"snaprepl_refresh__dst__main__good", LOG_PURGE_DAG, RPLOG_PURGE_DAG, WATCHDOG_DAG} == set(dags)
    assert [p.split(":")[0] for p in problems] == ["snapshot main.bad@dst", "snapshot main.broken@dst"]
    assert "AirflowTimetableInvalid" in problems[0]
    with pytest.raises(SnapreplError, match=r"catalog record snapshot main\.bad@dst cannot become a DAG"):
        build_dags(catalog=catalog, settings=Settings(strict_dags=True))


def test_a_bad_publication_is_left_out_while_snapshots_and_purges_load() -> None:
    catalog = publication(schedule="now and then")
    catalog._snapshots = [snapshot("main.good@dst")]
    catalog._logs = [log("public.t@src")]

    dags = build_dags(catalog=catalog, settings=Settings())

    assert set(dags) == {
        "snaprepl_refresh__dst__main__good", URPLOG_PURGE_DAG, RPLOG_PURGE_DAG, LOG_PURGE_DAG, WATCHDOG_DAG
    }  # fmt: skip
    assert [p.split(":")[0] for p in unbuildable_records(catalog=catalog, settings=Settings())] == [
        f"publication {PUB}"
    ]
    with pytest.raises(SnapreplError, match=f"catalog record publication {PUB} cannot become a DAG"):
        build_dags(catalog=catalog, settings=Settings(strict_dags=True))


@pytest.mark.parametrize(
    "wanted",
    [
        "snaprepl_refresh__dst__main__a",
        "snaprepl_sync__pub__public__items",
        LOG_PURGE_DAG,
        URPLOG_PURGE_DAG,
        WATCHDOG_DAG,
    ],
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


def test_a_group_gets_one_dag_and_its_members_none_of_their_own() -> None:
    members = ["main.orders@dst", "main.lines@dst"]
    catalog = FakeCatalog(
        [snapshot(m, schedule="@hourly") for m in [*members, "main.alone@dst"]],
        groups={group("sales@dst", schedule="*/15 * * * *"): members},
    )
    dags = build_dags(catalog=catalog, settings=Settings())
    assert group_dag_id("sales@dst") == "snaprepl_group__dst__sales"
    assert set(dags) == {group_dag_id("sales@dst"), snapshot_dag_id("main.alone@dst"), WATCHDOG_DAG}
    dag = dags[group_dag_id("sales@dst")]
    assert edges(dag) == {"refresh_group": []}
    task = dag.get_task("refresh_group")
    assert sorted(a.uri for a in task.outlets) == sorted(asset_uri("dst", "main", t) for t in ("orders", "lines"))
    assert task.max_active_tis_per_dag == 1
    assert dag.params["mode"] == "incremental" and "nonincremental" in dag.params.get_param("mode").schema["enum"]
    assert "every member" in dag.doc_md and "`main.lines@dst`" in dag.doc_md
    # While CREATE SNAPSHOT GROUP makes the members, neither the group nor they have a DAG.
    creating = replace(group("sales@dst"), sg_last_status=GroupRecord.CREATING)
    catalog = FakeCatalog([snapshot(m) for m in members], groups={creating: members})
    assert set(build_dags(catalog=catalog, settings=Settings())) == {WATCHDOG_DAG}

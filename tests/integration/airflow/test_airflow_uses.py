"""snaprepl as its users run it, under a real Airflow (api-server, scheduler, dag-processor): UI
triggers through the REST API with conf, schedules, backfills, and all three at once; every task
reaches its source over TLS (``verify-full``, to a server that refuses anything else) and its catalog
as a least-privilege role.

One deployment serves the module, with Airflow's own default of pausing new DAGs
(``dags_are_paused_at_creation = True``): snaprepl's DAGs must run anyway. The source is a
table on a TLS-only PostgreSQL, the destination and the subscriber SQLite files, the catalog the cluster's
PostgreSQL metadata database, reached by tasks and DAG parsing as a role granted by ``snaprepl catalog
grant``; ``busy_wait_seconds`` is short so that waiting tasks come back within the test. Metrics go
to a StatsD listener of the test (InfluxDB-style tags on), lineage events to a file (OpenLineage's
file transport).
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import sqlalchemy as sa

from snaprepl.catalog import lease_log
from snaprepl.catalog import models as m
from snaprepl.catalog.records import SnapshotRecord, utcnow
from snaprepl.catalog.run_lock import RunLock, snapshot_lock_name
from snaprepl.common.dag_names import LOG_PURGE_DAG, RPLOG_PURGE_DAG, publication_dag_id, snapshot_dag_id
from tests.support.airflow_groups import TABLES, Group, create_group
from tests.support.airflow_uses import (
    CATALOG_PASSWORD,
    DST,
    HOURLY,
    SRC,
    SUB,
    Deployment,
    lineage_events,
    metric_values,
    started,
    wait_for_import_error,
    wait_for_log,
)
from tests.support.databases import PG_ADMIN, RealDatabase
from tests.support.tls_postgres import tls_database, tls_only_postgres

pytestmark = [pytest.mark.airflow, pytest.mark.slow]


@pytest.fixture(scope="module")
def tls_source() -> Iterator[tuple[RealDatabase, str]]:
    """The source and publisher: a database on a PostgreSQL that accepts TLS only, reached by the
    cluster's tasks with ``sslmode=verify-full``; its connection (JSON) beside it."""
    name = f"uses_{uuid.uuid4().hex[:8]}"
    with tls_only_postgres() as server:
        server.psql("postgres", f"CREATE DATABASE {name}")
        yield (
            tls_database(server, SRC, name),
            server.conn_json(name, sslmode="verify-full", sslrootcert=str(server.ca_cert)),
        )


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory, tls_source: tuple[RealDatabase, str]) -> Iterator[Deployment]:
    source, source_conn = tls_source
    home, files = tmp_path_factory.mktemp("airflow-uses"), tmp_path_factory.mktemp("uses-files")
    with started(home, files, source, source_conn) as deployed:
        yield deployed


def test_tasks_reach_the_catalog_as_a_role_that_cannot_read_airflow_secrets(deployment: Deployment) -> None:
    """Every other test of this module runs its tasks with this catalog connection: the granted role
    is enough to refresh, backfill, wait on leases and sync, and it reads no connection or variable."""
    url = sa.engine.make_url(deployment.cluster.env["AIRFLOW_CONN_SNAPREPL_CATALOG"])
    assert url.username != PG_ADMIN["user"] and url.password == CATALOG_PASSWORD
    engine = sa.create_engine(url.set(drivername="postgresql+psycopg2"))
    try:
        with engine.connect() as conn:
            assert conn.execute(sa.text('SELECT COUNT(*) FROM "SYS_SNAPSHOT"')).scalar() >= 1
        for secrets_table in ("connection", "variable"):
            with engine.connect() as conn, pytest.raises(sa.exc.ProgrammingError, match="permission denied"):
                conn.execute(sa.text(f"SELECT * FROM {secrets_table}"))
    finally:
        engine.dispose()


def test_snaprepl_dags_are_unpaused_where_airflow_pauses_new_dags(deployment: Deployment) -> None:
    d = deployment
    for dag_id in (d.dag_id, LOG_PURGE_DAG, RPLOG_PURGE_DAG):
        assert d.cluster.api("GET", f"/api/v2/dags/{dag_id}")["is_paused"] is False, dag_id
    # The purge DAGs have a schedule and catchup is off: each has run for its latest interval already.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not d.cluster.dag_runs(LOG_PURGE_DAG, "scheduled"):
        time.sleep(2)
    [run] = d.cluster.dag_runs(LOG_PURGE_DAG, "scheduled")
    d.cluster.wait_for_run(LOG_PURGE_DAG, run["dag_run_id"])


def test_the_trigger_form_reads_well_and_refuses_what_a_snapshot_cannot_do(deployment: Deployment) -> None:
    d = deployment
    full = f"main.full_{uuid.uuid4().hex[:6]}@{DST}"
    d.catalog.add_snapshot(
        SnapshotRecord(
            sn_name=full, sn_query=f"SELECT * FROM {d.table}@{SRC}", sn_source_conn=SRC, sn_dest_conn=DST,
            sn_dest_schema="main", sn_dest_table=full[5:].split("@", maxsplit=1)[0], sn_created_at=utcnow(),
        ),
        AssertionError("exists"),
    )  # fmt: skip
    d.cluster.wait_for_dag(snapshot_dag_id(full))

    params = d.cluster.api("GET", f"/api/v2/dags/{d.dag_id}/details")["params"]
    assert params["mode"]["schema"]["title"] == "Refresh mode" and params["mode"]["description"]
    assert params["mode"]["schema"]["values_display"]["nonincremental"].startswith("nonincremental: replace")
    assert params["fallback_complete"]["schema"]["title"]
    full_params = d.cluster.api("GET", f"/api/v2/dags/{snapshot_dag_id(full)}/details")["params"]
    assert full_params["mode"]["schema"]["enum"] == ["nonincremental"] and "fallback_complete" not in full_params
    with pytest.raises(AssertionError, match="HTTP 400"):
        d.cluster.trigger(snapshot_dag_id(full), conf={"mode": "incremental"})
    with pytest.raises(AssertionError, match="HTTP 400"):
        d.cluster.trigger(d.dag_id, conf={"mode": "sideways"})
    d.catalog.delete_snapshot(full)


def test_odd_names_each_get_a_dag_and_a_bad_record_is_an_import_error_naming_it(deployment: Deployment) -> None:
    d = deployment
    names = [f"main.with space@{DST}", f"main.with_space@{DST}", f"main.ünïcødé@{DST}"]
    for name in names:
        table = name[5:].split("@")[0]
        d.catalog.add_snapshot(
            SnapshotRecord(
                sn_name=name, sn_query="SELECT 1 AS x", sn_source_conn=SRC, sn_dest_conn=DST,
                sn_dest_schema="main", sn_dest_table=table, sn_created_at=utcnow(),
            ),
            AssertionError("exists"),
        )  # fmt: skip
    try:
        for name in names:
            d.cluster.wait_for_dag(snapshot_dag_id(name))
        assert len({snapshot_dag_id(n) for n in names}) == 3

        d.catalog.update_snapshot(names[0], sn_schedule="every tuesday")
        errors = wait_for_import_error(d.cluster, f"snapshot {names[0]}")
        assert "AirflowTimetableInvalid" in errors and "snaprepl_catalog_check.py" in str(d.cluster.import_errors())
        for dag_id in (d.dag_id, snapshot_dag_id(names[1]), snapshot_dag_id(names[2])):
            assert d.cluster.api("GET", f"/api/v2/dags/{dag_id}")["is_stale"] is False, dag_id
    finally:
        for name in names:
            d.catalog.delete_snapshot(name)
    deadline = time.monotonic() + 60
    while d.cluster.import_errors() and time.monotonic() < deadline:
        time.sleep(2)
    assert d.cluster.import_errors() == []


@pytest.fixture(scope="module")
def group(deployment: Deployment) -> Group:
    made = create_group(deployment)
    deployment.cluster.wait_for_dag(made.dag_id)
    return made


def test_a_group_gets_one_dag_that_runs_on_schedule_and_when_triggered(group: Group) -> None:
    """The group created by the CLI with an hourly schedule: one unpaused DAG (its members none), whose
    run for the latest interval the scheduler makes at once (no catchup); a manual run brings every
    member incrementally to one point of the source, in the run's history and the group's record."""
    g, d = group, group.deployment
    assert d.cluster.api("GET", f"/api/v2/dags/{g.dag_id}")["is_paused"] is False
    for member in g.members:
        with pytest.raises(AssertionError, match="HTTP 404"):
            d.cluster.api("GET", f"/api/v2/dags/{snapshot_dag_id(member)}")
    scheduled = g.wait_for_scheduled_run()
    d.cluster.wait_for_run(g.dag_id, scheduled, timeout=300)
    assert d.cluster.xcom(g.dag_id, scheduled, "refresh_group")["refreshes"] == len(TABLES)

    d.source.run(
        f"INSERT INTO {g.source('parent')} VALUES (3, 'three')",
        f"INSERT INTO {g.source('child')} VALUES (30, 3, 'c')",
        f"UPDATE {g.source('parent')} SET v = 'ONE' WHERE id = 1",
        f"DELETE FROM {g.source('child')} WHERE id = 20",
        f"DELETE FROM {g.source('parent')} WHERE id = 2",
    )
    manual = d.cluster.trigger(g.dag_id)
    d.cluster.wait_for_run(g.dag_id, manual, timeout=300)
    assert g.in_step() and g.dest_rows("parent") == [(1, "ONE"), (3, "three")]
    ran = d.cluster.xcom(g.dag_id, manual, "refresh_group")
    record = d.catalog.group(g.name)
    assert record is not None and ran["points"] == {SRC: record.points[SRC].isoformat()}, (ran, record)
    assert ran["refreshes"] == len(TABLES) and record.sg_last_status == "succeeded"
    runs = g.runs_of(manual)
    assert {m: [(r.rh_kind, r.rh_outcome) for r in rs] for m, rs in runs.items()} == {
        m: [("incremental", "ok")] for m in g.members
    }, runs


def test_a_backfill_of_a_group_refreshes_every_member_completely_once(group: Group) -> None:
    g, d = group, group.deployment
    for table in TABLES:  # rows only the copies have: only a complete refresh removes them
        stray = "(99, 'stray')" if table == "parent" else "(99, 1, 'stray')"
        d.dest.run(f"INSERT INTO {d.dest.q(g.table(table))} VALUES {stray}")
    d.source.run(f"INSERT INTO {g.source('parent')} VALUES (4, 'four')")
    backfill = d.backfill(g.dag_id, "2024-06-01T00:00:00Z", "2024-06-01T01:00:00Z")
    runs = sorted(r["dag_run_id"] for r in d.cluster.dag_runs(g.dag_id, "backfill"))
    assert len(runs) == 2, runs
    d.wait_for_runs(g.dag_id, runs)

    results = {run: d.cluster.xcom(g.dag_id, run, "refresh_group") for run in runs}
    [complete] = [run for run, r in results.items() if "already_done" not in r]
    [other] = [run for run in runs if run != complete]
    assert "already happened" in results[other]["already_done"], results
    assert results[other]["backfill_id"] == str(backfill["id"])
    assert g.in_step(), "the strays are gone and the new row is there"
    kinds = {m: sorted(r.rh_kind for r in rs) for m, rs in g.runs_of(complete).items()}
    assert kinds == {m: ["complete", "incremental"] for m in g.members}, kinds
    assert all(not rs for rs in g.runs_of(other).values()), "the second run refreshed nothing"


def test_a_backfill_a_manual_run_and_a_scheduled_run_at_once_wait_for_each_other(deployment: Deployment) -> None:
    d = deployment
    src = d.source.q(d.table)
    d.source.run(f"INSERT INTO {src} VALUES (4, 'four')", f"UPDATE {src} SET v = 'TWO' WHERE id = 2")
    d.dest.run(f"INSERT INTO {d.dest.q(d.table)} VALUES (99, 'stray')")  # only a complete refresh removes it
    lease = snapshot_lock_name(d.snapshot)
    holder = RunLock(d.catalog, lease, "test-holder", what="the test's run")
    holder.acquire()  # another live run (this test process) holds the snapshot
    try:
        d.catalog.update_snapshot(d.snapshot, sn_schedule=HOURLY)
        d.wait_for_schedule(d.dag_id)
        backfill = d.backfill(d.dag_id, "2024-06-01T00:00:00Z", "2024-06-01T02:00:00Z")
        manual = d.cluster.trigger(d.dag_id)
        wait_for_log(d.cluster, d.dag_id, "busy with run test-holder")
    finally:
        holder.release()
    backfill_runs = sorted(r["dag_run_id"] for r in d.cluster.dag_runs(d.dag_id, "backfill"))
    assert len(backfill_runs) == 3, backfill_runs
    scheduled = [r["dag_run_id"] for r in d.cluster.dag_runs(d.dag_id, "scheduled")]
    assert scheduled, "the schedule made no run"
    d.wait_for_runs(d.dag_id, [*backfill_runs, manual, *scheduled])

    every_ti = [ti for run in [*backfill_runs, manual, *scheduled] for ti in d.cluster.task_instances(d.dag_id, run)]
    assert {ti["state"] for ti in every_ti} == {"success"}
    results = {run: d.cluster.xcom(d.dag_id, run, "refresh") for run in backfill_runs}
    refreshed = [run for run, r in results.items() if "already_done" not in r]
    assert len(refreshed) == 1 and results[refreshed[0]]["kind"] == "complete", results
    for run, result in results.items():
        if run not in refreshed:
            assert "complete refresh" in result["already_done"] and "already happened" in result["already_done"]
            assert result["by_run"] == refreshed[0] and result["backfill_id"] == str(backfill["id"])
            assert "already happened" in d.cluster.task_log(d.dag_id, run)
    with d.catalog.begin() as conn:
        # (the group's backfill of this module records its own row)
        recorded = conn.execute(sa.select(m.SYS_REPL_BACKFILL).where(m.SYS_REPL_BACKFILL.c.BF_TARGET == d.snapshot))
        recorded = recorded.fetchall()
        leases = lease_log.history(conn, lease)
    assert [(r.BF_ID, r.BF_TARGET, r.BF_RUN_ID) for r in recorded] == [(str(backfill["id"]), d.snapshot, refreshed[0])]
    assert lease_log.overlaps(leases) == [], leases
    holders = [lease.run_id for lease in leases]
    # The test's own run, then at least the backfill's complete refresh, the manual and the scheduled run.
    assert "test-holder" in holders and len(holders[holders.index("test-holder") + 1 :]) >= 3, holders
    assert {ti["try_number"] for ti in every_ti} == {1}, "waiting for the lease used a retry"
    by_run = {r.rh_dag_run_id: r for r in d.catalog.history(d.snapshot, limit=None)}
    assert {refreshed[0], manual, *scheduled} <= set(by_run), by_run.keys()
    assert by_run[refreshed[0]].rh_kind == "complete" and by_run[refreshed[0]].rh_outcome == "ok"
    assert d.rows(d.dest, d.table) == d.rows(d.source, d.table) == [(1, "one"), (2, "TWO"), (3, "three"), (4, "four")]


@dataclass
class Publication:
    table: str
    item: str
    dag_id: str
    server: str


@pytest.fixture(scope="module")
def publication(deployment: Deployment) -> Publication:
    d = deployment
    table = f"p_{uuid.uuid4().hex[:10]}"
    d.source.run(f"CREATE TABLE {table} (id int PRIMARY KEY, v varchar(40))", f"INSERT INTO {table} VALUES (1, 'a')")
    d.sql(
        f"REPL_CREATE_SNAPSHOT_PUB('{table}@{SRC}', 2); "
        f"REPL_CREATE_SNAPSHOT_SUB(REPL_SNP_SERVER('{SUB}'), '{table}@{SRC}', 2); "
        f"REPL_INIT_SNAPSHOT(REPL_SERVER_NAME('{SUB}'), '{table}@{SRC}', 2)"
    )
    item = f"public.{table}@{SRC}"
    d.cluster.wait_for_dag(publication_dag_id(item))
    [subscription] = d.catalog.subscriptions(item)
    return Publication(table, item, publication_dag_id(item), subscription.ss_server)


def test_a_manual_sync_can_pull_only_or_push_only(deployment: Deployment, publication: Publication) -> None:
    d, p = deployment, publication
    d.subscriber.run(f"INSERT INTO {p.table} (id, v) VALUES (2, 'from sub')")
    d.source.run(f"INSERT INTO {p.table} (id, v) VALUES (3, 'from pub')")

    pull = d.cluster.trigger(p.dag_id, conf={"direction": "pull only"})
    d.cluster.wait_for_run(p.dag_id, pull, timeout=300)
    states = {t["task_id"]: t["state"] for t in d.cluster.task_instances(p.dag_id, pull)}
    assert states == {f"pull__{p.server}": "success", "pulls_done": "success", f"push__{p.server}": "skipped"}, states
    assert d.rows(d.source, p.table) == [(1, "a"), (2, "from sub"), (3, "from pub")]
    assert d.rows(d.subscriber, p.table) == [(1, "a"), (2, "from sub")], "nothing was pushed"
    copy = f"{p.item}_{p.server}".replace("@", "_")  # the tag: ":" and "@" become "_"
    assert metric_values(d.statsd, "airflow.snaprepl.sync.conflicts", copy) == ["0|c"], d.statsd.lines()
    [pulled] = lineage_events(d, f"{p.dag_id}.pull__{p.server}")
    source = json.loads(d.cluster.env[f"AIRFLOW_CONN_{SRC.upper()}"])
    assert [(i["namespace"], i["name"]) for i in pulled["inputs"]] == [
        (f"sqlite://{os.path.realpath(d.subscriber.name)}", f"main.{p.table}")
    ], pulled["inputs"]
    [output] = pulled["outputs"]
    assert (output["namespace"], output["name"]) == (
        f"postgres://{source['host']}:{source['port']}",
        f"{source['schema']}.public.{p.table}",
    )
    assert output["outputFacets"]["outputStatistics"]["rowCount"] == 1

    push = d.cluster.trigger(p.dag_id, conf={"direction": "push only"})
    d.cluster.wait_for_run(p.dag_id, push, timeout=300)
    states = {t["task_id"]: t["state"] for t in d.cluster.task_instances(p.dag_id, push)}
    assert states == {f"pull__{p.server}": "skipped", "pulls_done": "success", f"push__{p.server}": "success"}, states
    assert d.rows(d.subscriber, p.table) == d.rows(d.source, p.table)
    # The history names the DAG run each step ran in (Airflow's task environment reaches the job).
    recent = [(r.rh_kind, r.rh_outcome, r.rh_dag_run_id) for r in d.catalog.history(p.item, limit=2)]
    assert recent == [("push", "ok", push), ("pull", "ok", pull)], recent
    with pytest.raises(AssertionError, match="HTTP 400"):
        d.cluster.trigger(p.dag_id, conf={"direction": "sideways"})


def test_a_backfill_of_a_sync_pulls_then_reloads_each_replica_once(
    deployment: Deployment, publication: Publication
) -> None:
    d, p = deployment, publication
    d.subscriber.run(f"UPDATE {p.table} SET v = 'changed on sub' WHERE id = 1")
    d.catalog.update_publication(p.item, sp_schedule=HOURLY)
    d.wait_for_schedule(p.dag_id)
    before = d.catalog.subscription(p.server, p.item)

    backfill = d.backfill(p.dag_id, "2024-06-01T00:00:00Z", "2024-06-01T01:00:00Z", max_active_runs=1)
    runs = sorted(r["dag_run_id"] for r in d.cluster.dag_runs(p.dag_id, "backfill"))
    assert len(runs) == 2, runs
    d.wait_for_runs(p.dag_id, [*runs, *(r["dag_run_id"] for r in d.cluster.dag_runs(p.dag_id, "scheduled"))])

    pushes = {run: d.cluster.xcom(p.dag_id, run, f"push__{p.server}") for run in runs}
    reloads = [run for run, outcomes in pushes.items() if "already_done" not in outcomes[0]]
    assert len(reloads) == 1 and pushes[reloads[0]][0]["step"] == "init", pushes
    [other] = [run for run in runs if run not in reloads]
    assert "already happened" in pushes[other][0]["already_done"] and pushes[other][0]["backfill_id"] == str(
        backfill["id"]
    )
    after = d.catalog.subscription(p.server, p.item)
    assert before is not None and after is not None and after.ss_last_push_at > before.ss_last_push_at
    # The subscriber's change was pulled before the reload, so the reload kept it.
    assert d.rows(d.subscriber, p.table) == d.rows(d.source, p.table)
    assert d.rows(d.source, p.table)[0] == (1, "changed on sub")


def test_a_refresh_task_logs_progress_and_reports_metrics_andlineage_events(deployment: Deployment) -> None:
    d = deployment
    src = d.source.q(d.table)
    d.source.run(f"INSERT INTO {src} VALUES (5, 'five')", f"DELETE FROM {src} WHERE id = 1")
    run = d.cluster.trigger(d.dag_id, conf={"mode": "incremental"})
    d.cluster.wait_for_run(d.dag_id, run, timeout=300)
    assert d.rows(d.dest, d.table) == d.rows(d.source, d.table)

    log = d.cluster.task_log(d.dag_id, run)
    progress = re.findall(r"snaprepl progress: incremental refresh of \S+: (\d+) rows so far of 2", log)
    assert progress == ["0", "2"], f"the job's progress lines reach the task log: {log[-3000:]}"

    copy = d.snapshot.replace("@", "_")
    deadline = time.monotonic() + 30  # UDP: give the datagrams a moment
    while time.monotonic() < deadline and not metric_values(d.statsd, "airflow.snaprepl.refresh.rows", copy):
        time.sleep(0.5)
    assert "2|c" in metric_values(d.statsd, "airflow.snaprepl.refresh.rows", copy), d.statsd.lines()
    assert metric_values(d.statsd, "airflow.snaprepl.refresh.duration", copy), "a timing, tagged by copy"
    # The run applied every pending change: the copy is caught up (lag 0, nothing left in its log).
    assert metric_values(d.statsd, "airflow.snaprepl.refresh.lag_seconds", copy)[-1:] == ["0.0|g"], d.statsd.lines()
    assert metric_values(d.statsd, "airflow.snaprepl.log.backlog", copy)[-1:] == ["0|g"], d.statsd.lines()
    named = f"airflow.snaprepl.refresh.rows.{d.snapshot.replace('.', '__').replace('@', '_')},kind=incremental:2|c"
    assert named in d.statsd.lines(), "the copy in the name too, for StatsD without tags"

    done = lineage_events(d, f"{d.dag_id}.refresh")[-1]
    source = json.loads(d.cluster.env[f"AIRFLOW_CONN_{SRC.upper()}"])
    assert [(i["namespace"], i["name"]) for i in done["inputs"]] == [
        (f"postgres://{source['host']}:{source['port']}", f"{source['schema']}.public.{d.table}")
    ], done["inputs"]
    [output] = done["outputs"]
    assert (output["namespace"], output["name"]) == (f"sqlite://{os.path.realpath(d.dest.name)}", f"main.{d.table}")
    assert output["outputFacets"]["outputStatistics"]["rowCount"] == 2

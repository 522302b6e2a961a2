"""The DAGs generated from the catalog (dags/snaprepl_dags.py), parsed by Airflow's own DagBag."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import Asset, CronDataIntervalTimetable
from airflow.utils.types import DagRunType

from snaprepl import api, run_script
from snaprepl.airflow.operators import SnapshotRefreshOperator, resolve_mode
from snaprepl.airflow.purge_dags import log_purge_task_id
from snaprepl.catalog.store import reset_open_catalog
from snaprepl.common.dag_names import LOG_PURGE_DAG, RPLOG_PURGE_DAG, snapshot_dag_id

pytestmark = pytest.mark.airflow

REPO = Path(__file__).resolve().parents[3]
DAG_FILE = REPO / "dags" / "snaprepl_dags.py"


def dagbag():
    from airflow.dag_processing.dagbag import DagBag

    assert DAG_FILE.is_file(), DAG_FILE  # a DagBag of a missing file is silently empty
    return DagBag(dag_folder=str(DAG_FILE))


@pytest.fixture(scope="module")
def snapshots(pg_db, sqlite_db, catalog, settings, refresher) -> dict[str, str]:
    pg_db.run("CREATE TABLE dag_orders (id int PRIMARY KEY, v text)", "INSERT INTO dag_orders VALUES (1, 'a')")
    run_script(
        f"CREATE SNAPSHOT LOG FOR dag_orders@{pg_db.conn_id};"
        f"CREATE SNAPSHOT dag_copy@{sqlite_db.conn_id} FROM dag_orders@{pg_db.conn_id} SCHEDULE '*/10 * * * *';"
        f"CREATE NONINCREMENTAL SNAPSHOT dag_count@{sqlite_db.conn_id} AS "
        f"'SELECT COUNT(*) AS n FROM dag_orders@{pg_db.conn_id}'",
        catalog=catalog,
        settings=settings,
        refresher=refresher,
    )
    return {
        "incremental": f"main.dag_copy@{sqlite_db.conn_id}",
        "nonincremental": f"main.dag_count@{sqlite_db.conn_id}",
        "log": f"public.dag_orders@{pg_db.conn_id}",
    }


def test_generated_dags_import_cleanly_with_their_schedule_params_and_asset(snapshots) -> None:
    bag = dagbag()
    assert bag.import_errors == {}
    dag = bag.dags[snapshot_dag_id(snapshots["incremental"])]
    assert isinstance(dag.timetable, CronDataIntervalTimetable), "cron schedules get real data intervals"
    assert dag.timetable.expression == "*/10 * * * *"
    assert dag.max_active_runs == 1 and dag.catchup is False
    assert {"snaprepl", "snapshot", "incremental"} <= set(dag.tags)
    assert snapshots["incremental"] in dag.doc_md
    assert dag.params["mode"] == "incremental" and dag.params["fallback_complete"] is False
    assert dag.params.get_param("mode").schema["enum"] == ["incremental", "nonincremental"]
    task = dag.get_task("refresh")
    assert isinstance(task, SnapshotRefreshOperator) and isinstance(task, SparkSubmitOperator)
    assert task.snapshot == snapshots["incremental"] and task.retries == 2
    assert task.outlets == [
        Asset(
            name=f"snaprepl.snapshot.{snapshots['incremental']}",
            uri=f"snaprepl://{snapshots['incremental'].split('@')[1]}/main/dag_copy",
            group="snaprepl",
        )
    ]

    manual = bag.dags[snapshot_dag_id(snapshots["nonincremental"])]
    assert manual.timetable.can_be_scheduled is False and manual.params["mode"] == "nonincremental"

    assert isinstance(bag.dags[RPLOG_PURGE_DAG].timetable, CronDataIntervalTimetable)
    purge_tasks = [t.task_id for t in bag.dags[LOG_PURGE_DAG].tasks]
    assert log_purge_task_id(snapshots["log"]) in purge_tasks


def test_dags_appear_and_disappear_with_snapshots(snapshots, pg_db, sqlite_db, catalog, settings, refresher) -> None:
    name = f"main.dag_extra@{sqlite_db.conn_id}"
    assert snapshot_dag_id(name) not in dagbag().dags
    api.repl_create_inc_snapshot(
        None, f"dag_orders@{pg_db.conn_id}", None, f"dag_extra@{sqlite_db.conn_id}",
        catalog=catalog, settings=settings, refresher=refresher,
    )  # fmt: skip
    assert snapshot_dag_id(name) in dagbag().dags
    api.repl_drop_snapshot(f"dag_extra@{sqlite_db.conn_id}", 1, catalog=catalog)
    assert snapshot_dag_id(name) not in dagbag().dags


def test_an_unreadable_catalog_is_an_import_error_not_silence(snapshots, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_SNAPREPL_CATALOG", f"sqlite:///{tmp_path / 'not-migrated.db'}")
    reset_open_catalog()
    try:
        bag = dagbag()
    finally:
        monkeypatch.undo()
        reset_open_catalog()
    assert bag.dags == {}
    assert list(bag.import_errors) == [str(DAG_FILE)]
    assert "snaprepl catalog" in bag.import_errors[str(DAG_FILE)]


@pytest.mark.parametrize(
    ("context", "expected"),
    [
        ({}, ("incremental", False)),
        ({"params": {"mode": "nonincremental"}}, ("complete", False)),
        ({"params": {"mode": "incremental", "fallback_complete": True}}, ("incremental", True)),
        (
            {"dag_run": SimpleNamespace(run_type=DagRunType.BACKFILL_JOB), "params": {"mode": "incremental"}},
            ("complete", False),
        ),
        ({"dag_run": SimpleNamespace(run_type=DagRunType.SCHEDULED)}, ("incremental", False)),
    ],
)
def test_the_run_decides_the_refresh_mode(context, expected) -> None:
    assert resolve_mode("incremental", context) == expected


def test_airflow_dags_test_runs_a_generated_dag(snapshots, pg_db, sqlite_db) -> None:
    pg_db.run("INSERT INTO dag_orders VALUES (2, 'b')", "UPDATE dag_orders SET v = 'changed' WHERE id = 1")
    dag_id = snapshot_dag_id(snapshots["incremental"])
    result = subprocess.run(
        [sys.executable, "-m", "airflow", "dags", "test", dag_id],
        capture_output=True,
        text=True,
        env={**os.environ, "AIRFLOW__LOGGING__LOGGING_LEVEL": "INFO"},
        timeout=600,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "state=success" in output
    assert sorted(sqlite_db.rows("SELECT id, v FROM dag_copy")) == [(1, "changed"), (2, "b")]


def test_an_idle_scheduled_refresh_task_starts_no_spark_submit(snapshots, catalog, refresher, monkeypatch) -> None:
    from snaprepl.airflow.operators import SnapreplSparkOperator

    def no_spark_submit(*args: object, **kwargs: object) -> None:
        raise AssertionError("an idle refresh must not start spark-submit")

    name = snapshots["incremental"]
    api.repl_refresh_inc_snapshot(name, catalog=catalog, refresher=refresher)  # earlier changes applied
    before = catalog.snapshot(name).sn_last_refresh_at
    monkeypatch.setattr(SnapreplSparkOperator, "_run_submission", no_spark_submit)
    task = SnapshotRefreshOperator(task_id="idle_refresh", snapshot=name)

    result = task.execute({"dag_run": SimpleNamespace(run_type=DagRunType.SCHEDULED, conf={}), "params": {}})

    assert (result["kind"], result["rows_upserted"], result["rows_deleted"]) == ("incremental", 0, 0)
    record = catalog.snapshot(name)
    assert record.sn_last_status == "succeeded" and record.sn_last_refresh_at > before


def test_a_name_whose_dag_id_another_snapshot_has_is_refused_at_creation(
    snapshots, pg_db, sqlite_db, catalog, settings, refresher, monkeypatch
) -> None:
    from snaprepl.catalog.records import SnapshotRecord, utcnow
    from snaprepl.common import dag_names as naming
    from snaprepl.errors import SnapshotExists

    monkeypatch.setattr(naming, "digest", lambda text: "0" * 10)  # a hash collision, made to happen
    taken = f"main.dag copy@{sqlite_db.conn_id}"
    catalog.add_snapshot(
        SnapshotRecord(
            sn_name=taken, sn_query="SELECT 1", sn_source_conn=pg_db.conn_id, sn_dest_conn=sqlite_db.conn_id,
            sn_dest_schema="main", sn_dest_table="dag copy", sn_created_at=utcnow(),
        ),
        AssertionError("exists"),
    )  # fmt: skip
    try:
        with pytest.raises(SnapshotExists, match=f"would share its Airflow DAG id with {taken}"):
            api.repl_create_inc_snapshot(
                None, f"dag_orders@{pg_db.conn_id}", None, f'"dag-copy"@{sqlite_db.conn_id}',
                catalog=catalog, settings=settings, refresher=refresher,
            )  # fmt: skip
        assert not sqlite_db.table_exists("dag-copy"), "nothing was created"
    finally:
        catalog.delete_snapshot(taken)


def test_a_refresh_that_cannot_succeed_fails_its_task_without_a_retry(pg_db, sqlite_db, catalog, settings, refresher):
    """The job's error crosses the process boundary by class name; a non-retryable class becomes an
    AirflowFailException naming it, which Airflow fails at once instead of spending the task's retries."""
    from airflow.sdk.exceptions import AirflowFailException

    pg_db.run("CREATE TABLE dag_doomed (id int PRIMARY KEY, v text)", "INSERT INTO dag_doomed VALUES (1, 'a')")
    run_script(
        f"CREATE SNAPSHOT LOG FOR dag_doomed@{pg_db.conn_id};"
        f"CREATE SNAPSHOT dag_doomed_copy@{sqlite_db.conn_id} FROM dag_doomed@{pg_db.conn_id}",
        catalog=catalog,
        settings=settings,
        refresher=refresher,
    )
    pg_db.run("DROP TABLE dag_doomed CASCADE")
    task = SnapshotRefreshOperator(task_id="doomed", snapshot=f"main.dag_doomed_copy@{sqlite_db.conn_id}", retries=2)
    context = {"dag_run": SimpleNamespace(run_type=DagRunType.MANUAL, conf={}), "params": {"mode": "nonincremental"}}

    with pytest.raises(AirflowFailException) as failed:
        task.execute(context)

    assert str(failed.value).startswith("TableNotFound: source table public.dag_doomed@"), failed.value

"""The DAGs generated for publications: a pull per loaded subscriber, one after another, then the
pushes in parallel (each after its own pull); and the scheduled purge of the update replay log."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import CronDataIntervalTimetable

from snaprepl.airflow.operators import ReplicationSyncOperator
from snaprepl.common.dag_names import URPLOG_PURGE_DAG, publication_dag_id, task_key
from tests.support.bidir import Servers, change

pytestmark = pytest.mark.airflow

DAG_FILE = Path(__file__).resolve().parents[3] / "dags" / "snaprepl_dags.py"


def dagbag() -> Any:
    from airflow.dag_processing.dagbag import DagBag

    return DagBag(dag_folder=str(DAG_FILE))


def test_a_publications_dag_pulls_in_order_then_pushes_in_parallel(
    servers: Servers, items: Callable[..., str], sql: Callable[[str], list[Any]]
) -> None:
    table = items([(1, "a", "1.00")])
    item = f"public.{table}@bd_pub"
    sql(f"REPL_SET_PUBLICATION_SCHEDULE('{table}@bd_pub', '*/15 * * * *')")

    bag = dagbag()

    assert bag.import_errors == {}
    dag = bag.dags[publication_dag_id(item)]
    first, second = sorted(servers.name(s) for s in servers.subscribers)
    pulls = [dag.get_task(f"pull__{task_key(s)}") for s in (first, second)]
    pushes = [dag.get_task(f"push__{task_key(s)}") for s in (first, second)]
    assert pulls[0].downstream_task_ids == {pulls[1].task_id, pushes[0].task_id}, "pulls write the publisher in turn"
    assert pulls[1].downstream_task_ids == {"pulls_done", pushes[1].task_id}
    assert dag.get_task("pulls_done").downstream_task_ids == {p.task_id for p in pushes}
    assert all(p.downstream_task_ids == set() for p in pushes)
    assert [p.upstream_task_ids for p in pushes] == [{pull.task_id, "pulls_done"} for pull in pulls]
    for task in pulls + pushes:
        assert isinstance(task, ReplicationSyncOperator) and isinstance(task, SparkSubmitOperator)
        assert task.item == item and task.max_active_tis_per_dag == 1
    assert [t.server for t in pulls] == [first, second] and [t.action for t in pushes] == ["push", "push"]
    assert isinstance(dag.timetable, CronDataIntervalTimetable) and dag.timetable.expression == "*/15 * * * *"
    assert {"snaprepl", "publication"} <= set(dag.tags) and item in dag.doc_md
    assert dag.max_active_runs == 1
    assert isinstance(bag.dags[URPLOG_PURGE_DAG].timetable, CronDataIntervalTimetable)


def test_a_subscriber_joins_the_dag_once_loaded(servers: Servers, sql: Callable[[str], list[Any]]) -> None:
    table = "dag_join"
    servers.pub.run(f"CREATE TABLE {table} (id int PRIMARY KEY, v int)", f"INSERT INTO {table} VALUES (1, 1)")
    item = f"public.{table}@bd_pub"
    lite = servers.name(servers.lite)
    sql(f"REPL_CREATE_SNAPSHOT_PUB('{item}', 2); REPL_CREATE_SNAPSHOT_SUB('{lite}', '{item}', 2)")
    assert publication_dag_id(item) not in dagbag().dags, "nothing to sync before an initial load"

    sql(f"REPL_INIT_SNAPSHOT('{lite}', '{item}', 2)")

    assert {t.task_id for t in dagbag().dags[publication_dag_id(item)].tasks} == {
        f"pull__{task_key(lite)}",
        "pulls_done",
        f"push__{task_key(lite)}",
    }
    sql(f"REPL_DROP_SNAPSHOT_PUB('{item}', 2)")
    assert publication_dag_id(item) not in dagbag().dags


def test_the_urplog_purge_dag_ages_each_direction_by_its_own_watermark(
    servers: Servers, items: Callable[..., str], sql: Callable[[str], list[Any]], catalog: Any
) -> None:
    table = items([(k, "x", "1.00") for k in range(1, 6)])
    item = f"public.{table}@bd_pub"
    publisher, my = servers.name(servers.pub), servers.name(servers.my)
    for key in (1, 2):
        change(servers.my, f"UPDATE {table} SET name = ? WHERE item_id = ?", "first", key)
    sql(f"REPL_UPDATE_SNAPSHOT('{item}', 2)")
    change(servers.my, f"UPDATE {table} SET name = ? WHERE item_id = ?", "later", 3)
    sql(f"REPL_UPDATE_SNAPSHOT('{item}', 2)")
    pulled = catalog.urplog_size(item, my, publisher)
    pushed = catalog.urplog_size(item, publisher, servers.name(servers.lite))
    assert (pulled, pushed) == (3, 3)

    result = subprocess.run(
        [sys.executable, "-m", "airflow", "dags", "test", URPLOG_PURGE_DAG],
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "AIRFLOW__SNAPREPL__SNP_REPL_PURGE_OFFSET": "0",
            "AIRFLOW__SNAPREPL__SNP_REPL_TOLERANCE_OFFSET": "0",
        },
        timeout=600,
    )

    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    # With no offset, what is older than each direction's watermark goes: the first sync's entries.
    assert catalog.urplog_size(item, my, publisher) == 1
    assert catalog.urplog_size(item, publisher, servers.name(servers.lite)) == 1

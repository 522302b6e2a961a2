"""A publication of tests/integration/airflow/test_scheduler_run.py with three SQLite subscribers, one
of which the tests make unreachable (its server pointed at a connection to a closed port)."""

from __future__ import annotations

import sys
import uuid
from dataclasses import dataclass

import pytest

from snaprepl.common.dag_names import publication_dag_id, task_key
from tests.support.databases import RealDatabase
from tests.support.scheduler_deployment import GONE, PASSWORD, SRC, SUB, SUB2, Deployment


@dataclass
class ThreeSubscribers:
    deployment: Deployment
    table: str
    item: str
    dag_id: str

    def replica(self, name: str) -> RealDatabase:
        path = self.deployment.cluster.env[f"AIRFLOW_CONN_{name.upper()}"].removeprefix("sqlite:///")
        return RealDatabase("sqlite", name, path)

    def rows(self, db: RealDatabase) -> list[tuple]:
        return sorted(tuple(r) for r in db.rows(f'SELECT id, name, "ROWGUID" FROM {db.q(self.table)}'))


@pytest.fixture(scope="module")
def three_subscribers(deployment: Deployment) -> ThreeSubscribers:
    """A PostgreSQL table published to SUB, SUB2 and GONE, each loaded (all through the CLI)."""
    d = deployment
    table = f"p3_{uuid.uuid4().hex[:10]}"
    d.source.run(
        f"CREATE TABLE {table} (id int PRIMARY KEY, name varchar(40))",
        f"INSERT INTO {table} VALUES (1, 'one'), (2, 'two'), (3, 'three')",
    )
    statements = [f"REPL_CREATE_SNAPSHOT_PUB('{table}@{SRC}', 2)"]
    for sub in (SUB, SUB2, GONE):
        statements.append(f"REPL_CREATE_SNAPSHOT_SUB(REPL_SNP_SERVER('{sub}'), '{table}@{SRC}', 2)")
        statements.append(f"REPL_INIT_SNAPSHOT(REPL_SERVER_NAME('{sub}'), '{table}@{SRC}', 2)")
    created = d.cluster.run([sys.executable, "-m", "snaprepl", "sql", "; ".join(statements)], timeout=900)
    assert created.returncode == 0, f"snaprepl sql failed:\n{created.stdout[-3000:]}\n{created.stderr[-3000:]}"
    assert PASSWORD not in created.stdout + created.stderr, "the CLI printed the publisher's password"
    item = f"public.{table}@{SRC}"
    dag_id = publication_dag_id(item)
    d.cluster.wait_for_dag(dag_id)
    # The DAG appears with the first subscriber loaded; a run triggered before it has all three would
    # push to one before pulling another (the dags folder is not versioned: new tasks join the run).
    d.cluster.wait_for_tasks(dag_id, {f"{step}__{task_key(s)}" for step in ("pull", "push") for s in (SUB, SUB2, GONE)})
    return ThreeSubscribers(d, table, item, dag_id)

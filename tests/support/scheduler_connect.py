"""A snapshot of the scheduler deployment whose DAG runs on a Spark Connect server (its own Spark
connection, of type spark_connect), and the Spark REST API the kill scenario reads."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from snaprepl.common.dag_names import snapshot_dag_id
from tests.support.scheduler_deployment import DST, SRC, Deployment

#: The Spark connection of type spark_connect one snapshot's DAG uses (the others spark-submit).
CONNECT = "sched_connect"


@dataclass
class ConnectSnapshot:
    deployment: Deployment
    table: str
    dest_table: str
    snapshot: str
    dag_id: str
    token: str
    ui: str

    def nap(self, seconds: float) -> None:
        """Make the snapshot's query sleep ``seconds`` per row (PostgreSQL's pg_sleep)."""
        self.deployment.source.run(f"UPDATE {self.table}_delay SET d = {seconds}")

    def source_rows(self) -> list[tuple]:
        return self.deployment.source.rows(f"SELECT id, v FROM {self.table} ORDER BY id")

    def dest_rows(self) -> list[tuple]:
        return self.deployment.dest.rows(f"SELECT id, v FROM {self.dest_table} ORDER BY id")


@pytest.fixture(scope="module")
def connect_snapshot(deployment: Deployment, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConnectSnapshot]:
    """A nonincremental snapshot whose DAG runs on a Spark Connect server this fixture starts (and
    stops), named by an Airflow connection defined through the REST API, as a user would."""
    from snaprepl.submit import server
    from tests.support.airflow_logs import free_port

    d = deployment
    table = f"c_{uuid.uuid4().hex[:10]}"
    d.source.run(
        f"CREATE TABLE {table} (id int PRIMARY KEY, v varchar(20))",
        f"INSERT INTO {table} SELECT g, 'v' || g FROM generate_series(1, 40) g",
        f"CREATE TABLE {table}_delay (d float)",
        f"INSERT INTO {table}_delay VALUES (0)",
        f"CREATE FUNCTION {table}_nap() RETURNS int LANGUAGE sql VOLATILE AS "
        f"$$ SELECT 1 FROM (SELECT pg_sleep(d) FROM {table}_delay) s $$",
    )
    state = tmp_path_factory.mktemp("connect-state")
    ui_port = free_port()
    info = server.start(free_port(), master="local[2]", directory=state / "connect-server", ui_port=ui_port)
    try:
        assert info.token
        conn = {"connection_id": CONNECT, "conn_type": "spark_connect", "host": "localhost", "port": info.port}
        d.cluster.api("POST", "/api/v2/connections", {**conn, "password": info.token})
        query = f"SELECT id, v FROM {table}@{SRC} WHERE {table}_nap() = 1"
        statements = (
            f"CREATE NONINCREMENTAL SNAPSHOT {table}_copy@{DST} AS '{query}'; "
            f"REPL_SET_SNAPSHOT_SPARK_CONN('{table}_copy@{DST}', '{CONNECT}')"
        )
        env = {**d.cluster.env, "AIRFLOW__SNAPREPL__SPARK_CONN_ID": CONNECT, "SNAPREPL_STATE_DIR": str(state)}
        created = subprocess.run(
            [sys.executable, "-m", "snaprepl", "sql", "-v", statements], capture_output=True, text=True, env=env
        )
        assert created.returncode == 0, f"snaprepl sql failed:\n{created.stdout[-3000:]}\n{created.stderr[-3000:]}"
        assert "Spark-Submit cmd" not in created.stdout + created.stderr, (
            "the CLI ran the first refresh by spark-submit"
        )
        assert f"Spark connection {CONNECT} (connect mode)" in created.stdout
        (record,) = d.catalog.snapshots_named(DST, f"{table}_copy")
        assert record.sn_spark_conn == CONNECT
        dag_id = snapshot_dag_id(record.sn_name)
        d.cluster.wait_for_dag(dag_id)
        ui = f"http://127.0.0.1:{ui_port}"
        yield ConnectSnapshot(d, table, f"{table}_copy", record.sn_name, dag_id, info.token, ui)
    finally:
        server.stop(state / "connect-server")


def wait_until(ready: Callable[[], object], what: str, *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, f"waited {timeout:.0f} s for {what}"
        time.sleep(1)


def get_json(url: str) -> Any:
    """A JSON document of Spark's REST API (its first answer can take seconds on a busy machine)."""
    with urllib.request.urlopen(url, timeout=60) as response:
        return json.loads(response.read())


def app_id(ui: str) -> str:
    return str(get_json(f"{ui}/api/v1/applications")[0]["id"])


def running_jobs(ui: str) -> list[dict[str, Any]]:
    return [j for j in get_json(f"{ui}/api/v1/applications/{app_id(ui)}/jobs") if j["status"] == "RUNNING"]

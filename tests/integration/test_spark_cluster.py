"""Refreshes on a real Spark standalone cluster (a master and two workers on loopback): the path of
users who outgrow one machine. The Spark connection names the master, and spark-submit runs the
driver here (client mode); or it names a Spark Connect server attached to the master. Either way
the executors run on the workers."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from snaprepl.spark.partitioning import ROWS_PER_PARTITION
from tests.support.databases import RealDatabase
from tests.support.processes import wait_for
from tests.support.spark_cluster import SparkCluster, free_port, spark_cluster

pytestmark = [pytest.mark.spark, pytest.mark.slow]

#: Enough for two partitions even if MariaDB's row estimate is a little short: the complete refresh
#: reads the source in two key ranges.
ROWS = ROWS_PER_PARTITION + 50_000


@pytest.fixture(scope="module")
def cluster(session_dir: Path) -> Iterator[SparkCluster]:
    with spark_cluster(session_dir / "spark-cluster", workers=2) as running:
        yield running


def snaprepl(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "snaprepl", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=600,
    )


def _source_table(db: RealDatabase, table: str) -> None:
    db.run(
        f"CREATE TABLE {table} (id int PRIMARY KEY, v varchar(12), n decimal(12, 2))",
        f"INSERT INTO {table} SELECT seq, seq * 3, seq / 7 FROM seq_1_to_{ROWS}",
        f"ANALYZE TABLE {table}",  # the row estimate the partitioning reads
    )


def _finished_app(cluster: SparkCluster, prefix: str) -> dict[str, object]:
    def finished() -> list[dict[str, object]]:
        return [a for a in cluster.status()["completedapps"] if str(a["name"]).startswith(prefix)]

    apps = wait_for(finished, 30, interval=0.5)
    assert isinstance(apps, list) and len(apps) == 1, f"one finished {prefix} application: {cluster.status()}"
    return apps[0]


def _create_and_fill(mysql_db: RealDatabase, pg_db: RealDatabase, name: str, env: dict[str, str]) -> str:
    """Create a MariaDB table of :data:`ROWS` rows and a snapshot of it in PostgreSQL, filled by a
    complete refresh; check the copy equals the source; the CLI's output."""
    src = f"{name}_s"
    _source_table(mysql_db, src)
    created = snaprepl(
        "sql",
        "-v",
        f"CREATE SNAPSHOT LOG FOR {src}@{mysql_db.conn_id}; "
        f"CREATE SNAPSHOT {name}@{pg_db.conn_id} FROM {src}@{mysql_db.conn_id}",
        env=env,
    )
    output = created.stdout + created.stderr
    assert created.returncode == 0, output[-4000:]
    assert f"created and filled: {ROWS} rows" in created.stdout
    columns = "id, v, n"
    copied = pg_db.rows(f"SELECT {columns} FROM {name} ORDER BY id")
    assert copied == mysql_db.rows(f"SELECT {columns} FROM {src} ORDER BY id"), "the copy equals the source"
    return output


def test_a_complete_refresh_reads_on_both_workers(
    cluster: SparkCluster, mysql_db: RealDatabase, pg_db: RealDatabase, catalog: object, unique_name: str
) -> None:
    """spark-submit against the master; MariaDB to PostgreSQL: executors read with JDBC (the driver
    jars came with --jars) and write with the COPY writer (Python tasks that import snaprepl)."""
    output = _create_and_fill(mysql_db, pg_db, unique_name, cluster.client_env())
    assert f"--master {cluster.master_url}" in output, "spark-submit ran against the cluster's master"
    app = _finished_app(cluster, "snaprepl-refresh-")
    _assert_ran_on_every_worker(cluster, str(app["id"]))


def _assert_ran_on_every_worker(cluster: SparkCluster, app_id: str) -> None:
    """Application ``app_id`` had an executor on each worker, each fetched the JDBC driver from the
    driver, and tasks ran on both (its event log)."""
    by_worker = cluster.executors_by_worker(app_id)
    assert len(by_worker) == 2 and all(by_worker.values()), f"an executor on each worker: {by_worker}"
    jars = {
        worker: sorted(n for n in files if n.endswith(".jar"))
        for worker, files in cluster.fetched_files(app_id).items()
    }
    assert len(jars) == 2 and all(any(n.startswith("mariadb-java-client") for n in j) for j in jars.values()), (
        f"each worker's executor fetched the JDBC driver from the driver (--jars): {jars}"
    )
    ran = set(cluster.task_executors(app_id))
    assert all(ran & executors for executors in by_worker.values()), (
        f"tasks ran on executors {ran}; executors per worker: {by_worker}"
    )


def test_a_connect_server_on_the_cluster_refreshes_on_both_workers(
    cluster: SparkCluster,
    mysql_db: RealDatabase,
    pg_db: RealDatabase,
    catalog: object,
    unique_name: str,
    tmp_path: Path,
) -> None:
    """`snaprepl spark-server start --master spark://...`, then the same refresh in connect mode: the
    job runs in the CLI's process, its Spark work on the server's executors on both workers."""
    env = {**cluster.client_env(), "SNAPREPL_STATE_DIR": str(tmp_path / "state")}
    started = snaprepl("spark-server", "start", "--master", cluster.master_url, "--port", str(free_port()), env=env)
    try:
        assert started.returncode == 0, (started.stdout + started.stderr)[-4000:]
        assert f"master {cluster.master_url}" in started.stdout
        name, _, value = started.stdout.strip().splitlines()[-1].partition("=")
        assert name == "AIRFLOW_CONN_SNAPREPL_SPARK" and '"spark_connect"' in value, started.stdout
        env[name] = value.strip("'")
        output = _create_and_fill(mysql_db, pg_db, unique_name, env)
        assert "Spark-Submit cmd" not in output, "connect mode runs no spark-submit"
        [app] = cluster.status()["activeapps"]  # the server: the cluster's one running application
        _assert_ran_on_every_worker(cluster, str(app["id"]))
    finally:
        stopped = snaprepl("spark-server", "stop", env=env)
        assert stopped.returncode == 0, stopped.stderr[-2000:]

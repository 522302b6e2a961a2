"""The Airflow deployment tests/integration/airflow/test_airflow_uses.py runs its scenarios on, and
the helpers those scenarios read it with (lineage events, StatsD metrics, import errors, task logs).

:func:`started` starts it: Airflow's default of pausing new DAGs, a TLS-only PostgreSQL source, SQLite
destination and subscriber, a PostgreSQL metadata database holding the catalog, reached by tasks and
DAG parsing as a role granted by ``snaprepl catalog grant``, metrics to a StatsD listener and lineage
to a file.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from snaprepl.catalog.location import connection_from_url
from snaprepl.catalog.store import Catalog
from snaprepl.common.dag_names import snapshot_dag_id
from tests.support.airflow_cluster import AirflowCluster
from tests.support.databases import PG_ADMIN, RealDatabase, pg_admin_connect
from tests.support.statsd import StatsdListener

SRC, DST, SUB = "uses_src", "uses_dst", "uses_sub"
CATALOG_PASSWORD = "catalog-role-pw"
HOURLY = "0 * * * *"


@dataclass
class Deployment:
    cluster: AirflowCluster
    catalog: Catalog
    source: RealDatabase
    dest: RealDatabase
    subscriber: RealDatabase
    table: str
    snapshot: str
    dag_id: str
    statsd: StatsdListener
    lineage_file: Path

    def sql(self, statements: str) -> None:
        done = self.cluster.run([sys.executable, "-m", "snaprepl", "sql", statements])
        assert done.returncode == 0, f"snaprepl sql failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"

    def rows(self, db: RealDatabase, table: str) -> list[tuple]:
        return db.rows(f"SELECT id, v FROM {db.q(table)} ORDER BY id")

    def wait_for_schedule(self, dag_id: str, timeout: float = 90) -> None:
        """Wait until the dag-processor has seen the DAG's (new) schedule."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.cluster.api("GET", f"/api/v2/dags/{dag_id}").get("timetable_summary") == HOURLY:
                return
            time.sleep(1)
        self.cluster.fail(f"{dag_id} got no schedule within {timeout} s")

    def backfill(self, dag_id: str, from_date: str, to_date: str, **options: object) -> dict:
        """Create a backfill, once the DAG version that has the new schedule is the latest one."""
        deadline = time.monotonic() + 90
        while True:
            try:
                return self.cluster.backfill(dag_id, from_date, to_date, **options)
            except AssertionError as err:
                if "non-periodic schedule" not in str(err) or time.monotonic() > deadline:
                    raise
            time.sleep(2)

    def wait_for_runs(self, dag_id: str, run_ids: list[str], timeout: float = 420) -> None:
        deadline = time.monotonic() + timeout
        for run_id in run_ids:
            self.cluster.wait_for_run(dag_id, run_id, timeout=max(deadline - time.monotonic(), 10))


def _cluster(home: Path, source_conn: str, files: Path, metadata_db: str, statsd: StatsdListener) -> AirflowCluster:
    return AirflowCluster(
        home,
        env={
            f"AIRFLOW_CONN_{SRC.upper()}": source_conn,
            f"AIRFLOW_CONN_{DST.upper()}": f"sqlite:///{files / 'dest.db'}",
            f"AIRFLOW_CONN_{SUB.upper()}": f"sqlite:///{files / 'sub.db'}",
            "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "True",  # Airflow's default
            "AIRFLOW__SNAPREPL__BUSY_WAIT_SECONDS": "15",
            "SNAPREPL_TEST_CATALOG_PW": CATALOG_PASSWORD,
            "AIRFLOW__METRICS__STATSD_ON": "True",
            "AIRFLOW__METRICS__STATSD_HOST": "127.0.0.1",
            "AIRFLOW__METRICS__STATSD_PORT": str(statsd.port),
            "AIRFLOW__METRICS__STATSD_INFLUXDB_ENABLED": "True",
            "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(
                {"type": "file", "log_file_path": str(files / "openlineage.jsonl"), "append": True}
            ),
        },
        database_url=f"postgresql://{PG_ADMIN['user']}@{PG_ADMIN['host']}:{PG_ADMIN['port']}/{metadata_db}",
    )


def _boot(deployed: Deployment, role: str) -> None:
    """As deployed: the owner grants the catalog role, and the scheduler's tasks and the dag-processor
    (spawned after this) reach the catalog only through that role."""
    cluster, table = deployed.cluster, deployed.table
    granted = cluster.run(
        [sys.executable, "-m", "snaprepl", "catalog", "grant", role, "--password-env", "SNAPREPL_TEST_CATALOG_PW"]
    )
    assert granted.returncode == 0, granted.stderr
    cluster.env["AIRFLOW_CONN_SNAPREPL_CATALOG"] = cluster.database_url.replace(
        f"//{PG_ADMIN['user']}@", f"//{role}:{CATALOG_PASSWORD}@"
    )
    deployed.sql(f"CREATE SNAPSHOT LOG FOR {table}@{SRC}; CREATE SNAPSHOT {table}@{DST} FROM {table}@{SRC}")


@contextlib.contextmanager
def started(home: Path, files: Path, source: RealDatabase, source_conn: str) -> Iterator[Deployment]:
    """The deployment, with a snapshot of a new three-row table of ``source`` whose DAG is loaded;
    stopped, its metadata database and catalog role dropped, on leaving."""
    table = f"u_{uuid.uuid4().hex[:10]}"
    source.run(
        f"CREATE TABLE {table} (id int PRIMARY KEY, v varchar(40))",
        f"INSERT INTO {table} VALUES (1, 'one'), (2, 'two'), (3, 'three')",
    )
    # A PostgreSQL metadata database, as deployed: Airflow creates no backfill on a busy SQLite one.
    metadata_db = f"snaprepl_af_{uuid.uuid4().hex[:10]}"
    with pg_admin_connect() as conn:
        conn.cursor().execute(f'CREATE DATABASE "{metadata_db}"')
    statsd = StatsdListener()
    cluster = _cluster(home, source_conn, files, metadata_db, statsd)
    catalog = Catalog.from_connection(connection_from_url(cluster.database_url, "snaprepl_catalog"))
    dest, subscriber = (
        RealDatabase("sqlite", DST, str(files / "dest.db")),
        RealDatabase("sqlite", SUB, str(files / "sub.db")),
    )
    snapshot = f"main.{table}@{DST}"
    deployed = Deployment(
        cluster, catalog, source, dest, subscriber, table, snapshot, snapshot_dag_id(snapshot), statsd,
        files / "openlineage.jsonl",
    )  # fmt: skip
    role = f"snaprepl_cat_{uuid.uuid4().hex[:8]}"
    try:
        cluster.start(while_booting=lambda: _boot(deployed, role))
        cluster.wait_for_dag(deployed.dag_id)
        yield deployed
    finally:
        catalog.dispose()
        cluster.stop()
        statsd.close()
        with pg_admin_connect() as conn:
            conn.cursor().execute(f'DROP DATABASE IF EXISTS "{metadata_db}" WITH (FORCE)')
            conn.cursor().execute(f'DROP ROLE IF EXISTS "{role}"')


def lineage_events(d: Deployment, job: str) -> list[dict]:
    """The COMPLETE events of task ``job`` (``dag_id.task_id``) the file transport wrote, oldest first
    (waiting a little for the first: the task emits it as it ends)."""
    deadline = time.monotonic() + 30
    while True:
        text = d.lineage_file.read_text() if d.lineage_file.exists() else ""
        events = [json.loads(line) for line in text.splitlines()]
        found = [e for e in events if e["eventType"] == "COMPLETE" and e["job"]["name"] == job]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(1)


def metric_values(statsd: StatsdListener, name: str, copy: str) -> list[str]:
    """Values (``value|type``) of metric ``name`` tagged ``copy=<copy>`` that the listener received."""
    found = []
    for line in statsd.lines():
        stat, _, value = line.partition(":")
        parts = stat.split(",")
        if parts[0] == name and f"copy={copy}" in parts[1:]:
            found.append(value)
    return found


def wait_for_import_error(cluster: AirflowCluster, text: str, timeout: float = 90) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = "\n".join(e.get("stack_trace", "") for e in cluster.import_errors())
        if text in found:
            return found
        time.sleep(2)
    cluster.fail(f"no import error mentions {text!r}: {cluster.import_errors()}")


def wait_for_log(cluster: AirflowCluster, dag_id: str, text: str, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(text in path.read_text(errors="replace") for path in cluster.task_log_files(dag_id)):
            return
        cluster.check_alive()
        time.sleep(1)
    cluster.fail(f"no task log of {dag_id} says {text!r} within {timeout} s", dag_id=dag_id)

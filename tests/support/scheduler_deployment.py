"""The deployment tests/integration/airflow/test_scheduler_run.py shares between its scenarios: a real
Airflow 3 cluster (api-server, scheduler, dag-processor), a PostgreSQL source whose connection has a
password, a SQLite destination, and the snapshot between them."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from snaprepl.catalog.location import connection_from_url
from snaprepl.catalog.records import SnapshotRecord
from snaprepl.catalog.store import Catalog
from snaprepl.common.dag_names import snapshot_dag_id
from tests.support.airflow_cluster import AirflowCluster
from tests.support.databases import PG_ADMIN, RealDatabase, pg_scratch_database
from tests.support.unreachable import closed_port

#: The source connection's password. PostgreSQL trusts local connections, so any password works;
#: it must never appear in a log.
PASSWORD = f"Pw-{uuid.uuid4().hex}"
SRC, DST, SUB = "sched_src", "sched_dst", "sched_sub"
#: Two more subscribers (SQLite), and a connection to a port nothing listens on (GONE's, once it is gone).
SUB2, GONE, CLOSED = "sched_sub2", "sched_gone", "sched_closed"


@dataclass
class Deployment:
    cluster: AirflowCluster
    catalog: Catalog
    source: RealDatabase
    dest: RealDatabase
    table: str
    dest_table: str
    snapshot: str
    dag_id: str

    def source_rows(self) -> list[tuple]:
        return self.source.rows(f"SELECT id, name, qty FROM {self.source.q(self.table)} ORDER BY id")

    def dest_rows(self) -> list[tuple]:
        return self.dest.rows(f"SELECT id, name, qty FROM {self.dest.q(self.dest_table)} ORDER BY id")

    def record(self) -> SnapshotRecord:
        record = self.catalog.snapshot(self.snapshot)
        assert record is not None, f"snapshot {self.snapshot} is gone from the catalog"
        return record

    def run_dag(self, conf: dict | None = None) -> str:
        run_id = self.cluster.trigger(self.dag_id, conf)
        self.cluster.wait_for_run(self.dag_id, run_id, timeout=240)
        return run_id


@pytest.fixture(scope="module")
def airflow_metadata_url() -> Iterator[str]:
    """A PostgreSQL metadata database for a module's Airflow, as deployed: on SQLite, the api-server's
    trigger of a run could fail with "database is locked" while the scheduler and the dag-processor
    wrote. The page's deployment (test_replication_page.py) uses it too."""
    with pg_scratch_database("snaprepl_af") as url:
        yield url


@pytest.fixture(scope="module")
def deployment(
    tmp_path_factory: pytest.TempPathFactory, pg_db: RealDatabase, sqlite_db: RealDatabase, airflow_metadata_url: str
) -> Iterator[Deployment]:
    table = f"t_{uuid.uuid4().hex[:10]}"
    dest_table = f"{table}_copy"
    pg_db.run(
        f"CREATE TABLE {pg_db.q(table)} (id int PRIMARY KEY, name varchar(40), qty int)",
        f"INSERT INTO {pg_db.q(table)} VALUES (1, 'one', 10), (2, 'two', 20), (3, 'three', 30), (4, NULL, 40)",
    )
    cluster = AirflowCluster(
        tmp_path_factory.mktemp("airflow-cluster"),
        env={
            f"AIRFLOW_CONN_{SRC.upper()}": (
                f"postgresql://{PG_ADMIN['user']}:{PASSWORD}@{PG_ADMIN['host']}:{PG_ADMIN['port']}/{pg_db.name}"
            ),
            f"AIRFLOW_CONN_{DST.upper()}": f"sqlite:///{sqlite_db.name}",
            f"AIRFLOW_CONN_{SUB.upper()}": f"sqlite:///{tmp_path_factory.mktemp('subscriber') / 'sched_sub.db'}",
            **{
                f"AIRFLOW_CONN_{name.upper()}": f"sqlite:///{tmp_path_factory.mktemp('subscriber') / name}.db"
                for name in (SUB2, GONE)
            },
            f"AIRFLOW_CONN_{CLOSED.upper()}": f"postgresql://{PG_ADMIN['user']}@127.0.0.1:{closed_port()}/gone",
        },
        database_url=airflow_metadata_url,
    )
    catalog = Catalog.from_connection(connection_from_url(cluster.database_url, "snaprepl_catalog"))

    def create_snapshot() -> None:
        # -v: Spark's output is printed too, so the password check below covers it.
        statements = f"CREATE SNAPSHOT LOG FOR {table}@{SRC}; CREATE SNAPSHOT {dest_table}@{DST} FROM {table}@{SRC}"
        created = cluster.run([sys.executable, "-m", "snaprepl", "sql", "-v", statements])
        assert created.returncode == 0, f"snaprepl sql failed:\n{created.stdout[-3000:]}\n{created.stderr[-3000:]}"
        assert PASSWORD not in created.stdout + created.stderr, "the CLI printed the source's password"

    try:
        # The catalog is the cluster's metadata database: create the snapshot while the api-server boots.
        cluster.start(while_booting=create_snapshot)
        (record,) = catalog.snapshots_named(DST, dest_table)
        assert record.sn_last_status == "succeeded" and record.sn_last_refresh_kind == "complete"
        deployed = Deployment(
            cluster, catalog, pg_db, sqlite_db, table, dest_table, record.sn_name, snapshot_dag_id(record.sn_name)
        )
        assert deployed.dest_rows() == deployed.source_rows()
        cluster.wait_for_dag(deployed.dag_id)
        yield deployed
    finally:
        catalog.dispose()
        cluster.stop()


def spark_submit_lines(task_log: str) -> str:
    return "\n".join(line for line in task_log.splitlines() if "Spark-Submit cmd:" in line)


def files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def holds(path: Path, text: str) -> bool:
    try:
        return text in path.read_text("utf-8", "replace")
    except FileNotFoundError:  # another test's job file, deleted meanwhile
        return False

"""End to end under a real Airflow 3 scheduler: a generated refresh DAG runs with the LocalExecutor.

``airflow dags test`` runs tasks in-process with the metadata database in reach; a scheduler runs
them in supervised processes that cannot see it, so only a real deployment proves that DAG parsing
and the refresh task find the catalog through the ``snaprepl_catalog`` connection, that spark-submit
runs from a task, and that no credential reaches the logs.

One deployment serves the module (see tests/support/airflow_cluster.py): the source is a PostgreSQL
table whose connection has a password, the destination a SQLite table, the catalog the cluster's
SQLite metadata database.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from snaprepl.catalog.location import connection_from_url
from snaprepl.catalog.records import SnapshotRecord
from snaprepl.catalog.store import Catalog
from snaprepl.dag_names import publication_dag_id, snapshot_dag_id
from snaprepl.submit.submission import private_dir
from tests.support.airflow_cluster import AirflowCluster
from tests.support.databases import PG_ADMIN, RealDatabase

pytestmark = [pytest.mark.airflow, pytest.mark.slow]

#: The source connection's password. PostgreSQL trusts local connections, so any password works;
#: it must never appear in a log.
PASSWORD = f"Pw-{uuid.uuid4().hex}"
SRC, DST, SUB = "sched_src", "sched_dst", "sched_sub"


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
def deployment(
    tmp_path_factory: pytest.TempPathFactory, pg_db: RealDatabase, sqlite_db: RealDatabase
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
        },
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


def test_the_scheduler_refreshes_incrementally_and_logs_no_secret(deployment: Deployment) -> None:
    d = deployment
    src = d.source.q(d.table)
    d.source.run(
        f"INSERT INTO {src} VALUES (5, 'five', 50)",
        f"UPDATE {src} SET name = 'TWO', qty = 22 WHERE id = 2",
        f"UPDATE {src} SET name = 'four' WHERE id = 4",
        f"DELETE FROM {src} WHERE id = 3",
    )
    assert d.dest_rows() != d.source_rows()

    run_id = d.run_dag()

    assert d.dest_rows() == d.source_rows() == [(1, "one", 10), (2, "TWO", 22), (4, "four", 40), (5, "five", 50)]
    record = d.record()
    assert (record.sn_last_status, record.sn_last_refresh_kind) == ("succeeded", "incremental"), record
    assert (record.sn_last_rows_upserted, record.sn_last_rows_deleted) == (3, 1), record

    task_log = d.cluster.task_log(d.dag_id, run_id)
    assert "Spark-Submit cmd:" in task_log, "the spark-submit command line should be in the task log at INFO"
    assert "***" not in _spark_submit_lines(task_log), "a secret had to be masked on the spark-submit command line"
    leaks = [p for p in _files(d.cluster.home / "logs") + _files(d.cluster.process_logs) if _holds(p, PASSWORD)]
    assert not leaks, f"the source's password is in {leaks}"
    # The task handed the credentials to spark-submit in a file, and deleted it when the job ended.
    kept = [p for p in _files(private_dir()) if _holds(p, PASSWORD)]
    assert not kept, f"the source's password is still in {kept}"


def test_a_run_with_mode_nonincremental_refreshes_completely(deployment: Deployment) -> None:
    d = deployment
    # A row only the destination has: an incremental refresh leaves it, a complete one removes it.
    d.dest.run(f"INSERT INTO {d.dest.q(d.dest_table)} VALUES (99, 'stray', 0)")
    d.source.run(f"UPDATE {d.source.q(d.table)} SET qty = qty + 1 WHERE id = 1")
    before = d.record().sn_last_refresh_at

    d.run_dag({"mode": "nonincremental"})

    record = d.record()
    assert (record.sn_last_status, record.sn_last_refresh_kind) == ("succeeded", "complete"), record
    assert before is not None and record.sn_last_refresh_at > before
    assert record.sn_last_rows_copied == len(d.source_rows())
    assert d.dest_rows() == d.source_rows()


@dataclass
class Publication:
    deployment: Deployment
    table: str
    item: str
    dag_id: str

    def rows(self, db: RealDatabase) -> list[tuple]:
        return sorted(tuple(r) for r in db.rows(f'SELECT id, name, qty, "ROWGUID" FROM {db.q(self.table)}'))


@pytest.fixture(scope="module")
def publication(deployment: Deployment) -> Publication:
    """A PostgreSQL table published, with a SQLite subscriber loaded (all through the CLI)."""
    d = deployment
    table = f"p_{uuid.uuid4().hex[:10]}"
    d.source.run(
        f"CREATE TABLE {table} (id int PRIMARY KEY, name varchar(40), qty int)",
        f"INSERT INTO {table} VALUES (1, 'one', 1), (2, 'two', 2), (3, 'three', 3)",
    )
    statements = (
        f"REPL_CREATE_SNAPSHOT_PUB('{table}@{SRC}', 2); "
        f"REPL_CREATE_SNAPSHOT_SUB(REPL_SNP_SERVER('{SUB}'), '{table}@{SRC}', 2); "
        f"REPL_INIT_SNAPSHOT(REPL_SERVER_NAME('{SUB}'), '{table}@{SRC}', 2)"
    )
    created = d.cluster.run([sys.executable, "-m", "snaprepl", "sql", "-v", statements])
    assert created.returncode == 0, f"snaprepl sql failed:\n{created.stdout[-3000:]}\n{created.stderr[-3000:]}"
    assert PASSWORD not in created.stdout + created.stderr, "the CLI printed the publisher's password"
    item = f"public.{table}@{SRC}"
    dag_id = publication_dag_id(item)
    d.cluster.wait_for_dag(dag_id)
    return Publication(d, table, item, dag_id)


def test_the_scheduler_runs_a_publications_sync_dag(publication: Publication) -> None:
    p, d = publication, publication.deployment
    subscriber = RealDatabase("sqlite", SUB, d.cluster.env[f"AIRFLOW_CONN_{SUB.upper()}"].removeprefix("sqlite:///"))
    d.source.run(f"UPDATE {p.table} SET qty = 10 WHERE id = 1", f"DELETE FROM {p.table} WHERE id = 2")
    subscriber.run(
        f"UPDATE {p.table} SET qty = 100 WHERE id = 1",  # conflicts with the publisher: the publisher wins
        f"INSERT INTO {p.table} (id, name, qty) VALUES (9, 'nine', 9)",
    )

    run_id = d.cluster.trigger(p.dag_id)
    d.cluster.wait_for_run(p.dag_id, run_id, timeout=300)

    states = {t["task_id"]: t["state"] for t in d.cluster.task_instances(p.dag_id, run_id)}
    assert states == {f"pull__{SUB}": "success", f"push__{SUB}": "success"}, states
    assert p.rows(subscriber) == p.rows(d.source)
    assert [r[:3] for r in p.rows(d.source)] == [(1, "one", 10), (3, "three", 3), (9, "nine", 9)]
    [conflict] = d.catalog.conflicts(p.item)
    assert (conflict["CF_TYPE"], conflict["CF_DECISION"], conflict["CF_NOTIFIED"]) == ("U", 3, True)
    published = d.catalog.publication(p.item)
    assert published is not None and published.sp_last_status == "succeeded" and published.sp_last_sync_at
    task_log = d.cluster.task_log(p.dag_id, run_id)
    assert "1 conflicts notified" in task_log and "'U' conflict on key [1]" in task_log
    leaks = [path for path in _files(d.cluster.home / "logs") if _holds(path, PASSWORD)]
    assert not leaks, f"the publisher's password is in {leaks}"


def _spark_submit_lines(task_log: str) -> str:
    return "\n".join(line for line in task_log.splitlines() if "Spark-Submit cmd:" in line)


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def _holds(path: Path, text: str) -> bool:
    try:
        return text in path.read_text("utf-8", "replace")
    except FileNotFoundError:  # another test's job file, deleted meanwhile
        return False


# ---------------------------------------------------------------------- connect mode, per DAG

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


def test_a_dag_whose_spark_connection_is_a_connect_server_runs_there(connect_snapshot: ConnectSnapshot) -> None:
    c, d = connect_snapshot, connect_snapshot.deployment
    d.source.run(f"INSERT INTO {c.table} VALUES (41, 'new')", f"UPDATE {c.table} SET v = 'changed' WHERE id = 1")

    run_id = d.cluster.trigger(c.dag_id)
    d.cluster.wait_for_run(c.dag_id, run_id, timeout=240)

    assert c.dest_rows() == c.source_rows() and len(c.source_rows()) == 41
    task_log = d.cluster.task_log(c.dag_id, run_id)
    assert f"Spark job in connect mode (Spark connection {CONNECT})" in task_log
    assert "Spark-Submit cmd:" not in task_log, "a connect-mode task ran spark-submit"
    for secret in (c.token, PASSWORD):
        leaks = [p for p in _files(d.cluster.home / "logs") + _files(d.cluster.process_logs) if _holds(p, secret)]
        assert not leaks, f"a secret is in {leaks}"


def test_killing_a_connect_mode_refresh_interrupts_its_spark_jobs_and_drops_its_staging(
    connect_snapshot: ConnectSnapshot,
) -> None:
    c, d = connect_snapshot, connect_snapshot.deployment
    before = c.dest_rows()
    d.source.run(f"INSERT INTO {c.table} VALUES (42, 'late')")
    c.nap(3)  # 42 rows in 2 reads: over a minute of Spark work

    run_id = d.cluster.trigger(c.dag_id)
    _wait(lambda: _running_jobs(c.ui), "the refresh's Spark job to run on the server", timeout=180)
    dag, run = (urllib.parse.quote(p, safe="") for p in (c.dag_id, run_id))
    d.cluster.api("PATCH", f"/api/v2/dags/{dag}/dagRuns/{run}/taskInstances/refresh", {"new_state": "failed"})

    _wait(lambda: d.cluster.run_state(c.dag_id, run_id) == "failed", "the run to fail", timeout=120)
    _wait(lambda: "interrupted Spark operations" in d.cluster.task_log(c.dag_id, run_id), "on_kill", timeout=60)
    _wait(lambda: not _running_jobs(c.ui), "the server's jobs to stop", timeout=30)
    jobs = _get_json(f"{c.ui}/api/v1/applications/{_app_id(c.ui)}/jobs")
    assert any(j["status"] == "FAILED" for j in jobs), "the interrupted read should be a failed Spark job"
    staging = d.dest.rows("SELECT name FROM sqlite_master WHERE name LIKE 'snaprepl_full_%'")
    assert staging == [], f"the killed run left {staging}:\n{d.cluster.diagnostics(dag_id=c.dag_id, run_id=run_id)}"
    assert c.dest_rows() == before, "the killed run changed the destination"

    c.nap(0)
    run_id = d.cluster.trigger(c.dag_id)
    d.cluster.wait_for_run(c.dag_id, run_id, timeout=240)
    assert c.dest_rows() == c.source_rows() and (42, "late") in c.dest_rows()


def _wait(ready: Callable[[], object], what: str, *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, f"waited {timeout:.0f} s for {what}"
        time.sleep(1)


def _get_json(url: str) -> Any:
    """A JSON document of Spark's REST API (its first answer can take seconds on a busy machine)."""
    with urllib.request.urlopen(url, timeout=60) as response:
        return json.loads(response.read())


def _app_id(ui: str) -> str:
    return str(_get_json(f"{ui}/api/v1/applications")[0]["id"])


def _running_jobs(ui: str) -> list[dict[str, Any]]:
    return [j for j in _get_json(f"{ui}/api/v1/applications/{_app_id(ui)}/jobs") if j["status"] == "RUNNING"]


# ---------------------------------------------------------------- a publication of a collection (type 1)

COLL = "/shared/docs/"
DAV1, DAV2, FOLDER = "sched_dav1", "sched_dav2", "sched_folder"


@dataclass
class CollectionPublication:
    deployment: Deployment
    roots: dict[str, Path]
    item: str
    dag_id: str
    dag: dict


@pytest.fixture(scope="module")
def collection_publication(
    deployment: Deployment, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CollectionPublication]:
    """A WebDAV collection published (wsgidav on loopback), with a second WebDAV server and a local
    folder subscribed and loaded, as the seed writes it (through the CLI); the connections defined
    through the REST API, as a user does."""
    from tests.support.collections import put
    from tests.support.webdav import PASSWORD as DAV_PASSWORD
    from tests.support.webdav import USER, webdav_server

    d = deployment
    base = tmp_path_factory.mktemp("sched-collections")
    roots = {name: base / name for name in (DAV1, DAV2, FOLDER)}
    for root in roots.values():
        root.mkdir()
    with webdav_server(roots[DAV1]) as one, webdav_server(roots[DAV2]) as two:
        dav = {"conn_type": "webdav", "login": USER, "password": DAV_PASSWORD}
        for conn_id, body in {
            DAV1: {**dav, "host": one.url},
            DAV2: {**dav, "host": two.url},
            FOLDER: {"conn_type": "fs", "extra": json.dumps({"path": str(roots[FOLDER])})},
        }.items():
            d.cluster.api("POST", "/api/v2/connections", {"connection_id": conn_id, **body})
        put(roots[DAV1], COLL, "readme.txt", b"v1 readme")
        put(roots[DAV1], COLL, "a/b/deep.bin", bytes(range(256)) * 400)
        item = f"{COLL}@{DAV1}"
        # The schedule first: the DAG appears with the first load, and must have it when it does.
        statements = f"REPL_CREATE_SNAPSHOT_PUB ('{item}', 1); REPL_SET_PUBLICATION_SCHEDULE ('{item}', '0 3 * * *'); "
        statements += "".join(
            f"REPL_SNP_SERVER ('{sub}', 'dba', 'dba'); "
            f"REPL_CREATE_SNAPSHOT_SUB (REPL_SERVER_NAME ('{sub}'), '{item}', 1); "
            f"REPL_INIT_SNAPSHOT (REPL_SERVER_NAME ('{sub}'), '{item}', 1); "
            for sub in (DAV2, FOLDER)
        )
        created = d.cluster.run([sys.executable, "-m", "snaprepl", "sql", "-v", statements])
        assert created.returncode == 0, f"snaprepl sql failed:\n{created.stdout[-3000:]}\n{created.stderr[-3000:]}"
        assert f"init of {DAV2}: 2 copied" in created.stdout and f"init of {FOLDER}: 2 copied" in created.stdout
        assert DAV_PASSWORD not in created.stdout + created.stderr, "the CLI printed the WebDAV password"
        dag_id = publication_dag_id(item)
        dag = d.cluster.wait_for_dag(dag_id)
        # Unpaused without catchup, the DAG runs its latest interval at once: let that run end first.
        scheduled = _first_run(d.cluster, dag_id, "scheduled")
        d.cluster.wait_for_run(dag_id, scheduled, timeout=300)
        yield CollectionPublication(d, roots, item, dag_id, dag)


def _first_run(cluster: AirflowCluster, dag_id: str, run_type: str, timeout: float = 120) -> str:
    deadline = time.monotonic() + timeout
    while not (runs := cluster.dag_runs(dag_id, run_type)):
        if time.monotonic() > deadline:
            cluster.fail(f"no {run_type} run of {dag_id} within {timeout:.0f} s", dag_id=dag_id)
        time.sleep(2)
    return str(runs[0]["dag_run_id"])


def test_the_scheduler_runs_a_collections_sync_dag(collection_publication: CollectionPublication) -> None:
    from tests.support.collections import backups, put, remove, tree
    from tests.support.webdav import PASSWORD as DAV_PASSWORD

    c, d = collection_publication, collection_publication.deployment
    put(c.roots[FOLDER], COLL, "x/y/new.txt", b"from the folder")
    put(c.roots[DAV2], COLL, "a/b/deep.bin", b"dav2's version")
    remove(c.roots[DAV1], COLL, "readme.txt")
    put(c.roots[DAV1], COLL, "notes.txt", b"publisher wins")
    put(c.roots[DAV2], COLL, "notes.txt", b"dav2 loses")

    run_id = d.cluster.trigger(c.dag_id)
    d.cluster.wait_for_run(c.dag_id, run_id, timeout=300)

    states = {t["task_id"]: t["state"] for t in d.cluster.task_instances(c.dag_id, run_id)}
    assert states == {f"{step}__{s}": "success" for step in ("pull", "push") for s in (DAV2, FOLDER)}, states
    expected = tree(c.roots[DAV1], COLL)
    assert set(expected) == {"a/b/deep.bin", "notes.txt", "x/y/new.txt"}
    steps = {t: d.cluster.xcom(c.dag_id, run_id, t) for t in sorted(states)}  # the steps' outcomes, if not
    assert tree(c.roots[DAV2], COLL) == expected == tree(c.roots[FOLDER], COLL), steps
    assert (c.roots[FOLDER] / "shared/docs/a/b/deep.bin").read_bytes() == b"dav2's version"
    assert (c.roots[FOLDER] / "shared/docs/notes.txt").read_bytes() == b"publisher wins"
    assert list(backups(c.roots[DAV2], COLL).values()) == [b"dav2 loses"]
    [conflict] = d.catalog.conflicts(c.item)
    assert (conflict["CF_ORIGIN"], conflict["CF_DECISION"], conflict["CF_NOTIFIED"]) == (DAV2, 3, True)
    with d.catalog.engine.connect() as conn:
        replayed = conn.execute(
            sa.text('SELECT "SOURCE_SERVER", "TARGET_SERVER" FROM "SYS_URPLOG" WHERE "ITEM" = :i'), {"i": c.item}
        ).fetchall()
    directions = Counter(tuple(r) for r in replayed)
    # The loads (2 resources to each subscriber), then this run: a body from each subscriber to the
    # publisher; to dav2 the conflict's winner, the deletion and the folder's new resource; to the
    # folder dav2's body, the publisher's new one and the deletion.
    assert directions[(DAV1, DAV2)] == 2 + 3 and directions[(DAV1, FOLDER)] == 2 + 3, directions
    assert directions[(DAV2, DAV1)] == 1 and directions[(FOLDER, DAV1)] == 1, directions
    history = [r for r in d.catalog.history(c.item) if r.rh_dag_run_id == run_id]
    seen = sorted((r.rh_kind, r.rh_server, r.rh_outcome, r.rh_conflicts, r.rh_error) for r in history)
    assert seen == [
        ("pull", DAV2, "ok", 1, None), ("pull", FOLDER, "ok", 0, None),
        ("push", DAV2, "ok", 0, None), ("push", FOLDER, "ok", 0, None),
    ], seen  # fmt: skip
    published = d.catalog.publication(c.item)
    assert published is not None and published.sp_last_status == "succeeded"
    task_log = d.cluster.task_log(c.dag_id, run_id)
    assert "Spark-Submit cmd:" in task_log, "each step is a spark-submit"
    assert "1 copied, 0 deleted, 1 conflicts" in task_log and "1 conflicts notified" in task_log
    leaks = [p for p in _files(d.cluster.home / "logs") + _files(d.cluster.process_logs) if _holds(p, DAV_PASSWORD)]
    assert not leaks, f"the WebDAV password is in {leaks}"
    assert c.dag["timetable_summary"] == "0 3 * * *", "REPL_SET_PUBLICATION_SCHEDULE reaches the DAG"

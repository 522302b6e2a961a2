"""End to end under a real Airflow 3 scheduler: a generated refresh DAG runs with the LocalExecutor.

``airflow dags test`` runs tasks in-process with the metadata database in reach; a scheduler runs
them in supervised processes that cannot see it, so only a real deployment proves that DAG parsing
and the refresh task find the catalog through the ``snaprepl_catalog`` connection, that spark-submit
runs from a task, and that no credential reaches the logs.

One deployment serves the module (see tests/support/airflow_cluster.py): the source is a PostgreSQL
table whose connection has a password, the destination a SQLite table, the catalog the cluster's
PostgreSQL metadata database (on SQLite, a trigger could fail with "database is locked" while the
scheduler wrote).
"""

from __future__ import annotations

import sys
import urllib.parse
import urllib.request
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa

from snaprepl.common.dag_names import publication_dag_id
from snaprepl.submit.submission import private_dir
from tests.support.databases import RealDatabase
from tests.support.scheduler_collections import (
    COLL,
    DAV1,
    DAV2,
    FOLDER,
    CollectionPublication,
)
from tests.support.scheduler_connect import (
    CONNECT,
    ConnectSnapshot,
    app_id,
    get_json,
    running_jobs,
    wait_until,
)
from tests.support.scheduler_deployment import (
    CLOSED,
    GONE,
    PASSWORD,
    SRC,
    SUB,
    SUB2,
    Deployment,
    files_under,
    holds,
    spark_submit_lines,
)
from tests.support.scheduler_subscribers import ThreeSubscribers
from tests.support.unreachable import unreachable

pytestmark = [pytest.mark.airflow, pytest.mark.slow]


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
    assert "***" not in spark_submit_lines(task_log), "a secret had to be masked on the spark-submit command line"
    leaks = [
        p for p in files_under(d.cluster.home / "logs") + files_under(d.cluster.process_logs) if holds(p, PASSWORD)
    ]
    assert not leaks, f"the source's password is in {leaks}"
    # The task handed the credentials to spark-submit in a file, and deleted it when the job ended.
    kept = [p for p in files_under(private_dir()) if holds(p, PASSWORD)]
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


def test_the_watchdog_dag_alerts_a_paused_snapshot_dag_once_and_clears_after_it_refreshes(
    deployment: Deployment,
) -> None:
    """The scheduled ``snaprepl_watchdog`` DAG (triggered here: waiting for its 5-minute schedule would
    cost minutes) reads which DAGs are paused through its own Task SDK, with no connection configured;
    its alerts go to the deployment's notifier (``log``: the task's log). A scheduled run of it may
    come in between, so the runs whose log has the alert are counted."""
    from snaprepl.airflow.watchdog import WATCHDOG_DAG

    d = deployment
    dag, key = urllib.parse.quote(d.dag_id, safe=""), f"paused:{d.snapshot}"
    alert, cleared = f"{d.snapshot}: paused: DAG {d.dag_id} is paused", f"{d.snapshot}: paused cleared"
    logs = lambda text: sum(text in p.read_text(errors="replace") for p in d.cluster.task_log_files(WATCHDOG_DAG))  # noqa: E731
    watch = lambda: d.cluster.wait_for_run(WATCHDOG_DAG, d.cluster.trigger(WATCHDOG_DAG), timeout=120)  # noqa: E731
    d.cluster.wait_for_dag(WATCHDOG_DAG)
    d.cluster.api("PATCH", f"/api/v2/dags/{dag}", {"is_paused": True})
    try:
        watch()
        assert key in d.catalog.watched(), d.catalog.watched()
        watch()  # still paused: no second alert
    finally:
        d.cluster.api("PATCH", f"/api/v2/dags/{dag}", {"is_paused": False})
    assert logs(alert) == 1, d.cluster.diagnostics(dag_id=WATCHDOG_DAG)

    d.run_dag()
    watch()
    assert key not in d.catalog.watched() and logs(cleared) == 1, d.cluster.diagnostics(dag_id=WATCHDOG_DAG)


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
    assert states == {f"pull__{SUB}": "success", "pulls_done": "success", f"push__{SUB}": "success"}, states
    assert p.rows(subscriber) == p.rows(d.source)
    assert [r[:3] for r in p.rows(d.source)] == [(1, "one", 10), (3, "three", 3), (9, "nine", 9)]
    [conflict] = d.catalog.conflicts(p.item)
    assert (conflict["CF_TYPE"], conflict["CF_DECISION"], conflict["CF_NOTIFIED"]) == ("U", 3, True)
    published = d.catalog.publication(p.item)
    assert published is not None and published.sp_last_status == "succeeded" and published.sp_last_sync_at
    task_log = d.cluster.task_log(p.dag_id, run_id)
    assert "1 conflicts notified" in task_log and "'U' conflict on key [1]" in task_log
    leaks = [path for path in files_under(d.cluster.home / "logs") if holds(path, PASSWORD)]
    assert not leaks, f"the publisher's password is in {leaks}"


def test_an_unreachable_subscriber_stops_no_other_in_a_dag_run_nor_on_the_command_line(
    three_subscribers: ThreeSubscribers,
) -> None:
    """The DAG run pulls and pushes the two healthy subscribers, fails the gone one's tasks and ends
    failed; REPL_UPDATE_SNAPSHOT from the command line syncs the two, then exits 1 naming the third."""
    p, d = three_subscribers, three_subscribers.deployment
    subs = {name: p.replica(name) for name in (SUB, SUB2)}
    d.source.run(f"UPDATE {p.table} SET name = 'pub' WHERE id = 1")
    subs[SUB2].run(f"UPDATE {p.table} SET name = 'sub2' WHERE id = 2")
    pull_gone = f"pull__{GONE}"

    with unreachable(d.catalog, GONE, CLOSED):
        run_id = d.cluster.trigger(p.dag_id)
        # Its pull fails. The server now points at a connection its replica's log is not registered
        # under, a mistake no retry mends: the task fails at once (errors say whether they are
        # retryable); a retryable failure would be retried, its retries used up (marked failed rather
        # than waiting their delay). Either way the run goes on without it.
        state = lambda: {t["task_id"]: t["state"] for t in d.cluster.task_instances(p.dag_id, run_id)}  # noqa: E731
        ended = {"up_for_retry", "failed"}
        wait_until(lambda: state().get(pull_gone) in ended, "the gone pull to fail once", timeout=180)
        if state().get(pull_gone) == "up_for_retry":
            dag, run = (urllib.parse.quote(x, safe="") for x in (p.dag_id, run_id))
            patch = {"new_state": "failed"}
            d.cluster.api("PATCH", f"/api/v2/dags/{dag}/dagRuns/{run}/taskInstances/{pull_gone}", patch)
        wait_until(lambda: d.cluster.run_state(p.dag_id, run_id) == "failed", "the run to end failed", timeout=300)

        assert state() == {
            pull_gone: "failed", f"push__{GONE}": "upstream_failed", "pulls_done": "success",
            **{f"{step}__{s}": "success" for step in ("pull", "push") for s in subs},
        }, state()  # fmt: skip
        rows = {name: p.rows(db) for name, db in subs.items()}
        assert all(r == p.rows(d.source) for r in rows.values()), (
            f"publisher {p.rows(d.source)}, replicas {rows}\n{d.cluster.diagnostics(dag_id=p.dag_id, run_id=run_id)}"
        )
        assert [r[1] for r in p.rows(d.source)] == ["pub", "sub2", "three"]
        failed = [r for r in d.catalog.history(p.item) if r.rh_dag_run_id == run_id and r.rh_outcome == "failed"]
        assert {(r.rh_kind, r.rh_server) for r in failed} == {("pull", GONE)} and all(r.rh_error for r in failed)

        d.source.run(f"UPDATE {p.table} SET name = 'pub again' WHERE id = 3")
        subs[SUB].run(f"INSERT INTO {p.table} (id, name) VALUES (4, 'sub')")
        result = d.cluster.run(
            [sys.executable, "-m", "snaprepl", "sql", f"REPL_UPDATE_SNAPSHOT('{p.item}', 2)"], timeout=600
        )

    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    errors = [line for line in result.stderr.splitlines() if f"subscriber {GONE} failed its pull" in line]
    assert len(errors) == 1 and "(2 of 3 synced)" in errors[0], result.stderr[-3000:]
    assert not any(f"subscriber {s} " in result.stderr for s in subs), result.stderr[-3000:]
    rows = {name: p.rows(db) for name, db in subs.items()}
    assert all(r == p.rows(d.source) for r in rows.values()), (p.rows(d.source), rows)
    assert sorted(r[1] for r in p.rows(d.source)) == ["pub", "pub again", "sub", "sub2"]
    gone = d.catalog.subscription(GONE, p.item)
    assert gone is not None and gone.ss_last_status == "failed" and gone.ss_last_error


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
        leaks = [
            p for p in files_under(d.cluster.home / "logs") + files_under(d.cluster.process_logs) if holds(p, secret)
        ]
        assert not leaks, f"a secret is in {leaks}"


def test_killing_a_connect_mode_refresh_interrupts_its_spark_jobs_and_drops_its_staging(
    connect_snapshot: ConnectSnapshot,
) -> None:
    c, d = connect_snapshot, connect_snapshot.deployment
    before = c.dest_rows()
    d.source.run(f"INSERT INTO {c.table} VALUES (42, 'late')")
    c.nap(3)  # 42 rows in 2 reads: over a minute of Spark work

    run_id = d.cluster.trigger(c.dag_id)
    wait_until(lambda: running_jobs(c.ui), "the refresh's Spark job to run on the server", timeout=180)
    dag, run = (urllib.parse.quote(p, safe="") for p in (c.dag_id, run_id))
    d.cluster.api("PATCH", f"/api/v2/dags/{dag}/dagRuns/{run}/taskInstances/refresh", {"new_state": "failed"})

    wait_until(lambda: d.cluster.run_state(c.dag_id, run_id) == "failed", "the run to fail", timeout=120)
    wait_until(lambda: "interrupted Spark operations" in d.cluster.task_log(c.dag_id, run_id), "on_kill", timeout=60)
    wait_until(lambda: not running_jobs(c.ui), "the server's jobs to stop", timeout=30)
    jobs = get_json(f"{c.ui}/api/v1/applications/{app_id(c.ui)}/jobs")
    assert any(j["status"] == "FAILED" for j in jobs), "the interrupted read should be a failed Spark job"
    staging = d.dest.rows("SELECT name FROM sqlite_master WHERE name LIKE 'snaprepl_full_%'")
    assert staging == [], f"the killed run left {staging}:\n{d.cluster.diagnostics(dag_id=c.dag_id, run_id=run_id)}"
    assert c.dest_rows() == before, "the killed run changed the destination"

    c.nap(0)
    run_id = d.cluster.trigger(c.dag_id)
    d.cluster.wait_for_run(c.dag_id, run_id, timeout=240)
    assert c.dest_rows() == c.source_rows() and (42, "late") in c.dest_rows()


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
    assert states == {f"{step}__{s}": "success" for step in ("pull", "push") for s in (DAV2, FOLDER)} | {
        "pulls_done": "success"
    }, states
    expected = tree(c.roots[DAV1], COLL)
    assert set(expected) == {"a/b/deep.bin", "notes.txt", "x/y/new.txt"}
    steps = {t: d.cluster.xcom(c.dag_id, run_id, t) for t in sorted(states) if "__" in t}  # the outcomes, if not
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
    leaks = [
        p for p in files_under(d.cluster.home / "logs") + files_under(d.cluster.process_logs) if holds(p, DAV_PASSWORD)
    ]
    assert not leaks, f"the WebDAV password is in {leaks}"
    assert c.dag["timetable_summary"] == "0 3 * * *", "REPL_SET_PUBLICATION_SCHEDULE reaches the DAG"


def logs(d: Deployment) -> list[Path]:
    """Every file of the deployment's task and process logs."""
    return files_under(d.cluster.home / "logs") + files_under(d.cluster.process_logs)

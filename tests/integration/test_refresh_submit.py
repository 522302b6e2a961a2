"""Refreshes as users and Airflow run them: spark-submit of spark_jobs/refresh_snapshot.py."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.databases import PG_ADMIN, RealDatabase, pg_admin_connect
from tests.support.processes import alive, cmdline, descendants, job_processes, kill_quietly, mentioning, wait_for

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SECRET = "s3cret-Pa55word"


def snaprepl(*args: str, env: dict[str, str] | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "snaprepl", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )


@pytest.fixture
def secret_pg(pg_db: RealDatabase) -> str:
    """A connection to the test PostgreSQL database that carries a password (trust auth ignores it)."""
    conn_id = "test_pg_secret"
    os.environ[f"AIRFLOW_CONN_{conn_id.upper()}"] = (
        f"postgresql://{PG_ADMIN['user']}:{SECRET}@{PG_ADMIN['host']}:{PG_ADMIN['port']}/{pg_db.name}"
    )
    return conn_id


def test_update_snapshot_runs_spark_submit_without_leaking_secrets(
    pg_db, mysql_db, secret_pg, catalog, unique_name, tmp_path: Path, spark_env
) -> None:
    """In both Spark modes: a spark-submit per job, or the job in the CLI on the Connect server."""
    src = f"{unique_name}_s"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v text)", f"INSERT INTO {src} VALUES (1, 'a'), (2, 'b')")
    own_tmp = {"TMPDIR": str(tmp_path), **spark_env}  # connection files go to $TMPDIR/snaprepl-<uid>/
    dest = f"{unique_name}@{mysql_db.conn_id}"
    created = snaprepl(
        "sql",
        "-v",
        f"CREATE SNAPSHOT LOG FOR {src}@{secret_pg}; CREATE SNAPSHOT {dest} FROM {src}@{secret_pg}",
        env=own_tmp,
    )
    assert created.returncode == 0, created.stderr[-3000:]
    assert f"incremental snapshot {mysql_db.name}.{dest} created and filled: 2 rows" in created.stdout
    submitted = "Spark-Submit cmd" in created.stdout + created.stderr  # verbose mode shows the command
    assert submitted == (not spark_env), "a spark-submit in submit mode, none in connect mode"
    pg_db.run(
        f"UPDATE {src} SET v = 'changed' WHERE id = 1",
        f"DELETE FROM {src} WHERE id = 2",
        f"INSERT INTO {src} VALUES (3, 'c')",
    )
    updated = snaprepl("sql", "-v", f"UPDATE SNAPSHOT {dest}", env=own_tmp)
    assert updated.returncode == 0, updated.stderr[-3000:]
    assert "incremental refresh applied 2 upserts and 1 deletes" in updated.stdout
    submitted = "Spark-Submit cmd" in updated.stdout + updated.stderr
    assert submitted == (not spark_env), "a refresh with work runs its job (by spark-submit in submit mode)"
    assert sorted(mysql_db.rows(f"SELECT id, v FROM {unique_name}")) == [(1, "changed"), (3, "c")]
    refreshed_at = catalog.snapshot(f"{mysql_db.name}.{dest}").sn_last_refresh_at
    idle = snaprepl("sql", "-v", f"UPDATE SNAPSHOT {dest}", env=own_tmp)  # nothing new: decided before Spark
    assert idle.returncode == 0, idle.stderr[-3000:]
    assert "incremental refresh applied 0 upserts and 0 deletes in 0 commits" in idle.stdout
    assert "Spark-Submit cmd" not in idle.stdout + idle.stderr, "an idle refresh starts no spark-submit"
    record = catalog.snapshot(f"{mysql_db.name}.{dest}")
    assert (record.sn_last_status, record.sn_last_rows_upserted) == ("succeeded", 0)
    assert record.sn_last_refresh_at > refreshed_at, "the idle refresh is recorded as the job records it"
    for output in (created, updated, idle):
        assert SECRET not in output.stdout + output.stderr
    # Every run is in the history (the idle one decided before Spark too): what they took and applied,
    # caught up (lag 0, nothing pending).
    runs = catalog.history(f"{mysql_db.name}.{dest}")
    assert [(r.rh_kind, r.rh_outcome, r.rh_dag_run_id) for r in runs] == [
        ("incremental", "idle", None),
        ("incremental", "ok", None),
        ("complete", "ok", None),
    ]
    assert (runs[0].rh_rows_in, runs[0].rh_rows_out, runs[0].rh_rows_deleted) == (0, 0, 0)
    assert (runs[1].rh_rows_in, runs[1].rh_rows_out, runs[1].rh_rows_deleted) == (3, 2, 1)
    assert (runs[2].rh_rows_in, runs[2].rh_rows_out) == (2, 2)
    assert [(r.rh_lag_seconds, r.rh_backlog) for r in runs] == [(0.0, 0)] * 3
    private = tmp_path / f"snaprepl-{os.getuid()}"
    if spark_env:  # connect mode: connections and results stay in memory; the progress file is removed
        assert not private.exists() or list(private.iterdir()) == [], "a job run on the Connect server leaves no file"
    else:
        assert private.is_dir() and list(private.iterdir()) == [], "connection and result files are deleted"


def test_job_errors_reach_the_command_line_as_one_line(pg_db, catalog, unique_name, spark_env) -> None:
    src = f"{unique_name}_s"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY)", f"INSERT INTO {src} VALUES (1)")
    query = f"SELECT id, 10 / id AS x FROM {src}@{pg_db.conn_id}"
    create = f"CREATE NONINCREMENTAL SNAPSHOT {unique_name}@{pg_db.conn_id} AS '{query}'"
    created = snaprepl("sql", create, env=spark_env)
    assert created.returncode == 0, created.stderr[-3000:]
    assert sorted(pg_db.rows(f"SELECT id, x FROM {unique_name}")) == [(1, 10)]
    pg_db.run(f"INSERT INTO {src} VALUES (0)")
    failed = snaprepl("sql", f"UPDATE SNAPSHOT {unique_name}@{pg_db.conn_id}", env=spark_env)
    assert failed.returncode == 1
    lines = failed.stderr.strip().splitlines()
    errors = [line for line in lines if "[snaprepl.alerts]" not in line]
    assert len(errors) == 1 and errors[0].startswith("snaprepl: error: ") and "division by zero" in errors[0], (
        failed.stderr
    )
    # The failure is in the history and went to the notifier (the log, by default), once.
    name = f"public.{unique_name}@{pg_db.conn_id}"
    [last, *_] = catalog.history(name)
    assert (last.rh_kind, last.rh_outcome, last.rh_dag_run_id) == ("complete", "failed", None)
    assert "division by zero" in (last.rh_error or "") and last.rh_ended >= last.rh_started
    [alert] = [line for line in lines if "[snaprepl.alerts]" in line]
    assert f"complete refresh of {name} failed" in alert and "division by zero" in alert, failed.stderr


def _change_randomly(db: RealDatabase, table: str, rng: random.Random, next_id: list[int]) -> None:
    statements = []
    for _ in range(rng.randint(5, 40)):
        kind = rng.choice(["insert", "insert", "update", "delete", "move"])
        key = rng.randint(1, next_id[0])
        if kind == "insert":
            next_id[0] += 1
            statements.append(
                f"INSERT INTO {table} VALUES ({next_id[0]}, {rng.randint(0, 999)}) ON CONFLICT DO NOTHING"
            )
        elif kind == "update":
            statements.append(f"UPDATE {table} SET v = v + 1 WHERE id = {key}")
        elif kind == "delete":
            statements.append(f"DELETE FROM {table} WHERE id = {key}")
        else:
            next_id[0] += 1
            statements.append(f"UPDATE {table} SET id = {next_id[0]} WHERE id = {key}")
    db.transaction(*statements)


@pytest.mark.parametrize("dest_fixture", ["mysql_db", "pg_db"])
def test_a_refresh_killed_at_random_moments_converges(request, dest_fixture, pg_db, catalog, unique_name) -> None:
    dest: RealDatabase = request.getfixturevalue(dest_fixture)
    src = f"{unique_name}_s"
    pg_db.run(
        f"CREATE TABLE {src} (id int PRIMARY KEY, v int)",
        f"INSERT INTO {src} SELECT g, g FROM generate_series(1, 20000) g",
    )
    snapshot = f"{unique_name}@{dest.conn_id}"
    ready = snaprepl(
        "sql", f"CREATE SNAPSHOT LOG FOR {src}@{pg_db.conn_id}; CREATE SNAPSHOT {snapshot} FROM {src}@{pg_db.conn_id}"
    )
    assert ready.returncode == 0, ready.stderr[-3000:]
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    next_id = [20000]
    statements = [f"UPDATE SNAPSHOT {snapshot}", f"UPDATE SNAPSHOT {snapshot} AS NONINCREMENTAL"]
    for attempt, statement in enumerate(rng.sample(statements, len(statements))):
        _change_randomly(pg_db, src, rng, next_id)
        delay = rng.uniform(2.0, 11.0)
        victim = subprocess.Popen(
            [sys.executable, "-m", "snaprepl", "sql", statement],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        time.sleep(delay)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(victim.pid, signal.SIGKILL)  # the CLI, spark-submit, its JVM and the Python driver
        victim.wait()
        _change_randomly(pg_db, src, rng, next_id)
        again = snaprepl("sql", statement)
        assert again.returncode == 0, (
            f"seed {seed}, attempt {attempt}, killed after {delay:.1f}s: {again.stderr[-2000:]}"
        )
        expected = pg_db.rows(f"SELECT id, v FROM {src} ORDER BY id")
        assert dest.rows(f"SELECT id, v FROM {unique_name} ORDER BY id") == expected, (
            f"seed {seed}, attempt {attempt}: killed after {delay:.1f}s"
        )
    leftovers = [t for t in _dest_tables(dest) if t.startswith("snaprepl_")]
    assert leftovers == [], "staging tables of killed runs are cleaned up by the next run"


def _dest_tables(db: RealDatabase) -> list[str]:
    if db.dialect == "postgres":
        return [r[0] for r in db.rows("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
    return [r[0] for r in db.rows("SHOW TABLES")]


def _lock_waiters(db: RealDatabase) -> int:
    with pg_admin_connect() as conn:
        cur = conn.cursor()
        cur.execute("SELECT COUNT(*) FROM pg_stat_activity WHERE datname = %s AND wait_event_type = 'Lock'", [db.name])
        return int(cur.fetchone()[0])


def _kill_blocked_refresh(victim: str, db: RealDatabase, statement: str, marker: str, env: dict[str, str]) -> None:
    """Run ``statement`` while the test holds the snapshot log locked, and once the driver waits for it
    (before it starts a SparkContext: cheap) kill ``victim`` (the CLI with SIGTERM or SIGKILL, or its
    JVM), or take its lease over (``lease``). Then nothing of the run may be left, and nothing may
    apply the change."""
    with pg_admin_connect(db.name) as holder:
        holder.cursor().execute("BEGIN")
        holder.cursor().execute(f'LOCK TABLE "RLOG_{marker}_s" IN ACCESS EXCLUSIVE MODE')
        cli = subprocess.Popen(
            [sys.executable, "-m", "snaprepl", "sql", statement],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **env},
            start_new_session=True,
        )
        try:
            # The submitter's idle check waits for the lock first (5 s at most), then the job's driver.
            in_job = lambda: _lock_waiters(db) and all(job_processes(cli.pid))  # noqa: E731
            reached = wait_for(lambda: in_job() or cli.poll() is not None, 240)
            assert reached and cli.poll() is None, f"the job never reached the locked log: {cli.stderr.read()}"
            jvm, driver = job_processes(cli.pid)
            assert jvm and driver, f"no JVM or driver under the CLI: {descendants(cli.pid)}"
            if victim == "lease":  # the run is thought dead and taken over: it must not commit
                _take_over(marker)
                holder.cursor().execute("COMMIT")
                assert cli.wait(timeout=120) == 1
                assert "was taken over by another run" in cli.stderr.read()
            else:
                kill_quietly(
                    jvm if victim == "jvm" else cli.pid, signal.SIGTERM if victim == "cli-sigterm" else signal.SIGKILL
                )
                assert cli.wait(timeout=60) != 0
            left = wait_for(lambda: [p for p in (jvm, driver) if alive(p)] == [], 15)
            assert left, f"{victim}: the killed run's JVM or driver lives: {[cmdline(p)[:80] for p in (jvm, driver)]}"
            assert not mentioning(marker), f"{victim}: a process of the killed run is left"
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(cli.pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                holder.cursor().execute("COMMIT")
    time.sleep(2)  # what an orphaned driver would need to apply the change
    assert db.rows(f"SELECT v FROM {marker} WHERE id = 1") == [(1,)], f"{victim}: a killed run applied rows"


def _take_over(marker: str) -> None:
    from snaprepl.catalog.store import Catalog
    from snaprepl.settings import Settings

    catalog = Catalog.open(Settings.load())
    [(name, (run_id, _, _))] = [(n, h) for n, h in catalog.locks().items() if marker in n]
    assert catalog.take_lock(name, expected=run_id, run_id="usurper", holder="elsewhere:1")


def test_a_job_dies_with_its_parent(pg_db, catalog, settings, unique_name, tmp_path: Path) -> None:
    src, dest = f"{unique_name}_s", unique_name
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v int)", f"INSERT INTO {src} VALUES (1, 1), (2, 2)")
    own_tmp = {"TMPDIR": str(tmp_path)}
    snapshot = f"{dest}@{pg_db.conn_id}"
    ready = snaprepl(
        "sql", f"CREATE SNAPSHOT LOG FOR {src}@{pg_db.conn_id}; CREATE SNAPSHOT {snapshot} FROM {src}@{pg_db.conn_id}"
    )
    assert ready.returncode == 0, ready.stderr[-3000:]
    pg_db.run(f"UPDATE {src} SET v = 100 WHERE id = 1")
    private = tmp_path / f"snaprepl-{os.getuid()}"
    for victim in ("lease", "cli-sigterm", "jvm", "cli-sigkill"):
        _kill_blocked_refresh(victim, pg_db, f"UPDATE SNAPSHOT {snapshot}", dest, own_tmp)
        files = [p for p in private.rglob("*") if p.is_file()]
        assert not [p for p in files if p.name.startswith("snaprepl-conns-")], f"{victim}: credentials left: {files}"
        assert all(p.stat().st_mode & 0o077 == 0 for p in files), f"{victim}: files others can read: {files}"
        if victim != "cli-sigkill":
            assert list(private.iterdir()) == [], f"{victim}: the CLI removes its files"
        if victim == "lease":
            catalog.release_lock(next(n for n in catalog.locks() if dest in n), "usurper")
    from snaprepl.reporting.status import collect_status

    [entry] = [s for s in collect_status(catalog, settings, probe=False)["snapshots"] if s["name"].endswith(snapshot)]
    assert entry["last_refresh"]["status"] == "died" and "is gone" in entry["died"]["why"], entry
    again = snaprepl("sql", f"UPDATE SNAPSHOT {snapshot}", env=own_tmp)
    assert again.returncode == 0, again.stderr[-3000:]
    assert pg_db.rows(f"SELECT id, v FROM {dest} ORDER BY id") == [(1, 100), (2, 2)]
    assert list(private.iterdir()) == [], "the next run sweeps the files of a SIGKILLed one"

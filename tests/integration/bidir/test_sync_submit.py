"""REPL_UPDATE_SNAPSHOT from the command line, as users and Airflow tasks run it: spark-submit of
``spark_jobs/sync_publication.py``; killed at random moments and run again, it converges to what an
uninterrupted sync gives (a reference model), and records each conflict exactly once."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.bidir import Model, ModelConflict, Pending, Servers, by_price, item_rows, placeholder
from tests.support.databases import RealDatabase

REPO = Path(__file__).resolve().parents[3]
RESOLVER = "tests.support.items_resolvers:minimal_price"


def snaprepl(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "snaprepl", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=REPO,
        timeout=600,
    )


#: Small commits, so that a kill lands between commits of one sync as well as inside them.
SMALL_COMMITS = {"AIRFLOW__SNAPREPL__REFRESH_COMMIT_ROWS": "40"}


def publish(servers: Servers, sql: Callable[[str], list[Any]], rows: int) -> str:
    table = f"kill_{uuid.uuid4().hex[:8]}"
    servers.pub.run(
        f"CREATE TABLE {table} (item_id integer PRIMARY KEY, name varchar(20), price numeric(10,2))",
        f"INSERT INTO {table} SELECT g, 'n' || g, (g % 7) + 1 FROM generate_series(1, {rows}) g",
    )
    item = f"{table}@bd_pub"
    statements = [
        f"REPL_CREATE_SNAPSHOT_PUB('{item}', 2)",
        f"REPL_ADD_SNAPSHOT_CR('{item}', '_cr', 'I', 10, '{RESOLVER}')",
        f"REPL_ADD_SNAPSHOT_CR('{item}', '_cr', 'U', 10, 'max', 'price')",
    ]
    for db in servers.subscribers:
        statements += [
            f"REPL_CREATE_SNAPSHOT_SUB('{servers.name(db)}', '{item}', 2)",
            f"REPL_INIT_SNAPSHOT('{servers.name(db)}', '{item}', 2, 500)",
        ]
    sql("; ".join(statements))
    return table


def change_randomly(db: RealDatabase, table: str, rng: random.Random, count: int, keys: int) -> None:
    """``count`` inserts, updates and deletes of random keys, in one transaction."""
    present = {k for k in item_rows(db, table)}
    mark = placeholder(db)
    with db.connect() as conn:
        cur = conn.cursor()
        cur.execute("BEGIN")
        for _ in range(count):
            key = rng.randint(1, keys)
            price = f"{rng.randint(1, 9)}.00"
            if key not in present:
                cur.execute(
                    f"INSERT INTO {table} (item_id, name, price) VALUES ({mark}, {mark}, {mark})",
                    (key, f"ins{key}", price),
                )
                present.add(key)
            elif rng.random() < 0.25:
                cur.execute(f"DELETE FROM {table} WHERE item_id = {mark}", (key,))
                present.discard(key)
            else:
                cur.execute(
                    f"UPDATE {table} SET price = {mark}, name = {mark} WHERE item_id = {mark}", (price, "u", key)
                )
        cur.execute("COMMIT")


def model_of(servers: Servers, table: str) -> Model:
    """The model, from the replicas' rows and the subscribers' pending log entries as they are now."""
    model = Model(
        servers.name(servers.pub),
        [servers.name(s) for s in servers.subscribers],
        {"I": [by_price(smaller_wins=True)], "U": [by_price(smaller_wins=False)]},
    )
    for db in servers.all:
        model.rows[servers.name(db)] = item_rows(db, table)
    for db in servers.subscribers:
        log = db.rows(f"SELECT RLOG_item_id, DMLTYPE, OLD_ROWGUID, SYNC_ID FROM {db.q('RLOG_' + table)}")
        assert all(r[3] == "" for r in log), "no entry is in flight before the sync"
        model.pending[servers.name(db)] = {int(r[0]): Pending(r[1], r[2]) for r in log}
    return model


def ledger_since(catalog: Any, item: str, after_id: int) -> Counter:
    return Counter(
        ModelConflict(c["CF_TYPE"], json.loads(c["CF_KEY"])[0], c["CF_ORIGIN"], c["CF_DECISION"])
        for c in catalog.conflicts(item)
        if c["CF_ID"] > after_id
    )


def test_a_sync_killed_at_random_moments_converges(
    servers: Servers, sql: Callable[[str], list[Any]], catalog: Any
) -> None:
    table = publish(servers, sql, rows=3000)
    item = f"public.{table}@bd_pub"
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    for attempt in range(2):
        for db in servers.all:
            change_randomly(db, table, rng, count=300, keys=3300)
        model = model_of(servers, table)
        model.sync()
        last_id = max([c["CF_ID"] for c in catalog.conflicts(item)], default=0)
        delay = rng.uniform(3.0, 16.0)
        victim = subprocess.Popen(
            [sys.executable, "-m", "snaprepl", "sql", f"REPL_UPDATE_SNAPSHOT('{item}', 2)"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **SMALL_COMMITS},
            cwd=REPO,
            start_new_session=True,
        )
        time.sleep(delay)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(victim.pid, signal.SIGKILL)  # the CLI, spark-submit, its JVM and the Python driver
        victim.wait()

        again = snaprepl("sql", f"REPL_UPDATE_SNAPSHOT('{item}', 2)", env=SMALL_COMMITS)

        context = f"seed {seed}, attempt {attempt}, killed after {delay:.1f}s"
        assert again.returncode == 0, f"{context}: {again.stderr[-3000:]}"
        expected = model.rows[model.publisher]
        for db in servers.all:
            assert item_rows(db, table) == expected, f"{context}: {db.dialect} differs from an uninterrupted sync"
        assert ledger_since(catalog, item, last_id) == Counter(model.conflicts), (
            f"{context}: each conflict is recorded exactly once"
        )
        for db in servers.subscribers:
            assert db.rows(f"SELECT COUNT(*) FROM {db.q('RLOG_' + table)}") == [(0,)], f"{context}: entries left"
    assert not [name for name in catalog.locks() if item in name], "no lock outlives the runs"


def test_update_snapshot_from_the_command_line_reports_and_notifies(
    servers: Servers, sql: Callable[[str], list[Any]], catalog: Any, spark_env: dict[str, str]
) -> None:
    """A pull and a push of every subscriber, in both Spark modes (spark-submit, the Connect server)."""
    table = publish(servers, sql, rows=10)
    item = f"{table}@bd_pub"
    mark = placeholder(servers.lite)
    servers.pub.run(f"UPDATE {table} SET price = 5 WHERE item_id = 1")
    servers.lite.run(f"UPDATE {table} SET price = 4 WHERE item_id = {mark}", params=[1])  # max: publisher wins
    servers.my.run(f"INSERT INTO {table} (item_id, name, price) VALUES (11, 'new', 1)")

    result = snaprepl("sql", f"REPL_UPDATE_SNAPSHOT('{item}', 2)", env=spark_env)

    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[0] == f"REPL_UPDATE_SNAPSHOT public.{item}:"
    assert any(line.strip().startswith(f"pull from {servers.name(servers.lite)}: 1 changes") for line in lines)
    assert "1 conflicts notified" in result.stdout
    assert "'U' conflict on key [1]" in result.stderr and "publisher wins (by max(price))" in result.stderr
    rows = item_rows(servers.pub, table)
    for db in servers.subscribers:
        assert item_rows(db, table) == rows
    [conflict] = catalog.conflicts(f"public.{item}")
    assert conflict["CF_NOTIFIED"] is True

    status = snaprepl("status", "--json")
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    [publication] = [p for p in report["publications"] if p["item"] == f"public.{item}"]
    assert publication["last_sync"]["status"] == "succeeded"
    assert {s["server"]: (s["to_pull"]["rows"], s["to_push"]["rows"]) for s in publication["subscribers"]} == {
        servers.name(servers.my): (0, 0),
        servers.name(servers.lite): (0, 0),
    }
    assert {"item": f"public.{item}", "type": "U", "decision": "publisher wins", "count": 1} in [
        {k: c[k] for k in ("item", "type", "decision", "count")} for c in report["conflicts"]
    ]
    # Each step is in the history, newest first: the pulls in name order, then the pushes; all caught up.
    runs, inits = catalog.history(f"public.{item}")[:4], catalog.history(f"public.{item}")[4:]
    assert [(r.rh_kind, r.rh_outcome, r.rh_rows_in) for r in inits] == [("init", "ok", 10)] * 2
    lite, my = servers.name(servers.lite), servers.name(servers.my)
    pulls = {r.rh_server: r for r in runs if r.rh_kind == "pull"}
    assert [r.rh_kind for r in runs] == ["push", "push", "pull", "pull"]
    assert (pulls[lite].rh_rows_in, pulls[lite].rh_conflicts, pulls[my].rh_rows_in) == (1, 1, 1)
    assert all(r.rh_outcome == "ok" and r.rh_dag_run_id is None for r in runs)
    assert [(r.rh_lag_seconds, r.rh_backlog) for r in runs] == [(0.0, 0)] * 4
    assert {s["server"]: s["last_run"]["kind"] for s in publication["subscribers"]} == {lite: "push", my: "push"}
    assert publication["subscribers"][0]["last_run"]["lag_seconds"] == 0.0
    listed = snaprepl("history", f"public.{item}", "--json", "--limit", "3")
    assert listed.returncode == 0, listed.stderr
    assert [(r["kind"], r["outcome"], r["dag_run_id"]) for r in json.loads(listed.stdout)] == [
        ("push", "ok", None),
        ("push", "ok", None),
        ("pull", "ok", None),
    ]
    text = snaprepl("status")
    assert f"public.{item}" in text.stdout and publication["dag_id"] in text.stdout
    assert "caught up" in text.stdout and "push ok" in text.stdout
    assert snaprepl("history", "--limit", "0").returncode == 2, "--limit is a positive whole number"
    synced_at = catalog.publication(f"public.{item}").sp_last_sync_at

    idle = snaprepl("sql", "-v", f"REPL_UPDATE_SNAPSHOT('{item}', 2)")  # nothing left: decided before Spark
    assert idle.returncode == 0, idle.stderr[-3000:]
    assert "Spark-Submit cmd" not in idle.stdout + idle.stderr, "an idle sync starts no spark-submit"
    for db in servers.subscribers:
        for step in (f"pull from {servers.name(db)}: 0 changes", f"push to {servers.name(db)}: 0 changes"):
            assert any(line.strip().startswith(step) for line in idle.stdout.splitlines()), idle.stdout
    assert catalog.publication(f"public.{item}").sp_last_sync_at > synced_at, "the idle sync is recorded"
    assert_idle_steps_start_no_spark_submit(servers, f"public.{item}")
    idle_runs = catalog.history(f"public.{item}")[:6]  # the idle sync's 4 steps and the 2 tasks, as jobs record
    assert [(r.rh_outcome, r.rh_rows_in, r.rh_lag_seconds) for r in idle_runs] == [("idle", 0, 0.0)] * 6


def assert_idle_steps_start_no_spark_submit(servers: Servers, item: str) -> None:
    """The DAG's pull and push tasks of an idle publication answer without a spark-submit."""
    from snaprepl.airflow.operators import ReplicationSyncOperator, SnapreplSparkOperator

    def no_spark_submit(*args: object, **kwargs: object) -> None:
        raise AssertionError("an idle sync step must not start spark-submit")

    original = SnapreplSparkOperator._run_submission
    SnapreplSparkOperator._run_submission = no_spark_submit  # type: ignore[method-assign]
    try:
        for action in ("pull", "push"):
            server = servers.name(servers.lite)
            task = ReplicationSyncOperator(task_id=f"idle_{action}", item=item, action=action, server=server)
            [outcome] = task.execute({"params": {}})  # type: ignore[arg-type]
            assert (outcome["step"], outcome["server"], outcome["changes"]) == (action, server, 0)
    finally:
        SnapreplSparkOperator._run_submission = original  # type: ignore[method-assign]

"""A PostgreSQL -> PostgreSQL initial load (REPL_INIT_SNAPSHOT through the COPY pipe) SIGKILLed with
every process of its run, then run again: the re-run merges (stale rows updated, rows the publisher
lacks deleted), keeps the user's pending local changes (SEMANTICS 6: an init's chunks leave keys with
a pending local change alone; the next sync pulls them), leaves no staging table or sequence, and
records the subscription as loaded. Killed while copying straight into the empty replica, and while
applying a staging table to a replica that had a row already; and a straight copy that meets a row a
user inserted meanwhile stages and merges instead."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.conftest import SESSION_TAG
from tests.integration.test_kill_campaign import leftovers
from tests.support.databases import PG_ADMIN, RealDatabase, pg_admin_connect
from tests.support.processes import alive, descendants, kill_quietly, wait_for

pytestmark = [pytest.mark.spark, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
ROWS = 20_000
ROWS_PER_COMMIT = 100
MINE, NEW_LOCAL, NEW_PUB, EARLY = 10**6 + 1, 10**6 + 2, 10**6 + 3, 10**6 + 4


@pytest.fixture(scope="module")
def pg_sub(catalog: Any) -> Iterator[tuple[RealDatabase, str]]:
    """A PostgreSQL subscriber of its own, registered as a replication server; its replication name."""
    from snaprepl import api
    from snaprepl.database.sessions import forget_databases

    name = f"snaprepl_bpg_{SESSION_TAG}"
    with pg_admin_connect() as conn:
        conn.cursor().execute(f'CREATE DATABASE "{name}"')
    os.environ["AIRFLOW_CONN_BD_PG"] = f"postgresql://{PG_ADMIN['user']}@{PG_ADMIN['host']}:{PG_ADMIN['port']}/{name}"
    db = RealDatabase("postgres", "bd_pg", name)
    yield db, str(api.repl_snp_server(db.conn_id, catalog=catalog))
    forget_databases()
    with pg_admin_connect() as conn:
        conn.cursor().execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def cli(statement: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "snaprepl", "sql", statement],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, **env},
        cwd=REPO,
        start_new_session=True,
    )


def finish(statement: str, env: dict[str, str]) -> None:
    run = cli(statement, env)
    out, _ = run.communicate(timeout=600)
    assert run.returncode == 0, out.decode(errors="replace")


def kill_mid_load(statement: str, sub: RealDatabase, table: str, env: dict[str, str]) -> int:
    """Run ``statement`` with the CLI; once the replica has some of the rows but not all, SIGKILL the
    CLI's process group and every process under it (spark-submit's JVM, its Python driver and workers).
    The number of replica rows seen just before the kill."""
    run = cli(statement, env)
    seen = 0
    with psycopg.connect(host=PG_ADMIN["host"], port=PG_ADMIN["port"], user=PG_ADMIN["user"], dbname=sub.name) as c:
        c.autocommit = True
        while run.poll() is None and not 1 < seen < ROWS:
            exists = c.execute("SELECT to_regclass(%s)", (f"public.{table}",)).fetchone()
            seen = c.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] if exists and exists[0] else 0
            time.sleep(0.01)
    assert run.poll() is None, f"the load ended before the kill ({seen} rows): {run.communicate()[0]!r}"
    victims = [run.pid, *descendants(run.pid)]
    with_mark = leftovers(run.pid)
    assert len(victims) > 2 and set(with_mark) <= set(victims), (victims, with_mark)
    for pgid in {os.getpgid(p) for p in victims if _exists(p)}:
        kill_quietly(-pgid, signal.SIGKILL)
    for pid in victims:
        kill_quietly(pid, signal.SIGKILL)
    run.wait(timeout=60)
    assert wait_for(lambda: not any(alive(p) for p in victims) and not leftovers(run.pid), 30), (
        f"processes of the killed run left: {[p for p in victims if alive(p)]} {leftovers(run.pid)}"
    )
    return int(seen)


def _exists(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


def rows_of(db: RealDatabase, table: str) -> dict[int, tuple[str, int, str]]:
    rows = db.rows(f'SELECT id, name, v, "ROWGUID" FROM {table}')
    assert len(rows) == len({r[0] for r in rows}), "duplicate keys"
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


@pytest.mark.parametrize("straight", [True, False], ids=["straight-copy", "staged-apply"])
def test_an_init_killed_mid_load_converges_when_run_again(
    bidir_pub: RealDatabase, pg_sub: tuple[RealDatabase, str], catalog: Any, tmp_path: Path, straight: bool
) -> None:
    sub, server = pg_sub
    pub, env = bidir_pub, {"TMPDIR": str(tmp_path)}
    table = f"resume_{uuid.uuid4().hex[:8]}"
    pub.run(
        f"CREATE TABLE {table} (id integer PRIMARY KEY, name varchar(40), v integer)",
        f"INSERT INTO {table} SELECT g, 'n' || g, g FROM generate_series(1, {ROWS}) g",
    )
    item = f"{table}@bd_pub"
    finish(f"REPL_CREATE_SNAPSHOT_PUB('{item}', 2); REPL_CREATE_SNAPSHOT_SUB('{server}', '{item}', 2)", env)
    init = f"REPL_INIT_SNAPSHOT('{server}', '{item}', 2, {ROWS_PER_COMMIT})"
    if not straight:  # a user's row before the load: the replica is not empty, the rows are staged
        sub.run(f"INSERT INTO {table} (id, name, v) VALUES ({EARLY}, 'early', -3)")

    # A user's insert of the last key, not yet committed, holds the load's chunk of that key: the load
    # commits its chunks inside the server in a fraction of a second, and must not end before the kill.
    # Released after the kill: the rows a load's last statement still commits are merged like any other.
    with psycopg.connect(host=PG_ADMIN["host"], port=PG_ADMIN["port"], user=PG_ADMIN["user"], dbname=sub.name) as user:
        user.execute(f"INSERT INTO {table} (id, name, v) VALUES ({ROWS}, 'undecided', 0)")
        seen = kill_mid_load(init, sub, table, env)
        loaded = rows_of(sub, table)
        user.rollback()
    assert 0 < len(loaded) - (not straight) < ROWS, f"killed mid-load: {seen} rows seen, {len(loaded)} left"
    staging = sub.rows("SELECT COUNT(*) FROM pg_class WHERE relname LIKE 'snaprepl_init_%'")[0][0]
    assert (staging == 0) if straight else (staging >= 1), f"{staging} staging tables and sequences"
    assert catalog.subscription(server, f"public.{item}").ss_init_state == "running"

    # Meanwhile: a user's update of a loaded key and insert of a new one on the subscriber; the
    # publisher changes two loaded rows (the re-run must update one and delete the other).
    mine, stale, gone = sorted(set(loaded) - {EARLY})[:3]
    sub.transaction(
        f"UPDATE {table} SET name = 'mine', v = -1 WHERE id = {mine}",
        f"INSERT INTO {table} (id, name, v) VALUES ({NEW_LOCAL}, 'local', -2)",
    )
    pub.transaction(f"UPDATE {table} SET name = 'newer' WHERE id = {stale}", f"DELETE FROM {table} WHERE id = {gone}")
    local = {k: v for k, v in rows_of(sub, table).items() if k in (mine, NEW_LOCAL, EARLY)}
    assert {v[2].split("@")[0] for v in local.values()} == {server}, "user writes make versions of the subscriber"

    finish(init, env)

    published, replica = rows_of(pub, table), rows_of(sub, table)
    assert replica[stale][0] == "newer" and gone not in replica, "the re-run merged"
    assert {k: v for k, v in replica.items() if k not in local} == {k: v for k, v in published.items() if k != mine}
    assert {k: replica.get(k) for k in local} == local, "pending local changes are left to the next sync"
    assert sub.rows("SELECT COUNT(*) FROM pg_class WHERE relname LIKE 'snaprepl_init_%'") == [(0,)], "staging left"
    assert catalog.subscription(server, f"public.{item}").ss_init_state == "done"

    pub.run(f"INSERT INTO {table} VALUES ({NEW_PUB}, 'pub', 3)")
    finish(f"REPL_UPDATE_SNAPSHOT('{item}', 2)", env)
    published, replica = rows_of(pub, table), rows_of(sub, table)
    assert replica == published and NEW_PUB in replica, "the sync moved the publisher's change across"
    assert {k: published[k] for k in local} == local, "and pulled the user's changes without conflict"


def test_a_straight_copy_meeting_a_user_s_row_stages_and_merges_instead(
    bidir_pub: RealDatabase, pg_sub: tuple[RealDatabase, str], catalog: Any, tmp_path: Path
) -> None:
    """A user inserts a key of the publisher's into the empty replica while the load copies straight
    into it: the copy of that key's chunk fails, and the load stages the rows and merges them instead,
    leaving the user's row (a pending local change) as the user wrote it, every other row once."""
    sub, server = pg_sub
    pub, env = bidir_pub, {"TMPDIR": str(tmp_path)}
    table = f"meet_{uuid.uuid4().hex[:8]}"
    pub.run(
        f"CREATE TABLE {table} (id integer PRIMARY KEY, name varchar(40), v integer)",
        f"INSERT INTO {table} SELECT g, 'n' || g, g FROM generate_series(1, {ROWS}) g",
    )
    item = f"{table}@bd_pub"
    finish(f"REPL_CREATE_SNAPSHOT_PUB('{item}', 2); REPL_CREATE_SNAPSHOT_SUB('{server}', '{item}', 2)", env)
    with psycopg.connect(host=PG_ADMIN["host"], port=PG_ADMIN["port"], user=PG_ADMIN["user"], dbname=sub.name) as user:
        # Not committed yet: the replica is found empty, and the copy of the last key's chunk waits for it.
        user.execute(f"INSERT INTO {table} (id, name, v) VALUES ({ROWS}, 'mine', -1)")
        run = cli(f"REPL_INIT_SNAPSHOT('{server}', '{item}', 2, {ROWS_PER_COMMIT})", env)
        assert wait_for(lambda: run.poll() is not None or sub.rows(f"SELECT COUNT(*) FROM {table}")[0][0] > 0, 120)
        user.commit()
    out, _ = run.communicate(timeout=600)
    report = out.decode(errors="replace")
    assert run.returncode == 0, report
    assert "staged and merged instead" in report, report
    published, replica = rows_of(pub, table), rows_of(sub, table)
    assert replica[ROWS][:2] == ("mine", -1) and replica[ROWS][2].split("@")[0] == server
    assert {k: v for k, v in replica.items() if k != ROWS} == {k: v for k, v in published.items() if k != ROWS}
    assert sub.rows("SELECT COUNT(*) FROM pg_class WHERE relname LIKE 'snaprepl_init_%'") == [(0,)], "staging left"
    assert catalog.subscription(server, f"public.{item}").ss_init_state == "done"

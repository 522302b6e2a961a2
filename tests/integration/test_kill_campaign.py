"""Kill campaign: incremental and complete refreshes and a bi-directional sync, run from the command
line (spark-submit) and killed at random moments by SIGKILLing the CLI, the spark-submit JVM or the
Python driver (victim and moment drawn with a seeded RNG; the seed is printed).

After each kill: no process of the killed run is left, and after a re-run (in this process's Spark
session, the job's own code without spark-submit) every copy equals its source and no credentials
file is left in the private directory. ``SNAPREPL_KILL_ROUNDS`` (default 12, which keeps the suite
within its time budget; 30 or more for a soak) sets the number of rounds, ``SNAPREPL_KILL_SEED``
replays a campaign.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SESSION_TAG
from tests.integration.bidir.test_sync_submit import change_randomly
from tests.support.bidir import Servers, item_rows
from tests.support.databases import (
    MYSQL_ADMIN,
    PG_ADMIN,
    RealDatabase,
    mysql_admin_connect,
    pg_admin_connect,
)
from tests.support.jobs import in_process_syncer
from tests.support.processes import alive, job_processes, kill_quietly, mentioning, wait_for

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ROUNDS = int(os.environ.get("SNAPREPL_KILL_ROUNDS") or 12)
VICTIMS = ("cli", "jvm", "driver")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def kc_servers(catalog: Any, session_dir: Path) -> Iterator[Servers]:
    """A publisher and two subscribers of the campaign's own (kc_*), registered as replication servers."""
    from snaprepl import api
    from snaprepl.database.sessions import forget_databases

    name = f"snaprepl_kc_{SESSION_TAG}"  # + _pub, _my, _lite: each server has its own replication name
    with pg_admin_connect() as conn:
        conn.cursor().execute(f'CREATE DATABASE "{name}_pub"')
    with mysql_admin_connect() as conn:
        conn.cursor().execute(f"CREATE DATABASE `{name}_my` CHARACTER SET utf8mb4")
    lite = session_dir / f"{name}_lite.db"
    os.environ["AIRFLOW_CONN_KC_PUB"] = (
        f"postgresql://{PG_ADMIN['user']}@{PG_ADMIN['host']}:{PG_ADMIN['port']}/{name}_pub"
    )
    os.environ["AIRFLOW_CONN_KC_MY"] = (
        f"mysql://{MYSQL_ADMIN['user']}@{MYSQL_ADMIN['host']}:{MYSQL_ADMIN['port']}/{name}_my"
    )
    os.environ["AIRFLOW_CONN_KC_LITE"] = f"sqlite:///{lite}"
    dbs = (
        RealDatabase("postgres", "kc_pub", f"{name}_pub"),
        RealDatabase("mysql", "kc_my", f"{name}_my"),
        RealDatabase("sqlite", "kc_lite", str(lite)),
    )
    names = {db.conn_id: str(api.repl_snp_server(db.conn_id, catalog=catalog)) for db in dbs}
    yield Servers(*dbs, names)
    forget_databases()
    with pg_admin_connect() as conn:
        conn.cursor().execute(f'DROP DATABASE IF EXISTS "{name}_pub" WITH (FORCE)')
    with mysql_admin_connect() as conn:
        conn.cursor().execute(f"DROP DATABASE IF EXISTS `{name}_my`")


@pytest.fixture(scope="module")
def in_process(catalog: Any, settings: Any, spark: Any) -> Callable[[str], list[Any]]:
    """Runs statements as ``snaprepl sql`` does, with refreshes and syncs in this process's Spark."""
    from snaprepl.api.script import run_script
    from snaprepl.refresh.runner import run_refresh

    def refresher(request: Any, catalog: Any, settings: Any) -> Any:
        return run_refresh(spark, request, catalog=catalog)

    return lambda text: run_script(
        text, catalog=catalog, settings=settings, refresher=refresher, syncer=in_process_syncer(spark)
    )


class Campaign:
    """The campaign's copies, how to change their sources, and how to compare them."""

    def __init__(self, servers: Servers, pg: RealDatabase, my: RealDatabase, run: Callable[[str], list[Any]]) -> None:
        self.servers, self.pg, self.my, self.run = servers, pg, my, run
        tag = uuid.uuid4().hex[:8]
        self.src, self.dest, self.items = f"kc_src_{tag}", f"kc_dest_{tag}", f"kc_items_{tag}"
        pg.run(
            f"CREATE TABLE {self.src} (id int PRIMARY KEY, v int)",
            f"INSERT INTO {self.src} SELECT g, g FROM generate_series(1, 200) g",
        )
        servers.pub.run(
            f"CREATE TABLE {self.items} (item_id integer PRIMARY KEY, name varchar(20), price numeric(10,2))",
            f"INSERT INTO {self.items} SELECT g, 'n' || g, (g % 7) + 1 FROM generate_series(1, 40) g",
        )
        item = f"{self.items}@kc_pub"
        snapshot = f"{self.dest}@{my.conn_id}"
        statements = [
            f"CREATE SNAPSHOT LOG FOR {self.src}@{pg.conn_id}",
            f"CREATE SNAPSHOT {snapshot} FROM {self.src}@{pg.conn_id}",
            f"REPL_CREATE_SNAPSHOT_PUB('{item}', 2)",
        ]
        for db in servers.subscribers:
            statements += [
                f"REPL_CREATE_SNAPSHOT_SUB('{servers.name(db)}', '{item}', 2)",
                f"REPL_INIT_SNAPSHOT('{servers.name(db)}', '{item}', 2, 500)",
            ]
        run("; ".join(statements))
        self.statements = {
            "incremental": f"UPDATE SNAPSHOT {snapshot}",
            "complete": f"UPDATE SNAPSHOT {snapshot} AS NONINCREMENTAL",
            "sync": f"REPL_UPDATE_SNAPSHOT('{item}', 2)",
        }

    def change(self, kind: str, rng: random.Random) -> None:
        if kind == "sync":
            for db in self.servers.all:
                change_randomly(db, self.items, rng, count=rng.randint(1, 8), keys=50)
            return
        key = rng.randint(1, 240)
        self.pg.transaction(
            f"UPDATE {self.src} SET v = v + 1 WHERE id = {rng.randint(1, 240)}",
            f"DELETE FROM {self.src} WHERE id = {key}",
            f"INSERT INTO {self.src} VALUES ({rng.randint(1, 240)}, {rng.randint(0, 99)}) ON CONFLICT DO NOTHING",
        )

    def differences(self, kind: str) -> str | None:
        """Why a copy differs from its source, or None."""
        if kind == "sync":
            rows = {db.dialect: item_rows(db, self.items) for db in self.servers.all}
            return None if rows["postgres"] == rows["mysql"] == rows["sqlite"] else f"replicas differ: {rows}"
        want = self.pg.rows(f"SELECT id, v FROM {self.src} ORDER BY id")
        got = self.my.rows(f"SELECT id, v FROM {self.dest} ORDER BY id")
        return None if want == got else f"destination differs: {len(want)} source rows, {len(got)} copied"


def run_and_kill(statement: str, victim: str, moment: float, env: dict[str, str]) -> tuple[str, int]:
    """Run ``statement`` with the CLI and SIGKILL ``victim`` ``moment`` seconds after the start (or as
    soon after as the victim exists). Returns (what happened, the CLI's pid) once the CLI has ended."""
    cli = subprocess.Popen(
        [sys.executable, "-m", "snaprepl", "sql", statement],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **env},
        cwd=REPO,
        start_new_session=True,
    )
    started = time.monotonic()
    outcome = "finished before the kill"
    while cli.poll() is None:
        elapsed = time.monotonic() - started
        if elapsed >= moment:
            jvm, driver = job_processes(cli.pid)
            target = {"cli": cli.pid, "jvm": jvm, "driver": driver}[victim]
            # The check after the kill must see what it looks for: a process only just forked (or already
            # ending) may not show the run's mark yet, so wait for the next look instead of killing it.
            if target and (victim == "cli" or target in leftovers(cli.pid)):
                kill_quietly(target, signal.SIGKILL)
                outcome = f"killed the {victim} at {elapsed:.1f}s"
                break
        time.sleep(0.05)
    cli.wait(timeout=120)
    return outcome, cli.pid


def leftovers(cli_pid: int) -> list[int]:
    """Live processes started for the CLI ``cli_pid``'s job (they carry its pid in SNAPREPL_SUBMITTER)."""
    return [p for p in mentioning(f"SNAPREPL_SUBMITTER={socket.gethostname()}:{cli_pid}:") if alive(p)]


def test_kill_campaign(pg_db, mysql_db, kc_servers, in_process, tmp_path: Path) -> None:
    from snaprepl.spark import rundir

    seed = int(os.environ.get("SNAPREPL_KILL_SEED") or random.randrange(1 << 30))
    print(f"\nkill campaign: seed {seed}, {ROUNDS} rounds (SNAPREPL_KILL_SEED={seed} replays it)")
    rng = random.Random(seed)
    campaign = Campaign(kc_servers, pg_db, mysql_db, in_process)
    env = {"TMPDIR": str(tmp_path)}
    private = tmp_path / f"snaprepl-{os.getuid()}"
    durations = {}
    for kind, statement in campaign.statements.items():  # the observed durations the kill moments are drawn in
        campaign.change(kind, rng)
        began = time.monotonic()
        outcome, _ = run_and_kill(statement, "cli", float("inf"), env)
        durations[kind] = time.monotonic() - began
        assert campaign.differences(kind) is None, f"seed {seed}: an uninterrupted {kind} run"
    print(f"kill campaign: job durations {', '.join(f'{k} {v:.1f}s' for k, v in durations.items())}")
    tally: Counter = Counter()
    started = time.monotonic()
    for number in range(ROUNDS):
        kind, victim = rng.choice(sorted(durations)), rng.choice(VICTIMS)
        moment = rng.uniform(0.0, durations[kind])
        campaign.change(kind, rng)
        outcome, cli_pid = run_and_kill(campaign.statements[kind], victim, moment, env)
        context = f"seed {seed}, round {number}: {kind}, {outcome}"
        print(f"kill campaign: round {number}: {kind}, {outcome}", flush=True)
        tally[f"{kind}/{victim}/{'killed' if outcome.startswith('killed') else 'finished first'}"] += 1
        assert wait_for(lambda pid=cli_pid: not leftovers(pid), 30), f"{context}: processes left {leftovers(cli_pid)}"
        if outcome.startswith("killed"):
            campaign.run(campaign.statements[kind])
        assert campaign.differences(kind) is None, f"{context}: {campaign.differences(kind)}"
        rundir.sweep(private)  # what the next run's prepare() does
        credentials = list(private.rglob("snaprepl-conns-*"))
        assert credentials == [], f"{context}: credentials left: {credentials}"
    per_round = (time.monotonic() - started) / max(ROUNDS, 1)
    rounds = ", ".join(f"{k} {n}" for k, n in sorted(tally.items()))
    print(f"kill campaign: {ROUNDS} rounds in {per_round * ROUNDS:.0f}s ({per_round:.1f}s a round): {rounds}")

"""Spark Connect mode (``[snaprepl] spark_mode = connect``, a ``spark_connect`` Spark connection): jobs
run in the calling process against the session's Connect server (``snaprepl spark-server``'s code).

The core refresh and sync tests run in both modes (the ``spark_env`` fixture); these test what only
connect mode has: the server's Python workers stay bounded however many runs use it (SPARK-54055),
a server that is down fails in one line naming the connection, and the server command's status.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.processes import cmdline, descendants, parent_of

pytestmark = [pytest.mark.spark]

#: Refreshes per process: the first two complete (their COPY writer runs in the server's Python
#: workers), the others incremental.
RUNS = (
    "import sys\n"
    "from snaprepl import api\n"
    "name = sys.argv[1]\n"
    "for i in range(10):\n"
    "    refresh = api.repl_refresh_noninc_snapshot if i < 2 else api.repl_refresh_inc_snapshot\n"
    "    print('KIND', refresh(name).kind)\n"
)


#: Runs one statement through the command line and prints which of Spark and the SQL parser it loaded.
LOADS = (
    "import sys\n"
    "from snaprepl.cli import main\n"
    "code = main(['sql', sys.argv[1]])\n"
    "print('LOADED', sorted({m.split('.')[0] for m in sys.modules} & {'pyspark', 'sqlglot'}))\n"
    "sys.exit(code)\n"
)


def snaprepl(*args: str, env: dict[str, str], timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "snaprepl", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=timeout,
    )


def server_env(connect_server: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in connect_server.items() if k != "port"}


def python_daemons(server_pid: int) -> tuple[list[int], list[int]]:
    """The server's ``pyspark.daemon`` processes: the pools' daemons, and all (their forked workers too)."""
    found = [p for p in descendants(server_pid) if "pyspark.daemon" in cmdline(p)]
    pools = [p for p in found if "pyspark.daemon" not in cmdline(parent_of(p) or 0)]
    return pools, found


def test_fifty_refreshes_keep_the_servers_python_workers_bounded(pg_db, catalog, connect_server, unique_name) -> None:
    env = server_env(connect_server)
    src = f"{unique_name}_s"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v text)", f"INSERT INTO {src} VALUES (1, 'a'), (2, 'b')")
    snapshot = f"{unique_name}@{pg_db.conn_id}"
    source = f"{src}@{pg_db.conn_id}"
    created = snaprepl("sql", f"CREATE SNAPSHOT LOG FOR {source}; CREATE SNAPSHOT {snapshot} FROM {source}", env=env)
    assert created.returncode == 0, created.stderr[-3000:]
    for round_ in range(5):  # 5 processes one after the other, as an Airflow worker slot runs tasks
        pg_db.run(f"INSERT INTO {src} VALUES ({10 + round_}, 'r')")
        ran = subprocess.run(
            [sys.executable, "-c", RUNS, snapshot], capture_output=True, text=True, env={**os.environ, **env}
        )
        assert ran.returncode == 0, ran.stderr[-3000:]
        kinds = [line.split()[1] for line in ran.stdout.splitlines() if line.startswith("KIND ")]
        assert kinds == ["complete"] * 2 + ["incremental"] * 8
    assert sorted(pg_db.rows(f"SELECT id FROM {unique_name}")) == [(i,) for i in (1, 2, 10, 11, 12, 13, 14)]

    state = Path(connect_server["SNAPREPL_STATE_DIR"])
    slots = list(state.glob("connect-slots/*/slot-*.id"))
    assert len(slots) == 1, "processes that follow each other share one slot (one server session)"
    server = json.loads((state / "connect-server" / "server.json").read_text())
    pools, daemons = python_daemons(int(server["pid"]))
    assert pools, "the COPY writer ran in the server's Python workers (else this test proves nothing)"
    assert len(pools) <= len(slots), f"one Python worker pool per slot, not per run: {len(pools)} pools"
    assert len(daemons) <= len(slots) * (os.cpu_count() or 2) + len(slots), f"{len(daemons)} pyspark.daemon processes"

    status = snaprepl("spark-server", "status", env=env)
    assert status.returncode == 0 and f"pid {server['pid']}" in status.stdout and "answers" in status.stdout


def test_a_postgres_refresh_through_the_pipe_loads_neither_spark_nor_a_sql_parser(
    pg_db, catalog, connect_server, unique_name
) -> None:
    """PostgreSQL into PostgreSQL, the COPY pipe moves the changes: no Spark session, and no SQL parser
    (sqlglot, 0.09 s of a 1-second refresh), the snapshot's query and its column types being read back
    as snaprepl wrote them. Both are loaded once the source's columns change (a type to compare)."""
    env = {**os.environ, **server_env(connect_server)}
    src, snapshot = f"{unique_name}_s", f"{unique_name}@{pg_db.conn_id}"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v varchar(10))", f"INSERT INTO {src} VALUES (1, 'a')")
    created = snaprepl(
        "sql",
        f"CREATE SNAPSHOT LOG FOR {src}@{pg_db.conn_id}; CREATE SNAPSHOT {snapshot} FROM {src}@{pg_db.conn_id}",
        env=env,
    )
    assert created.returncode == 0, created.stderr[-3000:]
    loaded = []
    for change in (f"UPDATE {src} SET v = 'b'", f"ALTER TABLE {src} ALTER COLUMN v TYPE varchar(20)"):
        pg_db.run(change, f"INSERT INTO {src} VALUES ({len(loaded) + 2}, 'c')")
        ran = subprocess.run(
            [sys.executable, "-c", LOADS, f"UPDATE SNAPSHOT {snapshot}"], capture_output=True, text=True, env=env
        )
        assert ran.returncode == 0, ran.stderr[-3000:]
        loaded.append(next(line for line in ran.stdout.splitlines() if line.startswith("LOADED")))
    assert loaded == ["LOADED []", "LOADED ['sqlglot']"]
    assert pg_db.rows(f"SELECT id, v FROM {unique_name} ORDER BY id") == [(1, "b"), (2, "c"), (3, "c")]


def test_a_server_that_is_down_fails_in_one_line_naming_the_connection(pg_db, catalog, unique_name) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens there once the probe is closed
    down = {"conn_type": "spark_connect", "host": "localhost", "port": port, "password": "t0ken-Secret"}
    env = {"AIRFLOW_CONN_SNAPREPL_SPARK": json.dumps(down)}
    pg_db.run(f"CREATE TABLE {unique_name}_s (id int PRIMARY KEY)")
    query = f"SELECT id FROM {unique_name}_s@{pg_db.conn_id}"

    failed = snaprepl("sql", f"CREATE NONINCREMENTAL SNAPSHOT {unique_name}@{pg_db.conn_id} AS '{query}'", env=env)

    assert failed.returncode == 1
    lines = failed.stderr.strip().splitlines()
    assert len(lines) == 1, failed.stderr
    assert lines[0].startswith("snaprepl: error: ")
    assert "the Spark Connect server of connection 'snaprepl_spark'" in lines[0]
    assert f"localhost:{port}" in lines[0] and "snaprepl spark-server start" in lines[0]
    assert "t0ken-Secret" not in failed.stdout + failed.stderr


#: Opens the slot's session, has the server close it (as its idle timeout would), then asks again.
ROTATE = (
    "from snaprepl.spark import connect\n"
    "url = connect.connection_url('snaprepl_spark')\n"
    "first = connect.session_for(url, 'snaprepl_spark')\n"
    "first.client.release_session()\n"
    "connect.forget(url)\n"
    "second = connect.session_for(url, 'snaprepl_spark')\n"
    "print('IDS', first.session_id, second.session_id, second.range(3).count())\n"
)


def test_a_session_the_server_closed_is_replaced_by_a_new_id(connect_server) -> None:
    env = {**os.environ, **server_env(connect_server)}
    ran = subprocess.run([sys.executable, "-c", ROTATE], capture_output=True, text=True, env=env, timeout=300)
    assert ran.returncode == 0, ran.stderr[-3000:]
    [line] = [line for line in ran.stdout.splitlines() if line.startswith("IDS ")]
    _, first, second, count = line.split()
    assert first != second and count == "3", "SESSION_CLOSED: the slot got a new session id, which works"
    slot_ids = {p.read_text().strip() for p in Path(connect_server["SNAPREPL_STATE_DIR"]).glob("connect-slots/*/*.id")}
    assert second in slot_ids, "the slot keeps the new id for the processes that follow"


def test_a_snapshots_own_spark_connection_and_the_fallback_when_its_server_is_down(
    pg_db, catalog, connect_server, unique_name
) -> None:
    """The settings' Spark connection is left undefined (spark-submit, local mode); the snapshot names
    its own: a live Connect server, then one that is down, without and with ``connect_fallback``."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    live = json.loads(connect_server["AIRFLOW_CONN_SNAPREPL_SPARK"])
    down = {**live, "port": port}
    env = {
        "SNAPREPL_STATE_DIR": connect_server["SNAPREPL_STATE_DIR"],
        "AIRFLOW_CONN_LIVE_SPARK": json.dumps(live),
        "AIRFLOW_CONN_DOWN_SPARK": json.dumps(down),
    }
    src, snapshot = f"{unique_name}_s", f"{unique_name}@{pg_db.conn_id}"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v text)", f"INSERT INTO {src} VALUES (1, 'a')")
    source = f"{src}@{pg_db.conn_id}"
    created = snaprepl(  # the first refresh on the live server, named by [snaprepl] spark_conn_id
        "sql", "-v", f"CREATE SNAPSHOT LOG FOR {source}; CREATE SNAPSHOT {snapshot} FROM {source}",
        env={**env, "AIRFLOW__SNAPREPL__SPARK_CONN_ID": "live_spark"},
    )  # fmt: skip
    assert created.returncode == 0, created.stderr[-3000:]
    assert "Spark-Submit cmd" not in created.stdout + created.stderr

    chosen = snaprepl("sql", f"REPL_SET_SNAPSHOT_SPARK_CONN('{snapshot}', 'live_spark')", env=env)
    assert chosen.returncode == 0 and "Spark connection live_spark (connect mode)" in chosen.stdout, chosen.stderr
    pg_db.run(f"INSERT INTO {src} VALUES (2, 'b')")
    refreshed = snaprepl("sql", "-v", f"REPL_REFRESH_INC_SNAPSHOT('{snapshot}')", env=env)
    assert refreshed.returncode == 0, refreshed.stderr[-3000:]
    assert "Spark-Submit cmd" not in refreshed.stdout + refreshed.stderr, (
        "the snapshot's connect connection should spare spark-submit"
    )
    assert sorted(pg_db.rows(f"SELECT id FROM {unique_name}")) == [(1,), (2,)]

    wrong = snaprepl("sql", f"REPL_SET_SNAPSHOT_SPARK_CONN('{snapshot}', '{pg_db.conn_id}')", env=env)
    assert wrong.returncode == 1 and "not a Spark connection" in wrong.stderr
    assert snaprepl("sql", f"REPL_SET_SNAPSHOT_SPARK_CONN('{snapshot}', 'down_spark')", env=env).returncode == 0
    pg_db.run(f"INSERT INTO {src} VALUES (3, 'c')")
    failed = snaprepl("sql", f"REPL_REFRESH_INC_SNAPSHOT('{snapshot}')", env=env)
    assert failed.returncode == 1
    lines = failed.stderr.strip().splitlines()
    assert len(lines) == 1, failed.stderr
    assert f"connection 'down_spark' (localhost:{port}) does not answer" in lines[0]
    assert "snaprepl spark-server start" in lines[0] and live["password"] not in failed.stderr
    assert sorted(pg_db.rows(f"SELECT id FROM {unique_name}")) == [(1,), (2,)], "nothing changed in the destination"

    env["AIRFLOW__SNAPREPL__CONNECT_FALLBACK"] = "true"
    fallback = snaprepl("sql", "-v", f"REPL_REFRESH_INC_SNAPSHOT('{snapshot}')", env=env)
    assert fallback.returncode == 0, fallback.stderr[-3000:]
    assert "falling back to spark-submit" in fallback.stderr and "Spark-Submit cmd" in fallback.stdout
    assert sorted(pg_db.rows(f"SELECT id FROM {unique_name}")) == [(1,), (2,), (3,)]


def test_a_local_server_killed_by_sigkill_is_started_again_with_the_same_token(
    pg_db, catalog, connect_server, unique_name
) -> None:
    from snaprepl.submit import server, supervisor

    env = server_env(connect_server)
    directory = Path(connect_server["SNAPREPL_STATE_DIR"]) / "connect-server"
    before = json.loads((directory / supervisor.PROCESS_FILE).read_text())
    time.sleep(max(0.0, before["started_at"] + supervisor.STEADY_SECONDS + 1 - time.time()))  # up long enough

    os.kill(before["server_pid"], signal.SIGKILL)

    deadline = time.monotonic() + 240
    while True:
        now = json.loads((directory / supervisor.PROCESS_FILE).read_text())
        if now["server_pid"] != before["server_pid"] and server.answers(int(connect_server["port"])):
            break
        assert time.monotonic() < deadline, "the killed server was not started again"
        time.sleep(1)
    status = snaprepl("spark-server", "status", env=env)
    assert status.returncode == 0, status.stderr
    assert f"pid {now['server_pid']} on 127.0.0.1:{connect_server['port']} answers" in status.stdout
    assert f"restarted {before['restarts'] + 1} times" in status.stdout

    pg_db.run(f"CREATE TABLE {unique_name}_s (id int PRIMARY KEY)", f"INSERT INTO {unique_name}_s VALUES (1), (2)")
    query = f"SELECT id FROM {unique_name}_s@{pg_db.conn_id}"
    created = snaprepl("sql", f"CREATE NONINCREMENTAL SNAPSHOT {unique_name}@{pg_db.conn_id} AS '{query}'", env=env)
    assert created.returncode == 0, f"the connection's token works with the new server:\n{created.stderr[-3000:]}"
    assert sorted(pg_db.rows(f"SELECT id FROM {unique_name}")) == [(1,), (2,)]


def test_the_command_line_draws_a_progress_bar_of_a_job_it_runs_on_the_connect_server(
    pg_db, catalog, connect_server, unique_name
) -> None:
    from tests.integration.test_progress import snaprepl_on_a_terminal

    env = server_env(connect_server)
    pg_db.run(f"CREATE TABLE {unique_name}_s (id int PRIMARY KEY)", f"INSERT INTO {unique_name}_s VALUES (1), (2), (3)")
    query = f"SELECT id FROM {unique_name}_s@{pg_db.conn_id}"
    snapshot = f"{unique_name}@{pg_db.conn_id}"

    code, output = snaprepl_on_a_terminal("sql", f"CREATE NONINCREMENTAL SNAPSHOT {snapshot} AS '{query}'", env=env)

    assert code == 0, output[-3000:]
    bars = re.findall(r"\[(#*)(\.*)\]\s+(\d+)% complete refresh of", output)
    assert bars, f"a progress bar on the terminal in connect mode too: {output[-2000:]}"
    assert bars[-1] == ("#" * 30, "", "100"), "the bar ends full"
    assert "Spark-Submit cmd" not in output


#: Opens a session and runs a query, with pyspark's exit-time request (an ML cache cleanup) reported.
EXIT = (
    "from pyspark.sql.connect.client import core\n"
    "cleanup = core.SparkConnectClient._cleanup_ml_cache\n"
    "core.SparkConnectClient._cleanup_ml_cache = lambda self: print('EXIT REQUEST', flush=True) or cleanup(self)\n"
    "from snaprepl.spark import connect\n"
    "url = connect.connection_url('snaprepl_spark')\n"
    "print('ROWS', connect.session_for(url, 'snaprepl_spark').range(3).count(), flush=True)\n"
)


def test_a_process_ends_without_a_request_to_the_server(connect_server) -> None:
    """The process closes its session's channel before pyspark's exit handler, which then sends nothing
    (a request at exit cost every command up to a few tenths of a second)."""
    env = {**os.environ, **server_env(connect_server)}
    ran = subprocess.run([sys.executable, "-c", EXIT], capture_output=True, text=True, env=env, timeout=300)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "ROWS 3" in ran.stdout
    assert "EXIT REQUEST" not in ran.stdout

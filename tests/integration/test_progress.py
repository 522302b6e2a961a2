"""Progress of refresh jobs: a log line per commit in the job's output (what the Spark provider streams
into an Airflow task log), and a bar drawn by the command line on a terminal, never elsewhere."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time

import pytest

from tests.support.databases import RealDatabase

pytestmark = [pytest.mark.spark, pytest.mark.slow]

LINE = re.compile(r"snaprepl progress: (?P<what>[^:]+ of \S+): (?P<rows>\d+) rows so far(?: of (?P<total>~?\d+))?")


def snaprepl(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "snaprepl", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=600,
    )


def snaprepl_on_a_terminal(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run the command line with stdin, stdout and stderr on a pseudo-terminal; its exit code and output."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "snaprepl", *args], stdin=follower, stdout=follower, stderr=follower, close_fds=True,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    os.close(follower)
    output = b""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the process ended
                break
            if not chunk:
                break
            output += chunk
        elif process.poll() is not None:
            break
    os.close(leader)
    return process.wait(timeout=60), output.decode(errors="replace")


def test_refresh_progress_in_the_log_and_a_bar_on_a_terminal_only(pg_db: RealDatabase, catalog, unique_name) -> None:
    src = f"{unique_name}_s"
    dest = f"{unique_name}@{pg_db.conn_id}"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v text)", f"INSERT INTO {src} VALUES (1, 'a')")
    created = snaprepl(
        "sql", f"CREATE SNAPSHOT LOG FOR {src}@{pg_db.conn_id}; CREATE SNAPSHOT {dest} FROM {src}@{pg_db.conn_id}"
    )
    assert created.returncode == 0, created.stderr[-3000:]
    assert "rows so far" not in created.stderr and "[#" not in created.stderr, "no bar and no job output off a terminal"

    for i in range(2, 8):  # one transaction each: 6 SNAPTIME groups, 2 per commit
        pg_db.run(f"INSERT INTO {src} VALUES ({i}, 'x{i}')")
    updated = snaprepl("sql", "-v", f"UPDATE SNAPSHOT {dest}", env={"AIRFLOW__SNAPREPL__REFRESH_COMMIT_ROWS": "2"})
    assert updated.returncode == 0, updated.stderr[-3000:]
    lines = [m for m in LINE.finditer(updated.stdout + updated.stderr) if m["what"].startswith("incremental")]
    rows = [int(m["rows"]) for m in lines]
    assert rows == [0, 2, 4, 6], f"one line per commit, rows so far growing: {rows}"
    assert {m["total"] for m in lines} == {"6"}

    code, output = snaprepl_on_a_terminal("sql", f"UPDATE SNAPSHOT {dest} AS NONINCREMENTAL")
    assert code == 0, output[-3000:]
    bars = re.findall(r"\[(#*)(\.*)\]\s+(\d+)% complete refresh of", output)
    assert bars, f"a progress bar on the terminal: {output[-2000:]}"
    assert bars[-1] == ("#" * 30, "", "100"), "the bar ends full"
    assert "copied 7 rows" in output
    assert sorted(pg_db.rows(f"SELECT id FROM {unique_name}")) == [(i,) for i in range(1, 8)]

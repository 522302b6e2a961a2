"""``snaprepl verify`` in connect mode opens the Spark Connect session only when the job needs Spark:
an equal PostgreSQL copy, whose sums both databases compute, costs neither pyspark's Connect client
nor the session's requests; a copy that differs opens it to name the differences."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.integration.test_verify import _snapshot
from tests.support.data import execute

pytestmark = pytest.mark.spark

#: The CLI in this child process; then how many Connect sessions the process opened.
CLI = (
    "import sys\n"
    "from snaprepl.cli.command import main\n"
    "from snaprepl.spark import connect\n"
    "code = main(sys.argv[1:])\n"
    "print('SESSIONS', len(connect._SESSIONS), 'EXIT', code, flush=True)\n"
)


def _verify(name: str, env: dict[str, str]) -> tuple[dict[str, object], int, int]:
    ran = subprocess.run(
        [sys.executable, "-c", CLI, "verify", name, "--json"],
        capture_output=True, text=True, env={**os.environ, **env}, timeout=600,
    )  # fmt: skip
    *printed, last = ran.stdout.strip().splitlines()
    assert last.startswith("SESSIONS "), ran.stderr[-3000:]
    _, sessions, _, code = last.split()
    return json.loads(printed[-1]), int(sessions), int(code)


def test_an_equal_copy_opens_no_session_and_a_different_one_does(
    pg_db, catalog, settings, refresher, unique_name, connect_server
) -> None:
    env = {k: v for k, v in connect_server.items() if k != "port"}
    dst = _snapshot(pg_db, pg_db, unique_name, catalog, settings, refresher)
    name = f"{dst}@{pg_db.conn_id}"
    report, sessions, code = _verify(name, env)
    assert (report["equal"], code) == (True, 0)
    assert sessions == 0, "the databases' sums agreed: nothing needed Spark"
    execute(pg_db, f"UPDATE {pg_db.q(dst)} SET name = 'changed' WHERE id = 3")
    report, sessions, code = _verify(name, env)
    assert (report["equal"], report["different"], report["missing"], report["extra"], code) == (False, 1, 0, 0, 3)
    assert report["sample"] == [{"key": 3, "kind": "different"}]
    assert sessions == 1, "naming the differences ran in Spark, on a session opened for it"

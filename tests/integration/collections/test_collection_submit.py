"""The seed's type 1 flow from the command line, as users run it: REPL_INIT_SNAPSHOT and
REPL_UPDATE_SNAPSHOT of a collection run the sync job as a table's do, by spark-submit (``submit``
mode) or in the CLI on the Spark Connect server (``connect`` mode), with the catalog of the Airflow
home; their steps are in the run history, status names the publication's DAG, no password shows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from snaprepl.common.dag_names import publication_dag_id
from tests.integration.collections.conftest import Sides
from tests.support.collections import put, tree
from tests.support.webdav import PASSWORD

REPO = Path(__file__).resolve().parents[3]


def snaprepl(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "snaprepl", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=REPO,
        timeout=600,
    )


def test_seed_flow_through_the_sync_job(sides: Sides, catalog: Any, spark_env: dict[str, str], tmp_path: Path) -> None:
    mode = "connect" if spark_env else "submit"
    coll, item = f"/cli/{mode}/", f"/cli/{mode}/@dav1"
    put(sides.dav1, coll, "readme.txt", b"v1 readme")
    put(sides.dav1, coll, "a/b/deep.bin", bytes(range(256)) * 400)
    env = {"TMPDIR": str(tmp_path), **spark_env}  # connection files go to $TMPDIR/snaprepl-<uid>/
    loaded = snaprepl(
        "sql",
        "-v",
        f"""REPL_CREATE_SNAPSHOT_PUB ('{coll}@dav1', 1);
        REPL_SNP_SERVER ('folder');
        REPL_CREATE_SNAPSHOT_SUB (REPL_SERVER_NAME ('folder'), '{item}', 1);
        REPL_INIT_SNAPSHOT (REPL_SERVER_NAME ('folder'), '{item}', 1);""",
        env=env,
    )
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    assert "init of folder: 2 copied, 0 deleted, 0 conflicts" in loaded.stdout
    submitted = "Spark-Submit cmd" in loaded.stdout + loaded.stderr  # verbose mode shows the command
    assert submitted == (mode == "submit"), "a spark-submit in submit mode, none in connect mode"

    put(sides.folder, coll, "x/new.txt", b"from the folder")
    put(sides.dav1, coll, "readme.txt", b"v2 readme from the publisher")
    updated = snaprepl("sql", f"REPL_UPDATE_SNAPSHOT ('{item}', 1)", env=env)
    assert updated.returncode == 0, updated.stderr[-3000:]
    assert "pull from folder: 1 copied, 0 deleted, 0 conflicts" in updated.stdout, updated.stdout
    assert "push to folder: 1 copied, 0 deleted, 0 conflicts" in updated.stdout, updated.stdout
    expected = tree(sides.dav1, coll)
    assert set(expected) == {"readme.txt", "a/b/deep.bin", "x/new.txt"}
    assert tree(sides.folder, coll) == expected
    assert (sides.folder / coll.strip("/") / "readme.txt").read_bytes() == b"v2 readme from the publisher"

    runs = [(r.rh_kind, r.rh_server, r.rh_outcome) for r in reversed(catalog.history(item))]
    assert runs == [("init", "folder", "ok"), ("pull", "folder", "ok"), ("push", "folder", "ok")]
    status = snaprepl("status", "--json", env=env)
    assert status.returncode == 0, status.stderr[-3000:]
    [entry] = [p for p in json.loads(status.stdout)["publications"] if p["item"] == item]
    assert entry["dag_id"] == publication_dag_id(item) and entry["last_sync"]["status"] == "succeeded"
    for output in (loaded, updated, status):
        assert PASSWORD not in output.stdout + output.stderr
    private = tmp_path / f"snaprepl-{os.getuid()}"
    assert not private.exists() or list(private.iterdir()) == [], "connection and result files are deleted"

"""Two syncs of one collection publication at once, as two real `snaprepl sql` processes: the second
is refused as busy, naming the first's run, and changes nothing; the first finishes; then a sync runs
again (the lease was let go)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from snaprepl import api
from tests.integration.collections.conftest import Sides
from tests.support.collections import put, tree
from tests.support.processes import wait_for

COLL = "/lease/c/"
ITEM = f"{COLL}@dav1"
ROOT = Path(__file__).resolve().parents[3]


def _cli_sync(env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "snaprepl", "sql", f"REPL_UPDATE_SNAPSHOT ('{ITEM}', 1)"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_second_sync_at_once_is_refused_as_busy(sides: Sides, coll_catalog: Any, syncer: Any, tmp_path: Path) -> None:
    put(sides.dav1, COLL, "x.txt", b"initial")
    api.repl_create_snapshot_pub(ITEM, 1, catalog=coll_catalog)
    server = api.repl_snp_server("dav2", catalog=coll_catalog)
    api.repl_create_snapshot_sub(server, ITEM, 1, catalog=coll_catalog)
    api.repl_init_snapshot(server, ITEM, 1, catalog=coll_catalog, syncer=syncer)
    # The first sync meets a conflict whose resolver holds it still until told to go on.
    api.repl_add_dav_cr(ITEM, "tests.support.dav_resolvers:waits_for_release", catalog=coll_catalog)
    put(sides.dav1, COLL, "x.txt", b"publisher edit")
    put(sides.dav2, COLL, "x.txt", b"dav2 edit")
    put(sides.dav2, COLL, "y.txt", b"new on dav2")
    url = coll_catalog.engine.url.render_as_string(hide_password=False)
    env = {
        **os.environ,
        "AIRFLOW_CONN_SNAPREPL_CATALOG": json.dumps({"conn_type": "sqlite", "extra": {"sqlalchemy_url": url}}),
        "SNAPREPL_TEST_GATE": str(tmp_path),
    }

    first = _cli_sync(env)
    try:
        assert wait_for(lambda: (tmp_path / "started").exists() or first.poll() is not None, 120)
        assert first.poll() is None, first.communicate()
        trees = (tree(sides.dav1, COLL), tree(sides.dav2, COLL))  # the first sync may have copied some already
        second = subprocess.run(
            [sys.executable, "-m", "snaprepl", "sql", f"REPL_UPDATE_SNAPSHOT ('{ITEM}', 1)"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert second.returncode == 1, second
        assert f"publication {ITEM} (pull dav2) is busy with run" in second.stderr, second.stderr
        assert (tree(sides.dav1, COLL), tree(sides.dav2, COLL)) == trees, "the busy sync changed nothing"
    finally:
        (tmp_path / "release").touch()
        out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert "1 conflicts" in out
    assert (sides.dav1 / "lease/c/y.txt").read_bytes() == b"new on dav2"
    assert (sides.dav2 / "lease/c/x.txt").read_bytes() == b"publisher edit"
    assert coll_catalog.lock_holder(f"pull:{ITEM}") is None
    assert "0 copied" in str(api.repl_update_snapshot(ITEM, 1, catalog=coll_catalog, syncer=syncer))

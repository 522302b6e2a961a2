"""An initial load whose copies run in Spark tasks, killed (SIGKILL of its whole process group: the
driver, its JVM and the Python workers copying) in the middle of its copies, converges on the next
sync: every side holds the same tree, no version is recorded twice in SYS_URPLOG, and nothing is
mistaken for a conflict. That sync carries a 48 MB resource: streamed through the workers,
it never passes through the driver (whose peak memory grows by far less than its size).
(Kills during pulls and conflicts: test_collection_kill.py, in the calling process.)"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration.collections.conftest import Sides
from tests.integration.collections.test_collection_spark import ROOT, publish, replayed
from tests.support.collections import backups, put, tree

pytestmark = [pytest.mark.spark, pytest.mark.slow]
COLL = "/spark-kill/c/"
ITEM = f"{COLL}@dav1"
BIG = 48 * 1024 * 1024


def _alive(pgid: int) -> bool:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getpgid(int(entry.name)) == pgid:
                    return True
            except ProcessLookupError:
                continue
    return False


def _run(catalog: Any, op: str, kill_after: int | None) -> dict[str, Any] | str:
    """Run the child's ``op``; with ``kill_after``, SIGKILL its process group once that many more
    resources were committed (a real point inside the copies, whatever the machine's speed)."""
    env = {
        **os.environ,
        "ITEM": ITEM,
        "SUBS": "dav2,folder",
        "CATALOG_URL": catalog.engine.url.render_as_string(hide_password=False),
    }
    command = [sys.executable, "-m", "tests.support.collection_sync_child", "classic", op]
    child = subprocess.Popen(
        command, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    if kill_after is None:
        out, err = child.communicate(timeout=600)
        assert child.returncode == 0, err.decode()[-3000:]
        return dict(json.loads(out.decode().strip().splitlines()[-1]))
    start = len(replayed(catalog, ITEM))
    while child.poll() is None and len(replayed(catalog, ITEM)) < start + kill_after:
        time.sleep(0.01)
    assert child.poll() is None, f"the sync ended before the kill: {child.communicate()[1].decode()[-3000:]}"
    os.killpg(child.pid, signal.SIGKILL)
    child.communicate(timeout=60)
    deadline = time.monotonic() + 30
    while _alive(child.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child.pid), "a process of the killed sync survived"
    return f"killed after {len(replayed(catalog, ITEM)) - start} commits (rc {child.returncode})"


def test_a_killed_distributed_init_converges_on_the_next_sync(sides: Sides, coll_catalog: Any) -> None:
    paths = publish(sides, coll_catalog, COLL, 40, ("dav2", "folder"))
    print(_run(coll_catalog, "init", random.Random(17).randint(10, 60)))
    big = os.urandom(BIG)
    put(sides.dav1, COLL, "big/resource.bin", big)
    report = _run(coll_catalog, "sync", None)
    print(report)
    assert isinstance(report, dict) and report["pid"] not in report["workers"]
    assert len(report["by_task"]) >= 2, "the copies ran in one task only"
    assert report["grown_kib"] * 1024 < BIG / 4, "the driver held the big resource's body"

    final = tree(sides.dav1, COLL)
    assert len(final) == len(paths) + 1
    assert tree(sides.dav2, COLL) == final == tree(sides.folder, COLL)
    assert hashlib.sha256(big).hexdigest() == final["big/resource.bin"]
    entries = replayed(coll_catalog, ITEM)
    assert len(entries) == len(set(entries)), "no version recorded twice on one target"
    # Every resource is recorded as synced on every side: a copy the killed run made but did not
    # record is found by the sync as the subscriber's (same body: no conflict) and recorded then.
    pub = coll_catalog.manifest(ITEM, "dav1")
    assert set(pub) == set(final)
    for server in ("dav2", "folder"):
        manifest = coll_catalog.manifest(ITEM, server)
        assert {rel: (e.rowguid, e.pending) for rel, e in manifest.items()} == {
            rel: (e.rowguid, False) for rel, e in pub.items()
        }, server
    for root in sides.roots().values():
        assert backups(root, COLL) == {}, "a copy the killed run made but did not record is no conflict"

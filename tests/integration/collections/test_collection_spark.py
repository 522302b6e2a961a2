"""A collection sync with ``spark``: its plain copies run in Spark tasks (several, each committing per
resource), its conflicts and locked resources in the driver, and every side converges; on a classic
session (the tests' local one) and on a Spark Connect server (in a process of its own)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from snaprepl import api
from snaprepl.collections.stores import CollectionError, Store
from snaprepl.collections.sync import CollectionSync
from snaprepl.connections.lookup import get_connection
from tests.integration.collections.conftest import Sides
from tests.support.collections import backups, put, remove, tree
from tests.support.webdav import dav_lock

pytestmark = [pytest.mark.spark]
ROOT = Path(__file__).resolve().parents[3]


def replayed(catalog: Any, item: str) -> list[tuple[str, str]]:
    """The SYS_URPLOG entries of ``item``: (target server, version)."""
    query = 'SELECT "TARGET_SERVER", "RLOG_ROWGUID" FROM "SYS_URPLOG" WHERE "ITEM" = :i'
    with catalog.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(sa.text(query), {"i": item})]


def publish(sides: Sides, catalog: Any, coll: str, count: int, subs: tuple[str, ...]) -> list[str]:
    paths = [f"d{i % 3}/e{i % 2}/r{i}.bin" for i in range(count)]
    for i, rel in enumerate(paths):
        put(sides.dav1, coll, rel, f"body {i};".encode() * (500 + 37 * i))
    api.repl_create_snapshot_pub(f"{coll}@dav1", 1, catalog=catalog)
    for conn_id in subs:
        api.repl_create_snapshot_sub(api.repl_snp_server(conn_id, catalog=catalog), f"{coll}@dav1", 1, catalog=catalog)
    return paths


def syncer(catalog: Any, coll: str, spark: Any) -> CollectionSync:
    subs = [Store.open(c, coll) for c in ("dav2", "folder")]
    return CollectionSync(catalog, f"{coll}@dav1", Store.open("dav1", coll), subs, spark=spark)


def test_copies_run_in_several_spark_tasks_and_converge(sides: Sides, coll_catalog: Any, spark: Any) -> None:
    coll, item = "/spark/c/", "/spark/c/@dav1"
    paths = publish(sides, coll_catalog, coll, 24, ("dav2", "folder"))
    init = syncer(coll_catalog, coll, spark)
    for sub in init.subs:
        init.init(sub)
    assert init.remote is not None
    assert str(init.counts) == "48 copied, 0 deleted, 0 conflicts"
    assert len(init.remote.by_task) >= 2, f"the copies ran in one task only: {init.remote.by_task}"
    assert sum(init.remote.by_task.values()) == 48
    assert os.getpid() not in init.remote.workers, "the bodies went through Spark's Python workers"
    assert tree(sides.dav2, coll) == tree(sides.dav1, coll) == tree(sides.folder, coll)
    entries = replayed(coll_catalog, item)
    assert sorted(entries) == sorted({(t, g) for t, g in entries}), "one SYS_URPLOG entry per resource"
    assert sorted(t for t, _ in entries) == ["dav2"] * 24 + ["folder"] * 24

    expected: dict[str, bytes | None] = {}
    for rel in paths[:5]:  # publisher updates: pushed in tasks
        expected[rel] = f"dav1 {rel}".encode() * 300
        put(sides.dav1, coll, rel, expected[rel])
    for rel in paths[5:9]:  # subscriber updates: pulled in tasks
        expected[rel] = f"dav2 {rel}".encode() * 300
        put(sides.dav2, coll, rel, expected[rel])
    for rel in ("new/one.txt", "new/deeper/two.txt"):  # subscriber creations
        expected[rel] = f"folder {rel}".encode()
        put(sides.folder, coll, rel, expected[rel])
    remove(sides.dav2, coll, paths[9])  # a subscriber deletion: judged in the driver
    expected[paths[9]] = None
    put(sides.folder, coll, paths[10], b"the folder loses")  # a conflict: judged in the driver
    expected[paths[10]] = b"the publisher wins"
    put(sides.dav1, coll, paths[10], expected[paths[10]])
    put(sides.dav1, coll, paths[11], b"waits for the lock on dav2")  # pushed onto a locked resource
    run = syncer(coll_catalog, coll, lambda: spark)  # a factory, as the sync job hands it
    with dav_lock(f"{get_connection('dav2').host}{coll}{paths[11]}"):
        out = str(run.sync())
    assert run.remote is not None and sum(run.remote.by_task.values()) >= 5 + 4 + 2
    assert "1 conflicts" in out and f"waiting on locks: {paths[11]} on dav2" in out
    expected[paths[11]] = b"waits for the lock on dav2"
    assert "waiting on locks" not in str(syncer(coll_catalog, coll, spark).sync())
    final = tree(sides.dav1, coll)
    assert tree(sides.dav2, coll) == final == tree(sides.folder, coll)
    for rel, body in expected.items():
        path = sides.dav2 / coll.strip("/") / rel
        assert (path.read_bytes() if path.exists() else None) == body, rel
    assert list(backups(sides.folder, coll).values()) == [b"the folder loses"]
    assert backups(sides.dav1, coll) == {} == backups(sides.dav2, coll)


def test_copies_run_on_a_spark_connect_server(sides: Sides, coll_catalog: Any, connect_server: dict[str, str]) -> None:
    coll, item = "/connect/c/", "/connect/c/@dav1"
    publish(sides, coll_catalog, coll, 12, ("dav2",))
    env = {
        **os.environ,
        **{k: v for k, v in connect_server.items() if k != "port"},
        "ITEM": item,
        "SUBS": "dav2",
        "CATALOG_URL": coll_catalog.engine.url.render_as_string(hide_password=False),
    }
    ran = subprocess.run(
        [sys.executable, "-m", "tests.support.collection_sync_child", "connect", "init"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=600,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-3000:]
    report = json.loads(ran.stdout.strip().splitlines()[-1])
    assert report["counts"].startswith("12 copied")
    assert len(report["by_task"]) >= 2 and sum(report["by_task"].values()) == 12
    assert report["pid"] not in report["workers"]
    assert tree(sides.dav2, coll) == tree(sides.dav1, coll)
    assert sorted(replayed(coll_catalog, item)) == sorted(set(replayed(coll_catalog, item)))
    assert len(replayed(coll_catalog, item)) == 12


def test_a_task_that_fails_stops_the_sync_with_its_error_and_keeps_the_others_copies(
    sides: Sides, coll_catalog: Any, spark: Any
) -> None:
    coll, item = "/spark-err/c/", "/spark-err/c/@dav1"
    publish(sides, coll_catalog, coll, 8, ("dav2",))
    put(sides.dav1, coll, "blocked/x.txt", b"cannot land: blocked is a file on dav2")
    put(sides.dav2, coll, "blocked", b"a file where the publisher has a subcollection")
    run = CollectionSync(coll_catalog, item, Store.open("dav1", coll), [Store.open("dav2", coll)], spark=spark)
    expected = re.escape("writing blocked/x.txt at /spark-err/c/ on server dav2")
    with pytest.raises(CollectionError, match=expected) as failed:
        run.init(run.subs[0])
    assert get_connection("dav2").password not in str(failed.value)
    landed = tree(sides.dav2, coll)
    assert "blocked/x.txt" not in landed and len(landed) > 1, "the other tasks' copies stay"
    assert sorted(t for t, _ in replayed(coll_catalog, item)) == ["dav2"] * (len(landed) - 1)

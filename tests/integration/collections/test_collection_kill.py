"""A collection sync killed (SIGKILL) at random moments, then run again, converges: every side holds
the same tree, each change made on one side arrived, the conflict went to the publisher with the
loser's body backed up on its side, and no backup was replicated."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from snaprepl import api
from snaprepl.connections.lookup import get_connection, write_connections_file
from tests.integration.collections.conftest import Sides
from tests.support.collections import backups, put, remove, tree

COLL = "/kill/c/"
ITEM = f"{COLL}@dav1"
CHILD = """
import sqlalchemy as sa
from snaprepl.catalog.store import Catalog
from snaprepl.collections.job import run
from snaprepl.publications.request import SyncRequest
import os
catalog = Catalog(sa.create_engine(os.environ["CATALOG_URL"]))
print(*run(None, SyncRequest(item=os.environ["ITEM"], action="sync"), catalog), sep="; ", flush=True)
"""


def _replayed(catalog: Any) -> int:
    with catalog.engine.connect() as conn:
        return conn.execute(sa.text('SELECT COUNT(*) FROM "SYS_URPLOG" WHERE "ITEM" = :i'), {"i": ITEM}).scalar_one()


def _sync_in_child(connections: Path, catalog: Any, kill_after: int | None) -> str:
    """Run a sync in a child process; with ``kill_after``, SIGKILL it once it has committed that many
    more resources (a real point inside the sync, whatever the machine's speed)."""
    env = {
        **os.environ,
        "SNAPREPL_CONNECTIONS_FILE": str(connections),
        "ITEM": ITEM,
        "CATALOG_URL": catalog.engine.url.render_as_string(hide_password=False),
    }
    child = subprocess.Popen([sys.executable, "-c", CHILD], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if kill_after is None:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err.decode()
        return out.decode()
    start = _replayed(catalog)
    while child.poll() is None and _replayed(catalog) < start + kill_after:
        time.sleep(0.01)
    child.kill()
    out, _ = child.communicate(timeout=60)
    return f"killed after {kill_after} resources (rc {child.returncode}): {out.decode().strip() or 'unfinished'}"


@pytest.fixture
def connections(sides: Sides, tmp_path: Path) -> Any:
    path = write_connections_file([get_connection(c) for c in ("dav1", "dav2", "folder")], str(tmp_path))
    yield path
    path.unlink(missing_ok=True)


def test_killed_syncs_converge(sides: Sides, coll_catalog: Any, connections: Path, syncer: Any) -> None:
    rng = random.Random(13)
    paths = [f"d{i % 4}/e{i % 3}/r{i}.bin" for i in range(40)]
    for i, rel in enumerate(paths):
        put(sides.dav1, COLL, rel, f"initial {i};".encode() * 2000)
    api.repl_create_snapshot_pub(ITEM, 1, catalog=coll_catalog)
    for conn_id in ("dav2", "folder"):
        server = api.repl_snp_server(conn_id, catalog=coll_catalog)
        api.repl_create_snapshot_sub(server, ITEM, 1, catalog=coll_catalog)
        api.repl_init_snapshot(server, ITEM, 1, catalog=coll_catalog, syncer=syncer)
    expected: dict[str, bytes | None] = {}
    for rel in paths[:12]:  # subscriber changes
        expected[rel] = f"dav2 {rel};".encode() * 1500
        put(sides.dav2, COLL, rel, expected[rel])
    for rel in paths[12:20]:
        expected[rel] = f"folder {rel};".encode() * 1700
        put(sides.folder, COLL, rel, expected[rel])
    for rel in paths[20:24]:
        remove(sides.dav2, COLL, rel)
        expected[rel] = None
    for rel in paths[24:30]:  # publisher changes
        expected[rel] = f"dav1 {rel};".encode() * 1800
        put(sides.dav1, COLL, rel, expected[rel])
    conflict = paths[30]
    losing = b"folder loses;" * 900
    put(sides.folder, COLL, conflict, losing)
    expected[conflict] = b"publisher wins;" * 1000
    put(sides.dav1, COLL, conflict, expected[conflict])

    outcomes = [_sync_in_child(connections, coll_catalog, rng.randint(1, 20)) for _ in range(4)]
    print(outcomes)
    assert any("rc -9" in o for o in outcomes)
    print("final:", _sync_in_child(connections, coll_catalog, None))

    final = tree(sides.dav1, COLL)
    assert tree(sides.dav2, COLL) == final == tree(sides.folder, COLL)
    for rel, body in expected.items():
        path = sides.dav1 / COLL.strip("/") / rel
        assert (path.read_bytes() if path.exists() else None) == body, rel
    assert losing in backups(sides.folder, COLL).values()
    assert backups(sides.dav2, COLL) == {} and backups(sides.dav1, COLL) == {}

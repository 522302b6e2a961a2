"""A resource locked (WebDAV LOCK) on the side to be written waits: the sync carries everything else,
says what waits on a lock, and a sync after the lock is released applies it (a publisher update
simply replaces; a subscriber update is judged then)."""

from __future__ import annotations

import re
from typing import Any

from snaprepl import api
from snaprepl.connections import get_connection
from tests.integration.collections.conftest import Sides
from tests.support.collections import backups, put, tree
from tests.support.webdav import dav_lock

COLL = "/locks/c/"
ITEM = f"{COLL}@dav1"


def test_locked_resources_wait_for_the_lock(sides: Sides, coll_catalog: Any, syncer: Any) -> None:
    for rel in ("a.txt", "s/b.txt", "s/c.txt"):
        put(sides.dav1, COLL, rel, f"initial {rel}".encode())
    api.repl_create_snapshot_pub(ITEM, 1, catalog=coll_catalog)
    for conn_id in ("dav2", "folder"):
        server = api.repl_snp_server(conn_id, catalog=coll_catalog)
        api.repl_create_snapshot_sub(server, ITEM, 1, catalog=coll_catalog)
        api.repl_init_snapshot(server, ITEM, 1, catalog=coll_catalog, syncer=syncer)
    dav1_url, dav2_url = (str(get_connection(c).host) for c in ("dav1", "dav2"))

    put(sides.dav1, COLL, "a.txt", b"publisher update")  # to be pushed onto a resource locked on dav2
    put(sides.dav2, COLL, "s/b.txt", b"dav2 update")  # to be pulled onto a resource locked on the publisher
    put(sides.folder, COLL, "s/c.txt", b"folder update")  # nothing locked on its way
    with dav_lock(f"{dav2_url}{COLL}a.txt"), dav_lock(f"{dav1_url}{COLL}s/b.txt"):
        out = str(api.repl_update_snapshot(ITEM, 1, catalog=coll_catalog, syncer=syncer))
        # The pull from dav2 waits on the publisher's lock, the push to dav2 on dav2's.
        assert re.search(r"pull from dav2: [^\n]*, waiting on locks: s/b.txt on dav1 \(", out), out
        assert re.search(r"push to dav2: 1 copied[^\n]*, waiting on locks: a.txt on dav2 \(", out), out
        assert out.count("waiting on locks") == 2, out
        assert (sides.dav2 / "locks/c/a.txt").read_bytes() == b"initial a.txt"
        assert (sides.dav1 / "locks/c/s/b.txt").read_bytes() == b"initial s/b.txt"
        for root in sides.roots().values():
            assert (root / "locks/c/s/c.txt").read_bytes() == b"folder update"
    assert "waiting on locks" not in str(api.repl_update_snapshot(ITEM, 1, catalog=coll_catalog, syncer=syncer))
    final = tree(sides.dav1, COLL)
    assert tree(sides.dav2, COLL) == final == tree(sides.folder, COLL)
    assert (sides.dav2 / "locks/c/a.txt").read_bytes() == b"publisher update"
    assert (sides.dav1 / "locks/c/s/b.txt").read_bytes() == b"dav2 update"
    for root in sides.roots().values():
        assert backups(root, COLL) == {}  # no conflict
        assert list((root / "locks/c/_SYS_REPL_BACKUP/.tmp").glob("*")) == []  # the refused moves left nothing

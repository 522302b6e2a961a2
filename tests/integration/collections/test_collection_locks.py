"""A resource locked (WebDAV LOCK) on the side to be written waits: its body is kept in
_SYS_REPL_BACKUP/.locked/ on that side, the target is untouched, `snaprepl status` lists it, the sync
carries everything else; a sync after the lock is released applies it (a publisher update simply
replaces; a subscriber update is judged then, against what the publisher holds then)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from snaprepl import api
from snaprepl.connections.lookup import get_connection
from snaprepl.reporting.status import collect_status, render_json, render_text
from tests.integration.collections.conftest import Sides
from tests.support.collections import backups, put, remove, tree
from tests.support.webdav import dav_lock

COLL = "/locks/c/"
ITEM = f"{COLL}@dav1"


def _publish(sides: Sides, catalog: Any, syncer: Any, coll: str, rels: tuple[str, ...]) -> None:
    for rel in rels:
        put(sides.dav1, coll, rel, f"initial {rel}".encode())
    api.repl_create_snapshot_pub(f"{coll}@dav1", 1, catalog=catalog)
    for conn_id in ("dav2", "folder"):
        server = api.repl_snp_server(conn_id, catalog=catalog)
        api.repl_create_snapshot_sub(server, f"{coll}@dav1", 1, catalog=catalog)
        api.repl_init_snapshot(server, f"{coll}@dav1", 1, catalog=catalog, syncer=syncer)


def _waiting_bodies(root: Path, coll: str) -> dict[str, bytes]:
    """The bodies waiting on locks on one side: path under .locked/ → body."""
    top = root / coll.strip("/") / "_SYS_REPL_BACKUP/.locked"
    return {p.relative_to(top).as_posix(): p.read_bytes() for p in sorted(top.rglob("*")) if p.is_file()}


def _status_waiting(catalog: Any, settings: Any, item: str) -> tuple[list[dict[str, Any]], str]:
    """The publication's waiting resources as `snaprepl status --json` gives them, and the text report."""
    status = collect_status(catalog, settings, probe=False)
    [entry] = [p for p in json.loads(render_json(status))["publications"] if p["item"] == item]
    return entry["waiting_on_locks"], render_text(status)


def test_locked_resources_wait_for_the_lock(sides: Sides, coll_catalog: Any, settings: Any, syncer: Any) -> None:
    _publish(sides, coll_catalog, syncer, COLL, ("a.txt", "s/b.txt", "s/c.txt", "gone.txt"))
    dav1_url, dav2_url = (str(get_connection(c).host) for c in ("dav1", "dav2"))

    put(sides.dav1, COLL, "a.txt", b"publisher update")  # to be pushed onto a resource locked on dav2
    put(sides.dav2, COLL, "s/b.txt", b"dav2 update")  # to be pulled onto a resource locked on the publisher
    put(sides.folder, COLL, "s/c.txt", b"folder update")  # nothing locked on its way
    remove(sides.dav1, COLL, "gone.txt")  # a deletion to push onto a resource locked on dav2
    locks = (f"{dav2_url}{COLL}a.txt", f"{dav1_url}{COLL}s/b.txt", f"{dav2_url}{COLL}gone.txt")
    with dav_lock(locks[0]), dav_lock(locks[1]), dav_lock(locks[2]):
        out = str(api.repl_update_snapshot(ITEM, 1, catalog=coll_catalog, syncer=syncer))
        # The pull from dav2 waits on the publisher's lock, the push to dav2 on dav2's.
        assert re.search(r"pull from dav2: [^\n]*, waiting on locks: s/b.txt on dav1 \(", out), out
        assert re.search(r"push to dav2: [^\n]*, waiting on locks: a.txt on dav2, gone.txt on dav2 \(", out), out
        assert out.count("waiting on locks") == 2, out
        # The targets are untouched; the bodies wait on the locked side, outside the collection's tree.
        assert (sides.dav2 / "locks/c/a.txt").read_bytes() == b"initial a.txt"
        assert (sides.dav1 / "locks/c/s/b.txt").read_bytes() == b"initial s/b.txt"
        assert (sides.dav2 / "locks/c/gone.txt").read_bytes() == b"initial gone.txt"
        for root in sides.roots().values():
            assert (root / "locks/c/s/c.txt").read_bytes() == b"folder update"
        [(dav2_temp, dav2_body)] = _waiting_bodies(sides.dav2, COLL).items()
        assert dav2_temp.startswith("a.txt.") and dav2_body == b"publisher update"
        [(dav1_temp, dav1_body)] = _waiting_bodies(sides.dav1, COLL).items()
        assert dav1_temp.startswith("s/b.txt.") and dav1_body == b"dav2 update"
        assert _waiting_bodies(sides.folder, COLL) == {}

        waiting, text = _status_waiting(coll_catalog, settings, ITEM)
        by_path = {w["path"]: w for w in waiting}
        assert set(by_path) == {"a.txt", "s/b.txt", "gone.txt"}
        assert by_path["a.txt"]["server"] == "dav2" and by_path["a.txt"]["origin"] == "dav1"
        assert by_path["a.txt"]["waits_as"] == "publisher update (replaces)"
        assert by_path["a.txt"]["temp"] == f"{COLL}_SYS_REPL_BACKUP/.locked/{dav2_temp}"
        assert by_path["s/b.txt"]["server"] == "dav1" and by_path["s/b.txt"]["origin"] == "dav2"
        assert by_path["s/b.txt"]["waits_as"] == "subscriber update (judged when applied)"
        assert by_path["gone.txt"]["waits_as"] == "deletion" and by_path["gone.txt"]["temp"] is None
        assert "resources waiting on locks:" in text and f"_SYS_REPL_BACKUP/.locked/{dav2_temp}" in text

        # A sync while still locked keeps one waiting body per resource (no copy piles up).
        again = str(api.repl_update_snapshot(ITEM, 1, catalog=coll_catalog, syncer=syncer))
        assert "a.txt on dav2" in again and "s/b.txt on dav1" in again
        assert list(_waiting_bodies(sides.dav2, COLL)) == [dav2_temp]
        assert list(_waiting_bodies(sides.dav1, COLL)) == [dav1_temp]

    assert "waiting on locks" not in str(api.repl_update_snapshot(ITEM, 1, catalog=coll_catalog, syncer=syncer))
    final = tree(sides.dav1, COLL)
    assert tree(sides.dav2, COLL) == final == tree(sides.folder, COLL)
    assert (sides.dav2 / "locks/c/a.txt").read_bytes() == b"publisher update"
    assert (sides.dav1 / "locks/c/s/b.txt").read_bytes() == b"dav2 update"
    assert "gone.txt" not in final
    assert _status_waiting(coll_catalog, settings, ITEM)[0] == []
    assert "resources waiting on locks: none" in _status_waiting(coll_catalog, settings, ITEM)[1]
    for root in sides.roots().values():
        assert backups(root, COLL) == {}  # no conflict
        assert _waiting_bodies(root, COLL) == {}  # the waiting bodies were moved into place
        assert list((root / "locks/c/_SYS_REPL_BACKUP/.tmp").glob("*")) == []  # the refused moves left nothing


def test_a_subscriber_update_waiting_on_a_lock_is_judged_when_applied(
    sides: Sides, coll_catalog: Any, syncer: Any
) -> None:
    """The publisher's resource is locked and its holder saves a change meanwhile: once the lock is
    gone, the subscriber's waiting update meets that change, a conflict the publisher wins by default
    (the subscriber's body is backed up on its side); the waiting body is removed."""
    coll = "/locks/judged/"
    _publish(sides, coll_catalog, syncer, coll, ("x.txt",))
    dav1_url = str(get_connection("dav1").host)
    put(sides.dav2, coll, "x.txt", b"dav2 edit")
    with dav_lock(f"{dav1_url}{coll}x.txt"):
        out = str(api.repl_update_snapshot(f"{coll}@dav1", 1, catalog=coll_catalog, syncer=syncer))
        assert "x.txt on dav1" in out and "0 conflicts" in out
        assert list(_waiting_bodies(sides.dav1, coll).values()) == [b"dav2 edit"]
        put(sides.dav1, coll, "x.txt", b"the lock holder's edit")  # the holder saves (it holds the lock)
    out = str(api.repl_update_snapshot(f"{coll}@dav1", 1, catalog=coll_catalog, syncer=syncer))
    assert "1 conflicts" in out and "waiting" not in out
    for root in sides.roots().values():
        assert (root / "locks/judged/x.txt").read_bytes() == b"the lock holder's edit"
        assert _waiting_bodies(root, coll) == {}
    assert list(backups(sides.dav2, coll).values()) == [b"dav2 edit"]
    assert backups(sides.dav1, coll) == {} and backups(sides.folder, coll) == {}
    [conflict] = coll_catalog.conflicts(f"{coll}@dav1")
    assert conflict["CF_ORIGIN"] == "dav2" and conflict["CF_DECISION"] == 3
    assert coll_catalog.waiting(f"{coll}@dav1") == []

"""The seed's type 1 flow through the API: publish a WebDAV collection, subscribe a second WebDAV
server and a local folder, load them, replicate changes both ways, and resolve conflicts (publisher
wins by default, resolvers of the nearest collection, losers backed up and in the ledger)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import sqlalchemy as sa

from snaprepl import api
from snaprepl.common.dag_names import publication_dag_id
from tests.integration.collections.conftest import Sides
from tests.support.collections import backups, put, remove, tree

COLL = "/flow/docs/"


def _replayed(catalog: Any, item: str) -> int:
    with catalog.engine.connect() as conn:
        return conn.execute(sa.text('SELECT COUNT(*) FROM "SYS_URPLOG" WHERE "ITEM" = :i'), {"i": item}).scalar_one()


def _setup(sides: Sides, catalog: Any, syncer: Any, coll: str = COLL) -> tuple[str, str]:
    put(sides.dav1, coll, "readme.txt", b"v1 readme")
    put(sides.dav1, coll, "a/b/deep.bin", bytes(range(256)) * 4000)  # about 1 MB, copied in chunks
    api.repl_create_snapshot_pub(f"{coll}@dav1", 1, catalog=catalog)
    dav2 = api.repl_snp_server("dav2", catalog=catalog)
    folder = api.repl_snp_server("folder", catalog=catalog)
    for server in (dav2, folder):
        api.repl_create_snapshot_sub(server, f"{coll}@dav1", 1, catalog=catalog)
        out = api.repl_init_snapshot(server, f"{coll}@dav1", 1, catalog=catalog, syncer=syncer)
        assert "2 copied" in str(out)
    return dav2, folder


def test_init_update_and_conflicts(sides: Sides, coll_catalog: Any, syncer: Any) -> None:
    catalog = coll_catalog
    _setup(sides, catalog, syncer)
    assert tree(sides.dav2, COLL) == tree(sides.dav1, COLL) == tree(sides.folder, COLL)
    assert len(tree(sides.dav1, COLL)) == 2

    # A subscriber's change reaches the publisher and the other subscriber; a new subcollection is created.
    put(sides.folder, COLL, "x/y/new.txt", b"from the folder")
    put(sides.dav2, COLL, "readme.txt", b"v2 readme from dav2")
    remove(sides.dav1, COLL, "a/b/deep.bin")
    api.repl_update_snapshot(f"{COLL}@dav1", 1, catalog=catalog, syncer=syncer)
    expected = tree(sides.dav1, COLL)
    assert set(expected) == {"readme.txt", "x/y/new.txt"}
    assert (sides.dav1 / "flow/docs/readme.txt").read_bytes() == b"v2 readme from dav2"
    assert tree(sides.dav2, COLL) == expected == tree(sides.folder, COLL)
    assert catalog.conflicts(f"{COLL}@dav1") == []
    # The deletion reached every side, so no manifest remembers it any more.
    assert all("a/b/deep.bin" not in catalog.manifest(f"{COLL}@dav1", side) for side in ("dav1", "dav2", "folder"))

    # Both change readme.txt: publisher wins, the folder's body is backed up on the folder side.
    put(sides.dav1, COLL, "readme.txt", b"v3 from the publisher")
    put(sides.folder, COLL, "readme.txt", b"v3 from the folder, loses")
    api.repl_update_snapshot(f"{COLL}@dav1", 1, catalog=catalog, syncer=syncer)
    for root in sides.roots().values():
        assert (root / "flow/docs/readme.txt").read_bytes() == b"v3 from the publisher"
    assert list(backups(sides.folder, COLL).values()) == [b"v3 from the folder, loses"]
    name = next(iter(backups(sides.folder, COLL)))
    assert name.startswith("readme.txt.") and name.endswith(".folder")
    assert backups(sides.dav1, COLL) == {} and backups(sides.dav2, COLL) == {}
    [conflict] = catalog.conflicts(f"{COLL}@dav1")
    assert conflict["CF_DECISION"] == 3 and conflict["CF_ORIGIN"] == "folder"
    assert json.loads(conflict["CF_LOSER"])["server"] == "folder"


def test_nearest_collection_resolvers(sides: Sides, coll_catalog: Any, syncer: Any) -> None:
    """sub_wins on x/ and pub_wins on the root: a conflict under x/y/ is decided by x/'s resolvers."""
    catalog, coll = coll_catalog, "/flow/nearest/"  # its own publication: it needs no other test
    _setup(sides, catalog, syncer, coll)
    put(sides.dav1, coll, "x/y/new.txt", b"first version")
    api.repl_update_snapshot(f"{coll}@dav1", 1, catalog=catalog, syncer=syncer)
    api.repl_add_dav_cr(f"{coll}@dav1", "pub_wins", "owner@example.org", catalog=catalog)
    api.repl_add_dav_cr(f"{coll}x/@dav1", "sub_wins", "x-owner@example.org", "x lost", catalog=catalog)
    put(sides.dav1, coll, "x/y/new.txt", b"publisher edit, loses")
    put(sides.dav2, coll, "x/y/new.txt", b"dav2 edit wins")
    put(sides.dav1, coll, "readme.txt", b"publisher edit wins")
    put(sides.dav2, coll, "readme.txt", b"dav2 edit loses")
    api.repl_update_snapshot(f"{coll}@dav1", 1, catalog=catalog, syncer=syncer)
    for root in sides.roots().values():
        assert (root / "flow/nearest/x/y/new.txt").read_bytes() == b"dav2 edit wins"
        assert (root / "flow/nearest/readme.txt").read_bytes() == b"publisher edit wins"
    assert b"publisher edit, loses" in backups(sides.dav1, coll).values()
    assert b"dav2 edit loses" in backups(sides.dav2, coll).values()
    decided = {
        json.loads(c["CF_KEY"])["path"]: c for c in catalog.conflicts(f"{coll}@dav1") if c["CF_ORIGIN"] == "dav2"
    }
    assert decided["x/y/new.txt"]["CF_DECISION"] == 1
    assert json.loads(decided["x/y/new.txt"]["CF_LOSER"])["notify_email"] == "x-owner@example.org"
    assert decided["readme.txt"]["CF_DECISION"] == 3
    # Backups are never replicated: the folder got neither.
    assert all("readme.txt" in k for k in backups(sides.folder, coll))


def test_seed_statements_and_status(sides: Sides, coll_catalog: Any, settings: Any, syncer: Any) -> None:
    """The seed's type 1 calls as statements (nested REPL_SERVER_NAME included); status lists the
    collection publication with its subscriber loaded and synced."""
    from snaprepl.api.script import run_script
    from snaprepl.reporting.status import collect_status, render_text

    put(sides.dav1, "/stmt/c/", "s/one.txt", b"one")
    results = run_script(
        """REPL_CREATE_SNAPSHOT_PUB ('/stmt/c/@dav1', 1);
        REPL_SNP_SERVER ('folder');
        REPL_CREATE_SNAPSHOT_SUB (REPL_SERVER_NAME ('folder'), '/stmt/c/@dav1', 1);
        REPL_INIT_SNAPSHOT (REPL_SERVER_NAME ('folder'), '/stmt/c/@dav1', 1);
        REPL_ADD_DAV_CR ('/stmt/c/s/@dav1', 'sub_wins', 'owner@example.org', 'your change lost');
        REPL_UPDATE_SNAPSHOT ('/stmt/c/@dav1', 1);""",
        catalog=coll_catalog,
        settings=settings,
        syncer=syncer,
    )
    assert "1 copied" in str(results[3])
    assert (sides.folder / "stmt/c/s/one.txt").read_bytes() == b"one"
    status = collect_status(coll_catalog, settings, probe=False)
    text = render_text(status)
    assert "/stmt/c/@dav1" in text and "None" not in text
    [entry] = [p for p in status["publications"] if p["item"] == "/stmt/c/@dav1"]
    [sub] = entry["subscribers"]
    assert sub["server"] == "folder" and sub["loaded"] and sub["last_push_at"] is not None
    # The subscriber's replica is the collection on its connection; the resolvers are REPL_ADD_DAV_CR's.
    assert sub["replica"] == f"/stmt/c/@{coll_catalog.server('folder').db_address}" and sub["replica"] in text
    assert entry["resolvers"] == [
        {"collection": "/stmt/c/s/", "order": 1, "resolver": "sub_wins", "notify_email": "owner@example.org"}
    ]
    assert "/stmt/c/s/ 1:sub_wins" in text
    assert entry["dag_id"] == publication_dag_id("/stmt/c/@dav1") and entry["last_sync"]["status"] == "succeeded"
    results = run_script("REPL_SET_PUBLICATION_SCHEDULE('/stmt/c/@dav1', '*/30 * * * *')", catalog=coll_catalog)
    assert coll_catalog.publication("/stmt/c/@dav1").sp_schedule == "*/30 * * * *", results
    # Every step of the job is in the run history, as a table's are.
    runs = [(r.rh_kind, r.rh_server, r.rh_outcome) for r in reversed(coll_catalog.history("/stmt/c/@dav1"))]
    assert runs == [("init", "folder", "ok"), ("pull", "folder", "idle"), ("push", "folder", "idle")]
    # The update replay log purge covers collections: entries behind both watermarks go.
    assert _replayed(coll_catalog, "/stmt/c/@dav1") == 1
    no_offset = dataclasses.replace(settings, snp_repl_purge_offset=0, snp_repl_tolerance_offset=0)
    api.repl_purge_urplogs(catalog=coll_catalog, settings=no_offset)
    assert _replayed(coll_catalog, "/stmt/c/@dav1") == 0
    run_script(
        "REPL_DROP_SNAPSHOT_SUB ('folder', '/stmt/c/@dav1', 1); REPL_DROP_SNAPSHOT_PUB ('/stmt/c/@dav1', 1);",
        catalog=coll_catalog,
        settings=settings,
        syncer=syncer,
    )
    assert coll_catalog.publication("/stmt/c/@dav1") is None
    assert coll_catalog.manifest("/stmt/c/@dav1", "dav1") == {}
    assert coll_catalog.dav_resolvers("/stmt/c/s/@dav1") == []
    assert (sides.folder / "stmt/c/s/one.txt").exists()  # files stay

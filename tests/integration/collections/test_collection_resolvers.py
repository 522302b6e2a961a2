"""A collection resolver of one's own, named by import path, gets the resource's properties and
reads the incoming body to decide: both outcomes, each loser backed up where it lost."""

from __future__ import annotations

import json
from typing import Any

from snaprepl import api
from tests.integration.collections.conftest import Sides
from tests.support import dav_resolvers
from tests.support.collections import backups, put

COLL = "/resolve/c/"
ITEM = f"{COLL}@dav1"


def test_a_resolver_reading_the_body_decides_both_ways(sides: Sides, coll_catalog: Any, syncer: Any) -> None:
    for rel in ("keep.txt", "plain.txt"):
        put(sides.dav1, COLL, rel, b"initial")
    api.repl_create_snapshot_pub(ITEM, 1, catalog=coll_catalog)
    server = api.repl_snp_server("dav2", catalog=coll_catalog)
    api.repl_create_snapshot_sub(server, ITEM, 1, catalog=coll_catalog)
    api.repl_init_snapshot(server, ITEM, 1, catalog=coll_catalog, syncer=syncer)
    api.repl_add_dav_cr(ITEM, "tests.support.dav_resolvers:body_decides", catalog=coll_catalog)
    put(sides.dav1, COLL, "keep.txt", b"publisher edit\n")
    put(sides.dav2, COLL, "keep.txt", b"KEEP: dav2 edit\nsecond line\n")
    put(sides.dav1, COLL, "plain.txt", b"publisher edit\n")
    put(sides.dav2, COLL, "plain.txt", b"dav2 edit\n")
    dav_resolvers.CALLS.clear()

    assert "2 conflicts" in str(api.repl_update_snapshot(ITEM, 1, catalog=coll_catalog, syncer=syncer))

    calls = {c["path"]: c for c in dav_resolvers.CALLS}
    assert set(calls) == {"keep.txt", "plain.txt"}
    keep = calls["keep.txt"]
    assert keep["first"] == b"KEEP: dav2 edit\n" and keep["origin"] == "dav2"
    assert keep["incoming"]["size"] == len(b"KEEP: dav2 edit\nsecond line\n")
    assert keep["incoming"]["rowguid"].startswith("dav2@") and keep["current"]["rowguid"].startswith("dav1@")
    assert keep["current"]["size"] == len(b"publisher edit\n") and keep["incoming"]["deleted"] is False
    for root in (sides.dav1, sides.dav2):
        assert (root / "resolve/c/keep.txt").read_bytes() == b"KEEP: dav2 edit\nsecond line\n"
        assert (root / "resolve/c/plain.txt").read_bytes() == b"publisher edit\n"
    assert list(backups(sides.dav1, COLL).values()) == [b"publisher edit\n"]  # lost keep.txt on the publisher
    assert list(backups(sides.dav2, COLL).values()) == [b"dav2 edit\n"]  # lost plain.txt on dav2
    decided = {
        json.loads(c["CF_KEY"])["path"]: (c["CF_DECISION"], c["CF_RESOLVER"]) for c in coll_catalog.conflicts(ITEM)
    }
    resolver = f"{COLL}@dav1#1:tests.support.dav_resolvers:body_decides"
    assert decided == {"keep.txt": (1, resolver), "plain.txt": (3, resolver)}

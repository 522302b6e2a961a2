"""Convergence of collection syncs (hypothesis): random creates, updates and deletes in nested
subcollections on the publisher (WebDAV), a WebDAV subscriber and a folder subscriber, with syncs at
random points (under d/e/ a resolver lets subscribers win). After every sync all sides hold the same
tree and bodies; a path changed on one side
only carries that change; every body that lost is in _SYS_REPL_BACKUP on the side where it lost, and
the backups are exactly the ledger's (none was replicated)."""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from snaprepl import api
from tests.integration.collections.conftest import Sides
from tests.support.collections import backups, put, remove, tree

SIDES = ("dav1", "dav2", "folder")
PATHS = ("a.txt", "d/b.txt", "d/e/c.txt", "d/e/f/g.txt")
_RUN = itertools.count()
_BODY = itertools.count()

_put = st.tuples(st.just("put"), st.sampled_from(SIDES), st.sampled_from(PATHS), st.integers(1, 3))
step = st.one_of(
    _put,
    _put,
    _put,
    st.tuples(st.just("del"), st.sampled_from(SIDES), st.sampled_from(PATHS), st.just(0)),
    st.tuples(st.just("sync"), st.just(""), st.just(""), st.just(0)),
)


def _start(sides: Sides, catalog: Any, syncer: Any) -> str:
    coll = f"/conv/{next(_RUN)}/"
    put(sides.dav1, coll, "a.txt", b"initial")
    item = f"{coll}@dav1"
    api.repl_create_snapshot_pub(item, 1, catalog=catalog)
    for server in ("dav2", "folder"):
        api.repl_snp_server(server, catalog=catalog)
        api.repl_create_snapshot_sub(server, item, 1, catalog=catalog)
        api.repl_init_snapshot(server, item, 1, catalog=catalog, syncer=syncer)
    # Under d/e/ the subscriber wins (d/e/f/ too: the nearest collection with resolvers is d/e/).
    api.repl_add_dav_cr(f"{coll}d/e/@dav1", "sub_wins", catalog=catalog)
    return coll


def _check_sync(sides: Sides, catalog: Any, syncer: Any, coll: str, last: dict[tuple[str, str], bytes | None]) -> None:
    api.repl_update_snapshot(f"{coll}@dav1", 1, catalog=catalog, syncer=syncer)
    roots = sides.roots()
    final = tree(roots["dav1"], coll)
    for side in SIDES:
        assert tree(roots[side], coll) == final, side
    for path in PATHS:
        touched = {side: body for (side, p), body in last.items() if p == path}
        body = (roots["dav1"] / coll.strip("/") / path).read_bytes() if path in final else None
        if len(touched) == 1:
            assert body == next(iter(touched.values())), (path, touched)
        for side, mine in touched.items():
            if mine is not None and mine != body:  # lost: backed up where it lost
                assert mine in backups(roots[side], coll).values(), (path, side)
    last.clear()


def _check_backups(sides: Sides, catalog: Any, coll: str) -> None:
    ledger: dict[str, set[str]] = {side: set() for side in SIDES}
    for conflict in catalog.conflicts(f"{coll}@dav1"):
        loser = json.loads(conflict["CF_LOSER"])
        ledger[loser["server"]].add(loser["backup"].removeprefix(f"{coll}_SYS_REPL_BACKUP/"))
    for side, root in sides.roots().items():
        assert set(backups(root, coll)) == ledger[side], side


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(steps=st.lists(step, min_size=3, max_size=14))
def test_random_changes_converge(
    sides: Sides, coll_catalog: Any, syncer: Any, steps: list[tuple[str, str, str, int]]
) -> None:
    coll = _start(sides, coll_catalog, syncer)
    roots = sides.roots()
    last: dict[tuple[str, str], bytes | None] = {}
    for action, side, path, size in steps:
        if action == "put":
            body = f"{side}:{next(_BODY)};".encode() * size
            put(roots[side], coll, path, body)
            last[(side, path)] = body
        elif action == "del":
            if (roots[side] / coll.strip("/") / path).exists():
                remove(roots[side], coll, path)
                last[(side, path)] = None
        else:
            _check_sync(sides, coll_catalog, syncer, coll, last)
    _check_sync(sides, coll_catalog, syncer, coll, last)
    _check_backups(sides, coll_catalog, coll)

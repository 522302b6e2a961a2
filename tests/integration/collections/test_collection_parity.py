"""Collections at parity with tables for issue 22: a sync with nothing to do is decided before any job
starts, and a stale subscriber is detached (deletions stop waiting for it), told it needs
REPL_INIT_SNAPSHOT when it comes back, or reloaded (its publication's REPL_SET_PUBLICATION_REINIT)
without losing its own changes. The sync jobs run in this process without Spark (plain copies)."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any

import pytest

from snaprepl import api
from snaprepl.catalog.records import utcnow
from snaprepl.errors import SnapreplError
from snaprepl.publications.request import SyncRequest
from snaprepl.settings import Settings
from tests.integration.collections.conftest import Sides
from tests.support.collections import put, remove, tree
from tests.support.jobs import in_process_syncer
from tests.support.unreachable import closed_port, unreachable
from tests.support.webdav import PASSWORD, USER


def _published(sides: Sides, catalog: Any, subscribers: tuple[str, ...]) -> tuple[str, str, Any]:
    """A fresh collection on dav1 with two resources, loaded on ``subscribers``; (collection, item, syncer)."""
    coll = f"/parity/{uuid.uuid4().hex[:8]}/"
    put(sides.dav1, coll, "readme.txt", b"v1 readme")
    put(sides.dav1, coll, "old/gone.txt", b"deleted on the publisher later")
    item, syncer = f"{coll}@dav1", in_process_syncer(None)
    api.repl_create_snapshot_pub(item, 1, catalog=catalog)
    for conn_id in subscribers:
        server = api.repl_snp_server(conn_id, catalog=catalog)
        api.repl_create_snapshot_sub(server, item, 1, catalog=catalog)
        api.repl_init_snapshot(server, item, 1, catalog=catalog, syncer=syncer)
    return coll, item, syncer


def test_an_unreachable_collection_subscriber_stops_no_other_and_keeps_its_hint(
    sides: Sides, coll_catalog: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = coll_catalog
    coll, item, syncer = _published(sides, catalog, ("dav2", "folder"))
    down = {"conn_type": "webdav", "host": f"http://127.0.0.1:{closed_port()}", "login": USER, "password": PASSWORD}
    monkeypatch.setenv("AIRFLOW_CONN_DAV2_DOWN", json.dumps({**down, "extra": {"replication_name": "dav2"}}))
    put(sides.folder, coll, "mine.txt", b"from the folder")
    put(sides.dav1, coll, "readme.txt", b"v2 from the publisher")

    with unreachable(catalog, "dav2", "dav2_down"), pytest.raises(SnapreplError) as failed:
        api.repl_update_snapshot(item, 1, catalog=catalog, syncer=syncer)

    [line] = str(failed.value).splitlines()
    assert line.startswith(f"{item}: subscriber dav2 failed its pull (1 of 2 synced): "), line
    assert "reachable" in (failed.value.hint or ""), failed.value.hint
    assert tree(sides.folder, coll) == tree(sides.dav1, coll) and "mine.txt" in tree(sides.dav1, coll)
    assert catalog.subscription("dav2", item).ss_last_status == "failed"
    assert catalog.publication(item).sp_last_status == "failed"


def test_an_idle_collection_sync_is_decided_without_a_job(sides: Sides, coll_catalog: Any) -> None:
    from snaprepl.submit.idle import idle_sync

    catalog, settings = coll_catalog, Settings()
    coll, item, _ = _published(sides, catalog, ("folder",))
    idle = lambda action, server=None: idle_sync(SyncRequest.configured(action, item, settings, server=server), catalog)  # noqa: E731

    outcomes = idle("sync")
    assert [(o.step, o.server, o.changes) for o in outcomes or []] == [("pull", "folder", 0), ("push", "folder", 0)]
    assert [(r.rh_kind, r.rh_outcome) for r in catalog.history(item)[:2]] == [("push", "idle"), ("pull", "idle")]
    put(sides.folder, coll, "mine.txt", b"a change on the subscriber")
    assert idle("pull", "folder") is None, "the folder's change needs a job"
    remove(sides.folder, coll, "mine.txt")  # created and gone between two syncs: nothing happened
    put(sides.dav1, coll, "readme.txt", b"v2 from the publisher")
    assert idle("pull", "folder") is not None, "a publisher's change is the push's work, not the pull's"
    assert idle("push", "folder") is None, "the publisher's change needs a job"


def test_a_detached_collection_subscriber_needs_a_reload_which_keeps_its_changes(
    sides: Sides, coll_catalog: Any
) -> None:
    from snaprepl.ops.purge import purge_urplogs
    from snaprepl.reporting.status import collect_status

    catalog = coll_catalog
    coll, item, syncer = _published(sides, catalog, ("dav2", "folder"))
    sync = lambda: api.repl_update_snapshot(item, 1, catalog=catalog, syncer=syncer)  # noqa: E731
    api.repl_set_publication_stale(item, 1, 1, 1, catalog=catalog)  # stale after 1 hour, then detached
    two_hours_ago = utcnow() - timedelta(hours=2)
    catalog.update_subscription("folder", item, ss_last_pull_at=two_hours_ago, ss_last_push_at=two_hours_ago)
    purge_urplogs(catalog=catalog, settings=Settings())
    assert catalog.subscription("folder", item).ss_detached_at is not None
    assert catalog.subscription("dav2", item).ss_detached_at is None

    # The publisher deletes a resource: the deletion is forgotten without waiting for the folder, whose
    # push says what it needs; the other subscriber is synced.
    remove(sides.dav1, coll, "old/gone.txt")
    with pytest.raises(SnapreplError) as failed:
        sync()
    [line] = str(failed.value).splitlines()
    assert "subscriber folder failed its push" in line and f"REPL_INIT_SNAPSHOT('folder', '{item}', 1)" in line
    assert tree(sides.dav2, coll) == tree(sides.dav1, coll) and "old/gone.txt" in tree(sides.folder, coll)
    assert all("old/gone.txt" not in catalog.manifest(item, side) for side in ("dav1", "dav2"))

    # Reloaded at its next sync: its own change is pulled first, the forgotten deletion reaches it.
    put(sides.folder, coll, "mine.txt", b"written while detached")
    assert "detached subscribers are reloaded" in api.repl_set_publication_reinit(item, 1, 1, catalog=catalog)
    [entry] = [p for p in collect_status(catalog, Settings(), probe=False)["publications"] if p["item"] == item]
    assert entry["stale_rule"] == {"stale_after_hours": 1, "detach_stale": True, "reinit_detached": True, "own": True}
    sync()
    assert set(tree(sides.dav1, coll)) == {"readme.txt", "mine.txt"}
    assert tree(sides.folder, coll) == tree(sides.dav1, coll) == tree(sides.dav2, coll)
    assert catalog.subscription("folder", item).ss_detached_at is None
    assert [(r.rh_kind, r.rh_server) for r in catalog.history(item)[:2]] == [("init", "folder"), ("push", "dav2")]

"""The lease heartbeat survives a catalog blip, and gives the lease up when it cannot renew it before
it expires (issue 27, item 5): a real catalog on a PostgreSQL of the test's own, stopped and started."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta

import pytest

from snaprepl.catalog import run_lock
from snaprepl.catalog.migrate import upgrade
from snaprepl.catalog.run_lock import RunLock
from snaprepl.catalog.store import Catalog
from snaprepl.database.sessions import create_engine
from snaprepl.errors import LeaseLost, SnapshotBusy
from tests.support.own_postgres import OwnPostgres, own_postgres

LEASE = timedelta(seconds=4)


@pytest.fixture(scope="module")
def own_pg() -> Iterator[OwnPostgres]:
    with own_postgres() as server:
        yield server


@pytest.fixture
def own_catalog(own_pg: OwnPostgres, monkeypatch: pytest.MonkeyPatch) -> Iterator[Catalog]:
    name = f"cat_{time.monotonic_ns()}"
    own_pg.psql(f"CREATE DATABASE {name}")
    catalog = Catalog(create_engine(own_pg.url(name)))
    upgrade(catalog.engine)
    monkeypatch.setattr(run_lock, "HEARTBEAT_SECONDS", 0.3)
    monkeypatch.setattr(run_lock, "RETRY_SECONDS", 0.3, raising=False)  # (a constant, not the database)
    yield catalog
    catalog.dispose()


def _other_run(catalog: Catalog) -> RunLock:
    return RunLock(catalog, "snapshot:s.t@c", "run-2", what="snapshot s.t@c", lease=LEASE)


def test_a_heartbeat_that_fails_during_a_catalog_blip_keeps_beating(own_pg: OwnPostgres, own_catalog: Catalog) -> None:
    first = RunLock(own_catalog, "snapshot:s.t@c", "run-1", what="snapshot s.t@c", lease=LEASE)
    with first:
        own_pg.stop()  # the catalog's server goes away for a moment: beats fail
        time.sleep(1.0)
        own_pg.start()
        time.sleep(LEASE.total_seconds() + 1)  # longer than the lease: only a renewed lease is still held
        with pytest.raises(SnapshotBusy):
            _other_run(own_catalog).acquire()
        first.check()  # still this run's
    assert own_catalog.lock_holder("snapshot:s.t@c") is None, "released at the end"


def test_a_lease_that_cannot_be_renewed_before_it_expires_fails_the_run(
    own_pg: OwnPostgres, own_catalog: Catalog
) -> None:
    first = RunLock(own_catalog, "snapshot:s.t@c", "run-1", what="snapshot s.t@c", lease=LEASE)
    first.acquire()
    try:
        own_pg.stop()  # away for longer than the lease
        time.sleep(LEASE.total_seconds() + 0.5)
        own_pg.start()
        with pytest.raises(LeaseLost, match="could not be renewed"):
            first.check()
        second = _other_run(own_catalog)
        second.acquire()  # the expired lease is taken over, and the first run knows it lost it
        second.release()
    finally:
        first.release()

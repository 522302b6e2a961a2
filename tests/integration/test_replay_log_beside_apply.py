"""The replay log written beside the apply (issue 24): a batch's entries go to the catalog while the
destination applies the batch (a transaction left open; in a SQLite catalog, a TEMP table of the
connection), seen only once the destination has committed. Nobody sees them before; a batch the
destination did not commit leaves none; entries already listed (a rerun) are skipped; other
snapshots' writes are not held up meanwhile."""

from __future__ import annotations

import dataclasses
import threading
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from snaprepl import api
from snaprepl.catalog import models as m
from snaprepl.catalog.location import connection_from_url
from snaprepl.catalog.migrate import upgrade
from snaprepl.catalog.store import Catalog
from tests.support.catalog_dbs import catalog_url
from tests.support.databases import RealDatabase
from tests.support.long_transactions import long_transaction_survives

pytestmark = pytest.mark.integration
__all__ = ["catalog_url"]  # the fixture

T0 = datetime(2026, 11, 28, 9, 0, 0, 250000)


@pytest.fixture
def own_catalog(catalog_url: str) -> Iterator[Catalog]:
    catalog = Catalog.from_connection(connection_from_url(catalog_url, "snaprepl_catalog"))
    upgrade(catalog.engine)
    yield catalog
    catalog.dispose()


def _listed(catalog: Catalog, target: str) -> set[str]:
    """The RLOG_ROWGUIDs the replay log lists for ``target``, as another connection sees them."""
    t = m.SYS_RPLOG.c
    with catalog.engine.connect() as conn:
        return {row[0] for row in conn.execute(sa.select(t.RLOG_ROWGUID).where(t.TARGET == target))}


def _entries(n: int, minute: int) -> list[tuple[str, datetime]]:
    return [(str(uuid.uuid4()), T0 + timedelta(minutes=minute, seconds=i % 2)) for i in range(n)]


def test_entries_written_beside_the_apply_are_seen_once_committed_and_never_if_rolled_back(
    own_catalog: Catalog,
) -> None:
    first = _entries(3, 0)
    pending = own_catalog.write_applied("s.t@c", first)
    assert pending is not None
    assert _listed(own_catalog, "s.t@c") == set(), "nobody sees entries before the destination commits"
    other = _entries(2, 0)  # another snapshot's refresh records its entries meanwhile, unhindered
    writer = threading.Thread(target=own_catalog.record_applied, args=("s.u@c", other, None), daemon=True)
    writer.start()
    writer.join(timeout=20)
    assert not writer.is_alive(), "another snapshot's replay log waited for the open transaction"
    assert _listed(own_catalog, "s.u@c") == {g for g, _ in other}
    pending.commit(None)
    assert _listed(own_catalog, "s.t@c") == {g for g, _ in first}

    forgotten = own_catalog.write_applied("s.t@c", _entries(2, 1))
    assert forgotten is not None
    forgotten.rollback()
    assert _listed(own_catalog, "s.t@c") == {g for g, _ in first}

    rerun = [first[0], *_entries(1, 2)]  # one already listed
    again = own_catalog.write_applied("s.t@c", rerun)
    if own_catalog.holds_open_writes:  # found at once: the caller records them after the commit
        assert again is None
        own_catalog.record_applied("s.t@c", rerun, None)
    else:  # SQLite: skipped as they move in
        assert again is not None
        again.commit(rerun[1][1])
    assert _listed(own_catalog, "s.t@c") == {g for g, _ in first} | {rerun[1][0]}


@pytest.mark.parametrize("db_fixture", ["mysql_db", "pg_db"])
def test_a_batch_the_destination_refused_leaves_no_entry_and_no_watermark_move(
    own_catalog: Catalog, db_fixture: str, settings: Any, refresher: Any, unique_name: str, request: Any
) -> None:
    """MariaDB's log is read by SNAPTIME: its entries go to the replay log. PostgreSQL's is read by
    transaction ids, which need no replay log: none is written, and the watermark moves the same."""
    db: RealDatabase = request.getfixturevalue(db_fixture)
    listed = {"mysql_db": (2, 7), "pg_db": (0, 0)}[db_fixture]
    kw: dict[str, Any] = {"catalog": own_catalog, "settings": settings, "refresher": refresher}
    src = f"{unique_name}_s"
    db.run(
        f"CREATE TABLE {src} (id int PRIMARY KEY, v int)",
        f"INSERT INTO {src} VALUES " + ", ".join(f"({n}, {n})" for n in range(1, 21)),
    )
    api.repl_create_snapshot_log(f"{src}@{db.conn_id}", catalog=own_catalog)
    made = api.repl_create_inc_snapshot(None, f"{src}@{db.conn_id}", None, f"{unique_name}@{db.conn_id}", **kw)
    name = made.record.sn_name
    db.run(f"UPDATE {src} SET v = v + 1 WHERE id <= 2")
    api.repl_refresh_inc_snapshot(name, **kw)
    applied, mark = _listed(own_catalog, name), own_catalog.snapshot(name).sn_last_ts
    assert len(applied) == listed[0] and mark is not None
    db.run(f"ALTER TABLE {unique_name} ADD CONSTRAINT small CHECK (v < 100)")
    db.run(f"UPDATE {src} SET v = 100 + id WHERE id BETWEEN 5 AND 9")

    with pytest.raises(Exception, match="small"):
        api.repl_refresh_inc_snapshot(name, **kw)

    assert _listed(own_catalog, name) == applied, "entries of a batch the destination did not commit"
    assert own_catalog.snapshot(name).sn_last_ts == mark
    db.run(f"ALTER TABLE {unique_name} DROP CONSTRAINT small")
    api.repl_refresh_inc_snapshot(name, **kw)
    assert len(_listed(own_catalog, name)) == listed[1]
    assert own_catalog.snapshot(name).sn_last_ts > mark
    query = "SELECT id, v FROM {} ORDER BY id"
    assert db.rows(query.format(unique_name)) == db.rows(query.format(src))


@pytest.mark.parametrize("db_fixture", ["pg_db", "mysql_db"])
def test_a_change_of_a_transaction_open_across_refreshes_still_arrives(
    own_catalog: Catalog, db_fixture: str, settings: Any, refresher: Any, unique_name: str, request: Any
) -> None:
    """The watermark each batch's open catalog transaction commits never passes an open source
    transaction: its change arrives once it commits, with no tolerance window to catch it."""
    db: RealDatabase = request.getfixturevalue(db_fixture)
    kw: dict[str, Any] = {
        "catalog": own_catalog,
        "settings": dataclasses.replace(settings, snp_repl_tolerance_offset=0),
        "refresher": refresher,
    }
    with db.connect() as long_conn:
        long_transaction_survives(db, long_conn, kw, unique_name)

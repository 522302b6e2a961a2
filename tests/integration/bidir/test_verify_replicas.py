"""Verify and repair of subscribers' replicas against the publisher (ROWGUID included), the job's own
code run in this process's SparkSession."""

from __future__ import annotations

from typing import Any

import pytest

from snaprepl import api
from snaprepl.errors import InvalidArgument

pytestmark = pytest.mark.spark


@pytest.fixture(scope="session")
def verifier(spark: Any) -> Any:
    from snaprepl.verify.runner import run_verify

    return lambda request, catalog, settings: run_verify(spark, request, catalog=catalog)


def test_a_replica_changed_behind_snaprepls_back_is_found_and_repaired(
    servers, items, catalog, settings, verifier
) -> None:
    table = items([(1, "one", "1.50"), (2, "two ✓", "2.25"), (3, "three", None)])
    published = sorted(servers.pub.rows(f"SELECT * FROM {table}"))
    for db in servers.subscribers:
        name = f"{table}@{db.conn_id}"
        assert api.repl_verify_replica(name, catalog=catalog, settings=settings, verifier=verifier).equal
        replica_log = next(r for r in catalog.logs() if r.snl_table == table and r.snl_conn == db.conn_id)
        rlog = db.q(replica_log.objects.rlog)
        db.run(
            f"UPDATE {db.q(table)} SET name = 'changed' WHERE item_id = 1",
            f"DELETE FROM {db.q(table)} WHERE item_id = 2",
            f"DELETE FROM {rlog}",  # as if its triggers had been off: nothing for a pull to find
        )
        found = api.repl_verify_replica(name, catalog=catalog, settings=settings, verifier=verifier)
        assert (found.missing, found.extra, found.different, found.equal) == (1, 0, 1, False)
        assert sorted((s["key"], s["kind"]) for s in found.sample) == [(1, "different"), (2, "missing")]
        repaired = api.repl_repair_replica(name, catalog=catalog, settings=settings, verifier=verifier)
        assert repaired.repaired and repaired.equal and repaired.rows_upserted == 2
        assert api.repl_verify_replica(name, catalog=catalog, settings=settings, verifier=verifier).equal
        assert sorted(servers.pub.rows(f"SELECT * FROM {table}")) == published, "the publisher is never written"
        runs = catalog.history(limit=50)
        assert any(r.rh_kind == "repair" and r.rh_server == servers.name(db) for r in runs)
        from snaprepl.reporting.status import collect_status

        item = next(r.rh_copy for r in runs if r.rh_kind == "repair" and r.rh_server == servers.name(db))
        publication = next(
            p for p in collect_status(catalog, settings, probe=False)["publications"] if p["item"] == item
        )
        entry = next(s for s in publication["subscribers"] if s["server"] == servers.name(db))
        assert (entry["last_verify"]["kind"], entry["last_verify"]["equal"]) == ("verify", True), entry
    kind = catalog.publication(item).sp_type
    assert "'@weekly'" in api.repl_set_publication_verify_schedule(item, kind, "@weekly", catalog=catalog)
    assert catalog.publication(item).sp_verify_schedule == "@weekly"
    with pytest.raises(InvalidArgument):
        api.repl_set_publication_verify_schedule(item, kind, "every tuesday", catalog=catalog)
    api.repl_set_publication_verify_schedule(item, kind, None, catalog=catalog)
    assert catalog.publication(item).sp_verify_schedule is None

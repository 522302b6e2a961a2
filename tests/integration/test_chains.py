"""Chained snapshots (A -> B -> C, snapshot logs on A and B): a complete refresh of a destination that
carries a snapshot log must change its rows so that the log's triggers see every change, or every
snapshot fed from it silently diverges (issue 14.1)."""

from __future__ import annotations

from typing import Any

import pytest

from snaprepl import api
from tests.support.databases import RealDatabase

pytestmark = pytest.mark.spark

FIXTURE = {"postgres": "pg_db", "mysql": "mysql_db", "sqlite": "sqlite_db"}


def _rows(db: RealDatabase, table: str) -> list[tuple[Any, ...]]:
    rows = db.rows(f"SELECT id, v, n FROM {db.q(table)}")
    return sorted((int(i), v, None if n is None else int(n)) for i, v, n in rows)


def _log(db: RealDatabase, table: str) -> dict[int, str]:
    """The snapshot log of ``table``: key -> DMLTYPE."""
    return {
        int(k): str(t).strip()
        for k, t in db.rows(f"SELECT {db.q('RLOG_id')}, {db.q('DMLTYPE')} FROM {db.q('RLOG_' + table)}")
    }


def test_a_complete_refresh_of_a_logged_destination_logs_its_deletes(
    pg_db, mysql_db, catalog, settings, refresher, unique_name
) -> None:
    """The issue's repro: casc_b@pg (logged) fed from orders@pg, casc_c@mariadb fed from casc_b."""
    orders, b, c = f"{unique_name}_o", f"{unique_name}_b", f"{unique_name}_c"
    pg_db.run(
        f"CREATE TABLE {orders} (id int PRIMARY KEY, customer varchar(20), amount numeric(10,2), note text)",
        f"INSERT INTO {orders} SELECT g, 'c' || (g % 7), g * 1.5, 'x' FROM generate_series(1, 200) g",
    )
    pg, my = pg_db.conn_id, mysql_db.conn_id
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    api.repl_create_snapshot_log(f"{orders}@{pg}", catalog=catalog)
    api.repl_create_inc_snapshot("customer, amount", f"{orders}@{pg}", None, f"{b}@{pg}", **kw)
    api.repl_create_snapshot_log(f"{b}@{pg}", catalog=catalog)
    api.repl_create_inc_snapshot(None, f"{b}@{pg}", None, f"{c}@{my}", **kw)
    pg_db.run(f"DELETE FROM {orders} WHERE id IN (5, 6, 7)")
    api.repl_refresh_noninc_snapshot(f"{b}@{pg}", **kw)
    api.repl_refresh_inc_snapshot(f"{c}@{my}", **kw)

    assert _log(pg_db, b) == {5: "D", 6: "D", 7: "D"}, "the deletes are logged, and unchanged rows are not"
    assert pg_db.rows(f"SELECT COUNT(*) FROM {b}")[0][0] == 197
    assert mysql_db.rows(f"SELECT COUNT(*) FROM {c}")[0][0] == 197
    assert mysql_db.rows(f"SELECT id FROM {c} WHERE id IN (5, 6, 7)") == []

    # a change to a column B does not copy: B's incremental refresh rewrites nothing, so logs nothing
    pg_db.run(f"UPDATE {orders} SET note = 'y' WHERE id = 10", f"UPDATE {orders} SET amount = 0 WHERE id = 11")
    assert api.repl_refresh_inc_snapshot(f"{b}@{pg}", **kw).rows_upserted == 2
    assert _log(pg_db, b) == {5: "D", 6: "D", 7: "D", 11: "U"}


CHAINS = [("postgres", "mysql", "sqlite"), ("mysql", "sqlite", "postgres"), ("sqlite", "postgres", "mysql")]


@pytest.mark.parametrize("chain", CHAINS, ids="-".join)
def test_a_chain_of_three_snapshots_stays_equal_through_mixed_refreshes(
    request, chain, catalog, settings, refresher, unique_name
) -> None:
    dbs: list[RealDatabase] = [request.getfixturevalue(FIXTURE[d]) for d in chain]
    a, b, c = (f"{unique_name}_{x}" for x in "abc")
    ref = {t: f"{t}@{db.conn_id}" for t, db in zip((a, b, c), dbs, strict=True)}
    da, db_, dc = dbs
    da.run(f"CREATE TABLE {da.q(a)} (id {da.int_type()} PRIMARY KEY, v {da.text_type()}, n {da.int_type()})")
    values = ", ".join(f"({i}, 'v{i}', {'NULL' if i % 4 == 0 else i})" for i in range(1, 31))
    da.run(f"INSERT INTO {da.q(a)} VALUES {values}")
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    api.repl_create_snapshot_log(ref[a], catalog=catalog)
    api.repl_create_inc_snapshot(None, ref[a], None, ref[b], **kw)
    api.repl_create_snapshot_log(ref[b], catalog=catalog)
    api.repl_create_inc_snapshot(None, ref[b], None, ref[c], **kw)
    refresh = {"complete": api.repl_refresh_noninc_snapshot, "incremental": api.repl_refresh_inc_snapshot}

    def step(changes: list[str], b_mode: str, c_mode: str) -> None:
        da.transaction(*(s.format(t=da.q(a)) for s in changes))
        refresh[b_mode](ref[b], **kw)
        refresh[c_mode](ref[c], **kw)
        assert _rows(db_, b) == _rows(da, a), "B equals A"
        assert _rows(dc, c) == _rows(db_, b), "C equals B"

    full, inc = "complete", "incremental"
    step(  # deletes, a key change, NULL -> value and value -> NULL, an insert; B complete, C incremental
        [
            "DELETE FROM {t} WHERE id IN (5, 6, 7)",
            "UPDATE {t} SET id = 102, v = 'moved' WHERE id = 2",
            "UPDATE {t} SET n = 44 WHERE id = 4",
            "UPDATE {t} SET n = NULL WHERE id = 9",
            "INSERT INTO {t} VALUES (31, 'new', 31)",
        ],
        full,
        inc,
    )
    # only the changed keys were logged on B: no spurious updates of the 23 unchanged rows
    assert _log(db_, b) == {2: "D", 4: "U", 5: "D", 6: "D", 7: "D", 9: "U", 31: "I", 102: "I"}
    step(
        [
            "DELETE FROM {t} WHERE id = 8",
            "UPDATE {t} SET id = 103 WHERE id = 3",
            "UPDATE {t} SET v = 'w' WHERE id = 10",
        ],
        inc,
        full,
    )
    step(
        [
            "DELETE FROM {t} WHERE id IN (11, 12)",
            "UPDATE {t} SET id = 1000 WHERE id = 13",
            "INSERT INTO {t} VALUES (32, NULL, NULL)",
        ],
        full,
        full,
    )
    step(
        [
            "DELETE FROM {t} WHERE id = 14",
            "UPDATE {t} SET id = 15000 WHERE id = 15",
            "UPDATE {t} SET v = NULL WHERE id = 16",
        ],
        inc,
        inc,
    )
    step(["DELETE FROM {t} WHERE id >= 1000", "UPDATE {t} SET v = 'z', n = 0 WHERE id = 17"], full, inc)
    assert len(_rows(dc, c)) == 23

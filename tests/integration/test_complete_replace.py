"""How a complete refresh replaces the rows of a destination other tables depend on (issue 9.3).

A destination referenced by a foreign key cannot be swapped or truncated: its rows are replaced by
their difference from the query's result, in one transaction, so a refresh whose referenced rows
survive succeeds, and one that would orphan a child row fails, names the cause and keeps the old
content."""

from __future__ import annotations

import pytest

from snaprepl import api
from snaprepl.errors import CompleteRefreshRequired, RefreshFailed
from tests.support.databases import RealDatabase

pytestmark = pytest.mark.spark

FIXTURE = {"postgres": "pg_db", "mysql": "mysql_db"}


@pytest.mark.parametrize("dialect", ["postgres", "mysql"])
def test_a_destination_referenced_by_a_foreign_key_is_refreshed_completely(
    request, dialect, catalog, settings, refresher, unique_name
) -> None:
    db: RealDatabase = request.getfixturevalue(FIXTURE[dialect])
    src, dst, child = f"{unique_name}_s", f"{unique_name}_d", f"{unique_name}_k"
    db.run(
        f"CREATE TABLE {db.q(src)} (id int PRIMARY KEY, v varchar(20))",
        f"INSERT INTO {db.q(src)} VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')",
    )
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    api.repl_create_snapshot(f"SELECT id, v FROM {src}@{db.conn_id}", f"{dst}@{db.conn_id}", **kw)
    db.run(
        f"ALTER TABLE {db.q(dst)} ADD PRIMARY KEY (id)" if _keyless(db, dst) else "SELECT 1",
        f"CREATE TABLE {db.q(child)} (id int PRIMARY KEY, parent int NOT NULL REFERENCES {db.q(dst)} (id))"
        if dialect == "postgres"
        else f"CREATE TABLE {db.q(child)} (id int PRIMARY KEY, parent int NOT NULL, "
        f"FOREIGN KEY (parent) REFERENCES {db.q(dst)} (id))",
        f"INSERT INTO {db.q(child)} VALUES (10, 1), (20, 2)",
    )

    # referenced rows 1 and 2 survive (1 changes), 3 goes, 5 comes: the refresh succeeds
    db.run(f"DELETE FROM {db.q(src)} WHERE id = 3", f"UPDATE {db.q(src)} SET v = 'A' WHERE id = 1")
    db.run(f"INSERT INTO {db.q(src)} VALUES (5, 'e')")
    api.repl_refresh_noninc_snapshot(f"{dst}@{db.conn_id}", **kw)
    expected = [(1, "A"), (2, "b"), (4, "d"), (5, "e")]
    assert db.rows(f"SELECT id, v FROM {db.q(dst)} ORDER BY id") == expected
    assert db.rows(f"SELECT id, parent FROM {db.q(child)} ORDER BY id") == [(10, 1), (20, 2)]

    # row 2 is referenced and gone from the source: refused, with the reason, and nothing changes
    db.run(f"DELETE FROM {db.q(src)} WHERE id = 2", f"UPDATE {db.q(src)} SET v = 'changed' WHERE id = 4")
    with pytest.raises(RefreshFailed, match="foreign key") as failed:
        api.repl_refresh_noninc_snapshot(f"{dst}@{db.conn_id}", **kw)
    assert "\n" not in failed.value.message and failed.value.hint
    assert child in str(failed.value) or "referenc" in str(failed.value)
    assert db.rows(f"SELECT id, v FROM {db.q(dst)} ORDER BY id") == expected, "the old content is kept"
    tables = [r[0] for r in db.rows(_tables_sql(db))]
    assert not [t for t in tables if t.startswith("snaprepl_")], "no staging table is left behind"


def _keyless(db: RealDatabase, table: str) -> bool:
    if db.dialect == "postgres":
        sql = f"SELECT COUNT(*) FROM pg_constraint WHERE conrelid = '{table}'::regclass AND contype = 'p'"
    else:
        sql = (
            "SELECT COUNT(*) FROM information_schema.TABLE_CONSTRAINTS WHERE CONSTRAINT_TYPE = 'PRIMARY KEY' "
            f"AND TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{table}'"
        )
    return db.rows(sql)[0][0] == 0


def _tables_sql(db: RealDatabase) -> str:
    if db.dialect == "postgres":
        return "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
    return "SHOW TABLES"


def test_a_complete_refresh_clears_what_a_forced_purge_left(
    pg_db, catalog, settings, refresher, unique_name, monkeypatch
) -> None:
    """Issue 14.11: a forced purge with both offsets at 0 (refreshes keep the default 15-minute
    tolerance) marked the snapshot; after a complete refresh an incremental one must work again."""
    src, dst = f"{unique_name}_s", f"{unique_name}@{pg_db.conn_id}"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v int)", f"INSERT INTO {src} VALUES (1, 1), (2, 2)")
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    api.repl_create_snapshot_log(f"{src}@{pg_db.conn_id}", catalog=catalog)
    api.repl_create_inc_snapshot(None, f"{src}@{pg_db.conn_id}", None, dst, **kw)
    pg_db.run(f"INSERT INTO {src} VALUES (3, 3)")
    api.repl_refresh_inc_snapshot(dst, **kw)

    monkeypatch.setenv("AIRFLOW__SNAPREPL__SNP_REPL_PURGE_OFFSET", "0")
    monkeypatch.setenv("AIRFLOW__SNAPREPL__SNP_REPL_TOLERANCE_OFFSET", "0")
    from snaprepl.settings import Settings

    eager = Settings.load()
    assert (eager.snp_repl_purge_offset, eager.snp_repl_tolerance_offset) == (0, 0)
    assert settings.snp_repl_tolerance_offset == 15
    forced = api.repl_purge_snapshot_log(f"{src}@{pg_db.conn_id}", 1, catalog=catalog, settings=eager)
    assert forced.stale == [f"public.{unique_name}@{pg_db.conn_id}"]
    with pytest.raises(CompleteRefreshRequired):
        api.repl_refresh_inc_snapshot(dst, **kw)

    api.repl_refresh_noninc_snapshot(dst, **kw)
    assert catalog.snapshot(f"public.{unique_name}@{pg_db.conn_id}").sn_needs_complete is None
    pg_db.run(
        f"INSERT INTO {src} VALUES (4, 4)", f"DELETE FROM {src} WHERE id = 1", f"UPDATE {src} SET v = 20 WHERE id = 2"
    )
    outcome = api.repl_refresh_inc_snapshot(dst, **kw)
    assert (outcome.rows_upserted, outcome.rows_deleted) == (2, 1)
    assert pg_db.rows(f"SELECT id, v FROM {unique_name} ORDER BY id") == [(2, 20), (3, 3), (4, 4)]
    assert api.repl_refresh_inc_snapshot(dst, **kw).rows_upserted == 0


@pytest.mark.parametrize("dialect", ["postgres", "mysql"])
def test_an_incremental_refresh_that_would_orphan_a_child_row_names_the_foreign_key(
    request, dialect, catalog, settings, refresher, unique_name
) -> None:
    db: RealDatabase = request.getfixturevalue(FIXTURE[dialect])
    src, dst, child = f"{unique_name}_s", f"{unique_name}_d", f"{unique_name}_k"
    db.run(
        f"CREATE TABLE {db.q(src)} (id int PRIMARY KEY, v varchar(20))",
        f"INSERT INTO {db.q(src)} VALUES (1, 'a'), (2, 'b'), (3, 'c')",
    )
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    api.repl_create_snapshot_log(f"{src}@{db.conn_id}", catalog=catalog)
    api.repl_create_inc_snapshot(None, f"{src}@{db.conn_id}", None, f"{dst}@{db.conn_id}", **kw)
    db.run(
        f"CREATE TABLE {db.q(child)} (id int PRIMARY KEY, parent int NOT NULL, "
        f"FOREIGN KEY (parent) REFERENCES {db.q(dst)} (id))",
        f"INSERT INTO {db.q(child)} VALUES (10, 1)",
    )
    db.run(f"DELETE FROM {db.q(src)} WHERE id = 3")  # not referenced: applied
    api.repl_refresh_inc_snapshot(f"{dst}@{db.conn_id}", **kw)
    assert db.rows(f"SELECT id FROM {db.q(dst)} ORDER BY id") == [(1,), (2,)]

    db.run(f"DELETE FROM {db.q(src)} WHERE id = 1")  # referenced by the child row
    with pytest.raises(RefreshFailed, match=r"incremental refresh of .* would break a foreign key") as failed:
        api.repl_refresh_inc_snapshot(f"{dst}@{db.conn_id}", **kw)
    assert "\n" not in str(failed.value) and child in str(failed.value)
    assert db.rows(f"SELECT id FROM {db.q(dst)} ORDER BY id") == [(1,), (2,)]

"""What CREATE and DROP SNAPSHOT accept once the refusals of the bad-input table are in place: an
existing destination filled on request, an empty one without asking (refreshed by Spark in this
process)."""

from __future__ import annotations

import pytest

from snaprepl import api
from snaprepl.api.script import run_script
from snaprepl.errors import TableNotFound

pytestmark = pytest.mark.spark


def test_using_existing_table_replaces_the_rows_the_query_does_not_return(
    pg_db, mysql_db, catalog, settings, refresher, unique_name
) -> None:
    """Issue 9.2: the clause is the opt-in; with it, the destination ends equal to the source."""
    src, dst = f"{unique_name}_s", f"{unique_name}_d"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v varchar(20))", f"INSERT INTO {src} VALUES (1, 'a')")
    mysql_db.run(
        f"CREATE TABLE {dst} (id int PRIMARY KEY, v varchar(20))",
        f"INSERT INTO {dst} VALUES (1, 'old'), (999999, 'IMPORTANT')",
    )
    result = run_script(
        f"CREATE SNAPSHOT LOG FOR {src}@{pg_db.conn_id}; "
        f"CREATE SNAPSHOT {dst}@{mysql_db.conn_id} FROM {src}@{pg_db.conn_id} USING EXISTING TABLE",
        catalog=catalog,
        settings=settings,
        refresher=refresher,
    )
    assert "filled: 1 rows" in str(result[-1]) and "created" not in str(result[-1])
    assert mysql_db.rows(f"SELECT id, v FROM {dst} ORDER BY id") == [(1, "a")]


def test_an_existing_empty_destination_needs_no_clause(pg_db, catalog, settings, refresher, unique_name) -> None:
    src, dst = f"{unique_name}_s", f"{unique_name}_d"
    pg_db.run(
        f"CREATE TABLE {src} (id int PRIMARY KEY, v int)",
        f"INSERT INTO {src} VALUES (1, 10), (2, 20)",
        f"CREATE TABLE {dst} (id int PRIMARY KEY, v int)",
    )
    api.repl_create_snapshot(
        f"SELECT id, v FROM {src}@{pg_db.conn_id}",
        f"{dst}@{pg_db.conn_id}",
        catalog=catalog,
        settings=settings,
        refresher=refresher,
    )
    assert pg_db.rows(f"SELECT id, v FROM {dst} ORDER BY id") == [(1, 10), (2, 20)]


def test_a_refresh_whose_source_is_gone_fails_naming_it(pg_db, catalog, settings, refresher, unique_name) -> None:
    """Issue 14.3: UPDATE SNAPSHOT after the source was dropped exited 0 with "applied 0 upserts"."""
    src = f"{unique_name}_s"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v int)", f"INSERT INTO {src} VALUES (1, 10)")
    run = lambda text: run_script(text, catalog=catalog, settings=settings, refresher=refresher)  # noqa: E731
    run(
        f"CREATE SNAPSHOT LOG FOR {src}@{pg_db.conn_id}; "
        f"CREATE SNAPSHOT {unique_name}_inc@{pg_db.conn_id} FROM {src}@{pg_db.conn_id}; "
        f"CREATE NONINCREMENTAL SNAPSHOT {unique_name}_full@{pg_db.conn_id} AS 'SELECT * FROM {src}@{pg_db.conn_id}'"
    )
    pg_db.run(f"DROP TABLE {src}")
    for name, statement in [("inc", "UPDATE SNAPSHOT {}"), ("full", "UPDATE SNAPSHOT {} AS NONINCREMENTAL")]:
        snapshot = f"{unique_name}_{name}@{pg_db.conn_id}"
        with pytest.raises(TableNotFound, match=rf"source table public\.{src}@{pg_db.conn_id} of snapshot .* is gone"):
            run(statement.format(snapshot))
        record = catalog.snapshot(f"public.{unique_name}_{name}@{pg_db.conn_id}")
        assert record.sn_last_status == "failed" and "is gone" in record.sn_last_error
        assert pg_db.rows(f"SELECT id, v FROM {unique_name}_{name}") == [(1, 10)]
    with pytest.raises(TableNotFound, match=f"its snapshot log RLOG_{src} is still registered"):
        run(f"UPDATE SNAPSHOT {unique_name}_inc@{pg_db.conn_id}")

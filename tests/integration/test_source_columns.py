"""Sources whose columns change (issue 25, item 3), on real databases, each of PostgreSQL, MariaDB and
SQLite as a source and as a destination.

A snapshot without a column list follows its source: a column dropped at the source keeps its values
in the destination (never NULLed: the incremental apply and the complete refresh leave it alone), a
widened type is widened in the destination, an added column is added and filled in every row by a
complete refresh; each change is reported once in the refresh's output and kept in ``status``. A
snapshot with a column list ignores added columns and refuses, in one line, a dropped listed column
or a type its destination cannot hold. The snapshot log's triggers log keys only, so they keep
working after ADD and DROP COLUMN on the source (every step below writes through them).
"""

from __future__ import annotations

import pytest

from snaprepl import api
from snaprepl.api.script import run_script
from snaprepl.errors import SourceColumnsChanged
from snaprepl.refresh.idle import refresh_if_idle
from snaprepl.refresh.model import COMPLETE, INCREMENTAL, RefreshRequest
from snaprepl.reporting.render import render_text
from snaprepl.reporting.status import collect_status
from tests.support.databases import RealDatabase

pytestmark = pytest.mark.spark

FIXTURE = {"postgres": "pg_db", "mysql": "mysql_db", "sqlite": "sqlite_db"}
#: Each dialect is a source and a destination; widening in place is tested on PostgreSQL and MariaDB
#: destinations (SQLite holds any value; an SQLite source cannot change a column's type).
PAIRS = [("postgres", "mysql"), ("mysql", "postgres"), ("mysql", "sqlite"), ("sqlite", "postgres")]
BIG = 2**40


@pytest.fixture(params=PAIRS, ids=lambda p: f"{p[0]}-to-{p[1]}")
def pair(request: pytest.FixtureRequest) -> tuple[RealDatabase, RealDatabase]:
    source, dest = request.param
    return request.getfixturevalue(FIXTURE[source]), request.getfixturevalue(FIXTURE[dest])


def _widen_sql(db: RealDatabase, table: str, column: str, type_sql: str) -> str | None:
    if db.dialect == "postgres":
        return f"ALTER TABLE {db.q(table)} ALTER COLUMN {column} TYPE {type_sql}"
    if db.dialect == "mysql":
        return f"ALTER TABLE {db.q(table)} MODIFY {column} {type_sql}"
    return None


def _create_source(db: RealDatabase, table: str) -> None:
    db.run(
        f"CREATE TABLE {db.q(table)} (id int PRIMARY KEY, b varchar(20), c int, w varchar(5))",
        f"INSERT INTO {db.q(table)} VALUES (1, 'b1', 1, 'w1'), (2, 'b2', 2, 'w2'), (3, 'b3', 3, 'w3')",
    )


def test_a_snapshot_without_a_column_list_follows_its_source(pair, catalog, settings, refresher, unique_name) -> None:
    source, dest = pair
    src, dst = f"{unique_name}_s", f"{unique_name}_d"
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    _create_source(source, src)
    api.repl_create_snapshot_log(f"{src}@{source.conn_id}", catalog=catalog)
    created = api.repl_create_inc_snapshot(None, f"{src}@{source.conn_id}", None, f"{dst}@{dest.conn_id}", **kw)
    name = created.record.sn_name

    # dropped and widened at the source, then written through the log's triggers
    source.run(f"ALTER TABLE {source.q(src)} DROP COLUMN b")
    # int -> bigint rebuilds a MariaDB table (a new InnoDB id: the log's guard asks for a complete
    # refresh, as after a TRUNCATE), so it is widened on PostgreSQL only; varchar(5) -> varchar(40)
    # is instant on both. An SQLite source cannot change a column's type.
    widen = [_widen_sql(source, src, "c", "bigint") if source.dialect == "postgres" else None]
    widen.append(_widen_sql(source, src, "w", "varchar(40)"))
    source.run(*[s for s in widen if s])
    big, longer = BIG if widen[0] else 5, "longer than five" if widen[1] else "w1"
    source.run(
        f"UPDATE {source.q(src)} SET c = {big}, w = '{longer}' WHERE id = 1",
        f"INSERT INTO {source.q(src)} (id, c, w) VALUES (4, 4, 'w4')",
        f"DELETE FROM {source.q(src)} WHERE id = 3",
    )
    outcome = api.repl_refresh_inc_snapshot(name, **kw)
    assert outcome.kind == INCREMENTAL and (outcome.rows_upserted, outcome.rows_deleted) == (2, 1)
    assert "column b dropped at the source: kept in the destination" in (outcome.note or "")
    assert ("widened" in (outcome.note or "")) == (source.dialect != "sqlite" and dest.dialect != "sqlite")
    assert outcome.columns_followed >= 1 + ("widened" in (outcome.note or "")), "b dropped, and what was widened"
    expected = [(1, "b1", big, longer), (2, "b2", 2, "w2"), (4, None, 4, "w4")]
    assert dest.rows(f"SELECT id, b, c, w FROM {dest.q(dst)} ORDER BY id") == expected, "b keeps its values"

    # added at the source with a default (no trigger fires): the next refresh is complete, fills every row
    source.run(f"ALTER TABLE {source.q(src)} ADD COLUMN d varchar(10) DEFAULT 'dflt'")
    request = RefreshRequest(snapshot=name, mode=INCREMENTAL)
    assert refresh_if_idle(request, catalog=catalog) is None, "no log entry, yet the job must run"
    source.run(f"UPDATE {source.q(src)} SET d = 'two' WHERE id = 2")
    outcome = api.repl_refresh_inc_snapshot(name, **kw)
    assert outcome.kind == COMPLETE and "column d added at the source" in (outcome.note or "")
    assert "dropped" not in (outcome.note or ""), "a change is reported once"
    assert outcome.columns_followed == 1, "d, added"
    expected = [(1, "b1", big, "dflt"), (2, "b2", 2, "two"), (4, None, 4, "dflt")]
    assert dest.rows(f"SELECT id, b, c, d FROM {dest.q(dst)} ORDER BY id") == expected

    source.run(f"UPDATE {source.q(src)} SET d = 'four' WHERE id = 4", f"INSERT INTO {source.q(src)} (id) VALUES (5)")
    outcome = api.repl_refresh_inc_snapshot(name, **kw)
    assert outcome.kind == INCREMENTAL and outcome.note is None and outcome.rows_upserted == 2
    assert outcome.columns_followed == 0
    complete = api.repl_refresh_noninc_snapshot(name, **kw)
    assert complete.rows_copied == 4 and complete.note is None
    expected = [(1, "b1", "dflt"), (2, "b2", "two"), (4, None, "four"), (5, None, "dflt")]
    assert dest.rows(f"SELECT id, b, d FROM {dest.q(dst)} ORDER BY id") == expected

    status = collect_status(catalog, settings, probe=False)
    entry = next(e for e in status["snapshots"] if e["name"] == name)
    assert entry["column_changes"]["kept"] == ["b"] and entry["column_changes"]["added"] == ["d"]
    assert f"note: {name}: columns b dropped at the source, kept in the destination" in render_text(status)


@pytest.mark.parametrize("dest_dialect", ["mysql", "sqlite"])
def test_a_snapshot_with_a_column_list_ignores_additions_and_refuses_what_it_cannot_hold(
    request, dest_dialect, pg_db, catalog, settings, refresher, unique_name
) -> None:
    source, dest = pg_db, request.getfixturevalue(FIXTURE[dest_dialect])
    src, dst = f"{unique_name}_s", f"{unique_name}_d"
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    _create_source(source, src)
    api.repl_create_snapshot_log(f"{src}@{source.conn_id}", catalog=catalog)
    created = api.repl_create_inc_snapshot("c, w", f"{src}@{source.conn_id}", None, f"{dst}@{dest.conn_id}", **kw)
    name = created.record.sn_name
    source.run(f"ALTER TABLE {source.q(src)} ADD COLUMN d int", f"UPDATE {source.q(src)} SET d = 7, c = 8 WHERE id = 1")
    outcome = api.repl_refresh_inc_snapshot(name, **kw)
    assert outcome.kind == INCREMENTAL and outcome.note is None
    assert dest.rows(f"SELECT * FROM {dest.q(dst)} WHERE id = 1") == [(1, 8, "w1")], "d is not copied"

    source.run(_widen_sql(source, src, "c", "bigint") or "", f"UPDATE {source.q(src)} SET c = {BIG} WHERE id = 2")
    if dest_dialect == "sqlite":  # any value fits
        api.repl_refresh_inc_snapshot(name, **kw)
        assert dest.rows(f"SELECT c FROM {dest.q(dst)} WHERE id = 2") == [(BIG,)]
    else:
        with pytest.raises(SourceColumnsChanged, match=r"column c of .* is now bigint") as refused:
            api.repl_refresh_inc_snapshot(name, **kw)
        assert "\n" not in refused.value.message and "change the destination's column to bigint" in refused.value.hint
        dest.run(f"ALTER TABLE {dest.q(dst)} MODIFY c bigint")  # what the hint says; then it refreshes
        api.repl_refresh_inc_snapshot(name, **kw)
        assert dest.rows(f"SELECT c FROM {dest.q(dst)} WHERE id = 2") == [(BIG,)]

    source.run(f"ALTER TABLE {source.q(src)} DROP COLUMN w")
    with pytest.raises(SourceColumnsChanged, match=r"column w of snapshot .* no longer exists") as refused:
        api.repl_refresh_noninc_snapshot(name, **kw)
    assert "\n" not in refused.value.message and refused.value.hint


def test_a_widening_the_destination_cannot_take_fails_in_one_line(
    pg_db, catalog, settings, refresher, unique_name
) -> None:
    """A view on the destination's column: PostgreSQL refuses ALTER COLUMN TYPE, and the refresh says
    which column and what to do, writing nothing."""
    src, dst, view = f"{unique_name}_s", f"{unique_name}_d", f"{unique_name}_v"
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    _create_source(pg_db, src)
    api.repl_create_snapshot_log(f"{src}@{pg_db.conn_id}", catalog=catalog)
    created = api.repl_create_inc_snapshot(None, f"{src}@{pg_db.conn_id}", None, f"{dst}@{pg_db.conn_id}", **kw)
    pg_db.run(f"CREATE VIEW {view} AS SELECT id, c FROM {dst}")
    pg_db.run(_widen_sql(pg_db, src, "c", "bigint") or "", f"UPDATE {src} SET c = {BIG} WHERE id = 1")
    with pytest.raises(SourceColumnsChanged, match=r"widening it to bigint .* failed") as refused:
        api.repl_refresh_inc_snapshot(created.record.sn_name, **kw)
    assert "\n" not in refused.value.message and "change column c of" in refused.value.hint
    assert pg_db.rows(f"SELECT c FROM {dst} WHERE id = 1") == [(1,)], "nothing was written"
    pg_db.run(f"DROP VIEW {view}")
    outcome = api.repl_refresh_inc_snapshot(created.record.sn_name, **kw)
    assert "column c widened" in (outcome.note or "")
    assert pg_db.rows(f"SELECT c FROM {dst} WHERE id = 1") == [(BIG,)]


#: A nonincremental snapshot of ``SELECT *``, each way between PostgreSQL and MariaDB.
QUERY_PAIRS = [("postgres", "mysql"), ("mysql", "postgres")]


@pytest.mark.parametrize("pair", QUERY_PAIRS, indirect=True, ids=["postgres-to-mysql", "mysql-to-postgres"])
def test_a_nonincremental_snapshot_follows_its_querys_columns(pair, catalog, settings, refresher, unique_name) -> None:
    """``SELECT *``: a column added at the source is added and filled, a dropped one keeps its values
    (the refresh used to fail: the query no longer returned it), a widened one is widened; each said once."""
    source, dest = pair
    src, dst = f"{unique_name}_s", f"{unique_name}_d"
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    _create_source(source, src)
    statement = f"CREATE NONINCREMENTAL SNAPSHOT {dst}@{dest.conn_id} AS 'SELECT * FROM {src}@{source.conn_id}'"
    run_script(statement, **kw)
    name = f"{dest.schema}.{dst}@{dest.conn_id}"
    source.run(
        f"ALTER TABLE {source.q(src)} DROP COLUMN b",
        f"ALTER TABLE {source.q(src)} ADD COLUMN d varchar(10) DEFAULT 'dflt'",
        _widen_sql(source, src, "w", "varchar(40)") or "",
        f"UPDATE {source.q(src)} SET w = 'longer than five' WHERE id = 1",
        f"DELETE FROM {source.q(src)} WHERE id = 3",
        f"INSERT INTO {source.q(src)} (id, c, w) VALUES (4, 4, 'w4')",
    )
    outcome = api.repl_refresh_noninc_snapshot(name, **kw)
    note = outcome.note or ""
    assert "column d added at the source" in note and "column b dropped at the source: kept" in note, note
    assert "column w widened" in note, note
    expected = [(1, "b1", "longer than five", "dflt"), (2, "b2", "w2", "dflt"), (4, None, "w4", "dflt")]
    assert dest.rows(f"SELECT id, b, w, d FROM {dest.q(dst)} ORDER BY id") == expected, "b keeps its values"
    source.run(f"UPDATE {source.q(src)} SET d = 'two' WHERE id = 2")
    outcome = api.repl_refresh_noninc_snapshot(name, **kw)
    assert outcome.note is None, "each change is said once"
    assert dest.rows(f"SELECT id, d FROM {dest.q(dst)} ORDER BY id") == [(1, "dflt"), (2, "two"), (4, "dflt")]
    entry = next(e for e in collect_status(catalog, settings, probe=False)["snapshots"] if e["name"] == name)
    assert entry["column_changes"]["kept"] == ["b"] and entry["column_changes"]["added"] == ["d"]

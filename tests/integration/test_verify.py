"""Verify and repair on real databases, every pair of dialects, the job's own code run in this
process's SparkSession (as test_snapshots.py runs refreshes)."""

from __future__ import annotations

import itertools
import threading
from datetime import datetime
from decimal import Decimal

import pytest

from snaprepl import api
from snaprepl.errors import InvalidArgument, SnapshotNotFound, TableNotFound
from tests.support.data import create_typed_table, execute, insert_rows, table_rows
from tests.support.databases import RealDatabase

pytestmark = pytest.mark.spark

DIALECTS = ["postgres", "mysql", "sqlite"]
FIXTURE = {"postgres": "pg_db", "mysql": "mysql_db", "sqlite": "sqlite_db"}


@pytest.fixture(scope="session")
def verifier(spark: object) -> object:
    """Runs verify jobs in this process's SparkSession: the job's own runner, without spark-submit."""
    from snaprepl.verify.runner import run_verify

    return lambda request, catalog, settings: run_verify(spark, request, catalog=catalog)


@pytest.fixture(params=list(itertools.product(DIALECTS, DIALECTS)), ids=lambda p: f"{p[0]}-to-{p[1]}")
def pair(request: pytest.FixtureRequest) -> tuple[RealDatabase, RealDatabase]:
    source, dest = request.param
    return request.getfixturevalue(FIXTURE[source]), request.getfixturevalue(FIXTURE[dest])


def _snapshot(source, dest, name, catalog, settings, refresher) -> str:
    src, dst = f"{name}_s", f"{name}_d"
    create_typed_table(source, src)
    api.repl_create_snapshot_log(f"{src}@{source.conn_id}", catalog=catalog)
    api.repl_create_inc_snapshot(
        None, f"{src}@{source.conn_id}", None, f"{dst}@{dest.conn_id}",
        catalog=catalog, settings=settings, refresher=refresher,
    )  # fmt: skip
    return dst


def _corrupt(dest: RealDatabase, dst: str) -> None:
    """Behind snaprepl's back: a row deleted, one inserted, and one change of each hard kind."""
    execute(dest, f"DELETE FROM {dest.q(dst)} WHERE id = 1")
    insert_rows(dest, dst, [(99, "extra", None, None, None, None, None)])
    execute(dest, f"UPDATE {dest.q(dst)} SET name = ? WHERE id = 2", "ünïcødé ✓ 中文 🙃")  # non-ASCII
    execute(dest, f"UPDATE {dest.q(dst)} SET note = NULL WHERE id = 4")  # '' became NULL
    execute(dest, f"UPDATE {dest.q(dst)} SET amount = ? WHERE id = 5", Decimal("1.0001"))  # last decimal place
    execute(dest, f"UPDATE {dest.q(dst)} SET happened = ? WHERE id = 6", datetime(2026, 3, 2, 2, 2, 2, 3))  # +1 µs


def test_repair_finds_exactly_the_corrupted_keys_on_every_pair(
    pair, catalog, settings, refresher, verifier, unique_name
) -> None:
    source, dest = pair
    dst = _snapshot(source, dest, unique_name, catalog, settings, refresher)
    name = f"{dst}@{dest.conn_id}"
    before = table_rows(source, f"{unique_name}_s")
    first = api.repl_verify_snapshot(name, catalog=catalog, settings=settings, verifier=verifier)
    assert first.equal, "an identical copy of every replicated type verifies equal"
    assert first.computed_in == ("databases" if source.dialect == dest.dialect != "sqlite" else "spark")
    _corrupt(dest, dst)

    outcome = api.repl_repair_snapshot(name, catalog=catalog, settings=settings, verifier=verifier)
    assert (outcome.missing, outcome.extra, outcome.different) == (1, 1, 4)
    assert sorted((s["key"], s["kind"]) for s in outcome.sample) == [
        (1, "missing"), (2, "different"), (4, "different"), (5, "different"), (6, "different"), (99, "extra"),
    ]  # fmt: skip
    assert outcome.repaired and outcome.equal and (outcome.rows_upserted, outcome.rows_deleted) == (5, 1)
    assert table_rows(dest, dst) == before
    assert table_rows(source, f"{unique_name}_s") == before, "the source is never written"
    kinds = [(r.rh_kind, r.rh_outcome, r.rh_conflicts) for r in catalog.history(outcome.copy, limit=2)]
    assert kinds == [("repair", "ok", 6), ("verify", "ok", 0)]


def test_verify_writes_nothing_and_repair_writes_only_differing_keys(
    pg_db, mysql_db, catalog, settings, refresher, verifier, unique_name
) -> None:
    dst = _snapshot(mysql_db, pg_db, unique_name, catalog, settings, refresher)
    name = f"{dst}@{pg_db.conn_id}"
    api.repl_create_snapshot_log(name, catalog=catalog)  # a log on the copy sees every write to it
    _corrupt(pg_db, dst)
    pg_db.run(f'DELETE FROM "RLOG_{dst}"')
    corrupted = table_rows(pg_db, dst)

    found = api.repl_verify_snapshot(name, catalog=catalog, settings=settings, verifier=verifier)
    assert not found.equal and found.exit_code == 3 and (found.missing, found.extra, found.different) == (1, 1, 4)
    assert table_rows(pg_db, dst) == corrupted and not pg_db.rows(f'SELECT 1 FROM "RLOG_{dst}"')
    from snaprepl.reporting.render import render_text
    from snaprepl.reporting.status import collect_status

    report = collect_status(catalog, settings, probe=False)
    entry = next(e for e in report["snapshots"] if e["name"] == found.copy)
    assert (entry["last_verify"]["equal"], entry["last_verify"]["differences"]) == (False, 6)
    assert entry["last_run"]["kind"] == "complete", "a verify is not the copy's last replication run"
    assert "6 differences" in render_text(report)

    from snaprepl.api.script import run_script

    statement = f"VERIFY SNAPSHOT {name} WHERE 'id >= 5'"
    (limited,) = run_script(statement, catalog=catalog, settings=settings, verifier=verifier)
    assert (limited.missing, limited.extra, limited.different) == (0, 1, 2)

    api.repl_repair_snapshot(name, catalog=catalog, settings=settings, verifier=verifier)
    logged = sorted(int(r[0]) for r in pg_db.rows(f'SELECT "RLOG_id" FROM "RLOG_{dst}"'))
    assert logged == [1, 2, 4, 5, 6, 99], "only the differing keys were written"
    assert api.repl_verify_snapshot(name, catalog=catalog, settings=settings, verifier=verifier).equal


def test_changes_in_flight_are_not_differences(sqlite_db, pg_db, catalog, settings, refresher, verifier, unique_name):
    dst = _snapshot(pg_db, sqlite_db, unique_name, catalog, settings, refresher)
    name = f"{dst}@{sqlite_db.conn_id}"
    execute(pg_db, f"UPDATE {pg_db.q(unique_name + '_s')} SET name = 'changed' WHERE id = 3")
    insert_rows(pg_db, f"{unique_name}_s", [(50, "new", None, None, None, None, None)])
    execute(sqlite_db, f"DELETE FROM {sqlite_db.q(dst)} WHERE id = 7")  # a real difference

    outcome = api.repl_verify_snapshot(name, catalog=catalog, settings=settings, verifier=verifier)
    assert (outcome.missing, outcome.extra, outcome.different, outcome.excluded) == (1, 0, 0, 2)
    assert outcome.sample == [{"key": 7, "kind": "missing"}]

    # A load writing the source while the verify runs (and a refresh trying to run): no false difference.
    stop, writes = threading.Event(), itertools.count(1)

    def load() -> None:
        while not stop.is_set():
            n = next(writes)
            execute(pg_db, f"UPDATE {pg_db.q(unique_name + '_s')} SET amount = ? WHERE id = ?", Decimal(n), 1 + n % 6)
            insert_rows(pg_db, f"{unique_name}_s", [(1000 + n, "load", None, None, None, None, None)])

    writer = threading.Thread(target=load)
    writer.start()
    try:
        during = api.repl_verify_snapshot(name, catalog=catalog, settings=settings, verifier=verifier)
    finally:
        stop.set()
        writer.join()
    assert (during.missing, during.extra, during.different) == (1, 0, 0), during
    api.repl_refresh_inc_snapshot(name, catalog=catalog, settings=settings, refresher=refresher)
    after = api.repl_repair_snapshot(name, catalog=catalog, settings=settings, verifier=verifier)
    assert (after.missing, after.extra, after.different, after.excluded, after.equal) == (1, 0, 0, 0, True)


def test_one_changed_row_is_found_by_bisection_reading_a_few_rows(
    pg_db, catalog, settings, refresher, verifier, unique_name
) -> None:
    """Keys 1..5,000 and one at 10^9: the first pass's range buckets are so skewed that every row
    falls into one of them; the databases' sums split it again and again (data-diff's bisection), and
    only the small range around the changed key is read as rows."""
    src, dst = f"{unique_name}_s", f"{unique_name}_d"
    pg_db.run(f"CREATE TABLE {src} (id bigint PRIMARY KEY, v text)")
    pg_db.run(f"INSERT INTO {src} SELECT g, 'row ' || g FROM generate_series(1, 5000) g")
    pg_db.run(f"INSERT INTO {src} VALUES (1000000000, 'far away')")
    api.repl_create_snapshot_log(f"{src}@{pg_db.conn_id}", catalog=catalog)
    api.repl_create_inc_snapshot(
        None, f"{src}@{pg_db.conn_id}", None, f"{dst}@{pg_db.conn_id}",
        catalog=catalog, settings=settings, refresher=refresher,
    )  # fmt: skip
    pg_db.run(f"UPDATE {dst} SET v = 'changed' WHERE id = 1234")
    name = f"{dst}@{pg_db.conn_id}"

    outcome = api.repl_verify_snapshot(name, catalog=catalog, settings=settings, verifier=verifier)
    assert (outcome.missing, outcome.extra, outcome.different) == (0, 0, 1)
    assert outcome.sample == [{"key": 1234, "kind": "different"}]
    from snaprepl.verify.bisect import READ_ROWS

    assert outcome.computed_in == "databases" and outcome.rows == 5001
    assert 0 < outcome.rows_narrowed <= 2 * READ_ROWS, outcome  # not the 5,001-row bucket, twice


def test_bad_input_gives_one_clear_line_and_changes_nothing(
    pg_db, mysql_db, catalog, settings, refresher, verifier, unique_name
) -> None:
    with pytest.raises(SnapshotNotFound, match="there is no snapshot"):
        api.repl_verify_snapshot(f"nope_{unique_name}@{pg_db.conn_id}", catalog=catalog, settings=settings,
                                 verifier=verifier)  # fmt: skip
    dst = _snapshot(pg_db, mysql_db, unique_name, catalog, settings, refresher)
    name = f"{dst}@{mysql_db.conn_id}"
    copied = table_rows(mysql_db, dst)
    with pytest.raises(InvalidArgument, match="is not valid on the"):
        api.repl_repair_snapshot(name, "no_such_column = 1", catalog=catalog, settings=settings, verifier=verifier)
    pg_db.run(f'DROP TABLE "{unique_name}_s" CASCADE')
    with pytest.raises(TableNotFound, match="is gone"):
        api.repl_repair_snapshot(name, catalog=catalog, settings=settings, verifier=verifier)
    assert table_rows(mysql_db, dst) == copied


@pytest.mark.slow
def test_the_command_in_both_spark_modes(pg_db, sqlite_db, catalog, settings, refresher, unique_name, spark_env):
    """``snaprepl verify`` as users run it: a spark-submit, or the job in the CLI on the Connect server."""
    import json

    from tests.integration.test_refresh_submit import snaprepl

    dst = _snapshot(sqlite_db, pg_db, unique_name, catalog, settings, refresher)
    _corrupt(pg_db, dst)
    name = f"{dst}@{pg_db.conn_id}"
    found = snaprepl("verify", name, "--json", env=spark_env)
    assert found.returncode == 3, found.stderr[-3000:]
    report = json.loads(found.stdout)
    assert list(report) == ["copy", "equal", "missing", "extra", "different", "sample", "rows", "seconds"]
    assert (report["equal"], report["missing"], report["extra"], report["different"]) == (False, 1, 1, 4)
    if spark_env:  # the repair's own path is the same in both modes: one spark-submit fewer
        repaired = snaprepl("verify", name, "--repair", env=spark_env)
        assert repaired.returncode == 0, repaired.stderr[-3000:]
        assert "repaired (5 upserts, 1 deletes), equal now" in repaired.stdout
    unknown = snaprepl("verify", f"nope_{unique_name}@{pg_db.conn_id}", env=spark_env)
    assert unknown.returncode == 1 and unknown.stderr.count("\n") == 1
    assert unknown.stderr.startswith("snaprepl: error: there is no snapshot")


def test_a_verify_schedule_is_off_by_default_and_set_by_name(pg_db, catalog, unique_name) -> None:
    pg_db.run(f"CREATE TABLE {unique_name} (id int PRIMARY KEY)")
    from snaprepl.catalog.records import SnapshotRecord, utcnow

    name = f"public.{unique_name}@{pg_db.conn_id}"
    catalog.add_snapshot(
        SnapshotRecord(
            sn_name=name, sn_query=f"SELECT * FROM {unique_name}", sn_source_conn=pg_db.conn_id,
            sn_dest_conn=pg_db.conn_id, sn_dest_schema="public", sn_dest_table=unique_name, sn_created_at=utcnow(),
        ),
        duplicate=InvalidArgument("duplicate"),
    )  # fmt: skip
    assert catalog.snapshot(name).sn_verify_schedule is None
    set_weekly = api.repl_set_snapshot_verify_schedule(f"{unique_name}@{pg_db.conn_id}", "@weekly", catalog=catalog)
    assert "@weekly" in str(set_weekly) and catalog.snapshot(name).sn_verify_schedule == "@weekly"
    with pytest.raises(InvalidArgument):
        api.repl_set_snapshot_verify_schedule(f"{unique_name}@{pg_db.conn_id}", "every tuesday", catalog=catalog)
    api.repl_set_snapshot_verify_schedule(f"{unique_name}@{pg_db.conn_id}", None, catalog=catalog)
    assert catalog.snapshot(name).sn_verify_schedule is None

"""The bisection of differing key ranges in the databases (verify/bisect.py): scattered differences
in one dialect are narrowed, all at once, to small ranges before Spark reads any row."""

from __future__ import annotations

import pytest

from snaprepl import api

pytestmark = pytest.mark.spark


@pytest.fixture(scope="session")
def verifier(spark: object) -> object:
    """Runs verify jobs in this process's SparkSession (as in test_verify.py)."""
    from snaprepl.verify.runner import run_verify

    return lambda request, catalog, settings: run_verify(spark, request, catalog=catalog)


@pytest.mark.parametrize("dialect", ["postgres", "mysql"])
def test_scattered_differences_are_named_exactly_reading_few_rows(
    dialect, request, catalog, settings, refresher, verifier, unique_name
) -> None:
    """20,000 rows, 40 changed, one deleted and one added behind snaprepl's back, spread over the
    key space: every one is named, and the rows read to name them are a few dozen per difference
    (the first pass's buckets hold about 256 rows each; each differing one is split again)."""
    from snaprepl.verify.bisect import READ_ROWS

    db = request.getfixturevalue("pg_db" if dialect == "postgres" else "mysql_db")
    src, dst = f"{unique_name}_s", f"{unique_name}_d"
    db.run(f"CREATE TABLE {src} (id bigint PRIMARY KEY, v varchar(40))")
    values = ", ".join(f"({i}, 'row {i}')" for i in range(1, 20_001))
    db.run(f"INSERT INTO {src} VALUES {values}")
    api.repl_create_snapshot_log(f"{src}@{db.conn_id}", catalog=catalog)
    api.repl_create_inc_snapshot(
        None, f"{src}@{db.conn_id}", None, f"{dst}@{db.conn_id}",
        catalog=catalog, settings=settings, refresher=refresher,
    )  # fmt: skip
    changed = list(range(7, 20_000, 500))  # 40 keys, 500 apart: one per differing bucket
    db.run(f"UPDATE {dst} SET v = 'changed' WHERE id IN ({', '.join(map(str, changed))})")
    db.run(f"DELETE FROM {dst} WHERE id = 10001")
    db.run(f"INSERT INTO {dst} VALUES (30000, 'extra')")

    outcome = api.repl_verify_snapshot(f"{dst}@{db.conn_id}", catalog=catalog, settings=settings, verifier=verifier)
    assert (outcome.different, outcome.missing, outcome.extra) == (40, 1, 1)
    assert outcome.computed_in == "databases" and outcome.rows == 20_000
    assert 0 < outcome.rows_narrowed <= 42 * 2 * READ_ROWS, outcome
    assert outcome.rows_narrowed < 42 * 256, "not every differing first-pass bucket read whole"

"""The databases' own verify checksums (dialects/checksums.py): equal tables give equal bucket sums,
and each kind of corruption changes them (no Spark)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import pytest

from snaprepl.database.sessions import Database
from tests.support.data import COLUMNS, create_typed_table, execute
from tests.support.databases import RealDatabase

CORRUPTIONS = {
    "NULL for ''": ("UPDATE {t} SET note = NULL WHERE id = 4",),
    "'' for NULL": ("UPDATE {t} SET note = '' WHERE id = 1",),
    "last decimal": ("UPDATE {t} SET amount = ? WHERE id = 5", Decimal("1.0001")),
    "one microsecond": ("UPDATE {t} SET happened = ? WHERE id = 6", datetime(2026, 3, 2, 2, 2, 2, 3)),
    "non-ASCII text": ("UPDATE {t} SET name = ? WHERE id = 2", "ünïcødé ✓ 中文 🙃"),
    "letter case": ("UPDATE {t} SET name = UPPER(name) WHERE id = 3",),
    "boolean": ("UPDATE {t} SET flag = NOT flag WHERE id = 1",),
    "binary": ("UPDATE {t} SET payload = NULL WHERE id = 2",),
    "deleted row": ("DELETE FROM {t} WHERE id = 7",),
}


def _sums(db: RealDatabase, table: str) -> dict:
    database = Database.for_conn_id(db.conn_id)
    dialect = database.dialect
    query = f"SELECT {', '.join(dialect.quote(c) for c in COLUMNS)} FROM {dialect.quote(table)}"
    with database.session() as session:
        columns = dialect.describe_query(session, query)
    sql = dialect.bucket_sums_sql(query, columns, ["id"], 16)
    assert sql is not None
    with database.session(read_only=True) as session:
        assert dialect.checksums_usable(session)
        return {int(b): (int(n), Decimal(t)) for b, n, t in session.query(sql)}


@pytest.mark.parametrize("dialect", ["pg_db", "mysql_db"])
def test_database_checksums_see_every_kind_of_difference(dialect, request, unique_name) -> None:
    db: RealDatabase = request.getfixturevalue(dialect)
    original, copy = f"{unique_name}_a", f"{unique_name}_b"
    create_typed_table(db, original)
    create_typed_table(db, copy)
    expected = _sums(db, original)
    assert _sums(db, copy) == expected, "identical tables give identical sums"
    for what, (statement, *params) in CORRUPTIONS.items():
        db.run(f"DROP TABLE {db.q(copy)}")
        create_typed_table(db, copy)
        execute(db, statement.format(t=db.q(copy)), *params)
        assert _sums(db, copy) != expected, what
    assert (
        Database.for_conn_id(request.getfixturevalue("sqlite_db").conn_id).dialect.bucket_sums_sql(
            "SELECT 1", [], ["a"], 4
        )
        is None
    ), "SQLite has no hash function: Spark computes its sums"

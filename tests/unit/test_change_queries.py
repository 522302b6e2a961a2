"""The change query of an incremental refresh, the log-window and the staging-table queries, compared
per dialect with reviewed golden files (tests/golden/change_query_<dialect>.sql).

Regenerate after a deliberate change with ``UPDATE_GOLDEN=1 pytest tests/unit/test_change_queries.py``
and review the diff.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import pytest
import sqlglot

from snaprepl.catalog.records import LogRecord
from snaprepl.dialects import DIALECTS, Column, LogObjects
from snaprepl.sql.change_queries import (
    change_columns,
    change_query,
    incremental_query_columns,
    incremental_snapshot_query,
    log_entries_sql,
    staged_all_entries_sql,
    staged_batches_sql,
    staged_changes_query,
    staging_index_sql,
    window_groups_sql,
)

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
SINCE = datetime(2026, 1, 2, 3, 4, 5, 678000)
#: Per dialect: schema, table, key columns, a data column, as the snapshot-log golden files name them.
TABLE = {
    "postgres": ("sales", "orders", ["order_id", "line_no"], "amount"),
    "mysql": ("sales", "orders", ["order_id", "line_no"], "amount"),
    "sqlite": ("main", "orders", ["order_id", "line_no"], "amount"),
    "mssql": ("dbo", "Orders", ["OrderID", "LineNo"], "Amount"),
    "oracle": ("SALES", "ORDERS", ["ORDER_ID", "LINE_NO"], "AMOUNT"),
    "db2": ("SALES", "ORDERS", ["ORDER_ID", "LINE_NO"], "AMOUNT"),
    "informix": ("sales", "orders", ["order_id", "line_no"], "amount"),
}


def log_of(dialect: str) -> LogRecord:
    schema, table, key, _ = TABLE[dialect]
    objects = LogObjects(rlog=f"RLOG_{table}", key_columns=tuple(f"RLOG_{k}" for k in key), triggers=())
    return LogRecord(
        snl_source=f"{schema}.{table}@src",
        snl_rlog=objects.rlog,
        snl_rplog=f"RPLOG_{table}",
        snl_conn="src",
        snl_schema=schema,
        snl_table=table,
        snl_dialect=dialect,
        snl_key_columns=json.dumps(key),
        snl_objects=objects.to_json(),
        snl_kind="snapshot",
        snl_created_at=SINCE,
    )


def script_of(dialect: str) -> str:
    """The queries of one dialect, one statement a paragraph."""
    log, (schema, _, key, data) = log_of(dialect), TABLE[dialect]
    source = DIALECTS[dialect]
    staged = source.qualified(schema, "snaprepl_inc_0123456789")
    queries = [
        change_query(source, log, [*key, data], None, SINCE),
        change_query(source, log, [*key, data], f"{source.quote(data)} > 0", SINCE),
        log_entries_sql(source, log, SINCE, count=True),
        log_entries_sql(source, log, SINCE, count=False),
        log_entries_sql(source, log, SINCE, count=True, at_most=1001),
        # the same dialect as a destination: its staging table of changes
        staging_index_sql(source, schema, "snaprepl_inc_0123456789"),
        staged_batches_sql(source, staged),
        staged_all_entries_sql(source, staged),
        # the change set as the staging table holds it, numbered by the source (the bulk pipe's)
        window_groups_sql(source, log, SINCE),
        staged_changes_query(
            source,
            (change_query(source, log, [*key, data], None, SINCE), window_groups_sql(source, log, SINCE)),
            key,
            [*key, data, "gone"],
            {"gone"},
            500,
        ),
    ]
    return "".join(f"{query};\n\n" for query in queries)


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_change_queries_match_golden(dialect: str) -> None:
    script = script_of(dialect)
    golden = GOLDEN / f"change_query_{dialect}.sql"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(script)
    assert golden.exists(), f"missing {golden}: run with UPDATE_GOLDEN=1 and review it"
    assert script == golden.read_text()


@pytest.mark.parametrize("dialect", ["postgres", "mysql", "sqlite"])
def test_change_queries_of_real_dialects_parse(dialect: str) -> None:
    for statement in script_of(dialect).split(";\n\n")[:-1]:
        sqlglot.parse_one(statement.replace(":batch", "1"), read=dialect)


def test_change_columns_follow_the_query_key_first() -> None:
    source = DIALECTS["postgres"]
    columns = {"order_id": Column("order_id", "integer"), "line_no": Column("line_no", "smallint")}
    columns["amount"] = Column("amount", "numeric(10,2)")
    read = change_columns(source, log_of("postgres"), columns, ["order_id", "line_no", "amount"])
    assert [(c.name, c.type_sql) for c in read] == [
        ("SNAPREPL_K0", "integer"),
        ("SNAPREPL_K1", "smallint"),
        ("SNAPREPL_SNAPTIME", "timestamp(6)"),
        ("SNAPREPL_ROWGUID", "varchar(255)"),
        ("SNAPREPL_PRESENT", "integer"),
        ("order_id", "integer"),
        ("line_no", "smallint"),
        ("amount", "numeric(10,2)"),
    ]


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_an_incremental_snapshots_columns_are_read_back_as_written(dialect: str) -> None:
    """What incremental_snapshot_query writes is read back name for name, as sqlglot reads it, for
    names of every awkward character; any other text is left to sqlglot (None)."""
    import random
    import string

    d, rng = DIALECTS[dialect], random.Random(dialect)
    alphabet = string.ascii_letters + "\"`[]' \\,é\n.-_0"
    for _ in range(300):
        names = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))) for _ in range(rng.randint(1, 4))]
        where = rng.choice([None, "a > 1", "b IN (1, 2)"])
        query = incremental_snapshot_query(d, names, rng.choice([None, "s p"]), "t, u", where)
        parsed = sqlglot.parse_one(query, read=d.sqlglot_dialect or None)
        assert incremental_query_columns(d, query) == names == [e.alias_or_name for e in parsed.selects]
    for other in ("SELECT a, b FROM t", "SELECT * FROM t", 'SELECT "a", b FROM t', 'SELECT "a"', ""):
        assert incremental_query_columns(d, other.replace('"', d.identifier_quotes[0])) is None


@pytest.mark.parametrize("dialect", ["postgres", "mysql", "sqlite"])
def test_staged_rows_leave_out_their_entries_only_when_asked(dialect: str) -> None:
    """The RLOG_ROWGUIDs go through the pipe only for the replay log: a window read by transaction ids
    writes none, and its rows carry NULL in their place (the same columns, in the same order)."""
    log, (_, _, key, data) = log_of(dialect), TABLE[dialect]
    source, q = DIALECTS[dialect], DIALECTS[dialect].quote
    change = (change_query(source, log, [*key, data], None, SINCE), window_groups_sql(source, log, SINCE))
    with_entries = staged_changes_query(source, change, key, [*key, data], (), 500)
    without = staged_changes_query(source, change, key, [*key, data], (), 500, entries=False)
    selected = [sqlglot.parse_one(sql, read=dialect).selects for sql in (with_entries, without)]
    assert [s.alias_or_name for s in selected[0]] == [s.alias_or_name for s in selected[1]]
    assert f"c.{q('SNAPREPL_ROWGUID')}" in with_entries and f"NULL AS {q('SNAPREPL_ROWGUID')}" not in with_entries
    assert f"c.{q('SNAPREPL_ROWGUID')}" not in without and f"NULL AS {q('SNAPREPL_ROWGUID')}" in without

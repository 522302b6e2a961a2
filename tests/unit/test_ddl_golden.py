"""Generated snapshot-log and bi-directional DDL, compared with reviewed golden files (tests/golden/).

The four dialects snaprepl does not run (SQL Server, Oracle, DB2, Informix) are checked here
against the objects the seed lists for each; the three real dialects are also run for real by the
integration tests. Regenerate after a deliberate change with ``UPDATE_GOLDEN=1 pytest tests/unit``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import sqlglot

from snaprepl.cli.ddl import bidir_log_ddl, snapshot_log_ddl, snapshot_log_statements
from snaprepl.dialects import DIALECTS

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
TABLE = {
    "postgres": ("sales.orders", ["order_id integer", "line_no smallint"]),
    "mysql": ("sales.orders", ["order_id int", "line_no smallint"]),
    "sqlite": ("main.orders", ["order_id INTEGER", "line_no INTEGER"]),
    "mssql": ("dbo.Orders", ["OrderID int", "LineNo smallint"]),
    "oracle": ("sales.orders", ["order_id NUMBER(10)", "line_no NUMBER(5)"]),
    "db2": ("sales.orders", ["order_id INTEGER", "line_no SMALLINT"]),
    "informix": ("sales.orders", ["order_id INTEGER", "line_no SMALLINT"]),
}


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
@pytest.mark.parametrize("drop", [False, True], ids=["create", "drop"])
def test_snapshot_log_ddl_matches_golden(dialect: str, drop: bool) -> None:
    table, keys = TABLE[dialect]
    script = snapshot_log_ddl(dialect, table, keys, drop=drop)
    golden = GOLDEN / f"snapshot_log_{'drop' if drop else 'create'}_{dialect}.sql"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(script)
    assert golden.exists(), f"missing {golden}: run with UPDATE_GOLDEN=1 and review it"
    assert script == golden.read_text()


SEED_OBJECTS = {
    # The seed's "objects created in the source DSN" list, per dialect.
    "mssql": ["[Orders_I_log]", "[Orders_U_log]", "[Orders_D_log]", "[RLOG_Orders]"],
    "oracle": ['"ORDERS_I_log"', '"ORDERS_U_log"', '"ORDERS_D_log"', '"OPL_GETUTCDATE"', '"RLOG_ORDERS"'],
    "db2": ['"ORDERS_I"', '"ORDERS_U"', '"ORDERS_D"', '"opl_seq_rowguid"', '"RLOG_ORDERS"'],
    "informix": [
        '"orders_I_log"',
        '"orders_U_log"',
        '"orders_D_log"',
        '"opl_seq_rowguid"',
        '"orders_R_proc"',
        '"orders_U_proc"',
        '"RLOG_orders"',
    ],
}


@pytest.mark.parametrize("dialect", sorted(SEED_OBJECTS))
def test_seed_dialects_get_the_objects_the_seed_lists(dialect: str) -> None:
    table, keys = TABLE[dialect]
    script = snapshot_log_ddl(dialect, table, keys)
    for name in SEED_OBJECTS[dialect]:
        assert name in script, name
    # Same shape as everywhere: key columns, SNAPTIME, DMLTYPE, RLOG_ROWGUID, and the key as primary key.
    assert re.search(r"RLOG_(order_id|ORDER_ID|OrderID)", script)
    for column in ("SNAPTIME", "DMLTYPE", "RLOG_ROWGUID"):
        assert column in script
    assert "PRIMARY KEY" in script
    # Each of I, U, D logs its own DMLTYPE, and an update of the key logs D and I.
    for dmltype in ("'I'", "'U'", "'D'"):
        assert dmltype in script


@pytest.mark.parametrize("dialect", ["postgres", "mysql", "sqlite"])
def test_log_tables_of_real_dialects_parse(dialect: str) -> None:
    table, keys = TABLE[dialect]
    parsed = sqlglot.parse_one(snapshot_log_statements(dialect, table, keys)[0], read=dialect)
    assert parsed.key == "create"
    assert [c.name for c in parsed.find_all(sqlglot.exp.ColumnDef)][-3:] == ["SNAPTIME", "DMLTYPE", "RLOG_ROWGUID"]


BIDIR_DIALECTS = ["db2", "mssql", "oracle"]


@pytest.mark.parametrize("dialect", BIDIR_DIALECTS)
@pytest.mark.parametrize("variant", ["publisher", "subscriber", "drop"])
def test_bidir_ddl_matches_golden(dialect: str, variant: str) -> None:
    table, keys = TABLE[dialect]
    script = bidir_log_ddl(dialect, table, keys, "pub1", publisher=variant != "subscriber", drop=variant == "drop")
    golden = GOLDEN / f"bidir_{variant}_{dialect}.sql"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(script)
    assert golden.exists(), f"missing {golden}: run with UPDATE_GOLDEN=1 and review it"
    assert script == golden.read_text()


BIDIR_SEED_OBJECTS = {
    # The seed's "objects created by bi-directional snapshot replication", per dialect.
    "mssql": ["[Orders_I_log]", "[Orders_U_log]", "[Orders_D_log]", "[RLOG_Orders]"],
    "oracle": [
        '"ORDERS_I_log"',
        '"ORDERS_IR_log"',
        '"ORDERS_U_log"',
        '"ORDERS_UR_log"',
        '"ORDERS_UD_log"',
        '"ORDERS_UDR_log"',
        '"ORDERS_D_log"',
        '"OPL_GETUTCDATE"',
        'GLOBAL TEMPORARY TABLE "SALES"."DLOG_ORDERS"',
    ],
    "db2": ['"ORDERS_I"', '"ORDERS_U"', '"ORDERS_UD"', '"ORDERS_D"', '"opl_seq_rowguid"'],
}


@pytest.mark.parametrize("dialect", BIDIR_DIALECTS)
def test_bidir_ddl_has_the_objects_the_seed_lists(dialect: str) -> None:
    table, keys = TABLE[dialect]
    script = bidir_log_ddl(dialect, table, keys, "pub1")
    for name in BIDIR_SEED_OBJECTS[dialect]:
        assert name in script, name
    # ROWGUID on the table, existing rows versioned by the server, the log's extra columns, no echo.
    assert "ADD [ROWGUID]" in script or 'ADD "ROWGUID"' in script
    assert "'pub1@'" in script
    for column in ("OLD_ROWGUID", "ORIGIN", "SYNC_ID", "SNAPTIME", "DMLTYPE", "RLOG_ROWGUID"):
        assert column in script
    assert "'snaprepl:delete'" in script, "a replicated delete is not logged"
    # A subscriber forgets an insert deleted before the next sync; a publisher keeps the delete.
    subscriber = bidir_log_ddl(dialect, table, keys, "pub1", publisher=False)
    assert "DELETE" in subscriber.split("MERGE", 1)[1] and subscriber != script


def test_bidir_ddl_is_refused_where_the_seed_has_no_bidirectional_support() -> None:
    from snaprepl.errors import UnsupportedConnection

    with pytest.raises(UnsupportedConnection, match="not available on informix"):
        bidir_log_ddl("informix", "sales.orders", ["id INTEGER"], "pub1")

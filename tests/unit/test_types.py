"""The seed's type-mapping table is data, and the mapping follows it row by row."""

from __future__ import annotations

import pytest

from snaprepl.dialects.types import (
    SEED_DIALECTS,
    SEED_TYPE_TABLE,
    TYPE_TABLE,
    GenericType,
    map_type,
    render,
    to_generic,
)
from snaprepl.errors import InvalidArgument

# A PostgreSQL spelling of each seed (Virtuoso) type, with n = 30, p = 12, s = 4.
SOURCE_OF_SEED_TYPE = {
    "varchar": "varchar",
    "varchar(n)": "varchar(30)",
    "integer": "integer",
    "smallint": "smallint",
    "real": "real",
    "double precision": "double precision",
    "numeric": "numeric",
    "numeric(p, s)": "numeric(12,4)",
    "date": "date",
    "time": "time",
    "datetime": "timestamp",
    "timestamp": "timestamp",
    "varbinary": "bytea",
    "long varchar": "text",
}


def _expected(template: str) -> str:
    return template.replace("(n)", "(30)").replace("(p, s)", "(12, 4)")


def test_seed_table_is_kept_verbatim() -> None:
    assert len(SEED_TYPE_TABLE) == 19
    assert SEED_TYPE_TABLE[0] == ("varchar", "varchar(8000)", "VARCHAR2(4000)", "VARCHAR(32000)", "VARCHAR(254)")
    assert ("numeric", "numeric(38, 15)", "NUMERIC(38, 15)", "NUMERIC(32, 15)", "DECIMAL(31, 15)") in SEED_TYPE_TABLE
    for row in SEED_TYPE_TABLE:
        for dialect, cell in zip(SEED_DIALECTS, row[1:], strict=True):
            assert TYPE_TABLE[row[0]][dialect] == cell


@pytest.mark.parametrize(("seed_type", "source"), sorted(SOURCE_OF_SEED_TYPE.items()))
@pytest.mark.parametrize("dialect", SEED_DIALECTS)
def test_postgres_types_map_to_seed_dialects_as_the_table_says(seed_type: str, source: str, dialect: str) -> None:
    row = next(r for r in SEED_TYPE_TABLE if r[0] == seed_type)
    expected = _expected(row[1 + SEED_DIALECTS.index(dialect)])
    if seed_type in {"time", "datetime", "timestamp"}:
        expected = expected.replace("(f)", "(6)")
    assert map_type(source, "postgres", dialect) == expected


def test_nvarchar_and_long_binary_rows() -> None:
    assert map_type("nvarchar(20)", "mssql", "oracle") == "NVARCHAR2(20)"
    assert map_type("nvarchar(20)", "mssql", "db2") == "VARCHAR(20) FOR MIXED DATA"
    assert map_type("longblob", "mysql", "mssql") == "image"
    assert map_type("longblob", "mysql", "informix") == "BYTE"


def test_real_dialects_keep_precision_and_scale() -> None:
    assert map_type("numeric(12,4)", "postgres", "mysql") == "decimal(12, 4)"
    assert map_type("decimal(12,4)", "mysql", "sqlite") == "DECIMAL(12, 4)"
    assert map_type("timestamp(3)", "postgres", "mysql") == "datetime(3)"
    assert map_type("datetime(6)", "mysql", "postgres") == "timestamp(6)"
    assert map_type("TIMESTAMP", "sqlite", "postgres") == "timestamp(6)"
    assert map_type("numeric", "postgres", "mysql") == "decimal(65, 30)"
    assert map_type("bytea", "postgres", "mysql") == "longblob"
    assert map_type("tinyint(1)", "mysql", "postgres") == "boolean"
    assert map_type("bigint(20)", "mysql", "sqlite") == "BIGINT"


def test_collations_do_not_confuse_the_mapping() -> None:
    assert to_generic("varchar(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", "mysql") == GenericType(
        "varchar(n)", length=20
    )


def test_types_without_equivalent_are_refused_with_advice() -> None:
    with pytest.raises(InvalidArgument, match="no portable equivalent"):
        to_generic("int[]", "postgres")
    with pytest.raises(InvalidArgument):
        render(GenericType("nonsense"), "postgres")

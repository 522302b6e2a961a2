"""``snaprepl ddl --key 'COLUMN TYPE'``: the type must be one column type, never more SQL."""

from __future__ import annotations

import pytest

from snaprepl.cli.ddl import snapshot_log_ddl
from snaprepl.errors import InvalidArgument


@pytest.mark.parametrize(
    ("dialect", "key"),
    [
        ("oracle", "id NUMBER); DROP TABLE victim; --"),
        ("postgres", "id int) ; drop table x"),
        ("postgres", "id int, evil int"),
        ("postgres", "id int /* x */"),
        ("postgres", "id int -- x"),
        ("mysql", "id int DEFAULT 1"),
        ("mysql", "id int NOT NULL REFERENCES victim"),
        ("mssql", "id int; EXEC xp_cmdshell 'x'"),
        ("db2", "id INTEGER GENERATED ALWAYS AS IDENTITY"),
        ("sqlite", "id no_such_type"),
        ("informix", "id INTEGER)"),
    ],
)
def test_a_key_type_that_is_not_one_type_is_refused(dialect: str, key: str) -> None:
    with pytest.raises(InvalidArgument, match="key column id: "):
        snapshot_log_ddl(dialect, "t", [key])


@pytest.mark.parametrize(
    ("dialect", "key"),
    [
        ("oracle", "id NUMBER(10)"),
        ("oracle", "code VARCHAR2(10 CHAR)"),
        ("postgres", "at timestamp(6) with time zone"),
        ("postgres", "amount numeric(12, 4)"),
        ("postgres", "name character varying(20)"),
        ("mysql", "name varchar(20) COLLATE utf8mb4_bin"),
        ("informix", "at DATETIME YEAR TO FRACTION(5)"),
        ("db2", "code VARCHAR(20) FOR BIT DATA"),
        ("mssql", "id bigint"),
    ],
)
def test_real_key_types_are_accepted_as_written(dialect: str, key: str) -> None:
    _name, type_sql = key.split(None, 1)
    assert type_sql in snapshot_log_ddl(dialect, "t", [key])

"""Which pairs of databases get the COPY pipe of a complete refresh, on which columns, and the key
ranges it streams (snaprepl.dialects.postgres_pipe, snaprepl.spark.partitioning.key_ranges)."""

from __future__ import annotations

from typing import Any

import pytest

from snaprepl.connections.lookup import ConnectionInfo
from snaprepl.dialects import Column, get_dialect
from snaprepl.dialects.postgres_mysql_pipe import PostgresMySqlPipe, pymysql_kwargs
from snaprepl.dialects.postgres_pipe import PostgresCopyPipe
from snaprepl.dialects.postgres_sqlite_pipe import PostgresSqlitePipe
from snaprepl.spark.io import PredicatePartitioning, RangePartitioning
from snaprepl.spark.partitioning import key_ranges


def conn(conn_type: str, **fields: Any) -> ConnectionInfo:
    values: dict[str, Any] = {"host": "db.example.com", "port": None, "login": "u", "password": "pw", "schema": "app"}
    return ConnectionInfo(conn_id="c", conn_type=conn_type, **{**values, **fields})


def test_only_postgres_to_postgres_mariadb_or_sqlite_over_psycopg_gets_a_pipe() -> None:
    pg, my, lite = get_dialect("postgres"), get_dialect("mysql"), get_dialect("sqlite")
    assert isinstance(pg.bulk_pipe(conn("postgres"), pg, conn("postgres")), PostgresCopyPipe)
    assert isinstance(pg.bulk_pipe(conn("postgres"), my, conn("mysql")), PostgresMySqlPipe)
    assert isinstance(pg.bulk_pipe(conn("postgres"), lite, conn("sqlite", host=None)), PostgresSqlitePipe)
    assert my.bulk_pipe(conn("mysql"), pg, conn("postgres")) is None
    assert lite.bulk_pipe(conn("sqlite", host=None), pg, conn("postgres")) is None
    jdbc = conn("jdbc", host=None, extra={"url": "jdbc:postgresql://db.example.com/app"})
    assert pg.bulk_pipe(jdbc, pg, conn("postgres")) is None, "a JDBC-only connection has no psycopg"
    assert pg.bulk_pipe(conn("postgres"), pg, jdbc) is None
    assert pg.bulk_pipe(conn("postgres"), my, conn("jdbc", host=None, extra={"url": "jdbc:mysql://db/app"})) is None


def test_the_mariadb_pipe_takes_only_types_whose_csv_text_both_read_alike() -> None:
    pipe = get_dialect("postgres").bulk_pipe(conn("postgres"), get_dialect("mysql"), conn("mysql"))
    assert isinstance(pipe, PostgresMySqlPipe)
    for source, dest in [("boolean", "tinyint(1)"), ("bytea", "longblob"), ("timestamptz", "datetime(6)"),
                         ("real", "float"), ("integer", "bigint"), ("numeric(10,2)", "decimal(12,2)")]:  # fmt: skip
        refusal = pipe.refusal([Column("c", source)], [Column("c", dest)])
        assert refusal == f"column c is {dest} in the destination but {source} in the query"


def test_the_sqlite_pipe_takes_only_types_it_stores_as_sparks_path_does() -> None:
    pipe = get_dialect("postgres").bulk_pipe(conn("postgres"), get_dialect("sqlite"), conn("sqlite", host=None))
    assert isinstance(pipe, PostgresSqlitePipe) and not pipe.parallel_ranges, "one writer"
    carried = [("bigint", "BIGINT"), ("integer", "INTEGER"), ("double precision", "DOUBLE"), ("text", "TEXT"),
               ("varchar(40)", "VARCHAR(40)"), ("timestamp(6)", "TIMESTAMP"), ("date", "DATE"), ("jsonb", "TEXT"),
               ("uuid", "VARCHAR"), ("character(5)", "CHAR(5)")]  # fmt: skip
    assert pipe.refusal([Column("c", s) for s, _ in carried], [Column("c", d) for _, d in carried]) is None
    for source, dest in [("boolean", "BOOLEAN"), ("numeric(10,2)", "DECIMAL(10, 2)"), ("bytea", "BLOB"),
                         ("timestamptz", "TIMESTAMP"), ("integer", "TEXT"), ("real", "REAL")]:  # fmt: skip
        refusal = pipe.refusal([Column("c", source)], [Column("c", dest)])
        assert refusal == f"column c is {dest} in the destination but {source} in the query"


def test_the_mariadb_pipe_connects_with_the_connection_s_charset_and_tls() -> None:
    extra = {"charset": "utf8mb4", "ssl": {"ca": "/etc/ca.pem"}, "ssl_mode": "VERIFY_IDENTITY"}
    kwargs = pymysql_kwargs(conn("mysql", port=3307, extra=extra))
    assert kwargs == {
        "host": "db.example.com", "port": 3307, "user": "u", "password": "pw", "database": "app",
        "charset": "utf8mb4", "ssl_ca": "/etc/ca.pem", "ssl_verify_cert": True, "ssl_verify_identity": True,
    }  # fmt: skip


def test_the_pipe_takes_only_columns_of_the_same_type() -> None:
    pg = get_dialect("postgres")
    pipe = pg.bulk_pipe(conn("postgres"), pg, conn("postgres"))
    assert pipe is not None
    source = [Column("id", "bigint"), Column("v", "character varying(40)"), Column("n", "numeric(10,2)")]
    same = [
        Column("id", "bigint"),
        Column("v", 'character varying(40) COLLATE pg_catalog."C"'),
        Column("n", "numeric(10,2)"),
    ]
    assert pipe.refusal(source, same) is None, "a collation sorts; it does not change a value's text"
    wider = [Column("id", "bigint"), Column("v", "character varying(40)"), Column("n", "numeric(12,2)")]
    assert pipe.refusal(source, wider) == "column n is numeric(12,2) in the destination but numeric(10,2) in the query"
    assert pipe.refusal([Column("id", "integer")], [Column("id", "bigint")]) is not None


def test_the_pipe_finds_the_database_message_in_spark_s_error() -> None:
    pg = get_dialect("postgres")
    pipe = pg.bulk_pipe(conn("postgres"), pg, conn("postgres"))
    assert pipe is not None
    spark_error = RuntimeError(
        "[PYTHON_EXCEPTION] Traceback (most recent call last):\n  File ...\n"
        "RuntimeError: snaprepl COPY pipe failed: DivisionByZero: division by zero\n\n\tat org.apache..."
    )
    assert pipe.failure(spark_error) == "DivisionByZero: division by zero"
    assert pipe.failure(RuntimeError("Connection refused")) is None


@pytest.mark.parametrize(
    ("lower", "upper", "count", "expected"),
    [
        (1, 101, 3, ['"id" < 34 OR "id" IS NULL', '"id" >= 34 AND "id" < 67', '"id" >= 67']),
        (5, 7, 4, ['"id" < 6 OR "id" IS NULL', '"id" >= 6']),
        (5, 6, 4, [None]),
    ],
)
def test_integer_key_ranges_cover_every_key_once(
    lower: int, upper: int, count: int, expected: list[str | None]
) -> None:
    ranges = key_ranges(get_dialect("postgres"), RangePartitioning("id", lower, upper, count))
    assert ranges == expected
    assert key_ranges(get_dialect("postgres"), None) == [None]
    predicates = ("a < 'm'", "a >= 'm'")
    assert key_ranges(get_dialect("postgres"), PredicatePartitioning(predicates)) == list(predicates)


def test_postgres_jdbc_writes_rewrite_batched_inserts() -> None:
    assert conn("postgres").jdbc_properties()["reWriteBatchedInserts"] == "true"

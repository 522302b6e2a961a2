"""Dialect registry: look a dialect up by name, by Airflow connection type or by JDBC URL."""

from __future__ import annotations

from snaprepl.dialects.base import Column, DdlStep, Dialect, LogObjects, TableInfo
from snaprepl.dialects.db2 import Db2Dialect
from snaprepl.dialects.informix import InformixDialect
from snaprepl.dialects.mssql import MsSqlDialect
from snaprepl.dialects.mysql import MySqlDialect
from snaprepl.dialects.oracle import OracleDialect
from snaprepl.dialects.postgres import PostgresDialect
from snaprepl.dialects.sqlite import SqliteDialect
from snaprepl.errors import UnsupportedConnection

DIALECTS: dict[str, Dialect] = {
    d.name: d
    for d in (
        PostgresDialect(),
        MySqlDialect(),
        SqliteDialect(),
        MsSqlDialect(),
        OracleDialect(),
        Db2Dialect(),
        InformixDialect(),
    )
}

# Airflow connection types (and common aliases) that name a dialect directly.
_CONN_TYPES = {
    "postgres": "postgres",
    "postgresql": "postgres",
    "mysql": "mysql",
    "mariadb": "mysql",
    "sqlite": "sqlite",
    "mssql": "mssql",
    "oracle": "oracle",
}


def get_dialect(name: str) -> Dialect:
    """The dialect called ``name`` (postgres, mysql, sqlite, mssql, oracle, db2, informix)."""
    try:
        return DIALECTS[name.lower()]
    except KeyError:
        raise UnsupportedConnection(f"unknown dialect {name!r}", f"use one of {', '.join(sorted(DIALECTS))}") from None


def dialect_for_conn_type(conn_type: str) -> Dialect | None:
    name = _CONN_TYPES.get((conn_type or "").lower())
    return DIALECTS[name] if name else None


def dialect_for_jdbc_url(url: str) -> Dialect:
    """The dialect of a JDBC URL, by its subprotocol."""
    lowered = url.lower()
    for dialect in DIALECTS.values():
        if lowered.startswith(dialect.jdbc_url_prefixes):
            return dialect
    raise UnsupportedConnection(
        f"JDBC URL {url.split('?', maxsplit=1)[0]!r} is not of a dialect snaprepl knows",
        "use a jdbc:postgresql:, jdbc:mysql:, jdbc:sqlite:, jdbc:sqlserver:, jdbc:oracle:, jdbc:db2: "
        "or jdbc:informix-sqli: URL",
    )


__all__ = [
    "DIALECTS",
    "Column",
    "DdlStep",
    "Dialect",
    "LogObjects",
    "TableInfo",
    "dialect_for_conn_type",
    "dialect_for_jdbc_url",
    "get_dialect",
]

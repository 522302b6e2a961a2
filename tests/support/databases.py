"""Direct access to the test databases through their own drivers, independent of snaprepl's code."""

from __future__ import annotations

import socket
import sqlite3
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg2
import pymysql

PG_ADMIN = {"host": "127.0.0.1", "port": 5432, "user": "postgres"}
MYSQL_ADMIN = {"host": "127.0.0.1", "port": 3306, "user": "root"}


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=3):
            return True
    except OSError:
        return False


def require_services() -> str | None:
    """None if PostgreSQL and MariaDB answer, else what is missing and how to start it."""
    missing = []
    if not _reachable(PG_ADMIN["host"], PG_ADMIN["port"]):
        missing.append(
            "PostgreSQL on 127.0.0.1:5432 "
            "(start: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start)"
        )
    if not _reachable(MYSQL_ADMIN["host"], MYSQL_ADMIN["port"]):
        missing.append(
            "MariaDB on 127.0.0.1:3306 "
            "(start: start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd)"
        )
    return "; ".join(missing) or None


@contextmanager
def pg_admin_connect(dbname: str = "postgres") -> Iterator[Any]:
    conn = psycopg2.connect(dbname=dbname, **PG_ADMIN)
    conn.autocommit = True
    try:
        yield conn
    finally:
        conn.close()


@contextmanager
def pg_scratch_database(prefix: str) -> Iterator[str]:
    """The URL of a new, empty PostgreSQL database, dropped on leaving (with whatever still connects)."""
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with pg_admin_connect() as conn:
        conn.cursor().execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql://{PG_ADMIN['user']}@{PG_ADMIN['host']}:{PG_ADMIN['port']}/{name}"
    finally:
        with pg_admin_connect() as conn:
            conn.cursor().execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def mysql_admin_connect(database: str | None = None) -> Iterator[Any]:
    conn = pymysql.connect(database=database, autocommit=True, charset="utf8mb4", **MYSQL_ADMIN)
    try:
        yield conn
    finally:
        conn.close()


@dataclass(frozen=True)
class RealDatabase:
    """One test database: its dialect, the Airflow connection id pointing at it, and its name."""

    dialect: str
    conn_id: str
    name: str

    @contextmanager
    def connect(self) -> Iterator[Any]:
        """A raw DB-API connection in autocommit mode."""
        if self.dialect == "postgres":
            with pg_admin_connect(self.name) as conn:
                yield conn
        elif self.dialect == "mysql":
            with mysql_admin_connect(self.name) as conn:
                yield conn
        else:
            conn = sqlite3.connect(self.name, isolation_level=None, timeout=30)
            try:
                yield conn
            finally:
                conn.close()

    @property
    def schema(self) -> str:
        return {"postgres": "public", "mysql": self.name, "sqlite": "main"}[self.dialect]

    def q(self, name: str) -> str:
        """Quote an identifier for this database."""
        if self.dialect == "mysql":
            return "`" + name.replace("`", "``") + "`"
        return '"' + name.replace('"', '""') + '"'

    def run(self, *statements: str, params: Sequence[Any] | None = None) -> None:
        """Run statements, each in its own transaction (autocommit)."""
        with self.connect() as conn:
            cur = conn.cursor()
            for statement in statements:
                cur.execute(statement, params) if params else cur.execute(statement)

    def transaction(self, *statements: str) -> None:
        """Run statements in one transaction."""
        with self.connect() as conn:
            cur = conn.cursor()
            cur.execute("BEGIN")
            for statement in statements:
                cur.execute(statement)
            cur.execute("COMMIT")

    def rows(self, sql: str, params: Sequence[Any] | None = None) -> list[tuple[Any, ...]]:
        with self.connect() as conn:
            cur = conn.cursor()
            cur.execute(sql, params) if params else cur.execute(sql)
            return [tuple(r) for r in cur.fetchall()]

    def table_exists(self, table: str) -> bool:
        if self.dialect == "postgres":
            return bool(self.rows("SELECT 1 FROM pg_tables WHERE schemaname = 'public' AND tablename = %s", [table]))
        if self.dialect == "mysql":
            return bool(
                self.rows(
                    "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND BINARY TABLE_NAME = %s",
                    [self.name, table],
                )
            )
        return bool(self.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [table]))

    def triggers_on(self, table: str) -> list[str]:
        if self.dialect == "postgres":
            return [
                r[0]
                for r in self.rows(
                    "SELECT tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
                    "WHERE c.relname = %s AND NOT t.tgisinternal ORDER BY 1",
                    [table],
                )
            ]
        if self.dialect == "mysql":
            return [
                r[0]
                for r in self.rows(
                    "SELECT TRIGGER_NAME FROM information_schema.TRIGGERS "
                    "WHERE EVENT_OBJECT_SCHEMA = %s AND EVENT_OBJECT_TABLE = %s ORDER BY 1",
                    [self.name, table],
                )
            ]
        return [
            r[0]
            for r in self.rows(
                "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? ORDER BY 1", [table]
            )
        ]

    def int_type(self) -> str:
        return "INTEGER" if self.dialect == "sqlite" else "int"

    def text_type(self) -> str:
        return "TEXT" if self.dialect == "sqlite" else "varchar(100)"

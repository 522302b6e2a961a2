"""A least-privilege role for the catalog: ``snaprepl catalog grant ROLE``.

Tasks and Spark drivers reach the catalog through the ``snaprepl_catalog`` connection. Pointing that
connection at the metadata database's owner would let every task read Airflow's ``connection`` and
``variable`` tables, that is, every other secret. This module creates (or updates) a role that can
read and write snaprepl's SYS_* tables, read the catalog's migration version, and nothing else.

The role's password is taken from an environment variable, never from the command line. On
PostgreSQL it is sent to the server already hashed (SCRAM-SHA-256 or MD5, as the server wants), so
it appears in no server log either.

Grants name the tables that exist now: run the command again after a ``snaprepl catalog upgrade`` or
``airflow db migrate`` that adds catalog tables (it is idempotent).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa
from psycopg2.extensions import encrypt_password

from snaprepl.catalog.models import VERSION_TABLE, metadata
from snaprepl.errors import InvalidArgument, SnapreplError

_ROLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
TABLE_PRIVILEGES = "SELECT, INSERT, UPDATE, DELETE"


@dataclass(frozen=True)
class GrantReport:
    """What :func:`grant_catalog_role` did."""

    role: str
    created: bool
    password_set: bool
    tables: tuple[str, ...]

    def __str__(self) -> str:
        verb = "created" if self.created else "updated"
        secret = ", password set" if self.password_set else ""
        return (
            f"role {self.role} {verb}{secret}: {TABLE_PRIVILEGES} on {len(self.tables)} catalog tables, "
            f"SELECT on {VERSION_TABLE}, nothing else"
        )


def validate_role(role: str) -> str:
    if not isinstance(role, str) or not _ROLE.match(role):
        raise InvalidArgument(
            f"{role!r} is not a role name snaprepl creates",
            "use letters, digits and underscores, starting with a letter or underscore (at most 63)",
        )
    return role


def password_from_env(variable: str | None) -> str | None:
    """The password held by environment variable ``variable`` (``None``: no password given)."""
    if variable is None:
        return None
    value = os.environ.get(variable)
    if not value:
        raise InvalidArgument(f"environment variable {variable} is not set or empty", "export it with the password")
    return value


def grant_catalog_role(engine: sa.Engine, role: str, password: str | None, *, mysql_host: str = "%") -> GrantReport:
    """Create or update ``role`` with access to the catalog tables only.

    :param engine: the catalog database, connected as a user that may create roles and grant.
    :param password: the role's new password, or ``None`` to leave it (a new role then has none).
    :param mysql_host: the host part of the MariaDB account.
    :raises SnapreplError: on a SQLite catalog (it has no roles), or when tables are missing.
    """
    validate_role(role)
    backend = engine.url.get_backend_name()
    with engine.begin() as conn:
        tables = _catalog_tables(conn)
        if backend == "postgresql":
            created = _postgres(conn, role, password, tables)
        elif backend in {"mysql", "mariadb"}:
            created = _mysql(conn, role, password, tables, mysql_host)
        else:
            raise SnapreplError(
                f"a {backend} catalog has no roles to grant",
                "protect the database file's permissions instead; roles need a PostgreSQL or MariaDB catalog",
            )
    return GrantReport(role=role, created=created, password_set=password is not None, tables=tuple(tables))


def _catalog_tables(conn: sa.Connection) -> list[str]:
    present = set(sa.inspect(conn).get_table_names())
    wanted = sorted(metadata.tables)
    missing = [t for t in [*wanted, VERSION_TABLE] if t not in present]
    if missing:
        raise SnapreplError(
            f"the catalog tables {', '.join(missing)} do not exist here",
            "run `airflow db migrate` or `snaprepl catalog upgrade` first",
        )
    return wanted


def _postgres(conn: sa.Connection, role: str, password: str | None, tables: Sequence[str]) -> bool:
    quote = conn.dialect.identifier_preparer.quote
    exists = conn.execute(sa.text("SELECT 1 FROM pg_roles WHERE rolname = :r"), {"r": role}).first() is not None
    verb = "ALTER" if exists else "CREATE"
    secret = f" PASSWORD {_pg_literal(_pg_hashed(conn, role, password))}" if password is not None else ""
    if not exists or secret:
        _raw(conn, f"{verb} ROLE {quote(role)} LOGIN{secret}")
    database = conn.execute(sa.text("SELECT current_database()")).scalar_one()
    schema = conn.execute(sa.text("SELECT current_schema()")).scalar_one()
    conn.execute(sa.text(f"GRANT CONNECT ON DATABASE {quote(database)} TO {quote(role)}"))
    conn.execute(sa.text(f"GRANT USAGE ON SCHEMA {quote(schema)} TO {quote(role)}"))
    for table in tables:
        conn.execute(sa.text(f"GRANT {TABLE_PRIVILEGES} ON TABLE {quote(table)} TO {quote(role)}"))
    conn.execute(sa.text(f"GRANT SELECT ON TABLE {quote(VERSION_TABLE)} TO {quote(role)}"))
    owned_sequences = conn.execute(
        sa.text(
            "SELECT DISTINCT s.relname FROM pg_class s JOIN pg_depend d ON d.objid = s.oid "
            "JOIN pg_class t ON d.refobjid = t.oid WHERE s.relkind = 'S' AND t.relname = ANY(:tables)"
        ),
        {"tables": list(tables)},
    ).scalars()
    for sequence in owned_sequences:
        conn.execute(sa.text(f"GRANT USAGE, SELECT ON SEQUENCE {quote(sequence)} TO {quote(role)}"))
    return not exists


def _raw(conn: sa.Connection, sql: str) -> None:
    """Run ``sql`` on the DB-API cursor without parameters: a password literal may hold ``:`` or ``%``,
    which SQLAlchemy's text() or the driver's parameter formatting would take for placeholders."""
    cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        cursor.execute(sql)
    finally:
        cursor.close()


def _pg_hashed(conn: sa.Connection, role: str, password: str) -> str:
    """The password as the server stores it, so the clear text never reaches the server or its log."""
    raw = conn.connection.dbapi_connection
    return str(encrypt_password(password, role, raw))


def _pg_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _mysql(conn: sa.Connection, role: str, password: str | None, tables: Sequence[str], host: str) -> bool:
    quote = conn.dialect.identifier_preparer.quote
    account = f"{_my_literal(role)}@{_my_literal(host)}"
    exists = (
        conn.execute(sa.text("SELECT 1 FROM mysql.user WHERE User = :u AND Host = :h"), {"u": role, "h": host}).first()
        is not None
    )
    secret = f" IDENTIFIED BY {_my_literal(password)}" if password is not None else ""
    if not exists:
        _raw(conn, f"CREATE USER {account}{secret}")
    elif secret:
        _raw(conn, f"ALTER USER {account}{secret}")
    database = conn.execute(sa.text("SELECT DATABASE()")).scalar_one()
    for table in tables:
        conn.execute(sa.text(f"GRANT {TABLE_PRIVILEGES} ON {quote(database)}.{quote(table)} TO {account}"))
    conn.execute(sa.text(f"GRANT SELECT ON {quote(database)}.{quote(VERSION_TABLE)} TO {account}"))
    return not exists


def _my_literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"

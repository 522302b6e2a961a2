"""Catalogs in each database a catalog can live in: SQLite, PostgreSQL, MariaDB (a fresh database
each, dropped after the test)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.databases import PG_ADMIN, mysql_admin_connect, pg_admin_connect

#: Per server kind: its admin connection, how it quotes a database name, the catalog URL of database {}.
SERVERS = {
    "postgres": (pg_admin_connect, '"{}"', f"postgresql+psycopg2://{PG_ADMIN['user']}@127.0.0.1:5432/{{}}"),
    "mysql": (mysql_admin_connect, "`{}`", "mysql+pymysql://root@127.0.0.1:3306/{}?charset=utf8mb4"),
}


@pytest.fixture(params=["sqlite", "postgres", "mysql"])
def catalog_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of an empty database for a catalog (not migrated)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'catalog.db'}"
        return
    admin, quoted, url = SERVERS[request.param]
    name = f"snaprepl_cat_{uuid.uuid4().hex[:8]}"
    with admin() as conn:
        conn.cursor().execute(f"CREATE DATABASE {quoted.format(name)}")
    try:
        yield url.format(name)
    finally:
        with admin() as conn:
            conn.cursor().execute(f"DROP DATABASE IF EXISTS {quoted.format(name)}")
            if request.param == "postgres":  # a role a test made, named as the database
                conn.cursor().execute(f"DROP ROLE IF EXISTS {quoted.format(name)}")

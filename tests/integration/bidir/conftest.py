"""Bi-directional replication fixtures: a PostgreSQL publisher and a MariaDB and a SQLite subscriber,
each its own database so each has its own replication name, and a sync runner.

The publisher's connection carries the extra ``qualifier = Demo`` so the seed's three-part names
(``Demo.demo.Shippers``) resolve on it.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SESSION_TAG
from tests.support.bidir import Servers
from tests.support.databases import MYSQL_ADMIN, PG_ADMIN, RealDatabase, mysql_admin_connect, pg_admin_connect
from tests.support.jobs import in_process_syncer


@pytest.fixture(scope="session")
def bidir_pub() -> Iterator[RealDatabase]:
    name = f"snaprepl_bpub_{SESSION_TAG}"
    with pg_admin_connect() as conn:
        conn.cursor().execute(f'CREATE DATABASE "{name}"')
    os.environ["AIRFLOW_CONN_BD_PUB"] = (
        f"postgresql://{PG_ADMIN['user']}@{PG_ADMIN['host']}:{PG_ADMIN['port']}/{name}?qualifier=Demo"
    )
    database = RealDatabase("postgres", "bd_pub", name)
    database.run("CREATE SCHEMA demo")
    yield database
    from snaprepl.database.sessions import forget_databases

    forget_databases()
    with pg_admin_connect() as conn:
        conn.cursor().execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def bidir_my() -> Iterator[RealDatabase]:
    name = f"snaprepl_bmy_{SESSION_TAG}"
    with mysql_admin_connect() as conn:
        conn.cursor().execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    os.environ["AIRFLOW_CONN_BD_MY"] = (
        f"mysql://{MYSQL_ADMIN['user']}@{MYSQL_ADMIN['host']}:{MYSQL_ADMIN['port']}/{name}"
    )
    yield RealDatabase("mysql", "bd_my", name)
    from snaprepl.database.sessions import forget_databases

    forget_databases()
    with mysql_admin_connect() as conn:
        conn.cursor().execute(f"DROP DATABASE IF EXISTS `{name}`")


@pytest.fixture(scope="session")
def bidir_lite(session_dir: Path) -> RealDatabase:
    path = session_dir / f"bd_lite_{SESSION_TAG}.db"
    os.environ["AIRFLOW_CONN_BD_LITE"] = f"sqlite:///{path}"
    return RealDatabase("sqlite", "bd_lite", str(path))


@pytest.fixture(scope="session")
def servers(bidir_pub: RealDatabase, bidir_my: RealDatabase, bidir_lite: RealDatabase, catalog: Any) -> Servers:
    """The three databases, registered as replication servers (REPL_SNP_SERVER)."""
    from snaprepl import api

    names = {
        db.conn_id: str(api.repl_snp_server(db.conn_id, catalog=catalog)) for db in (bidir_pub, bidir_my, bidir_lite)
    }
    return Servers(bidir_pub, bidir_my, bidir_lite, names)


Syncer = Callable[..., list[Any]]

#: The seed's own ``items`` table.
SEED_ITEMS_DDL = "create table {table}( item_id integer primary key, name varchar, price decimal )"


@pytest.fixture(scope="session")
def syncer(spark: Any) -> Syncer:
    """Runs sync jobs in this process's SparkSession: the job's own run(), without spark-submit."""
    return in_process_syncer(spark)


@pytest.fixture
def sql(catalog: Any, settings: Any, syncer: Syncer) -> Callable[[str], list[Any]]:
    """Runs statements as ``snaprepl sql`` does, with syncs in this process."""
    from snaprepl.api.script import run_script

    return lambda text: run_script(text, catalog=catalog, settings=settings, syncer=syncer)


@pytest.fixture
def items(servers: Servers, sql: Callable[[str], list[Any]]) -> Callable[..., str]:
    """Publishes a fresh copy of the seed's ``items`` table (created by the seed's own DDL) on the
    publisher, subscribed and loaded on both subscribers; returns the item's name."""

    def make(rows: list[tuple[int, str, str]], resolvers: list[tuple[str, int, str, str | None]] = ()) -> str:
        table = f"items_{uuid.uuid4().hex[:8]}"
        servers.pub.run(SEED_ITEMS_DDL.format(table=table))
        for row in rows:
            servers.pub.run(f"INSERT INTO {table} VALUES (%s, %s, %s)", params=row)
        item = f"{table}@bd_pub"
        statements = [f"REPL_CREATE_SNAPSHOT_PUB('{item}', 2)"]
        for kind, order, klass, column in resolvers:
            extra = f", '{column}'" if column else ""
            statements.append(f"REPL_ADD_SNAPSHOT_CR('{item}', '_cr', '{kind}', {order}, '{klass}'{extra})")
        for db in servers.subscribers:
            statements.append(f"REPL_CREATE_SNAPSHOT_SUB(REPL_SERVER_NAME('{db.conn_id}'), '{item}', 2)")
            statements.append(f"REPL_INIT_SNAPSHOT(REPL_SERVER_NAME('{db.conn_id}'), '{item}', 2)")
        sql("; ".join(statements))
        return table

    return make

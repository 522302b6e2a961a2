"""The SYS_* catalog in the Airflow metadata database: migrations, and reaching it from tasks."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from snaprepl.catalog.location import connection_from_url
from snaprepl.catalog.migrate import head_revision, upgrade
from snaprepl.catalog.models import VERSION_TABLE, metadata
from snaprepl.catalog.store import Catalog
from snaprepl.errors import CatalogUnavailable
from tests.support.databases import PG_ADMIN, pg_admin_connect

CATALOG_TABLES = {
    "SYS_SNAPSHOT",
    "SYS_SNAPSHOT_LOG",
    "SYS_SERVERS",
    "SYS_SNAPSHOT_PUB",
    "SYS_SNAPSHOT_SUB",
    "SYS_SNAPSHOT_CR",
    "SYS_RPLOG",
    "SYS_URPLOG",
    "SYS_SNAPSHOT_CONFLICT",
    "SYS_REPL_HISTORY",
}


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, env={**os.environ, **env}, timeout=600)


def test_airflow_db_migrate_creates_the_catalog_in_sqlite(airflow_home: Path) -> None:
    engine = sa.create_engine(os.environ["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"])
    with engine.connect() as conn:
        tables = set(sa.inspect(conn).get_table_names())
        assert tables >= CATALOG_TABLES
        assert "dag_run" in tables, "Airflow's own tables are beside ours"
        version = conn.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar()
    assert version == head_revision()


def test_migrations_match_the_models(airflow_home: Path) -> None:
    engine = sa.create_engine(os.environ["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"])
    with engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"include_object": lambda o, n, t, r, c: t != "table" or n in metadata.tables}
        )
        assert compare_metadata(context, metadata) == []


def test_airflow_db_migrate_creates_the_catalog_in_postgres(tmp_path: Path) -> None:
    name = f"snaprepl_meta_{uuid.uuid4().hex[:8]}"
    with pg_admin_connect() as conn:
        conn.cursor().execute(f'CREATE DATABASE "{name}"')
    url = f"postgresql+psycopg2://{PG_ADMIN['user']}@{PG_ADMIN['host']}:{PG_ADMIN['port']}/{name}"
    try:
        env = {"AIRFLOW_HOME": str(tmp_path), "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": url}
        migrated = _run([sys.executable, "-m", "airflow", "db", "migrate"], env)
        assert migrated.returncode == 0, migrated.stderr[-2000:]
        engine = sa.create_engine(url)
        with engine.connect() as conn:
            assert set(sa.inspect(conn).get_table_names()) >= CATALOG_TABLES
        engine.dispose()
        status = _run([sys.executable, "-m", "snaprepl", "status", "--json"], env)
        assert status.returncode == 0, status.stderr
        assert f"postgresql database 127.0.0.1:5432/{name}" in status.stdout
    finally:
        with pg_admin_connect() as conn:
            conn.cursor().execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# What an Airflow 3 task or DAG-parsing process looks like: Airflow's supervisor blocks the ORM and
# replaces sql_alchemy_conn with a placeholder after Airflow is imported.
AS_TASK_PROCESS = (
    "import sys, airflow.settings\n"
    "from airflow.sdk.execution_time.supervisor import block_orm_access\n"
    "block_orm_access()\n"
    "from snaprepl.cli import main\n"
    "sys.exit(main(['status', '--no-probe']))\n"
)


def test_where_airflow_hides_the_metadata_database_the_catalog_connection_is_used(airflow_home: Path) -> None:
    real_url = os.environ["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
    refused = _run([sys.executable, "-c", AS_TASK_PROCESS], {})
    assert refused.returncode == 1, refused.stderr
    assert "define connection 'snaprepl_catalog'" in refused.stderr
    allowed = _run([sys.executable, "-c", AS_TASK_PROCESS], {"AIRFLOW_CONN_SNAPREPL_CATALOG": real_url})
    assert allowed.returncode == 0, allowed.stderr
    assert "catalog: sqlite database" in allowed.stdout


def test_an_unmigrated_catalog_says_how_to_migrate_and_upgrade_fixes_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    catalog = Catalog.from_connection(connection_from_url(url, "snaprepl_catalog"))
    try:
        catalog.ensure_ready()
    except CatalogUnavailable as err:
        assert "airflow db migrate" in str(err) and "snaprepl catalog upgrade" in str(err)
    else:
        raise AssertionError("an empty database passed as a catalog")
    upgrade(catalog.engine)
    catalog.ensure_ready()
    assert catalog.logs() == []

"""``snaprepl catalog grant ROLE``: a catalog role that can run replication and read no other secret.

The PostgreSQL test uses a real Airflow metadata database (made by ``airflow db migrate``), so the
``connection`` and ``variable`` tables the role must not read are Airflow's own.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg2
import pymysql
import pytest

from tests.support.databases import MYSQL_ADMIN, PG_ADMIN, RealDatabase, mysql_admin_connect, pg_admin_connect

pytestmark = [pytest.mark.slow]

PASSWORD = "Cat:al%og-pw'1"  # a colon, a percent sign and a quote: none may be taken for syntax


def snaprepl(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "snaprepl", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=600,
    )


@pytest.fixture
def pg_metadata(tmp_path: Path) -> Iterator[dict[str, str]]:
    """An Airflow metadata database on PostgreSQL, with the catalog, and a role name to grant."""
    name = f"snaprepl_meta_{uuid.uuid4().hex[:8]}"
    role = f"snaprepl_cat_{uuid.uuid4().hex[:8]}"
    with pg_admin_connect() as conn:
        conn.cursor().execute(f'CREATE DATABASE "{name}"')
    owner_url = f"postgresql://{PG_ADMIN['user']}@{PG_ADMIN['host']}:{PG_ADMIN['port']}/{name}"
    env = {
        "AIRFLOW_HOME": str(tmp_path),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": owner_url.replace("postgresql://", "postgresql+psycopg2://"),
        "AIRFLOW_CONN_SNAPREPL_CATALOG": owner_url,
        "SNAPREPL_TEST_CATALOG_PW": PASSWORD,
    }
    try:
        migrated = subprocess.run(
            [sys.executable, "-m", "airflow", "db", "migrate"],
            capture_output=True,
            text=True,
            env={**os.environ, **env},
            timeout=600,
        )
        assert migrated.returncode == 0, migrated.stderr[-2000:]
        yield {**env, "name": name, "role": role}
    finally:
        with pg_admin_connect() as conn:
            cursor = conn.cursor()
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            cursor.execute(f'DROP ROLE IF EXISTS "{role}"')


def _as_role(meta: dict[str, str]) -> dict[str, str]:
    """The environment of a task whose catalog connection is the granted role."""
    url = f"postgresql://{meta['role']}:{PASSWORD.replace('%', '%25').replace(':', '%3A').replace(chr(39), '%27')}"
    url += f"@{PG_ADMIN['host']}:{PG_ADMIN['port']}/{meta['name']}"
    return {k: v for k, v in meta.items() if k not in {"name", "role"}} | {"AIRFLOW_CONN_SNAPREPL_CATALOG": url}


def test_the_granted_role_runs_refreshes_and_cannot_read_airflow_secrets(
    pg_metadata: dict[str, str], pg_db: RealDatabase, unique_name: str
) -> None:
    owner_env = {k: v for k, v in pg_metadata.items() if k not in {"name", "role"}}
    role = pg_metadata["role"]
    granted = snaprepl("catalog", "grant", role, "--password-env", "SNAPREPL_TEST_CATALOG_PW", env=owner_env)
    assert granted.returncode == 0, granted.stderr
    assert f"role {role} created, password set" in granted.stdout
    assert PASSWORD not in granted.stdout + granted.stderr

    with pg_admin_connect(pg_metadata["name"]) as conn:
        cursor = conn.cursor()
        cursor.execute("SELECT rolpassword FROM pg_authid WHERE rolname = %s", (role,))
        stored = cursor.fetchone()[0]
        cursor.execute("INSERT INTO variable (key, val, is_encrypted) VALUES ('api_key', 'top-secret', false)")
    assert stored.startswith(("SCRAM-SHA-256$", "md5")), "the password reached the server hashed"

    with psycopg2.connect(
        host=PG_ADMIN["host"], port=PG_ADMIN["port"], user=role, password=PASSWORD, dbname=pg_metadata["name"]
    ) as conn:
        cursor = conn.cursor()
        cursor.execute('SELECT COUNT(*) FROM "SYS_SNAPSHOT"')
        for secret_table in ("connection", "variable"):
            with pytest.raises(psycopg2.errors.InsufficientPrivilege):
                cursor.execute(f"SELECT * FROM {secret_table}")
            conn.rollback()
        with pytest.raises(psycopg2.errors.InsufficientPrivilege):
            cursor.execute('DROP TABLE "SYS_SNAPSHOT"')

    src, dest = f"{unique_name}_s", f"{unique_name}_d"
    pg_db.run(f"CREATE TABLE {src} (id int PRIMARY KEY, v text)", f"INSERT INTO {src} VALUES (1, 'a'), (2, 'b')")
    as_role = _as_role(pg_metadata)
    created = snaprepl(
        "sql",
        f"CREATE SNAPSHOT LOG FOR {src}@{pg_db.conn_id}; "
        f"CREATE SNAPSHOT {dest}@{pg_db.conn_id} FROM {src}@{pg_db.conn_id}",
        env=as_role,
    )
    assert created.returncode == 0, created.stderr[-3000:]
    pg_db.run(f"UPDATE {src} SET v = 'changed' WHERE id = 1", f"INSERT INTO {src} VALUES (3, 'c')")
    refreshed = snaprepl("sql", f"UPDATE SNAPSHOT {dest}@{pg_db.conn_id}", env=as_role)
    assert refreshed.returncode == 0, refreshed.stderr[-3000:]
    assert pg_db.rows(f"SELECT id, v FROM {dest} ORDER BY id") == [(1, "changed"), (2, "b"), (3, "c")]
    status = snaprepl("status", "--json", "--no-probe", env=as_role)
    assert status.returncode == 0, status.stderr
    assert f"{dest}@{pg_db.conn_id}" in status.stdout
    with pg_admin_connect(pg_metadata["name"]) as conn:
        cursor = conn.cursor()
        cursor.execute('SELECT "SN_LAST_STATUS" FROM "SYS_SNAPSHOT" WHERE "SN_NAME" LIKE %s', (f"%{dest}%",))
        assert cursor.fetchall() == [("succeeded",)], "the refresh recorded its outcome through the role"


@pytest.fixture
def mysql_catalog() -> Iterator[dict[str, str]]:
    name = f"snaprepl_cat_{uuid.uuid4().hex[:8]}"
    user = f"snaprepl_cat_{uuid.uuid4().hex[:8]}"
    with mysql_admin_connect() as conn:
        conn.cursor().execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    url = f"mysql://{MYSQL_ADMIN['user']}@{MYSQL_ADMIN['host']}:{MYSQL_ADMIN['port']}/{name}"
    try:
        yield {"name": name, "user": user, "AIRFLOW_CONN_SNAPREPL_CATALOG": url, "SNAPREPL_TEST_CATALOG_PW": PASSWORD}
    finally:
        with mysql_admin_connect() as conn:
            cursor = conn.cursor()
            cursor.execute(f"DROP DATABASE IF EXISTS `{name}`")
            cursor.execute(f"DROP USER IF EXISTS '{user}'@'%'")


def test_a_mariadb_catalog_role_reads_the_catalog_and_nothing_beside_it(mysql_catalog: dict[str, str]) -> None:
    env = {k: v for k, v in mysql_catalog.items() if k not in {"name", "user"}}
    assert snaprepl("catalog", "upgrade", env=env).returncode == 0
    with mysql_admin_connect(mysql_catalog["name"]) as conn:
        # A table beside the catalog, as Airflow's connection table would be in a shared database.
        conn.cursor().execute("CREATE TABLE connection (conn_id varchar(250), password text)")
        conn.cursor().execute("INSERT INTO connection VALUES ('prod', 'hunter2')")
        conn.commit()
    user = mysql_catalog["user"]
    granted = snaprepl("catalog", "grant", user, "--password-env", "SNAPREPL_TEST_CATALOG_PW", env=env)
    assert granted.returncode == 0, granted.stderr
    assert PASSWORD not in granted.stdout + granted.stderr
    again = snaprepl("catalog", "grant", user, env=env)
    assert again.returncode == 0 and f"role {user} updated:" in again.stdout, "granting is idempotent"

    conn = pymysql.connect(
        host=MYSQL_ADMIN["host"], port=MYSQL_ADMIN["port"], user=user, password=PASSWORD, database=mysql_catalog["name"]
    )
    try:
        cursor = conn.cursor()
        cursor.execute("SELECT COUNT(*) FROM SYS_SNAPSHOT")
        with pytest.raises(pymysql.err.OperationalError, match="denied"):
            cursor.execute("SELECT * FROM connection")
    finally:
        conn.close()
    quoted = PASSWORD.replace("%", "%25").replace(":", "%3A").replace("'", "%27")
    role_url = f"mysql://{user}:{quoted}@{MYSQL_ADMIN['host']}:{MYSQL_ADMIN['port']}/{mysql_catalog['name']}"
    status = snaprepl("status", "--no-probe", env={**env, "AIRFLOW_CONN_SNAPREPL_CATALOG": role_url})
    assert status.returncode == 0, status.stderr


@pytest.mark.parametrize(
    ("role", "fragment"),
    [("x; DROP TABLE connection", "is not a role name"), ("ok_role", "has no roles to grant")],
)
def test_bad_roles_and_sqlite_catalogs_are_refused_in_one_line(role: str, fragment: str, tmp_path: Path) -> None:
    env = {"AIRFLOW_CONN_SNAPREPL_CATALOG": f"sqlite:///{tmp_path / 'catalog.db'}"}
    assert snaprepl("catalog", "upgrade", env=env).returncode == 0
    refused = snaprepl("catalog", "grant", role, env=env)
    assert refused.returncode == 1
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("snaprepl: error: ") and fragment in lines[0], refused.stderr

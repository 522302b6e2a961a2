"""Fixtures of the integration tests: real PostgreSQL, MariaDB and SQLite databases, a real Airflow home, Spark.

Every session gets uniquely named databases (dropped at the end) and its own AIRFLOW_HOME whose
SQLite metadata database is created by ``airflow db migrate``, which also creates the snaprepl
catalog through the external DB manager. Every test under tests/integration is marked ``integration``;
when any is selected, PostgreSQL and MariaDB must be reachable: a missing service fails the session
with instructions, it never skips tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import AIRFLOW_HOME, SESSION_TAG
from tests.support.databases import (
    MYSQL_ADMIN,
    PG_ADMIN,
    RealDatabase,
    mysql_admin_connect,
    pg_admin_connect,
    require_services,
)

INTEGRATION_DIR = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks every test under tests/integration ``integration`` (before ``-m`` deselects)."""
    for item in items:
        if item.path.is_relative_to(INTEGRATION_DIR):
            item.add_marker(pytest.mark.integration)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Fails the session with instructions when integration tests are to run without their databases."""
    option = session.config.option
    if option.collectonly or option.setupplan:
        return
    if not any(item.get_closest_marker("integration") for item in session.items):
        return
    problem = require_services()
    if problem:
        pytest.exit(f"snaprepl integration tests need real databases: {problem}", returncode=3)


@pytest.fixture(scope="session")
def airflow_home() -> Path:
    """An Airflow home whose metadata database (with the snaprepl catalog) was made by `airflow db migrate`."""
    result = subprocess.run(
        [sys.executable, "-m", "airflow", "db", "migrate"], capture_output=True, text=True, env=os.environ.copy()
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return AIRFLOW_HOME


@pytest.fixture(scope="session")
def catalog(airflow_home: Path) -> Iterator[object]:
    from snaprepl.catalog.store import Catalog, reset_open_catalog
    from snaprepl.settings import Settings

    reset_open_catalog()
    opened = Catalog.open(Settings.load())
    opened.ensure_ready()
    yield opened
    reset_open_catalog()


@pytest.fixture(scope="session")
def settings() -> object:
    from snaprepl.settings import Settings

    return Settings.load()


@pytest.fixture(scope="session")
def pg_db() -> Iterator[RealDatabase]:
    name = f"snaprepl_test_{SESSION_TAG}"
    with pg_admin_connect() as conn:
        conn.cursor().execute(f'CREATE DATABASE "{name}"')
    conn_id = "test_pg"
    os.environ[f"AIRFLOW_CONN_{conn_id.upper()}"] = (
        f"postgresql://{PG_ADMIN['user']}@{PG_ADMIN['host']}:{PG_ADMIN['port']}/{name}"
    )
    yield RealDatabase("postgres", conn_id, name)
    from snaprepl.database.sessions import forget_databases

    forget_databases()
    with pg_admin_connect() as conn:
        conn.cursor().execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def mysql_db() -> Iterator[RealDatabase]:
    name = f"snaprepl_test_{SESSION_TAG}"
    with mysql_admin_connect() as conn:
        conn.cursor().execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    conn_id = "test_my"
    os.environ[f"AIRFLOW_CONN_{conn_id.upper()}"] = (
        f"mysql://{MYSQL_ADMIN['user']}@{MYSQL_ADMIN['host']}:{MYSQL_ADMIN['port']}/{name}"
    )
    yield RealDatabase("mysql", conn_id, name)
    from snaprepl.database.sessions import forget_databases

    forget_databases()
    with mysql_admin_connect() as conn:
        conn.cursor().execute(f"DROP DATABASE IF EXISTS `{name}`")


@pytest.fixture(scope="session")
def sqlite_db(session_dir: Path) -> RealDatabase:
    path = session_dir / "source.db"
    conn_id = "test_lite"
    os.environ[f"AIRFLOW_CONN_{conn_id.upper()}"] = f"sqlite:///{path}"
    return RealDatabase("sqlite", conn_id, str(path))


@pytest.fixture(params=["postgres", "mysql", "sqlite"])
def real_db(request: pytest.FixtureRequest) -> RealDatabase:
    """Each real dialect in turn."""
    return request.getfixturevalue({"postgres": "pg_db", "mysql": "mysql_db", "sqlite": "sqlite_db"}[request.param])


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """One SparkSession (local mode, the JDBC jars on its class path) for every Spark test."""
    from snaprepl.common.jars import jdbc_jars
    from snaprepl.spark.session import build_session

    # Python workers (Arrow batches to COPY) run this interpreter, whatever started pytest.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    jars = [str(j) for j in jdbc_jars()]
    session = build_session(
        "snaprepl-tests",
        "local[2]",
        {"spark.jars": ",".join(jars), "spark.driver.extraClassPath": ":".join(jars), "spark.ui.enabled": "false"},
    )
    yield session
    session.stop()


@pytest.fixture(scope="session")
def refresher(spark: object) -> object:
    """Runs refreshes in this process's SparkSession: the job's own run(), without spark-submit."""
    from snaprepl.refresh.runner import run_refresh

    return lambda request, catalog, settings: run_refresh(spark, request, catalog=catalog)


@pytest.fixture
def unique_name() -> str:
    return f"t_{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="session")
def connect_server(session_dir: Path) -> Iterator[dict[str, str]]:
    """One Spark Connect server (``snaprepl spark-server``'s code) on a free loopback port for the
    whole session, stopped at its end; the environment that points snaprepl's jobs at it."""
    import socket

    from snaprepl.submit import server

    state = session_dir / "state"
    os.environ["SNAPREPL_STATE_DIR"] = str(state)  # Connect slots, for this process and its children
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    info = server.start(port, master="local[2]", directory=state / "connect-server")
    try:
        conn = {"conn_type": "spark_connect", "host": "localhost", "port": port, "password": info.token}
        yield {"AIRFLOW_CONN_SNAPREPL_SPARK": json.dumps(conn), "SNAPREPL_STATE_DIR": str(state), "port": str(port)}
    finally:
        server.stop(state / "connect-server")


@pytest.fixture(params=["submit", "connect"])
def spark_env(request: pytest.FixtureRequest) -> dict[str, str]:
    """The environment of a snaprepl command in each Spark mode: spark-submit, or the session's
    Connect server (its Spark connection of type spark_connect)."""
    if request.param == "submit":
        return {}
    env = dict(request.getfixturevalue("connect_server"))
    env.pop("port")
    return env

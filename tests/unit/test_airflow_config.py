"""What snaprepl reads of Airflow's configuration and connections without importing Airflow is what
Airflow itself reads: checked against Airflow's own ``conf`` and ``Connection``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from snaprepl.airflow.provider_info import get_provider_info
from snaprepl.catalog.migrate import _alembic_head_revision, head_revision
from snaprepl.connections.uris import parse_connection_value

URIS = [
    "postgresql://user:p%40ss%2Fw0rd@db.example.com:5433/the%20db?sslmode=verify-full&connect_timeout=10",
    "postgres://u@127.0.0.1/db?qualifier=Demo",
    "mysql://root@127.0.0.1:3306/snaprepl",
    "sqlite:////tmp/some/file.db",
    "sqlite:///relative.db",
    "jdbc://?__extra__=%7B%22driver_class%22%3A+%22org.h2.Driver%22%7D",
    "my-type://Host.Example.COM:1/schema?a=1&b=true&c=&d=%5B1%2C2%5D",
    "spark://spark%3A%2F%2Fmaster:7077",
    "http://https://example.com/path",
    '{"conn_type": "postgresql", "host": "h", "port": "5432", "login": "l", "password": "p", "schema": "s"}',
    '{"conn_type": "mysql", "host": "h", "extra": {"charset": "utf8mb4"}}',
]


@pytest.mark.parametrize("value", URIS)
def test_connection_values_parse_as_airflow_parses_them(value: str) -> None:
    from airflow.models.connection import Connection

    airflow = Connection.from_json(value, conn_id="x") if value.startswith("{") else Connection("x", uri=value)
    ours = parse_connection_value(value)

    assert ours is not None
    expected = {f: getattr(airflow, f) for f in ("conn_type", "host", "port", "login", "password", "schema")}
    assert {f: ours[f] for f in expected} == expected
    assert ours["extra_dejson"] == airflow.extra_dejson


def test_options_read_without_airflow_are_airflows_own(tmp_path) -> None:
    (tmp_path / "airflow.cfg").write_text(
        "[database]\nsql_alchemy_conn = postgresql://a@b/c\n"
        "[snaprepl]\nrefresh_commit_rows = 123\nspark_master = local[2]\n"
        "[secrets]\nbackend =\n"
    )
    options = [("database", "sql_alchemy_conn"), ("snaprepl", "refresh_commit_rows"), ("snaprepl", "spark_master"),
               ("snaprepl", "pool"), ("snaprepl", "lock_timeout_seconds"), ("secrets", "backend")]  # fmt: skip
    code = (
        "import json, sys\n"
        "from snaprepl.common.airflow_config import airflow_option\n"
        f"options = {options!r}\n"
        "plain = [airflow_option(s, k) for s, k in options]\n"
        "assert 'airflow' not in sys.modules\n"
        "from airflow.configuration import conf\n"
        "print(json.dumps([plain, [conf.get(s, k, fallback=None) for s, k in options]]))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW__")}
    env.update(AIRFLOW_HOME=str(tmp_path), AIRFLOW__SNAPREPL__LOCK_TIMEOUT_SECONDS="9")
    env.pop("AIRFLOW_CONFIG", None)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)

    assert result.returncode == 0, result.stderr[-4000:]
    plain, airflow = json.loads(result.stdout.splitlines()[-1])
    # An unset [snaprepl] option reads as None plainly and as the provider's default (Settings' own
    # default, snaprepl.airflow.provider_info) in Airflow: Settings.load takes both for its default.
    defaults = get_provider_info()["config"]["snaprepl"]["options"]
    assert airflow[3] == defaults["pool"]["default"] == "" and plain[3] is None
    assert plain[:3] + plain[4:] == airflow[:3] + airflow[4:]
    assert plain[:2] == ["postgresql://a@b/c", "123"] and plain[4] == "9"


def test_the_catalog_head_revision_read_from_the_files_is_alembics() -> None:
    assert head_revision() == _alembic_head_revision()

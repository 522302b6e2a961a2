"""The ``sc://`` URL of a Spark Connect connection is built as the Spark provider's hook builds it, and
without importing Airflow when the connection is in the environment (Airflow's import is most of a
connect-mode command's fixed cost)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from snaprepl.connections.lookup import ConnectionInfo
from snaprepl.connections.uris import parse_connection_value
from snaprepl.errors import SnapreplError
from snaprepl.spark.connect import spark_connect_url

VALUES = [
    {"conn_type": "spark_connect", "host": "localhost", "port": 15002},
    {"conn_type": "spark_connect", "host": "localhost", "port": 15002, "password": "t/k+n=;x y%"},
    {"conn_type": "spark_connect", "host": "h.example.com", "login": "me@x", "password": "tok"},
    {"conn_type": "spark_connect", "host": "sc://h.example.com", "port": 443, "extra": {"use_ssl": True}},
    {"conn_type": "spark_connect", "host": "h", "port": 1, "extra": {"use_ssl": "false", "other": 1}},
    "spark-connect://u:p%40ss@h.example.com:15003",
]


@pytest.mark.parametrize("value", VALUES)
def test_the_url_is_the_spark_providers(value: dict | str, monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow.providers.apache.spark.hooks.spark_connect import SparkConnectHook

    text = value if isinstance(value, str) else json.dumps(value)
    fields = parse_connection_value(text)
    assert fields is not None
    ours = spark_connect_url(ConnectionInfo.from_airflow_fields("sc_url_test", fields))
    monkeypatch.setenv("AIRFLOW_CONN_SC_URL_TEST", text)
    assert ours == SparkConnectHook("sc_url_test").get_connection_url()


def test_a_connection_without_host_or_with_a_path_is_a_clear_error() -> None:
    with pytest.raises(SnapreplError, match="has no host"):
        spark_connect_url(ConnectionInfo(conn_id="s", conn_type="spark_connect"))
    with pytest.raises(SnapreplError, match="has a path"):
        spark_connect_url(ConnectionInfo(conn_id="s", conn_type="spark_connect", host="sc://h:1/db"))


def test_the_url_of_an_environment_connection_loads_no_airflow() -> None:
    conn = {"conn_type": "spark_connect", "host": "localhost", "port": 15002, "password": "tok"}
    code = (
        "import sys\n"
        "from snaprepl.spark.connect import connection_url\n"
        "print(connection_url('snaprepl_spark'))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'airflow'))\n"
    )
    env = {**os.environ, "AIRFLOW_CONN_SNAPREPL_SPARK": json.dumps(conn)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.splitlines() == ["sc://localhost:15002/;token=tok", "[]"]

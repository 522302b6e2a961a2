"""Which Spark mode a job runs in, strictly parsed, and the local Connect server's command line."""

from __future__ import annotations

import json

import pytest

from snaprepl.errors import InvalidArgument, SnapreplError
from snaprepl.settings import Settings
from snaprepl.submit import server
from snaprepl.submit.submission import spark_mode


@pytest.fixture(autouse=True)
def _no_spark_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AIRFLOW_CONN_SNAPREPL_SPARK", "AIRFLOW__SNAPREPL__SPARK_MODE", "AIRFLOW__SNAPREPL__CONNECT_FALLBACK"):
        monkeypatch.delenv(name, raising=False)


def test_submit_is_the_default_and_spark_mode_is_parsed_strictly(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings.load().spark_mode == "submit"
    assert spark_mode(Settings.load()) == "submit"
    for wrong in ("Connect", " connect", "remote", "1"):
        monkeypatch.setenv("AIRFLOW__SNAPREPL__SPARK_MODE", wrong)
        with pytest.raises(InvalidArgument, match="spark_mode"):
            Settings.load()
    monkeypatch.setenv("AIRFLOW__SNAPREPL__CONNECT_FALLBACK", "no")
    monkeypatch.setenv("AIRFLOW__SNAPREPL__SPARK_MODE", "connect")
    with pytest.raises(InvalidArgument, match="connect_fallback"):
        Settings.load()


def test_a_spark_connect_connection_means_connect_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_SNAPREPL_SPARK", json.dumps({"conn_type": "spark_connect", "host": "localhost"}))
    assert spark_mode(Settings()) == "connect"
    monkeypatch.setenv("AIRFLOW_CONN_SNAPREPL_SPARK", json.dumps({"conn_type": "spark", "host": "local[2]"}))
    assert spark_mode(Settings()) == "submit"


def test_connect_mode_without_a_spark_connect_connection_says_how_to_get_one() -> None:
    with pytest.raises(SnapreplError) as raised:
        spark_mode(Settings(spark_mode="connect"))
    assert "'snaprepl_spark' of type spark_connect (it is not defined)" in raised.value.message
    assert "snaprepl spark-server start" in str(raised.value.hint)
    assert spark_mode(Settings(spark_mode="connect", connect_fallback=True)) == "submit"


def test_the_servers_command_line_holds_no_token_and_the_jars_twice() -> None:
    args = server.command(15123, "spark://h:7077", "2g")
    text = " ".join(args)
    assert "SparkConnectServer" in text and "--master spark://h:7077" in text and "--driver-memory 2g" in text
    assert "spark.connect.grpc.binding.port=15123" in text and "spark.connect.grpc.binding.address=127.0.0.1" in text
    for option in ("--jars", "--driver-class-path"):  # py4j's DriverManager sees the driver class path only
        assert "postgresql.jar" in args[args.index(option) + 1]
    assert "token" not in text.lower()
    info = server.ServerInfo(pid=1, port=15123, log=server.Path("/x"), master="local[*]", token="s3cret")
    line = info.connection("my_spark")
    assert line.startswith("AIRFLOW_CONN_MY_SPARK='")
    conn = json.loads(line.split("=", 1)[1].strip("'"))
    assert conn == {"conn_type": "spark_connect", "host": "localhost", "port": 15123, "password": "s3cret"}

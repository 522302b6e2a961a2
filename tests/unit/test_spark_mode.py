"""Which Spark mode a job runs in, strictly parsed, and the local Connect server's command line."""

from __future__ import annotations

import json
import os

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


def _prepared(settings: Settings, spark_conn: str | None):
    from pathlib import Path

    from snaprepl.submit.submission import prepare

    return prepare(
        job="refresh_snapshot", module_file=Path("job.py"), module="snaprepl.refresh.job", args=["--x"],
        connections=[], settings=settings, run_id="r1", name="n", spark_conn=spark_conn,
    )  # fmt: skip


def test_a_snapshots_spark_connection_overrides_the_settings_and_its_type_decides_the_mode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import socket

    from snaprepl.spark.connect import ConnectServerDown

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens there once the probe is closed
    monkeypatch.setenv("AIRFLOW_CONN_SNAPREPL_SPARK", json.dumps({"conn_type": "spark", "host": "local[2]"}))
    down = {"conn_type": "spark_connect", "host": "localhost", "port": port}
    monkeypatch.setenv("AIRFLOW_CONN_PER_DAG", json.dumps(down))
    submitted = _prepared(Settings(), None)
    try:
        assert (submitted.mode, submitted.conn_id) == ("submit", "snaprepl_spark")
    finally:
        submitted.cleanup()
    with pytest.raises(ConnectServerDown) as raised:  # connect mode: the snapshot's server, which is down
        _prepared(Settings(), "per_dag")
    assert f"connection 'per_dag' (localhost:{port}) does not answer" in raised.value.message
    fallback = _prepared(Settings(connect_fallback=True), "per_dag")
    try:  # spark-submit with <conn>_submit, defined as spark_master since it is not
        assert (fallback.mode, fallback.conn_id) == ("submit", "per_dag_submit")
    finally:
        fallback.cleanup()
        os.environ.pop("AIRFLOW_CONN_PER_DAG_SUBMIT", None)


def test_a_spark_connection_for_a_snapshot_must_exist_and_be_a_spark_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from snaprepl.ops.spark_conns import SparkConnSet
    from snaprepl.submit.submission import check_spark_connection

    monkeypatch.setenv("AIRFLOW_CONN_S1", json.dumps({"conn_type": "spark", "host": "local[2]"}))
    monkeypatch.setenv("AIRFLOW_CONN_S2", json.dumps({"conn_type": "spark_connect", "host": "localhost"}))
    monkeypatch.setenv("AIRFLOW_CONN_PG", "postgresql://u@localhost/db")
    assert (check_spark_connection("s1"), check_spark_connection("s2")) == ("submit", "connect")
    with pytest.raises(SnapreplError, match="'pg' is of type postgres, not a Spark connection"):
        check_spark_connection("pg")
    with pytest.raises(SnapreplError, match="there is no Spark connection 'nowhere'"):
        check_spark_connection("nowhere")
    assert str(SparkConnSet("snapshot a@b", "s2", "connect")) == "snapshot a@b: Spark connection s2 (connect mode)"
    assert "spark_conn_id" in str(SparkConnSet("snapshot a@b", None, None))


def test_the_supervisor_restarts_a_server_that_was_up_and_gives_up_on_one_that_keeps_dying(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import signal
    import sys

    from snaprepl.submit import supervisor

    monkeypatch.setattr(supervisor, "STEADY_SECONDS", 0.3)
    monkeypatch.setattr(supervisor, "MAX_RESTARTS", 2)
    monkeypatch.setattr(signal, "signal", lambda *_: None)  # pytest's own SIGTERM handling stays
    dies_later = [sys.executable, "-c", "import time; time.sleep(0.6); raise SystemExit(3)"]
    assert supervisor.supervise(tmp_path, dies_later) == 3
    assert json.loads((tmp_path / supervisor.PROCESS_FILE).read_text())["restarts"] == 2, "restarted twice"
    monkeypatch.setattr(supervisor, "STEADY_SECONDS", 30)
    dies_at_once = [sys.executable, "-c", "raise SystemExit(4)"]
    assert supervisor.supervise(tmp_path, dies_at_once) == 4
    assert json.loads((tmp_path / supervisor.PROCESS_FILE).read_text())["restarts"] == 0, "a failed start is final"

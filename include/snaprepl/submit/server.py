"""``snaprepl spark-server``: a local Spark Connect server for ``connect`` mode.

``start`` runs pyspark's own ``spark-submit --class org.apache.spark.sql.connect.service.SparkConnectServer``
(pip's pyspark has no ``start-connect-server.sh``) in a session of its own, listening on loopback,
with the JDBC jars on ``--jars`` and ``--driver-class-path`` and snaprepl's Spark settings. Its
Python workers run this Python with snaprepl importable (jobs ship closures such as the COPY writer).
Clients must present a token: it reaches the server through its environment
(``SPARK_CONNECT_AUTHENTICATE_TOKEN``, which ``spark.connect.authenticate.token`` defaults to), never
its command line, and is printed once, in the Airflow connection to define. The server's pid and log
are in the state directory (``$SNAPREPL_STATE_DIR``, see :func:`snaprepl.spark.connect.state_dir`).

The server runs under a supervisor (:mod:`snaprepl.submit.supervisor`) that starts it again, on the
same port with the same token, when it dies after it was up; ``status`` says how often it did.

Static Spark settings (``--master``, driver memory, jars, executor settings) are the server's: they
are given here, not per job.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from snaprepl.common.jars import jdbc_jars
from snaprepl.errors import SnapreplError
from snaprepl.spark import lifeline
from snaprepl.spark.connect import state_dir
from snaprepl.spark.session import SPARK_CONF
from snaprepl.submit import supervisor
from snaprepl.submit.submission import job_python_path, spark_binary, spark_home

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
TOKEN_ENV = "SPARK_CONNECT_AUTHENTICATE_TOKEN"
DEFAULT_PORT = 15002


@dataclass(frozen=True)
class ServerInfo:
    """A started server: where it listens, its process, its log, and (at start only) its token."""

    pid: int
    port: int
    log: Path
    master: str
    token: str | None = None
    server_pid: int | None = None
    restarts: int = 0

    def connection(self, conn_id: str = "snaprepl_spark") -> str:
        """The Airflow connection to define for it (``localhost``: pyspark sends a token over plain
        loopback only to that host name)."""
        value = {"conn_type": "spark_connect", "host": "localhost", "port": self.port}
        if self.token:
            value["password"] = self.token
        env = conn_id.upper().replace("-", "_").replace(".", "_")
        return f"AIRFLOW_CONN_{env}='{json.dumps(value)}'"


def server_dir(name: str = "connect-server") -> Path:
    directory = state_dir() / name
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    return directory


def command(port: int, master: str, driver_memory: str, ui_port: int | None = None) -> list[str]:
    """The server's spark-submit command line: no secret on it. ``ui_port``: serve Spark's web UI
    (and its REST API of jobs) on that port; none by default."""
    jars = [str(j) for j in jdbc_jars()]
    ui = {"spark.ui.enabled": "true", "spark.ui.port": str(ui_port)} if ui_port else {"spark.ui.enabled": "false"}
    conf = {
        **SPARK_CONF,
        **ui,
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
    }
    args = [spark_binary(), "--class", SERVER_CLASS, "--name", "snaprepl-spark-connect", "--master", master]
    args += ["--jars", ",".join(jars), "--driver-class-path", ":".join(jars), "--driver-memory", driver_memory]
    for key, value in conf.items():
        args += ["--conf", f"{key}={value}"]
    return args


def answers(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something listens on ``host:port``."""
    try:
        socket.create_connection((host, port), timeout=2).close()
    except OSError:
        return False
    return True


def running(directory: Path | None = None) -> ServerInfo | None:
    """The server this state directory's pid file names, if it still runs."""
    try:
        data = json.loads(((directory or server_dir()) / "server.json").read_text())
    except (FileNotFoundError, ValueError):
        return None
    if not lifeline.running(int(data["pid"]), str(data["start"])):
        return None
    try:
        process = json.loads(((directory or server_dir()) / supervisor.PROCESS_FILE).read_text())
    except (FileNotFoundError, ValueError):
        process = {}
    return ServerInfo(
        pid=int(data["pid"]), port=int(data["port"]), log=Path(data["log"]), master=data["master"],
        server_pid=process.get("server_pid"), restarts=int(process.get("restarts") or 0),
    )  # fmt: skip


def died(directory: Path | None = None) -> int | None:
    """The pid of the server this state directory's pid file names, if it died (was not stopped)."""
    try:
        data = json.loads(((directory or server_dir()) / "server.json").read_text())
    except (FileNotFoundError, ValueError):
        return None
    return None if lifeline.running(int(data["pid"]), str(data["start"])) else int(data["pid"])


def start(
    port: int = DEFAULT_PORT,
    *,
    master: str = "local[*]",
    driver_memory: str = "1g",
    directory: Path | None = None,
    timeout: float = 180,
    ui_port: int | None = None,
) -> ServerInfo:
    """Start a Connect server on ``127.0.0.1:port`` and wait until it answers.

    :raises SnapreplError: one runs already, the port is taken, or the server died starting (its log's end).
    """
    directory = directory or server_dir()
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    if (found := running(directory)) is not None:
        raise SnapreplError(f"a Spark Connect server runs already (pid {found.pid}, port {found.port})")
    if answers(port):
        raise SnapreplError(f"port {port} is taken", "choose another with --port")
    token = secrets.token_urlsafe(32)
    log = directory / "server.log"
    env = {
        **os.environ,
        "SPARK_HOME": spark_home(),
        "PYSPARK_PYTHON": sys.executable,
        "PYTHONPATH": job_python_path(),  # the Python workers import snaprepl (the jobs' closures)
        TOKEN_ENV: token,
    }
    (directory / supervisor.PROCESS_FILE).unlink(missing_ok=True)
    supervised = [sys.executable, "-m", "snaprepl.submit.supervisor", str(directory), "--"]
    with log.open("ab") as out:
        process = subprocess.Popen(
            [*supervised, *command(port, master, driver_memory, ui_port)], env=env, stdout=out,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, cwd=directory,
        )  # fmt: skip
    info = ServerInfo(pid=process.pid, port=port, log=log, master=master, token=token)
    record = {"pid": process.pid, "start": lifeline.process_start(process.pid), "port": port}
    (directory / "server.json").write_text(json.dumps({**record, "log": str(log), "master": master}))
    deadline = time.monotonic() + timeout
    while not answers(port):
        if process.poll() is not None or time.monotonic() > deadline:
            stop(directory)
            tail = log.read_text(errors="replace").strip().splitlines()[-5:]
            raise SnapreplError(f"the Spark Connect server did not start: {' | '.join(tail)}", f"its log: {log}")
        time.sleep(0.5)
    return info


def stop(directory: Path | None = None, *, timeout: float = 30) -> ServerInfo | None:
    """Stop the server and every process it started (its Python workers too); the one stopped."""
    directory = directory or server_dir()
    info = running(directory)
    if info is not None:
        group = _descendants(info.pid) | {info.pid}
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(info.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while any(_alive(p) for p in group) and time.monotonic() < deadline:
            time.sleep(0.2)
        for pid in group:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        lifeline.kill_group(info.pid)
    (directory / "server.json").unlink(missing_ok=True)
    (directory / supervisor.PROCESS_FILE).unlink(missing_ok=True)
    return info


def _alive(pid: int) -> bool:
    return lifeline.process_start(pid) is not None


def _descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (from /proc), e.g. Python workers that left its process group."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found

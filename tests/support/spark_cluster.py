"""A real Spark standalone cluster on loopback: one master and its workers, from pyspark's own jars.

The daemons run ``$SPARK_HOME/bin/spark-class org.apache.spark.deploy.master.Master`` / ``...Worker``
(pyspark ships no ``sbin`` start scripts that work without a Spark distribution's layout), each on free
ports, each worker with one core and a modest memory. Executors inherit the workers' environment:
this interpreter as ``PYSPARK_PYTHON`` and this test run's ``PYTHONPATH``, so the Python code Spark
tasks run (e.g. the COPY writer of ``dialects/postgres_copy.py``) imports the snaprepl under test.
The JDBC driver jars reach executors from the driver (``--jars``, served by the driver's file server).

Clients (spark-submit, a Spark Connect server) get :meth:`SparkCluster.client_env`: the master as the
Spark connection, the driver on loopback, and a ``SPARK_CONF_DIR`` whose ``spark-defaults.conf``
writes event logs (which executor ran which task) and holds tasks back until every executor has
registered, so a read split in two lands on both workers.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snaprepl.submit.submission import job_python_path, spark_home
from tests.support.processes import alive, descendants, kill_quietly, wait_for

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
LOOPBACK = "127.0.0.1"


def free_port() -> int:
    """A TCP port free on loopback now (the daemon binds it a moment later)."""
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return int(probe.getsockname()[1])


def get_json(url: str, timeout: float = 5.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.loads(response.read())


@dataclass(frozen=True)
class SparkCluster:
    """A running cluster: the master's ``spark://`` URL, its web UI and the workers' web UIs."""

    master_url: str
    webui: str
    worker_webuis: tuple[str, ...]
    directory: Path

    @property
    def event_log_dir(self) -> Path:
        return self.directory / "events"

    @property
    def conf_dir(self) -> Path:
        return self.directory / "client-conf"

    def status(self) -> dict[str, Any]:
        """The master's JSON status (workers, active and completed applications)."""
        result: dict[str, Any] = get_json(f"{self.webui}/json/")
        return result

    def worker_status(self, webui: str) -> dict[str, Any]:
        """A worker's JSON status (its running and finished executors, with their application ids)."""
        result: dict[str, Any] = get_json(f"{webui}/json/")
        return result

    def executors_by_worker(self, app_id: str) -> dict[str, set[str]]:
        """Worker id -> ids of the executors application ``app_id`` had there (running or finished)."""
        found: dict[str, set[str]] = {}
        for webui in self.worker_webuis:
            state = self.worker_status(webui)
            executors = [*state["executors"], *state["finishedexecutors"]]
            found[state["id"]] = {str(e["id"]) for e in executors if e["appid"] == app_id}
        return found

    def fetched_files(self, app_id: str) -> dict[str, set[str]]:
        """Worker work directory -> names of the files the executors of ``app_id`` hold there (jars
        given with ``--jars`` are fetched from the driver into them)."""
        return {
            work_dir.name: {p.name for p in (work_dir / app_id).rglob("*") if p.is_file()}
            for work_dir in sorted(self.directory.glob("worker*/"))
        }

    def task_executors(self, app_id: str) -> list[str]:
        """The executor id of every task application ``app_id`` ran, from its event log."""
        [log] = self.event_log_dir.glob(f"{app_id}*")  # ``.inprogress`` while the application runs
        ended = [json.loads(line) for line in log.read_text().splitlines() if '"SparkListenerTaskEnd"' in line]
        return [e["Task Info"]["Executor ID"] for e in ended if e["Event"] == "SparkListenerTaskEnd"]

    def client_env(self, spark_conn_id: str = "snaprepl_spark") -> dict[str, str]:
        """What a client of the cluster needs in its environment: the Spark connection naming the master
        (the Spark provider's hook takes the host as spark-submit's ``--master``), the driver on
        loopback (executors connect back to it) and the client settings of this cluster."""
        conn_env = f"AIRFLOW_CONN_{spark_conn_id.upper()}"
        return {
            conn_env: json.dumps({"conn_type": "spark", "host": self.master_url}),
            "SPARK_LOCAL_IP": LOOPBACK,
            "SPARK_CONF_DIR": str(self.conf_dir),
        }


def _daemon_env(directory: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SPARK_TESTING"}  # the daemons run as deployed
    env.update(
        {
            "SPARK_HOME": spark_home(),
            "SPARK_LOCAL_IP": LOOPBACK,
            "SPARK_LOCAL_DIRS": str(directory / "local"),
            "SPARK_DAEMON_MEMORY": "256m",
            "SPARK_CONF_DIR": str(directory / "daemon-conf"),
            "PYSPARK_PYTHON": sys.executable,
            "PYTHONPATH": job_python_path(),
        }
    )
    return env


def _write_client_conf(cluster: SparkCluster) -> None:
    cluster.conf_dir.mkdir()
    cluster.event_log_dir.mkdir()
    settings = {
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": cluster.event_log_dir.as_uri(),
        # Plain JSON lines in one file named by the application id (Spark 4 compresses and rolls them).
        "spark.eventLog.compress": "false",
        "spark.eventLog.rolling.enabled": "false",
        "spark.scheduler.minRegisteredResourcesRatio": "1.0",
        "spark.scheduler.maxRegisteredResourcesWaitingTime": "60s",
        "spark.executor.memory": "512m",
        "spark.driver.host": LOOPBACK,
    }
    lines = [f"{key} {value}" for key, value in settings.items()]
    (cluster.conf_dir / "spark-defaults.conf").write_text("\n".join(lines) + "\n")


class _Daemons:
    """The daemons started so far, their logs, and stopping all of them (and their children)."""

    def __init__(self, directory: Path, env: dict[str, str]) -> None:
        self.directory = directory
        self.env = env
        self.started: list[tuple[subprocess.Popen[bytes], Path]] = []

    def start(self, name: str, *args: str) -> None:
        log = self.directory / f"{name}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [str(Path(self.env["SPARK_HOME"]) / "bin" / "spark-class"), *args],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.env,
                cwd=self.directory,
                start_new_session=True,  # its own process group: stopped as one
            )
        self.started.append((process, log))

    def died(self) -> str | None:
        """The log tail of a daemon that has exited, if any has."""
        for process, log in self.started:
            if process.poll() is not None:
                return f"{log.name} exited with {process.returncode}: {log.read_text()[-3000:]}"
        return None

    def stop(self) -> None:
        """SIGTERM every daemon's group and descendants (executors, Python workers in their own
        groups), then SIGKILL what is left after a grace period."""
        victims: list[int] = []
        for process, _ in self.started:
            victims += [process.pid, *descendants(process.pid)]
        for process, _ in self.started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for pid in victims:
            kill_quietly(pid, signal.SIGTERM)
        if not wait_for(lambda: not [p for p in victims if alive(p)], 20, interval=0.2):
            for pid in victims:
                kill_quietly(pid, signal.SIGKILL)
        for process, _ in self.started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


def _wait_until_alive(daemons: _Daemons, webui: str, workers: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    state: dict[str, Any] = {}
    while time.monotonic() < deadline:
        problem = daemons.died()
        assert problem is None, problem
        with contextlib.suppress(OSError, ValueError):
            state = get_json(f"{webui}/json/")
            if [w["state"] for w in state.get("workers", [])].count("ALIVE") >= workers:
                return
        time.sleep(0.5)
    raise AssertionError(f"the workers did not register with the master in {timeout:.0f}s: {state}")


@contextlib.contextmanager
def spark_cluster(directory: Path, workers: int = 2, *, timeout: float = 180) -> Iterator[SparkCluster]:
    """Start a master and ``workers`` workers (1 core, 1 GiB each) under ``directory``; yield the
    cluster once every worker is ALIVE in the master's status; stop everything at the end, whatever
    happened."""
    directory.mkdir(parents=True, exist_ok=True)
    for sub in ("local", "daemon-conf"):
        (directory / sub).mkdir(exist_ok=True)
    daemons = _Daemons(directory, _daemon_env(directory))
    master_port, master_ui = free_port(), free_port()
    master_url = f"spark://{LOOPBACK}:{master_port}"
    worker_uis = [free_port() for _ in range(workers)]
    cluster = SparkCluster(
        master_url, f"http://{LOOPBACK}:{master_ui}", tuple(f"http://{LOOPBACK}:{p}" for p in worker_uis), directory
    )
    try:
        daemons.start(
            "master", MASTER_CLASS, "--host", LOOPBACK, "--port", str(master_port), "--webui-port", str(master_ui)
        )
        for number, ui_port in enumerate(worker_uis, start=1):
            work_dir = directory / f"worker{number}"
            work_dir.mkdir(exist_ok=True)
            daemons.start(
                f"worker{number}",
                WORKER_CLASS,
                *("--host", LOOPBACK, "--port", str(free_port()), "--webui-port", str(ui_port)),
                *("--cores", "1", "--memory", "1g", "--work-dir", str(work_dir), master_url),
            )
        _wait_until_alive(daemons, cluster.webui, workers, timeout)
        _write_client_conf(cluster)
        yield cluster
    finally:
        daemons.stop()

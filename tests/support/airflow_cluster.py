"""A real Airflow 3 deployment for end-to-end tests: api-server, scheduler and dag-processor processes.

:class:`AirflowCluster` runs them as subprocesses with their own AIRFLOW_HOME, a SQLite metadata
database (Airflow 3.3 accepts the LocalExecutor on SQLite) and the snaprepl catalog in it, reached by
tasks and DAG parsing through the ``snaprepl_catalog`` connection, as in a real deployment. Unlike
``airflow dags test``, the scheduler runs every task in a supervised child process that cannot use
the metadata database, so the test sees what production sees.

Every process writes to ``<home>/processes/<name>.log``; each failure raised by the helpers is an
``AssertionError`` that ends with the tails of those logs (and of the task logs when it is about a run).

>>> with AirflowCluster(tmp_path / "airflow", env={"AIRFLOW_CONN_SRC": "..."}) as cluster:  # doctest: +SKIP
...     cluster.wait_for_dag("my_dag")
...     run_id = cluster.trigger("my_dag", conf={"mode": "nonincremental"})
...     cluster.wait_for_run("my_dag", run_id)
"""

from __future__ import annotations

import base64
import contextlib
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

import psutil

from tests.support.airflow_logs import free_port, render_task_log, tail
from tests.support.airflow_rest import AirflowRest

REPO = Path(__file__).resolve().parents[2]

#: Components started by default (the api-server always first, see AirflowCluster.start).
#: No triggerer: snaprepl has no deferrable tasks.
COMPONENTS = ("api-server", "scheduler", "dag-processor")


class AirflowCluster(AirflowRest):
    """Airflow's api-server, scheduler and dag-processor as subprocesses, as a context manager; its REST
    API calls and DAG and run helpers come from :class:`AirflowRest`.

    :param home: AIRFLOW_HOME of the deployment (created; it holds airflow.db, logs and process logs).
    :param env: extra environment variables (connections, settings); they override the defaults.
    :param base_env: the environment to start from (default: a copy of ``os.environ``); any
        ``AIRFLOW__*`` setting in it that the cluster defines itself is overridden.
    :param components: the ``airflow`` sub-commands to run.
    :param startup_timeout: seconds to wait for every component to report healthy.
    :param database_url: the metadata database (default: SQLite in ``home``). Airflow refuses to
        create backfills on SQLite while other components write: give a ``postgresql://`` URL for those.
    """

    def __init__(
        self,
        home: Path,
        *,
        env: Mapping[str, str] | None = None,
        base_env: Mapping[str, str] | None = None,
        components: Sequence[str] = COMPONENTS,
        startup_timeout: float = 120,
        database_url: str | None = None,
    ) -> None:
        self.home = Path(home)
        self.port = free_port()
        super().__init__(f"http://127.0.0.1:{self.port}")
        #: The metadata database, also the snaprepl catalog (as an Airflow connection URI).
        self.database_url = database_url or f"sqlite:///{self.home / 'airflow.db'}"
        self.components = tuple(components)
        self.startup_timeout = startup_timeout
        self.process_logs = self.home / "processes"
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self._log_handles: list[Any] = []
        self.env = dict(os.environ if base_env is None else base_env)
        self.env.update(
            {
                "AIRFLOW_HOME": str(self.home),
                "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": self.database_url.replace(
                    "postgresql://", "postgresql+psycopg2://", 1
                ),
                "AIRFLOW__DATABASE__EXTERNAL_DB_MANAGERS": "snaprepl.catalog.db_manager.SnapreplDBManager",
                # Tasks and DAG parsing cannot see the metadata database: they read the catalog here.
                "AIRFLOW_CONN_SNAPREPL_CATALOG": self.database_url,
                "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
                "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
                "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
                "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
                # The LocalExecutor starts one worker process per parallelism slot: keep it small.
                "AIRFLOW__CORE__PARALLELISM": "4",
                "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
                "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{self.base_url}/execution/",
                "AIRFLOW__CORE__FERNET_KEY": base64.urlsafe_b64encode(secrets.token_bytes(32)).decode(),
                "AIRFLOW__API__SECRET_KEY": secrets.token_hex(16),
                "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_hex(16),
                # The REST API without logging in (the simple auth manager makes everyone an admin).
                "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
                # Other Airflow deployments on this machine may hold the default ports.
                "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),
                "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": str(free_port()),
                # INFO, as deployed: the Spark provider logs the spark-submit command line at INFO.
                "AIRFLOW__LOGGING__LOGGING_LEVEL": "INFO",
                # New and changed DAGs appear within seconds.
                "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
                "AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL": "5",
                "AIRFLOW__DAG_PROCESSOR__PARSING_PROCESSES": "1",
                "AIRFLOW__DAG_PROCESSOR__PRINT_STATS_INTERVAL": "600",
                "AIRFLOW__SCHEDULER__SCHEDULER_HEARTBEAT_SEC": "2",
            }
        )
        self.env.update(env or {})

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> AirflowCluster:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self, *, while_booting: Callable[[], object] | None = None) -> None:
        """Migrate the metadata database, start the components and wait until they are healthy.

        The api-server goes first: it also serves the execution API, and a task queued before it
        answers fails (and waits for its retry). ``while_booting`` is called while it boots: work that
        needs only the migrated database (e.g. creating snapshots) overlaps its start-up.
        """
        self.home.mkdir(parents=True, exist_ok=True)
        self.process_logs.mkdir(exist_ok=True)
        migrated = self.airflow("db", "migrate", timeout=300)
        if migrated.returncode != 0:
            raise AssertionError(f"airflow db migrate failed:\n{migrated.stdout[-3000:]}\n{migrated.stderr[-3000:]}")
        try:
            first = [c for c in self.components if c == "api-server"]
            for name in first:
                self._spawn(name)
            if while_booting is not None:
                while_booting()
            if first:
                self._wait_for(bool, "the api-server did not answer")
            for name in self.components:
                if name not in first:
                    self._spawn(name)
            self.wait_until_healthy()
        except BaseException:
            self.stop()
            raise

    def _spawn(self, name: str) -> None:
        args = [name, "--port", str(self.port)] if name == "api-server" else [name]
        handle = (self.process_logs / f"{name}.log").open("ab")
        self._log_handles.append(handle)
        self.processes[name] = subprocess.Popen(
            [sys.executable, "-m", "airflow", *args],
            env=self.env,
            cwd=self.home,
            stdin=subprocess.DEVNULL,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, stopped as a whole
        )

    def wait_until_healthy(self) -> dict[str, Any]:
        """Wait until the api-server reports the metadatabase and every other component healthy."""
        wanted = {"metadatabase"} | {c.replace("-", "_") for c in self.components if c != "api-server"}
        return self._wait_for(
            lambda health: all((health.get(c) or {}).get("status") == "healthy" for c in wanted),
            "Airflow was not healthy",
        )

    def _wait_for(self, healthy: Callable[[dict[str, Any]], bool], failure: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.startup_timeout
        health: dict[str, Any] = {}
        while time.monotonic() < deadline:
            self.check_alive()
            try:
                health = self.api("GET", "/api/v2/monitor/health", timeout=5) or {}
            except (OSError, AssertionError, ValueError):
                health = {}
            if health and healthy(health):
                return health
            time.sleep(0.5)
        self.fail(f"{failure} within {self.startup_timeout:.0f} s; last health report: {health}")

    def check_alive(self) -> None:
        """Fail if a component has exited."""
        for name, process in self.processes.items():
            if process.poll() is not None:
                self.fail(f"airflow {name} exited with code {process.returncode}")

    def stop(self, timeout: float = 30) -> None:
        """Stop every component: SIGTERM to each process group, SIGKILL to whatever is left after ``timeout``.

        Descendants that left their process group (task supervisors, spark-submit JVMs) are collected
        first and get the same treatment.
        """
        family: list[psutil.Process] = []
        for process in self.processes.values():
            try:
                parent = psutil.Process(process.pid)
                family.extend([parent, *parent.children(recursive=True)])
            except psutil.NoSuchProcess:
                pass
        groups = {process.pid for process in self.processes.values()}
        for process in self.processes.values():
            if process.poll() is None:
                _signal_group(process.pid, signal.SIGTERM)
        for member in family:
            with contextlib.suppress(psutil.NoSuchProcess, ProcessLookupError):
                if os.getpgid(member.pid) not in groups:
                    member.terminate()
        _, alive = psutil.wait_procs(family, timeout=timeout)
        for process in self.processes.values():
            if process.poll() is None:
                _signal_group(process.pid, signal.SIGKILL)
        for leftover in alive:
            with contextlib.suppress(psutil.NoSuchProcess):
                leftover.kill()
        psutil.wait_procs(alive, timeout=10)
        for process in self.processes.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=10)
        self.processes.clear()
        for handle in self._log_handles:
            handle.close()
        self._log_handles.clear()

    # ------------------------------------------------------------------ commands and task logs

    def airflow(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run an ``airflow`` CLI command in the cluster's environment."""
        return self.run([sys.executable, "-m", "airflow", *args], timeout=timeout)

    def run(self, args: Sequence[str], *, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """Run a command in the cluster's environment (e.g. ``snaprepl sql``)."""
        return subprocess.run(list(args), capture_output=True, text=True, env=self.env, cwd=self.home, timeout=timeout)

    def task_log_files(self, dag_id: str | None = None, run_id: str | None = None) -> list[Path]:
        """Task log files under ``<home>/logs`` (of one DAG, and one run of it, if given)."""
        root = self.home / "logs"
        if dag_id:
            root = root / f"dag_id={dag_id}"
            if run_id:
                root = root / f"run_id={run_id}"
        return sorted(p for p in root.glob("**/attempt=*.log") if p.is_file())

    def task_log(self, dag_id: str, run_id: str) -> str:
        """Every attempt of every task of one run, concatenated (raw JSON lines)."""
        return "\n".join(p.read_text(errors="replace") for p in self.task_log_files(dag_id, run_id))

    # ------------------------------------------------------------------ diagnostics

    def diagnostics(self, *, dag_id: str | None = None, run_id: str | None = None, lines: int = 40) -> str:
        """Tails of the component logs and, for a run, of its task logs."""
        parts = []
        for name in self.components:
            path = self.process_logs / f"{name}.log"
            parts.append(f"----- {path} (last {lines} lines)\n{tail(path, lines)}")
        if dag_id:
            for path in self.task_log_files(dag_id, run_id):
                rendered = render_task_log(path.read_text(errors="replace")).splitlines()
                parts.append(f"----- {path}\n" + "\n".join(rendered[-2 * lines :]))
        return "\n".join(parts)

    def fail(self, message: str, *, dag_id: str | None = None, run_id: str | None = None) -> NoReturn:
        """Raise an AssertionError with ``message`` and the diagnostics."""
        raise AssertionError(f"{message}\n{self.diagnostics(dag_id=dag_id, run_id=run_id)}")


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, sig)  # each component leads its own process group (start_new_session)

"""Submitting snaprepl's Spark jobs: one preparation for the CLI and the Airflow operator alike.

Where a job runs is decided here, so no caller asks: a spark-submit of its own (``submit`` mode, the
default), or in the caller's process against a Spark Connect server (``connect`` mode: ``[snaprepl]
spark_mode = connect``, or a Spark connection of type ``spark_connect``; see :mod:`snaprepl.spark.connect`).

What goes on the spark-submit command line (which the Spark provider logs) is names, paths and
Spark settings. Credentials go into a file readable only by this user, named by an environment
variable of the spark-submit process, and deleted when the job ends.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import json
import logging
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snaprepl.common import timeouts
from snaprepl.common.airflow_config import load_airflow_configuration
from snaprepl.common.jars import jdbc_jars
from snaprepl.common.progress import PROGRESS_FILE, PROGRESS_FILE_ENV, bar_while
from snaprepl.connections.lookup import CONNECTIONS_FILE_ENV, ConnectionInfo, get_connection, write_connections_file
from snaprepl.errors import ConnectionNotFound, ConnectServerDown, RefreshFailed, SnapreplError, error_class
from snaprepl.settings import Settings
from snaprepl.spark import connect, lifeline, rundir
from snaprepl.spark.entrypoint import RESULT_FILE_ENV
from snaprepl.spark.session import SPARK_CONF

log = logging.getLogger(__name__)

#: Connection type of a Spark Connect server (the Spark provider's).
SPARK_CONNECT_TYPE = "spark_connect"

#: ``spark_jobs/`` of the project's directory (``include/snaprepl/submit/`` is three levels below it).
_REPO_JOBS = Path(__file__).resolve().parents[3] / "spark_jobs"


def job_module_file(module: str) -> Path:
    """The file of job module ``module`` (e.g. ``snaprepl.refresh.job``), found without importing it:
    the submitting side must not load the job's code (and with it pyspark)."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise SnapreplError(f"the job module {module} is not installed", "reinstall snaprepl")
    return Path(spec.origin)


def job_application(name: str, module_file: Path) -> str:
    """The spark-submit application of job ``name``.

    Both candidates run the same ``main`` (the job module's): ``spark_jobs/<name>.py``, a three-line
    shim, when the project's directory is there (a deployment, the tests, the demo), else the job
    module itself (snaprepl installed without the project's directory). The shim is preferred because
    Python puts a script's own folder first on ``sys.path``: ``spark_jobs/`` holds nothing that can
    shadow an import, while a package folder (``refresh/``, ``bidir/``) holds modules with plain names.
    """
    candidate = _REPO_JOBS / f"{name}.py"
    return str(candidate if candidate.exists() else module_file)


def job_python_path() -> str:
    """The job imports what its caller can: custom conflict resolvers and notifiers in Airflow's dags
    or plugins folder, or in the caller's working directory, are importable in the Spark driver too."""
    inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    here = [str(Path(p or ".").resolve()) for p in sys.path if Path(p or ".").is_dir()]
    return os.pathsep.join(dict.fromkeys([*inherited, *here]))


def private_dir() -> Path:
    """The directory only this user can enter that holds the runs' directories (see :mod:`.rundir`)."""
    return rundir.private_parent()


def ensure_spark_connection(settings: Settings, conn_id: str | None = None) -> str:
    """The Spark connection's id (``conn_id``, else ``settings.spark_conn_id``); when it is not
    defined, define it in this process as ``settings.spark_master`` (local mode by default)."""
    conn_id = conn_id or settings.spark_conn_id
    try:
        get_connection(conn_id)
    except ConnectionNotFound:
        env = f"AIRFLOW_CONN_{conn_id.upper().replace('.', '_').replace('-', '_')}"
        os.environ[env] = json.dumps({"conn_type": "spark", "host": settings.spark_master})
    return conn_id


def spark_mode(settings: Settings) -> str:
    """``connect`` when the Spark connection is of type ``spark_connect`` or ``[snaprepl] spark_mode``
    says so, else ``submit``.

    :raises SnapreplError: ``spark_mode = connect`` without a ``spark_connect`` connection (unless
        ``connect_fallback``, which then submits).
    """
    try:
        conn_type = get_connection(settings.spark_conn_id).conn_type
    except ConnectionNotFound:
        conn_type = None
    if conn_type == SPARK_CONNECT_TYPE:
        return "connect"
    if settings.spark_mode != "connect":
        return "submit"
    problem = (
        f"[snaprepl] spark_mode = connect needs connection '{settings.spark_conn_id}' of type {SPARK_CONNECT_TYPE}"
        f" (it is {'not defined' if conn_type is None else f'of type {conn_type}'})"
    )
    if settings.connect_fallback:
        log.warning("%s: falling back to spark-submit", problem)
        return "submit"
    raise SnapreplError(problem, "`snaprepl spark-server start` starts a server and prints the connection to define")


#: Connection types a snapshot's or publication's Spark connection may have, and the mode of each.
SPARK_CONN_MODES = {"spark": "submit", SPARK_CONNECT_TYPE: "connect"}


def check_spark_connection(conn_id: str) -> str:
    """The mode Spark connection ``conn_id`` runs jobs in (``submit`` or ``connect``).

    :raises SnapreplError: it is not defined, or of another type.
    """
    try:
        conn_type = get_connection(conn_id).conn_type
    except ConnectionNotFound as err:
        raise SnapreplError(
            f"there is no Spark connection '{conn_id}'",
            f"define it first (type spark, or {SPARK_CONNECT_TYPE}: `snaprepl spark-server start` prints one)",
        ) from err
    mode = SPARK_CONN_MODES.get(conn_type or "")
    if mode is None:
        raise SnapreplError(
            f"connection '{conn_id}' is of type {conn_type}, not a Spark connection",
            f"name a connection of type {' or '.join(SPARK_CONN_MODES)}",
        )
    return mode


def spark_binary() -> str:
    """spark-submit of the Python environment snaprepl runs in (pyspark ships it)."""
    beside = Path(sys.executable).with_name("spark-submit")
    return str(beside) if beside.exists() else "spark-submit"


def spark_home() -> str:
    """The Spark installation pyspark ships (spark-submit cannot always find it by itself); found
    without importing pyspark, which the submitting side never loads."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise SnapreplError("pyspark is not installed", "install snaprepl's requirements (pyspark is one)")
    return str(Path(spec.origin).resolve().parent)


@dataclass
class Submission:
    """Everything one job needs: the keyword arguments of SparkSubmitHook/Operator in ``submit`` mode,
    the job module, its connections and the server's URL in ``connect`` mode."""

    application: str
    application_args: list[str]
    conf: dict[str, str]
    jars: str
    driver_class_path: str
    env_vars: dict[str, str]
    name: str
    conn_id: str
    driver_memory: str
    connections_file: Path | None
    result_file: Path | None
    extra: dict[str, Any] = field(default_factory=dict)
    run_dir: Path | None = None
    progress_file: Path | None = None
    mode: str = "submit"
    job_module: str = ""
    run_id: str = ""
    connections: list[ConnectionInfo] = field(default_factory=list, repr=False)
    connect_url: str = field(default="", repr=False)  # holds the token: never logged
    _result: dict[str, Any] | None = field(default=None, repr=False)

    def hook_kwargs(self) -> dict[str, Any]:
        return {
            "conf": self.conf,
            "conn_id": self.conn_id,
            "jars": self.jars,
            "driver_class_path": self.driver_class_path,
            "name": self.name,
            "application_args": self.application_args,
            "env_vars": self.env_vars,
            "spark_binary": spark_binary(),
            "driver_memory": self.driver_memory,
        }

    @property
    def tag(self) -> str:
        """The tag of this run's operations on a Spark Connect server."""
        return f"snaprepl-{self.run_id}"

    def execute(self, spark_submit: Callable[[], object]) -> tuple[dict[str, Any] | None, BaseException | None]:
        """Run the job: ``spark_submit()`` in ``submit`` mode (the hook's or the operator's), here on
        the Connect server in ``connect`` mode. Returns the job's result (None if it gave none) and
        the exception the run raised (None if none)."""
        failure: BaseException | None = None
        try:
            if self.mode == "connect":
                progress_file = PROGRESS_FILE.set(str(self.progress_file) if self.progress_file else None)
                try:
                    self._result = self._run_connect()
                finally:
                    PROGRESS_FILE.reset(progress_file)
            else:
                spark_submit()
        except Exception as err:  # the hook raises on a non-zero exit; the job's result says why
            failure = err
        return self.read_result(), failure

    def _run_connect(self) -> dict[str, Any] | None:
        return connect.run_job(
            self.job_module, self.application_args, url=self.connect_url, tag=self.tag,
            connections=self.connections, conn_id=self.conn_id,
        )  # fmt: skip

    def kill(self, spark_submit_kill: Callable[[], object]) -> list[str]:
        """Stop the running job: ``spark_submit_kill()`` in ``submit`` mode; in ``connect`` mode,
        interrupt the run's tagged operations on the server (the job then fails, and drops its
        staging table on the way out, as any failed run does). The ids of the operations interrupted."""
        if self.mode == "connect":
            return connect.interrupt(self.connect_url, self.tag)
        spark_submit_kill()
        return []

    def read_result(self) -> dict[str, Any] | None:
        if self.mode == "connect" or self.result_file is None:
            return self._result
        try:
            result: dict[str, Any] = json.loads(self.result_file.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None
        return result

    def cleanup(self) -> None:
        for path in (self.connections_file, self.result_file):
            if path is not None:
                path.unlink(missing_ok=True)
        if self.run_dir is not None:
            rundir.remove_run_dir(self.run_dir)


def prepare(
    *,
    job: str,
    module_file: Path,
    args: Sequence[str],
    connections: Iterable[ConnectionInfo],
    settings: Settings,
    run_id: str,
    name: str,
    module: str = "",
    spark_conn: str | None = None,
    lazy_session: bool = False,
) -> Submission:
    """Assemble the run of ``job`` (job module ``module``): on the Spark Connect server in ``connect``
    mode (:func:`spark_mode`), else a spark-submit with the connections file in a new directory of this
    run. ``spark_conn``: the snapshot's or publication's Spark connection (SN_SPARK_CONN, SP_SPARK_CONN)
    in place of ``[snaprepl] spark_conn_id``, deciding the mode. ``lazy_session``: connect mode only
    checks that the server answers (the job opens its session if it needs one). Call ``cleanup`` after."""
    unique = list({c.conn_id: c for c in connections}.values())
    if spark_conn:
        settings = dataclasses.replace(settings, spark_conn_id=spark_conn)
    if spark_mode(settings) == "connect":
        url = connect.connection_url(settings.spark_conn_id)
        try:
            (connect.check_reachable if lazy_session else connect.session_for)(url, settings.spark_conn_id)
        except ConnectServerDown as err:
            if not settings.connect_fallback:
                raise
            log.warning("%s: falling back to spark-submit ([snaprepl] connect_fallback)", err.message)
        else:
            directory = rundir.new_run_dir()  # its progress file only: connections and result stay in memory
            return Submission(
                application=module, application_args=list(args), conf={}, jars="", driver_class_path="",
                env_vars={}, name=name, conn_id=settings.spark_conn_id, driver_memory="", connections_file=None,
                result_file=None, mode="connect", job_module=module, run_id=run_id, connections=unique,
                connect_url=url, run_dir=directory, progress_file=directory / "progress.json",
            )  # fmt: skip
    return _prepare_submit(job, module_file, args, unique, settings, run_id, name)


def _prepare_submit(
    job: str,
    module_file: Path,
    args: Sequence[str],
    connections: list[ConnectionInfo],
    settings: Settings,
    run_id: str,
    name: str,
) -> Submission:
    """The spark-submit of ``job``, its connections in a file in a new directory of this run."""
    directory = rundir.new_run_dir()
    try:
        connections_file = write_connections_file(connections, str(directory))
    except BaseException:
        rundir.remove_run_dir(directory)
        raise
    result_file = directory / f"result-{run_id}.json"
    jars = [str(j) for j in jdbc_jars()]
    env = {
        "SPARK_HOME": spark_home(),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        CONNECTIONS_FILE_ENV: str(connections_file),
        RESULT_FILE_ENV: str(result_file),
        PROGRESS_FILE_ENV: str(directory / "progress.json"),
        "PYTHONPATH": job_python_path(),
        **timeouts.job_env(settings),  # jobs read no Airflow configuration
        lifeline.SUBMITTER_ENV: lifeline.submitter_token(),
        lifeline.RUN_ID_ENV: run_id,
    }
    # A spark_connect Spark connection cannot take a spark-submit (connect_fallback): the fallback
    # uses connection <spark_conn_id>_submit, defined here as spark_master when it is not defined.
    fallback = settings.spark_conn_id + "_submit" if spark_mode_conn_is_connect(settings) else None
    return Submission(
        application=job_application(job, module_file),
        application_args=list(args),
        conf={**SPARK_CONF, "spark.ui.enabled": "true" if settings.spark_ui else "false"},
        jars=",".join(jars),
        # The driver's own class loader must see the drivers too (DriverManager ignores --jars there).
        driver_class_path=":".join(jars),
        env_vars=env,
        name=name,
        conn_id=ensure_spark_connection(settings, fallback),
        driver_memory=settings.spark_driver_memory,
        connections_file=connections_file,
        result_file=result_file,
        run_dir=directory,
        progress_file=directory / "progress.json",
        run_id=run_id,
    )


def spark_mode_conn_is_connect(settings: Settings) -> bool:
    """Whether the Spark connection is a Spark Connect server's."""
    try:
        return get_connection(settings.spark_conn_id).conn_type == SPARK_CONNECT_TYPE
    except ConnectionNotFound:
        return False


def error_from_result(
    result: dict[str, Any] | None, failure: BaseException | None, job: str | None = None
) -> SnapreplError:
    """The error a job reported, as the snaprepl exception it was; or why the job gave no report."""
    if result and not result.get("ok") and result.get("error"):
        error = result["error"]
        cls = error_class(str(error.get("type")), fallback=RefreshFailed)
        reported = cls(error.get("message") or "the job failed", error.get("hint"))
        reported.retryable = bool(error.get("retryable", cls.retryable))  # the job's unexpected failure: True
        return reported
    detail = (str(failure).strip().splitlines() or [""])[0] if failure else "it gave no result"
    if detail.startswith("Cannot execute:"):  # the hook's message holds the whole command line: keep its exit code
        code = detail.rpartition("Error code is:")[2].strip(" .")
        detail = f"spark-submit exited with code {code}" if code else "spark-submit failed"
    ended = RefreshFailed(
        f"the Spark job {job + ' ' if job else ''}ended without a result: {detail}",
        "its output is in the task log, or shown by running the statement with `snaprepl sql -v`",
    )
    ended.retryable = True  # a crashed spark-submit or driver: another attempt may well succeed
    return ended


def run_submission(submission: Submission) -> dict[str, Any]:
    """Run a prepared submission (spark-submit with the Spark provider's hook, or on the Connect
    server); return the job's result.

    The hook logs the job's output at INFO (Airflow's logging level decides whether it shows). On a
    terminal, a progress bar of the job's step is drawn from its progress file (:mod:`snaprepl.common.progress`).

    :raises SnapreplError: the job's own error, or why it gave none.
    """
    hook = _submit_hook(submission) if submission.mode == "submit" else None
    spark_submit = lambda: getattr(getattr(hook, "_submit_sp", None), "pid", None)  # noqa: E731
    bar = bar_while(submission.progress_file) if submission.progress_file else contextlib.nullcontext()
    with lifeline.group_dies_with_caller(spark_submit), bar:  # a bar on a terminal only
        # spark-submit in its own group: killed as one
        result, failure = submission.execute(lambda: hook.submit(submission.application, process_group=0))  # type: ignore[union-attr]
    if failure is not None or not result or not result.get("ok"):
        raise error_from_result(result, failure, submission.name)
    return result


def _submit_hook(submission: Submission) -> Any:
    """The Spark provider's SparkSubmitHook of ``submission`` (Airflow is loaded in submit mode only)."""
    load_airflow_configuration()  # Airflow loads here for a command line: its logging goes to stderr
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    return SparkSubmitHook(**submission.hook_kwargs())

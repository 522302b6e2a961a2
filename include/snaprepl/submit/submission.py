"""Submitting snaprepl's Spark jobs: one preparation for the CLI and the Airflow operator alike.

What goes on the spark-submit command line (which the Spark provider logs) is names, paths and
Spark settings. Credentials go into a file readable only by this user, named by an environment
variable of the spark-submit process, and deleted when the job ends.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snaprepl import timeouts
from snaprepl.airflow_config import load_airflow_configuration
from snaprepl.connections import CONNECTIONS_FILE_ENV, ConnectionInfo, get_connection, write_connections_file
from snaprepl.errors import ConnectionNotFound, RefreshFailed, SnapreplError, error_class
from snaprepl.jars import jdbc_jars
from snaprepl.settings import Settings
from snaprepl.spark import lifeline, rundir
from snaprepl.spark.entrypoint import RESULT_FILE_ENV
from snaprepl.spark.session import SPARK_CONF

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


def ensure_spark_connection(settings: Settings) -> str:
    """The Spark connection's id; when it is not defined, define it in this process as
    ``settings.spark_master`` (local mode by default)."""
    try:
        get_connection(settings.spark_conn_id)
    except ConnectionNotFound:
        env = f"AIRFLOW_CONN_{settings.spark_conn_id.upper().replace('.', '_').replace('-', '_')}"
        os.environ[env] = json.dumps({"conn_type": "spark", "host": settings.spark_master})
    return settings.spark_conn_id


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
    """Everything a spark-submit of one job needs; the keyword arguments of SparkSubmitHook/Operator."""

    application: str
    application_args: list[str]
    conf: dict[str, str]
    jars: str
    driver_class_path: str
    env_vars: dict[str, str]
    name: str
    conn_id: str
    driver_memory: str
    connections_file: Path
    result_file: Path
    extra: dict[str, Any] = field(default_factory=dict)
    run_dir: Path | None = None

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

    def read_result(self) -> dict[str, Any] | None:
        try:
            result: dict[str, Any] = json.loads(self.result_file.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None
        return result

    def cleanup(self) -> None:
        self.connections_file.unlink(missing_ok=True)
        self.result_file.unlink(missing_ok=True)
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
) -> Submission:
    """Write the connections file (in a new directory of this run) and assemble the spark-submit of
    ``job``. The caller calls :meth:`Submission.cleanup` when the job has ended."""
    directory = rundir.new_run_dir()
    unique = {c.conn_id: c for c in connections}
    try:
        connections_file = write_connections_file(unique.values(), str(directory))
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
        "PYTHONPATH": job_python_path(),
        **timeouts.job_env(settings),  # jobs read no Airflow configuration
        lifeline.SUBMITTER_ENV: lifeline.submitter_token(),
        lifeline.RUN_ID_ENV: run_id,
    }
    return Submission(
        application=job_application(job, module_file),
        application_args=list(args),
        conf={**SPARK_CONF, "spark.ui.enabled": "true" if settings.spark_ui else "false"},
        jars=",".join(jars),
        # The driver's own class loader must see the drivers too (DriverManager ignores --jars there).
        driver_class_path=":".join(jars),
        env_vars=env,
        name=name,
        conn_id=ensure_spark_connection(settings),
        driver_memory=settings.spark_driver_memory,
        connections_file=connections_file,
        result_file=result_file,
        run_dir=directory,
    )


def error_from_result(
    result: dict[str, Any] | None, failure: BaseException | None, job: str | None = None
) -> SnapreplError:
    """The error a job reported, as the snaprepl exception it was; or why the job gave no report."""
    if result and not result.get("ok") and result.get("error"):
        error = result["error"]
        cls = error_class(str(error.get("type")), fallback=RefreshFailed)
        return cls(error.get("message") or "the job failed", error.get("hint"))
    detail = (str(failure).strip().splitlines() or [""])[0] if failure else "it gave no result"
    if detail.startswith("Cannot execute:"):  # the hook's message holds the whole command line: keep its exit code
        code = detail.rpartition("Error code is:")[2].strip(" .")
        detail = f"spark-submit exited with code {code}" if code else "spark-submit failed"
    return RefreshFailed(
        f"the Spark job {job + ' ' if job else ''}ended without a result: {detail}",
        "its output is in the task log, or shown by running the statement with `snaprepl sql -v`",
    )


def run_submission(submission: Submission) -> dict[str, Any]:
    """Run a prepared submission with the Spark provider's hook; return the job's result.

    The hook logs the job's output at INFO (Airflow's logging level decides whether it shows).

    :raises SnapreplError: the job's own error, or why it gave none.
    """
    load_airflow_configuration()  # Airflow loads here for a command line: its logging goes to stderr
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    hook = SparkSubmitHook(**submission.hook_kwargs())
    failure: BaseException | None = None
    spark_submit = lambda: getattr(getattr(hook, "_submit_sp", None), "pid", None)  # noqa: E731
    try:
        with lifeline.group_dies_with_caller(spark_submit):
            hook.submit(submission.application, process_group=0)  # its own group: killed as one
    except Exception as err:  # the hook raises AirflowException on a non-zero exit
        failure = err
    result = submission.read_result()
    if failure is not None or not result or not result.get("ok"):
        raise error_from_result(result, failure, submission.name)
    return result

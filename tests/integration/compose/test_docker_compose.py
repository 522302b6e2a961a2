"""docker-compose.yaml and docker/Dockerfile: validated by docker-compose itself and checked against
what snaprepl, Airflow and Spark need from them (services, health checks, mounts, settings, Spark,
start-up order, image). Secrets and variables are test_docker_compose_secrets.py's.

No Docker engine is involved: ``docker-compose config`` only parses, validates and interpolates
(tests/support/compose.py runs it, conftest.py once for both modules).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.compose import (
    AFTER_INIT,
    AIRFLOW_SERVICES,
    DOCKERFILE,
    EXPECTED_AIRFLOW_ENV,
    ONE_SHOT,
    REPO,
    SERVICES,
    SPARK_MASTER_URL,
    SafeLoader,
    environment,
    locked_version,
    mounts,
    published_ports,
    service,
)


def test_docker_compose_config_is_valid(runs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    result = runs["check"]
    assert result.returncode == 0, f"docker-compose config -q failed:\n{result.stderr}"
    # An unset variable without a default only warns; every variable must have one.
    assert "not set" not in result.stderr, result.stderr


def test_every_service_is_there_and_long_running_ones_have_healthchecks(defaults: dict[str, Any]) -> None:
    assert set(defaults["services"]) == SERVICES
    for name in SERVICES - ONE_SHOT:
        definition = service(defaults, name)
        healthcheck = definition.get("healthcheck")
        assert healthcheck, f"{name} has no healthcheck"
        assert not healthcheck.get("disable"), f"{name}: healthcheck disabled"
        test = healthcheck["test"]
        assert isinstance(test, list) and test[0] in {"CMD", "CMD-SHELL"} and len(test) > 1, f"{name}: {test!r}"
        assert definition.get("restart") in {"always", "unless-stopped"}, f"{name} is not restarted"
    init = service(defaults, "airflow-init")
    assert init.get("restart", "no") == "no", "a one-shot service must not be restarted"
    assert "airflow db migrate" in "\n".join(init["command"])


def test_healthchecks_probe_the_right_things(defaults: dict[str, Any]) -> None:
    def probe(name: str) -> str:
        return " ".join(service(defaults, name)["healthcheck"]["test"][1:])

    assert "http://localhost:8080/api/v2/version" in probe("airflow-apiserver")
    assert "http://localhost:8974/health" in probe("airflow-scheduler")
    assert "--job-type DagProcessorJob" in probe("airflow-dag-processor")
    assert "--job-type TriggererJob" in probe("airflow-triggerer")
    for name in ("airflow-dag-processor", "airflow-triggerer"):
        assert probe(name).startswith("airflow jobs check") and "HOSTNAME" in probe(name)
    assert "pg_isready" in probe("postgres") and "pg_isready" in probe("source-postgres")
    assert "healthcheck.sh --connect --innodb_initialized" in probe("source-mariadb")
    assert (15432, 5432) in published_ports(defaults, "source-postgres")
    assert (13306, 3306) in published_ports(defaults, "source-mariadb")
    assert "localhost:8081" in probe("spark-master")
    assert SPARK_MASTER_URL in probe("spark-worker")
    assert (8080, 8080) in published_ports(defaults, "airflow-apiserver")


def test_airflow_services_share_image_and_environment(raw: dict[str, Any], defaults: dict[str, Any]) -> None:
    common_keys = set(raw["x-airflow-common"]["environment"])
    assert set(EXPECTED_AIRFLOW_ENV) <= common_keys, "the expected settings belong in the common environment"
    reference = environment(defaults, "airflow-apiserver")
    for key, value in EXPECTED_AIRFLOW_ENV.items():
        assert reference.get(key) == value, key
    builds = set()
    for name in AIRFLOW_SERVICES:
        definition = service(defaults, name)
        assert definition["image"] == "snaprepl-airflow:3.3.2", name
        build = definition["build"]
        builds.add((build["context"], build["dockerfile"], build.get("target")))
        env = environment(defaults, name)
        # Only airflow-init reaches the catalog as the owner (it grants the catalog role).
        keys = common_keys - {"AIRFLOW_CONN_SNAPREPL_CATALOG"} if name == "airflow-init" else common_keys
        assert {key: env.get(key) for key in keys} == {key: reference[key] for key in keys}, name
    assert builds == {(str(REPO), "docker/Dockerfile", "airflow")}


def test_project_directories_are_mounted_where_airflow_looks(defaults: dict[str, Any]) -> None:
    """The DAG files, plugins folder and logs are mounted; the package is not: the image's installed
    wheel runs (its grammar, page and entry points), with nothing of the checkout shadowing it."""
    for name in AIRFLOW_SERVICES:
        volumes = mounts(defaults, name)
        for directory in ("dags", "plugins", "logs"):
            assert volumes.get(f"/opt/airflow/{directory}") == str(REPO / directory), (name, directory)
        assert not {"/opt/airflow/include", "/opt/airflow/spark_jobs"} & set(volumes), name
        env = environment(defaults, name)
        assert env["AIRFLOW__CORE__DAGS_FOLDER"] == "/opt/airflow/dags"
        assert env["AIRFLOW__CORE__PLUGINS_FOLDER"] == "/opt/airflow/plugins"
        assert "PYTHONPATH" not in env, name


def test_airflow_settings_are_real_options(defaults: dict[str, Any]) -> None:
    """Every AIRFLOW__SECTION__KEY is an option of this Airflow, and the classes named exist."""
    import importlib.util

    airflow_dir = Path(next(iter(importlib.util.find_spec("airflow").submodule_search_locations)))
    options = yaml.load((airflow_dir / "config_templates" / "config.yml").read_text(), Loader=SafeLoader)
    env = environment(defaults, "airflow-scheduler")
    for key in env:
        if key.startswith("AIRFLOW__"):
            section, _, option = key.removeprefix("AIRFLOW__").lower().partition("__")
            assert option in (options.get(section) or {}).get("options", {}), f"{key}: no [{section}] {option}"
    auth_module, _, auth_class = env["AIRFLOW__CORE__AUTH_MANAGER"].rpartition(".")
    auth_file = airflow_dir.parent / (auth_module.replace(".", "/") + ".py")
    assert f"class {auth_class}(" in auth_file.read_text()

    from airflow.utils.db_manager import BaseDBManager

    from snaprepl.catalog.db_manager import SnapreplDBManager

    assert env["AIRFLOW__DATABASE__EXTERNAL_DB_MANAGERS"] == f"{SnapreplDBManager.__module__}.SnapreplDBManager"
    assert issubclass(SnapreplDBManager, BaseDBManager)


def test_spark_connection_reaches_the_master(defaults: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    env = environment(defaults, "airflow-scheduler")
    spark = json.loads(env["AIRFLOW_CONN_SNAPREPL_SPARK"])
    assert spark == {
        "conn_type": "spark",
        "host": "spark://spark-master",
        "port": 7077,
        "extra": {"deploy-mode": "client"},
    }
    monkeypatch.setenv("AIRFLOW_CONN_SNAPREPL_SPARK", env["AIRFLOW_CONN_SNAPREPL_SPARK"])
    resolved = SparkSubmitHook(conn_id="snaprepl_spark")._resolve_connection()
    assert (resolved["master"], resolved["deploy_mode"]) == (SPARK_MASTER_URL, "client")

    master = service(defaults, "spark-master")
    command = " ".join(master["command"])
    assert "org.apache.spark.deploy.master.Master" in command
    assert "--host spark-master" in command and "--port 7077" in command and "--webui-port 8081" in command
    assert (8081, 8081) in published_ports(defaults, "spark-master")
    worker = service(defaults, "spark-worker")
    assert "org.apache.spark.deploy.worker.Worker" in worker["command"] and SPARK_MASTER_URL in worker["command"]
    # Client mode: executors connect back to the driver, which runs in the scheduler's tasks.
    assert env.get("SPARK_LOCAL_HOSTNAME") == "airflow-scheduler"


def test_spark_nodes_run_the_drivers_python_and_spark(defaults: dict[str, Any]) -> None:
    """Executors start the driver's interpreter (COPY loads run psycopg2/pyarrow there) and must be
    the driver's Spark release: the nodes are built from the same Dockerfile as Airflow."""
    airflow_build = service(defaults, "airflow-scheduler")["build"]
    for name in ("spark-master", "spark-worker", "spark-connect"):
        definition = service(defaults, name)
        build = definition["build"]
        assert (build["context"], build["dockerfile"]) == (airflow_build["context"], airflow_build["dockerfile"])
        assert build.get("target") == "spark", name
        assert definition["image"] == f"snaprepl-spark:{locked_version('pyspark')}", name
        assert "/opt/airflow/include" not in mounts(defaults, name)  # the image's installed snaprepl
        assert "PYTHONPATH" not in environment(defaults, name)


def test_startup_order(defaults: dict[str, Any]) -> None:
    def needs(name: str) -> dict[str, str]:
        return {dep: spec["condition"] for dep, spec in (service(defaults, name).get("depends_on") or {}).items()}

    for name in AFTER_INIT:
        assert needs(name).get("airflow-init") == "service_completed_successfully", name
        assert needs(name).get("postgres") == "service_healthy", name
    assert needs("airflow-init").get("postgres") == "service_healthy"
    assert needs("spark-worker").get("spark-master") == "service_healthy"
    for name in SERVICES:
        for dependency, condition in needs(name).items():
            if condition == "service_healthy":
                assert service(defaults, dependency).get("healthcheck"), f"{name} waits for {dependency}'s health"


def test_dockerfile_builds_what_compose_and_snaprepl_expect(defaults: dict[str, Any]) -> None:
    from snaprepl.common.jars import DEBIAN_JARS

    text = DOCKERFILE.read_text()
    stages = set(re.findall(r"^FROM\s+\S+\s+AS\s+(\S+)\s*$", text, flags=re.MULTILINE | re.IGNORECASE))
    targets = {
        definition["build"].get("target") for definition in defaults["services"].values() if "build" in definition
    }
    assert targets and targets <= stages, f"build targets {targets} vs Dockerfile stages {stages}"
    airflow_version = locked_version("apache-airflow")
    base = re.search(r"^ARG AIRFLOW_BASE_IMAGE=(\S+)$", text, flags=re.MULTILINE)
    assert base and base[1] == f"apache/airflow:{airflow_version}-python3.11", "base image vs requirements.txt lock"
    assert service(defaults, "airflow-scheduler")["image"] == f"snaprepl-airflow:{airflow_version}"
    for package in ["openjdk-${JAVA_MAJOR}-jre-headless", *DEBIAN_JARS.values()]:
        assert package in text, f"the image does not install {package}"
    assert "ARG JAVA_MAJOR=17" in text and re.search(r"^ENV JAVA_HOME=", text, flags=re.MULTILINE)
    assert "rm -rf /var/lib/apt/lists/*" in text
    for copied in ("requirements.txt", "pyproject.toml README.md", "include/snaprepl"):
        assert re.search(rf"^COPY .*{re.escape(copied)}", text, flags=re.MULTILINE), f"{copied} is not copied"
    assert "pip install --no-cache-dir -r /opt/snaprepl/requirements.txt" in text
    assert "pip wheel --no-cache-dir --no-deps /opt/snaprepl" in text
    assert "pip install --no-cache-dir --no-deps /tmp/snaprepl-dist/snaprepl-*.whl" in text


def test_spark_connect_server_runs_on_the_cluster_for_connect_mode(defaults: dict[str, Any]) -> None:
    """The spark-connect service: snaprepl's Connect server (the JDBC jars where py4j's DriverManager
    sees them, UTC, no retried tasks) on the standalone master, reached through a spark_connect
    connection that the Spark provider's hook turns into its URL."""
    from airflow.providers.apache.spark.hooks.spark_connect import SparkConnectHook

    from snaprepl.common.jars import DEBIAN_JARS
    from snaprepl.spark.session import SPARK_CONF

    connect = service(defaults, "spark-connect")
    command = connect["command"]
    assert command[:3] == ["spark-submit", "--class", "org.apache.spark.sql.connect.service.SparkConnectServer"]
    options = dict(zip(command[3::2], command[4::2], strict=False))
    assert options["--master"] == SPARK_MASTER_URL
    jars = {f"/usr/share/java/{name}" for name in DEBIAN_JARS}
    assert set(options["--jars"].split(",")) == jars and set(options["--driver-class-path"].split(":")) == jars
    confs = dict(value.split("=", 1) for flag, value in itertools.pairwise(command) if flag == "--conf")
    assert confs["spark.connect.grpc.binding.port"] == "15002"
    for key in ("spark.sql.session.timeZone", "spark.driver.extraJavaOptions", "spark.task.maxFailures"):
        assert confs[key] == SPARK_CONF[key], key
    assert "15002" in [str(p) for p in connect.get("expose", [])] and not connect.get("ports"), "inside the network"
    assert "15002" in " ".join(connect["healthcheck"]["test"])
    assert connect["depends_on"]["spark-master"]["condition"] == "service_healthy"
    assert environment(defaults, "spark-connect")["SPARK_LOCAL_HOSTNAME"] == "spark-connect"

    value = environment(defaults, "airflow-scheduler")["AIRFLOW_CONN_SNAPREPL_SPARK_CONNECT"]
    os.environ["AIRFLOW_CONN_SNAPREPL_SPARK_CONNECT"] = value
    try:
        assert SparkConnectHook("snaprepl_spark_connect").get_connection_url() == "sc://spark-connect:15002/"
    finally:
        del os.environ["AIRFLOW_CONN_SNAPREPL_SPARK_CONNECT"]

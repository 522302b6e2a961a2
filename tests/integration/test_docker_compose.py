"""docker-compose.yaml, docker/Dockerfile and docker/.env.example: validated by docker-compose itself
and checked against what snaprepl, Airflow and Spark need from them.

No Docker engine is involved: ``docker-compose config`` only parses, validates and interpolates. The
resolved configuration is read twice: with no variable set (the file's own defaults, which
docker/.env.example must list exactly), and with a distinct value for every secret (to see where
each one lands).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import secrets
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

#: libyaml's loader when PyYAML has it (Airflow's config.yml is large).
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

REPO = Path(__file__).resolve().parents[2]
COMPOSE_FILE = REPO / "docker-compose.yaml"
DOCKERFILE = REPO / "docker" / "Dockerfile"
ENV_EXAMPLE = REPO / "docker" / ".env.example"

AIRFLOW_SERVICES = [
    "airflow-apiserver",
    "airflow-scheduler",
    "airflow-dag-processor",
    "airflow-triggerer",
    "airflow-init",
]
ONE_SHOT = {"airflow-init"}
SERVICES = {
    *AIRFLOW_SERVICES,
    "postgres",
    "spark-master",
    "spark-worker",
    "spark-connect",
    "source-postgres",
    "source-mariadb",
}
#: Services that start only once airflow-init has migrated the metadata database and the catalog.
AFTER_INIT = ["airflow-apiserver", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer"]
PASSWORD_VARIABLES = {"AIRFLOW_DB_PASSWORD", "SNAPREPL_CATALOG_PASSWORD", "SHOP_PG_PASSWORD", "SHOP_MY_PASSWORD"}
SECRET_VARIABLES = PASSWORD_VARIABLES | {"AIRFLOW_JWT_SECRET", "AIRFLOW_API_SECRET_KEY", "AIRFLOW_FERNET_KEY"}
SPARK_MASTER_URL = "spark://spark-master:7077"

#: ``${NAME}``, ``${NAME:-default}`` etc., but not the escaped ``$${NAME}``.
VARIABLE = re.compile(r"(?<!\$)\$\{(?P<name>\w+)(?:(?P<op>:?[-?+])(?P<default>[^}]*))?\}")
SUBSTITUTION_ONLY = re.compile(r"^\$\{(?P<name>\w+):-[^}]*\}$")

# The values every Airflow service must see (with no variables set).
EXPECTED_AIRFLOW_ENV = {
    "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
    "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": "postgresql+psycopg2://airflow:airflow@postgres/airflow",
    "AIRFLOW__DATABASE__EXTERNAL_DB_MANAGERS": "snaprepl.catalog.db_manager.SnapreplDBManager",
    "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": "http://airflow-apiserver:8080/execution/",
    "AIRFLOW__CORE__LOAD_EXAMPLES": "false",
    "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "true",
    "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "admin:admin",
    "AIRFLOW__SCHEDULER__ENABLE_HEALTH_CHECK": "true",
    "AIRFLOW_CONN_SNAPREPL_CATALOG": "postgresql://snaprepl_catalog:snaprepl_catalog@postgres:5432/airflow",
    "AIRFLOW_CONN_SHOP_PG": "postgres://shop:shop@source-postgres:5432/shop",
    "AIRFLOW_CONN_SHOP_MY": "mysql://shop:shop@source-mariadb:3306/shop",
}


# --- running docker-compose ---------------------------------------------------------------------


def compose_variables(text: str) -> dict[str, list[tuple[str | None, str | None]]]:
    """Every variable the compose file interpolates -> its (operator, default) at each use."""
    found: dict[str, list[tuple[str | None, str | None]]] = {}
    for match in VARIABLE.finditer(text):
        found.setdefault(match["name"], []).append((match["op"], match["default"]))
    return found


def read_env_file(path: Path) -> dict[str, str]:
    values = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, sep, value = line.partition("=")
            assert sep, f"{path}: not NAME=value: {line!r}"
            values[name.strip()] = value.strip()
    return values


def docker_compose(env_file: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """docker-compose on the repository's file, isolated from the caller's Docker/Compose settings,
    any .env at the repository root and any variable of the compose file set in this process."""
    executable = shutil.which("docker-compose")
    assert executable, "docker-compose is not installed: apt-get install docker-compose (scripts/setup.sh does it)"
    ours = compose_variables(COMPOSE_FILE.read_text())
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in ours and not name.startswith(("DOCKER_", "COMPOSE_"))
    }
    env["COMPOSE_PROJECT_NAME"] = "snaprepl-compose-test"
    return subprocess.run(
        [executable, "--env-file", str(env_file), "-f", str(COMPOSE_FILE), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=60,
    )


def parse_config(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert result.returncode == 0, f"docker-compose config failed:\n{result.stderr}"
    return yaml.load(result.stdout, Loader=SafeLoader)


@pytest.fixture(scope="module")
def custom_secrets() -> dict[str, str]:
    return {name: f"{name.lower().replace('_', '-')}-{secrets.token_hex(6)}" for name in sorted(SECRET_VARIABLES)}


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory, custom_secrets: dict[str, str]
) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every docker-compose invocation of this module, run concurrently (each takes most of a second):
    ``check`` (config -q) and ``defaults`` with no variable set, ``customised`` with a distinct value
    for every password and secret."""
    directory = tmp_path_factory.mktemp("compose")
    empty = directory / "empty.env"
    empty.write_text("")
    custom = directory / "custom.env"
    custom.write_text("".join(f"{name}={value}\n" for name, value in custom_secrets.items()))
    jobs = {
        "check": (empty, "config", "-q"),
        "defaults": (empty, "config"),
        "customised": (custom, "config"),
    }
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        futures = {name: pool.submit(docker_compose, *job) for name, job in jobs.items()}
        return {name: future.result() for name, future in futures.items()}


@pytest.fixture(scope="module")
def raw_text() -> str:
    return COMPOSE_FILE.read_text()


@pytest.fixture(scope="module")
def raw(raw_text: str) -> dict[str, Any]:
    """The file as written (PyYAML resolves anchors and merge keys, not ${...})."""
    return yaml.load(raw_text, Loader=SafeLoader)


@pytest.fixture(scope="module")
def documented() -> dict[str, str]:
    return read_env_file(ENV_EXAMPLE)


@pytest.fixture(scope="module")
def defaults(runs: dict[str, subprocess.CompletedProcess[str]]) -> dict[str, Any]:
    """The configuration with no variable set."""
    return parse_config(runs["defaults"])


@pytest.fixture(scope="module")
def customised(runs: dict[str, subprocess.CompletedProcess[str]]) -> dict[str, Any]:
    """The configuration with a distinct value for every password and secret."""
    return parse_config(runs["customised"])


def service(config: dict[str, Any], name: str) -> dict[str, Any]:
    assert name in config["services"], f"service {name} is missing"
    return config["services"][name]


def environment(config: dict[str, Any], name: str) -> dict[str, str]:
    env = service(config, name).get("environment") or {}
    assert isinstance(env, dict), f"{name}: environment should be a mapping"
    return {key: "" if value is None else str(value) for key, value in env.items()}


def mounts(config: dict[str, Any], name: str) -> dict[str, str]:
    """Container path -> host path of the service's bind mounts."""
    found = {}
    for volume in service(config, name).get("volumes") or []:
        source, target = (volume["source"], volume["target"]) if isinstance(volume, dict) else volume.split(":")[:2]
        found[target] = source
    return found


def published_ports(config: dict[str, Any], name: str) -> set[tuple[int, int]]:
    """(host port, container port) pairs."""
    pairs = set()
    for port in service(config, name).get("ports") or []:
        if isinstance(port, dict):
            pairs.add((int(port["published"]), int(port["target"])))
        else:  # "[ip:]published:target[/protocol]"
            published, target = str(port).split("/")[0].split(":")[-2:]
            pairs.add((int(published), int(target)))
    return pairs


def url_password(value: str) -> str | None:
    """The password of a URL with user info, else None."""
    if "://" not in value:
        return None
    try:
        return urlsplit(value).password
    except ValueError:
        return None


def locked_version(distribution: str) -> str:
    for line in (REPO / "requirements.txt").read_text().splitlines():
        name, sep, version = line.partition("==")
        if sep and name.strip().lower() == distribution:
            return version.strip()
    raise AssertionError(f"{distribution} is not pinned in requirements.txt")


# --- the tests ------------------------------------------------------------------------------------


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
    for name in AIRFLOW_SERVICES:
        volumes = mounts(defaults, name)
        for directory in ("dags", "plugins", "include", "spark_jobs", "logs"):
            assert volumes.get(f"/opt/airflow/{directory}") == str(REPO / directory), (name, directory)
        env = environment(defaults, name)
        assert env["AIRFLOW__CORE__DAGS_FOLDER"] == "/opt/airflow/dags"
        assert env["AIRFLOW__CORE__PLUGINS_FOLDER"] == "/opt/airflow/plugins"
        assert env["PYTHONPATH"].split(":")[0] == "/opt/airflow/include"


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


@pytest.mark.parametrize("resolution", ["defaults", "customised"])
def test_catalog_connection_is_the_metadata_database(
    resolution: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What snaprepl makes of AIRFLOW_CONN_SNAPREPL_CATALOG is the database Airflow migrates, reached by
    tasks as the catalog role that airflow-init grants, and by airflow-init as the database's owner."""
    from sqlalchemy.engine import make_url

    from snaprepl.catalog.location import catalog_connection
    from snaprepl.settings import Settings

    env = environment(request.getfixturevalue(resolution), "airflow-scheduler")
    monkeypatch.setenv("AIRFLOW_CONN_SNAPREPL_CATALOG", env["AIRFLOW_CONN_SNAPREPL_CATALOG"])
    catalog = catalog_connection(Settings()).sqlalchemy_url()
    metadata = make_url(env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"])
    assert catalog.get_backend_name() == metadata.get_backend_name() == "postgresql"
    assert (catalog.host, catalog.port or 5432, catalog.database) == (
        metadata.host,
        metadata.port or 5432,
        metadata.database,
    )
    assert catalog.username == "snaprepl_catalog" != metadata.username, "tasks do not hold the owner's credentials"
    init = service(request.getfixturevalue(resolution), "airflow-init")
    init_env = environment(request.getfixturevalue(resolution), "airflow-init")
    assert catalog.password == init_env["SNAPREPL_CATALOG_PASSWORD"]
    assert "snaprepl catalog grant snaprepl_catalog --password-env SNAPREPL_CATALOG_PASSWORD" in " ".join(
        init["command"]
    )
    owner = make_url(init_env["AIRFLOW_CONN_SNAPREPL_CATALOG"].replace("postgresql://", "postgresql+psycopg2://"))
    assert (owner.username, owner.password, owner.database) == (metadata.username, metadata.password, metadata.database)
    postgres = environment(request.getfixturevalue(resolution), "postgres")
    assert (metadata.host, metadata.username, metadata.password, metadata.database) == (
        "postgres",
        postgres["POSTGRES_USER"],
        postgres["POSTGRES_PASSWORD"],
        postgres["POSTGRES_DB"],
    )


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
        assert mounts(defaults, name).get("/opt/airflow/include") == str(REPO / "include")
        assert environment(defaults, name)["PYTHONPATH"] == environment(defaults, "airflow-scheduler")["PYTHONPATH"]


def test_source_connections_match_the_sample_databases(defaults: dict[str, Any], customised: dict[str, Any]) -> None:
    from airflow.models.connection import Connection

    from snaprepl.connections import ConnectionInfo

    cases = {
        "AIRFLOW_CONN_SHOP_PG": (
            "source-postgres",
            "postgres",
            5432,
            "POSTGRES_USER",
            "POSTGRES_PASSWORD",
            "POSTGRES_DB",
        ),
        "AIRFLOW_CONN_SHOP_MY": (
            "source-mariadb",
            "mysql",
            3306,
            "MARIADB_USER",
            "MARIADB_PASSWORD",
            "MARIADB_DATABASE",
        ),
    }
    for config in (defaults, customised):
        env = environment(config, "airflow-scheduler")
        for variable, (host, dialect, port, user_key, password_key, database_key) in cases.items():
            conn_id = variable.removeprefix("AIRFLOW_CONN_").lower()
            info = ConnectionInfo.from_airflow(Connection(conn_id=conn_id, uri=env[variable]))
            database = environment(config, host)
            assert info.dialect.name == dialect
            assert (info.host, info.port, info.schema, info.login, info.password) == (
                host,
                port,
                database[database_key],
                database[user_key],
                database[password_key],
            ), variable


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


def test_variables_are_documented_with_the_same_defaults(raw_text: str, documented: dict[str, str]) -> None:
    """Every ${VARIABLE} has a development default, and docker/.env.example lists each with that value
    (so copying it to .env changes nothing until edited)."""
    variables = compose_variables(raw_text)
    assert set(variables) >= SECRET_VARIABLES
    for name, uses in variables.items():
        assert name in documented, f"${{{name}}} is not documented in docker/.env.example"
        for op, default in uses:
            assert op == ":-", f"${{{name}}} needs a development default (${{{name}:-...}})"
            assert default == documented[name], f"${{{name}}}: default {default!r} != .env.example {documented[name]!r}"
    assert not set(documented) - set(variables), "docker/.env.example documents variables the compose file ignores"


def test_passwords_and_secrets_only_come_from_variables(raw: dict[str, Any]) -> None:
    """In the file as written, every password (in URIs or *_PASSWORD keys) and every secret is one
    ``${VARIABLE:-dev default}`` substitution of a known variable, never a literal."""
    checked = set()
    for name, definition in raw["services"].items():
        for key, written in (definition.get("environment") or {}).items():
            value = "" if written is None else str(written)
            candidates = []
            if re.search(r"PASSWORD|SECRET|FERNET", key) and not key.endswith("RANDOM_ROOT_PASSWORD"):
                candidates.append(value)
            if (password := url_password(value)) is not None:
                candidates.append(password)
            if value.lstrip().startswith("{"):
                assert "password" not in json.loads(value), f"{name}.{key}: JSON connection with a password"
            for candidate in candidates:
                match = SUBSTITUTION_ONLY.match(candidate)
                assert match and match["name"] in SECRET_VARIABLES, f"{name}.{key}: literal secret {candidate!r}"
                checked.add(match["name"])
    assert checked == SECRET_VARIABLES


def test_resolved_passwords_follow_their_variables(customised: dict[str, Any], custom_secrets: dict[str, str]) -> None:
    """With every secret set, each service sees exactly those values: no dev default is left behind."""
    seen = set()
    for name in customised["services"]:
        for key, value in environment(customised, name).items():
            password = url_password(value)
            if password is not None:
                assert password in custom_secrets.values(), f"{name}.{key}: password {password!r} is not a variable's"
                seen.add(password)
            if re.search(r"PASSWORD|SECRET|FERNET", key) and not key.endswith("RANDOM_ROOT_PASSWORD"):
                assert value in custom_secrets.values(), f"{name}.{key} = {value!r} is not a variable's"
                seen.add(value)
    assert seen == set(custom_secrets.values())
    airflow = environment(customised, "airflow-apiserver")
    assert airflow["AIRFLOW__API_AUTH__JWT_SECRET"] == custom_secrets["AIRFLOW_JWT_SECRET"]
    assert url_password(airflow["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]) == custom_secrets["AIRFLOW_DB_PASSWORD"]
    assert environment(customised, "postgres")["POSTGRES_PASSWORD"] == custom_secrets["AIRFLOW_DB_PASSWORD"]


def test_dockerfile_builds_what_compose_and_snaprepl_expect(defaults: dict[str, Any]) -> None:
    from snaprepl.jars import DEBIAN_JARS

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
    assert "pip install --no-cache-dir --no-deps /opt/snaprepl" in text


def test_spark_connect_server_runs_on_the_cluster_for_connect_mode(defaults: dict[str, Any]) -> None:
    """The spark-connect service: snaprepl's Connect server (the JDBC jars where py4j's DriverManager
    sees them, UTC, no retried tasks) on the standalone master, reached through a spark_connect
    connection that the Spark provider's hook turns into its URL."""
    from airflow.providers.apache.spark.hooks.spark_connect import SparkConnectHook

    from snaprepl.jars import DEBIAN_JARS
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

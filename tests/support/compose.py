"""docker-compose.yaml as the tests read it: its paths, services and variables, docker-compose run on
it in isolation (``config`` only: no Docker engine), and readers of a resolved configuration."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

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


# --- reading a resolved configuration -------------------------------------------------------------


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

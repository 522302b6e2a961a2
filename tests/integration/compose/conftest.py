"""The docker-compose configurations the compose tests read: docker-compose runs once per session
(``config`` only, concurrently) with no variable set and with a distinct value for every secret."""

from __future__ import annotations

import secrets
import subprocess
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import yaml

from tests.support.compose import (
    COMPOSE_FILE,
    ENV_EXAMPLE,
    SECRET_VARIABLES,
    SafeLoader,
    docker_compose,
    parse_config,
    read_env_file,
)


@pytest.fixture(scope="session")
def custom_secrets() -> dict[str, str]:
    return {name: f"{name.lower().replace('_', '-')}-{secrets.token_hex(6)}" for name in sorted(SECRET_VARIABLES)}


@pytest.fixture(scope="session")
def runs(
    tmp_path_factory: pytest.TempPathFactory, custom_secrets: dict[str, str]
) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every docker-compose invocation of the compose tests, run concurrently (each takes most of a
    second): ``check`` (config -q) and ``defaults`` with no variable set, ``customised`` with a
    distinct value for every password and secret."""
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


@pytest.fixture(scope="session")
def raw_text() -> str:
    return COMPOSE_FILE.read_text()


@pytest.fixture(scope="session")
def raw(raw_text: str) -> dict[str, Any]:
    """The file as written (PyYAML resolves anchors and merge keys, not ${...})."""
    return yaml.load(raw_text, Loader=SafeLoader)


@pytest.fixture(scope="session")
def documented() -> dict[str, str]:
    return read_env_file(ENV_EXAMPLE)


@pytest.fixture(scope="session")
def defaults(runs: dict[str, subprocess.CompletedProcess[str]]) -> dict[str, Any]:
    """The configuration with no variable set."""
    return parse_config(runs["defaults"])


@pytest.fixture(scope="session")
def customised(runs: dict[str, subprocess.CompletedProcess[str]]) -> dict[str, Any]:
    """The configuration with a distinct value for every password and secret."""
    return parse_config(runs["customised"])

"""Airflow's configuration read without importing Airflow, where that gives Airflow's answer for sure.

``import airflow`` costs about a second of CPU (its configuration, settings and ORM). A command such
as ``snaprepl status --no-probe`` needs only a few options and connections, most often given as
environment variables. :func:`airflow_option` reads an option as Airflow would from
``AIRFLOW__<SECTION>__<KEY>`` or ``airflow.cfg``, and asks Airflow itself whenever the plain reading
cannot be sure (``_cmd``/``_secret`` variants, interpolation, deprecated names) or Airflow is
loaded anyway (task and DAG-parsing processes, whose configuration Airflow adjusts in memory).

:func:`load_airflow_configuration` is the one way these modules import Airflow: the CLI registers
what must happen then (:func:`when_airflow_loads`), e.g. moving Airflow's stdout log handler.
"""

from __future__ import annotations

import configparser
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Airflow's defaults of the options read here without Airflow (None: Airflow has none).
_DEFAULTS: dict[tuple[str, str], Callable[[], str | None]] = {
    ("database", "sql_alchemy_conn"): lambda: f"sqlite:///{airflow_home()}/airflow.db",
    ("secrets", "backend"): lambda: "",
}
#: Older names Airflow still reads for an option: a value there makes the plain reading unsure.
_DEPRECATED = {("database", "sql_alchemy_conn"): ("core", "sql_alchemy_conn")}
_HOOKS: list[Callable[[], None]] = []


class _Unsure(Exception):
    """The plain reading cannot be sure of Airflow's answer."""


def airflow_loaded() -> bool:
    """Whether this process has imported Airflow (then its own configuration is asked: it is free)."""
    return "airflow" in sys.modules


def airflow_home() -> str:
    return os.path.expanduser(os.environ.get("AIRFLOW_HOME") or "~/airflow")


def airflow_option(section: str, key: str) -> str | None:
    """Airflow's value of option ``[section] key`` (None when it has none)."""
    if not airflow_loaded():
        try:
            return _plain_option(section, key)
        except _Unsure:
            pass
    conf = load_airflow_configuration()
    if conf is None:
        return None
    value = conf.get(section, key, fallback=None)
    return None if value is None else str(value)


def load_airflow_configuration() -> Any:
    """Airflow's ``conf`` (importing Airflow, then running the hooks of :func:`when_airflow_loads`);
    None without Airflow installed (Spark jobs on a cluster)."""
    loaded = airflow_loaded()
    try:
        from airflow.configuration import conf
    except ImportError:
        return None
    if not loaded:
        for hook in _HOOKS:
            hook()
    return conf


def when_airflow_loads(hook: Callable[[], None]) -> None:
    """Run ``hook`` right after :func:`load_airflow_configuration` first imports Airflow."""
    _HOOKS.append(hook)


def _plain_option(section: str, key: str) -> str | None:
    """``[section] key`` from the environment or the configuration file, as Airflow reads them.

    :raises _Unsure: when Airflow could read it differently.
    """
    env = f"AIRFLOW__{section.upper()}__{key.upper()}"
    if env in os.environ:
        return os.environ[env]
    if f"{env}_CMD" in os.environ or f"{env}_SECRET" in os.environ:
        raise _Unsure
    old = _DEPRECATED.get((section, key))
    if old and (_plain_value(*old) is not None or f"AIRFLOW__{old[0].upper()}__{old[1].upper()}" in os.environ):
        raise _Unsure
    value = _plain_value(section, key)
    if value is not None:
        return value
    default = _DEFAULTS.get((section, key))
    return default() if default else None


def _plain_value(section: str, key: str) -> str | None:
    parser = _config_file(os.environ.get("AIRFLOW_CONFIG") or f"{airflow_home()}/airflow.cfg")
    if not parser.has_section(section):
        return None
    if parser.has_option(section, f"{key}_cmd") or parser.has_option(section, f"{key}_secret"):
        raise _Unsure
    value = parser.get(section, key, fallback=None)
    if value is not None and ("%" in value or "{" in value):
        raise _Unsure  # Airflow interpolates these
    return value


def _config_file(path: str) -> configparser.RawConfigParser:
    parser = configparser.RawConfigParser(strict=False)
    config = Path(os.path.expandvars(os.path.expanduser(path)))
    try:
        parser.read_string(config.read_text())
    except FileNotFoundError:
        pass  # Airflow writes its defaults there when it first starts
    except (OSError, configparser.Error, UnicodeDecodeError):
        raise _Unsure from None
    return parser

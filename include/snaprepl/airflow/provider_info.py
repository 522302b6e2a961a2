"""snaprepl as an Airflow provider: the ``apache_airflow_provider`` entry point (pyproject.toml).

Airflow calls :func:`get_provider_info` when it discovers providers; the ``config`` it returns adds the
``[snaprepl]`` section to Airflow's configuration, so ``airflow config list --section snaprepl`` shows
every option with its type, default and description. All of it is derived from
:class:`snaprepl.settings.Settings` (its fields and its docstring's ``:param`` lines): the two cannot
drift apart. The plugin is registered by the ``airflow.plugins`` entry point, not here (the provider
manager would register it a second time).
"""

from __future__ import annotations

import inspect
import re
from dataclasses import MISSING, fields
from typing import Any

from snaprepl.settings import SECTION, Settings

#: Airflow's configuration types of the Settings fields' types.
_TYPES = {"str": "string", "int": "integer", "bool": "boolean"}
_PARAM = re.compile(r"^:param (\w+):\s*(.*)$")


def setting_descriptions() -> dict[str, str]:
    """Each setting's description: its ``:param`` text in the Settings docstring, on one line."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in inspect.cleandoc(Settings.__doc__ or "").splitlines():
        match = _PARAM.match(line)
        if match:
            current = found.setdefault(match.group(1), [match.group(2)])
        elif current is not None and line.startswith(" ") and line.strip():
            current.append(line.strip())
        else:
            current = None
    return {name: " ".join(parts) for name, parts in found.items()}


def _default(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def config_section() -> dict[str, Any]:
    """The ``[snaprepl]`` section as Airflow's provider schema describes a config section."""
    described = setting_descriptions()
    options: dict[str, dict[str, Any]] = {}
    for item in fields(Settings):
        default = item.default if item.default is not MISSING else None
        options[item.name] = {
            "description": described.get(item.name),
            "version_added": None,
            "type": _TYPES[str(item.type)],
            "example": None,
            "default": None if default is None else _default(default),
        }
    return {
        SECTION: {"description": "snaprepl: snapshot replication (snaprepl.settings.Settings).", "options": options}
    }


def get_provider_info() -> dict[str, Any]:
    """What Airflow's provider manager reads from the ``apache_airflow_provider`` entry point."""
    return {
        "package-name": "snaprepl",
        "name": "snaprepl",
        "description": "Trigger-based snapshot replication between relational databases, run by Spark.",
        "config": config_section(),
    }

"""What a DAG run asks of a snaprepl task: its refresh mode, its sync steps, whether it is a backfill.

Pure functions of the task's context (importable without Airflow), unit-tested with both
``DagRunType`` enums: the Task SDK's (``airflow.sdk.api.datamodels._generated``), which a real task
sees, and the core one. Both are ``str`` enums whose *value* is ``"backfill"``; their ``str()`` differ.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from snaprepl.errors import InvalidArgument

INCREMENTAL = "incremental"
NONINCREMENTAL = "nonincremental"
MODES = (INCREMENTAL, NONINCREMENTAL)
BOTH, PULL_ONLY, PUSH_ONLY = "pull and push", "pull only", "push only"
DIRECTIONS = (BOTH, PULL_ONLY, PUSH_ONLY)
BACKFILL = "backfill"
#: Key of a backfill run's conf holding its backfill's id (set by snaprepl's scheduler listener).
BACKFILL_CONF_KEY = "snaprepl_backfill_id"


def run_type_value(dag_run: Any) -> str:
    """The run type's value (``backfill``, ``scheduled``, ``manual``, ...) whichever enum holds it."""
    run_type = getattr(dag_run, "run_type", None)
    return str(getattr(run_type, "value", run_type) or "")


def is_backfill(context: Mapping[str, Any]) -> bool:
    dag_run = context.get("dag_run")
    return dag_run is not None and run_type_value(dag_run) == BACKFILL


def backfill_id(context: Mapping[str, Any]) -> str | None:
    """The id of the backfill this run belongs to, if the run says (see :mod:`snaprepl.airflow.listener`)."""
    dag_run = context.get("dag_run")
    conf = getattr(dag_run, "conf", None) or {}
    value = conf.get(BACKFILL_CONF_KEY) if isinstance(conf, Mapping) else None
    return str(value) if value not in (None, "") else None


def resolve_mode(configured: str | None, context: Mapping[str, Any]) -> tuple[str, bool]:
    """The refresh mode of this run: a backfill refreshes completely; otherwise the run's ``mode``
    param, else the task's own; also whether to fall back to a complete refresh."""
    params = context.get("params") or {}
    fallback = params.get("fallback_complete", False) is True
    if is_backfill(context):
        return "complete", fallback
    mode = params.get("mode") or configured or INCREMENTAL
    if mode not in MODES:
        raise InvalidArgument(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    return ("complete" if mode == NONINCREMENTAL else "incremental"), fallback


def runs_step(action: str, context: Mapping[str, Any]) -> bool:
    """Whether a sync DAG's ``pull`` or ``push`` step runs in this run (its ``direction`` param;
    backfills and scheduled runs do both)."""
    if is_backfill(context):
        return True
    direction = (context.get("params") or {}).get("direction") or BOTH
    if direction not in DIRECTIONS:
        raise InvalidArgument(f"direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}")
    return direction in {BOTH, f"{action} only"}

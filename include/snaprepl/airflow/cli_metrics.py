"""The metrics of a ``snaprepl verify`` run from the command line: the same ``snaprepl.verify.differences``
as the verify DAG sends (:mod:`.metrics`), through Airflow's ``Stats``, so that ``[metrics]`` of the
Airflow installation the CLI runs in decides where it goes. Airflow is imported only when that section
turns a backend on (``statsd_on``, ``statsd_datadog_enabled`` or ``otel_on``): a verify without metrics
pays nothing, and a machine without Airflow sends nothing."""

from __future__ import annotations

from typing import Any

from snaprepl.common.airflow_config import airflow_option

_BACKENDS = ("statsd_on", "statsd_datadog_enabled", "otel_on")


def metrics_configured() -> bool:
    """Whether Airflow's ``[metrics]`` turns a backend on (read without importing Airflow)."""
    return any((airflow_option("metrics", key) or "").strip().lower() in ("true", "1", "t") for key in _BACKENDS)


def send_verify_metrics(outcome: dict[str, Any]) -> bool:
    """Send a verify's metric (``outcome``: :meth:`VerifyOutcome.to_dict`) when metrics are configured;
    whether it was handed to Airflow's ``Stats``."""
    if not metrics_configured():
        return False
    try:
        from snaprepl.airflow.metrics import verify_metrics  # noqa: PLC0415  (imports Airflow)
    except ImportError:
        return False
    verify_metrics(outcome)
    return True

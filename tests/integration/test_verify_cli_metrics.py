"""``snaprepl verify`` from the command line sends ``snaprepl.verify.differences`` as the verify DAG
does, through Airflow's ``Stats`` when ``[metrics]`` turns a backend on, to a real UDP listener."""

from __future__ import annotations

from snaprepl.airflow.cli_metrics import metrics_configured
from tests.support.statsd import send_metrics

_SEND = (
    "from snaprepl.airflow.cli_metrics import send_verify_metrics; import sys; "
    "sys.exit(0 if send_verify_metrics({'copy': 'd@conn', 'missing': 1, 'extra': 0, 'different': 2}) else 5)"
)


def test_the_cli_sends_the_verify_metric_only_when_metrics_are_on(tmp_path, monkeypatch) -> None:
    for key in ("STATSD_ON", "STATSD_DATADOG_ENABLED", "OTEL_ON"):
        monkeypatch.delenv(f"AIRFLOW__METRICS__{key}", raising=False)
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path))  # an airflow.cfg without [metrics]
    monkeypatch.delenv("AIRFLOW_CONFIG", raising=False)
    assert not metrics_configured(), "no backend: nothing is sent and Airflow is not imported"

    lines = send_metrics(_SEND)
    assert "airflow.snaprepl.verify.differences,copy=d_conn:3|g" in lines, lines

"""A refresh that followed source columns sends ``snaprepl.refresh.column_changes`` (how many) through
Airflow's ``Stats`` to a real UDP listener; one that followed none sends no such metric."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from tests.support.statsd import StatsdListener

_SEND = (
    "from snaprepl.airflow.metrics import refresh_metrics; "
    "refresh_metrics({'snapshot': 'd@conn', 'kind': 'complete', 'rows_copied': 3, 'duration_s': 0.5, "
    "'columns_followed': 2}); "
    "refresh_metrics({'snapshot': 'e@conn', 'kind': 'incremental', 'rows_upserted': 1, 'duration_s': 0.5})"
)


def test_a_refresh_that_followed_columns_counts_them() -> None:
    listener = StatsdListener()
    try:
        env = {
            **os.environ,
            "AIRFLOW__METRICS__STATSD_ON": "True",
            "AIRFLOW__METRICS__STATSD_HOST": "127.0.0.1",
            "AIRFLOW__METRICS__STATSD_PORT": str(listener.port),
            "AIRFLOW__METRICS__STATSD_INFLUXDB_ENABLED": "True",
        }
        done = subprocess.run([sys.executable, "-c", _SEND], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any("e_conn" in line for line in listener.lines()):
            time.sleep(0.1)
        lines = listener.lines()
        assert "airflow.snaprepl.refresh.column_changes,copy=d_conn:2|c" in lines, lines
        assert any(line.startswith("airflow.snaprepl.refresh.rows,copy=e_conn") for line in lines), lines
        assert not any("column_changes" in line and "e_conn" in line for line in lines), lines
    finally:
        listener.close()

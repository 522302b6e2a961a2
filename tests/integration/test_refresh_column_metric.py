"""A refresh that followed source columns sends ``snaprepl.refresh.column_changes`` (how many) through
Airflow's ``Stats`` to a real UDP listener; one that followed none sends no such metric."""

from __future__ import annotations

from tests.support.statsd import send_metrics

_SEND = (
    "from snaprepl.airflow.metrics import refresh_metrics; "
    "refresh_metrics({'snapshot': 'd@conn', 'kind': 'complete', 'rows_copied': 3, 'duration_s': 0.5, "
    "'columns_followed': 2}); "
    "refresh_metrics({'snapshot': 'e@conn', 'kind': 'incremental', 'rows_upserted': 1, 'duration_s': 0.5})"
)


def test_a_refresh_that_followed_columns_counts_them() -> None:
    lines = send_metrics(_SEND, until=lambda lines: any("e_conn" in line for line in lines))
    assert "airflow.snaprepl.refresh.column_changes,copy=d_conn:2|c" in lines, lines
    assert any(line.startswith("airflow.snaprepl.refresh.rows,copy=e_conn") for line in lines), lines
    assert not any("column_changes" in line and "e_conn" in line for line in lines), lines

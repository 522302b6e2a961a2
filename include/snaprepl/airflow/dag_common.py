"""What every generated DAG shares: its tag, default arguments, start date, schedule and flags."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from airflow.sdk import DAG, CronDataIntervalTimetable

from snaprepl.settings import Settings

TAG = "snaprepl"
DEFAULT_ARGS = {"owner": "snaprepl", "retries": 2, "retry_delay": timedelta(minutes=1)}
#: DAGs start on this date: with catchup off it only bounds backfills.
START = datetime(2024, 1, 1, tzinfo=UTC)


def timetable(schedule: str | None) -> CronDataIntervalTimetable | None:
    # A cron string alone would get CronTriggerTimetable, whose data intervals are empty.
    return CronDataIntervalTimetable(schedule, timezone="UTC") if schedule else None


def snaprepl_dag(settings: Settings, **kwargs: Any) -> DAG:
    """A snaprepl DAG: no catchup, one run at a time, retries, unpaused unless
    ``[snaprepl] dags_paused_at_creation``; ``kwargs`` say the rest."""
    return DAG(
        start_date=START,
        catchup=False,
        max_active_runs=1,
        default_args=DEFAULT_ARGS,
        is_paused_upon_creation=settings.dags_paused_at_creation,
        auto_register=False,  # a DAG whose building failed half-way must not be registered
        **kwargs,
    )

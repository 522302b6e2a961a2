"""Schedules of snapshot and publication DAGs: 5-field cron expressions or presets."""

from __future__ import annotations

from croniter import croniter

from snaprepl.errors import InvalidArgument


def validate_schedule(value: str | None) -> str | None:
    """A schedule as Airflow takes it (cron expression or preset such as '@hourly'), or None for manual."""
    if value is None or value.strip().lower() in {"", "none", "manual"}:
        return None
    text = value.strip()
    if not croniter.is_valid(text):
        raise InvalidArgument(
            f"schedule {value!r} is not a cron expression or preset", "write e.g. '@hourly' or '*/15 * * * *'"
        )
    if not text.startswith("@") and len(text.split()) != 5:  # croniter reads a 6th field as seconds
        raise InvalidArgument(
            f"schedule {value!r} has {len(text.split())} fields, not the 5 of cron (minute hour day month weekday)",
            "a 6th field would be read as seconds (a run every second); write e.g. '*/5 * * * *'",
        )
    return text

"""snaprepl's Airflow plugin: the scheduler listener that labels backfill runs."""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from snaprepl.airflow import listener


class SnapreplPlugin(AirflowPlugin):
    name = "snaprepl"
    listeners = [listener]

"""snaprepl's Airflow plugin (see snaprepl.airflow.listener): backfill runs learn their backfill's id,
so that a backfill refreshes each snapshot completely once. Keep this file in Airflow's plugins folder."""

from snaprepl.airflow.plugin import SnapreplPlugin

__all__ = ["SnapreplPlugin"]

"""snaprepl's Airflow plugin (see snaprepl.airflow.plugin): the listener that tells backfill runs
their backfill's id, and the Replication page in the UI's navigation. Keep this file in Airflow's
plugins folder."""

from snaprepl.airflow.plugin import SnapreplPlugin

__all__ = ["SnapreplPlugin"]

"""snaprepl's Airflow plugin: the scheduler listener that labels backfill runs, and the Replication
page (a FastAPI app the api-server mounts at ``/snaprepl``, shown in the UI's navigation as an
external view embedded at ``/plugin/replication``)."""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from snaprepl.airflow import listener
from snaprepl.airflow.ui.app import URL_PREFIX, app

#: The page's entry in the navigation (Airflow's UI embeds ``href`` at ``/plugin/<url_route>``).
REPLICATION_VIEW = {
    "name": "Replication",
    "href": f"{URL_PREFIX}/",
    "destination": "nav",
    "url_route": "replication",
    "nav_top_level": True,
    "icon": f"{URL_PREFIX}/static/icon.svg",
}


class SnapreplPlugin(AirflowPlugin):
    name = "snaprepl"
    listeners = [listener]
    fastapi_apps = [{"app": app, "url_prefix": URL_PREFIX, "name": "snaprepl Replication page"}]
    external_views = [REPLICATION_VIEW]

"""The Replication page's app: registered where Airflow's UI finds it, and no route without a login.

Airflow does not protect a plugin's FastAPI app; each route must depend on Airflow's ``get_user``
itself. This walks every route's dependency tree, so a route added later without it fails here
(the integration test tests/integration/airflow/test_replication_page.py calls them for real).
"""

from __future__ import annotations

from typing import Any

from airflow.api_fastapi.app import RESERVED_URL_PREFIXES
from airflow.api_fastapi.core_api.security import get_user
from fastapi.routing import APIRoute

from snaprepl.airflow.plugin import REPLICATION_VIEW, SnapreplPlugin
from snaprepl.airflow.ui import data
from snaprepl.airflow.ui.app import URL_PREFIX, app


def _calls(dependant: Any) -> set[Any]:
    found = {dependant.call}
    for sub in dependant.dependencies:
        found |= _calls(sub)
    return found


def test_every_route_requires_an_airflow_user() -> None:
    routes = [route for route in app.routes if isinstance(route, APIRoute)]
    assert len(routes) >= 6
    unprotected = [route.path for route in routes if get_user not in _calls(route.dependant)]
    assert unprotected == []
    assert app.openapi_url is None and app.docs_url is None  # no schema or docs page without a login either


def test_the_page_is_in_the_navigation_and_mounted_outside_airflows_prefixes() -> None:
    [mounted] = SnapreplPlugin.fastapi_apps
    assert mounted["app"] is app and mounted["url_prefix"] == URL_PREFIX
    assert not any(URL_PREFIX.startswith(prefix) for prefix in RESERVED_URL_PREFIXES)
    assert SnapreplPlugin.external_views == [REPLICATION_VIEW]
    assert REPLICATION_VIEW["destination"] == "nav" and REPLICATION_VIEW["href"] == f"{URL_PREFIX}/"


def test_the_ledger_shows_the_incoming_row_of_a_change_and_the_old_row_of_a_delete() -> None:
    assert data._incoming('{"op": "U", "old": {"id": 1}, "row": {"id": 1, "v": "b"}}') == ("U", {"id": 1, "v": "b"})
    assert data._incoming('{"op": "D", "old": {"id": 1, "v": "a"}, "row": null}') == ("D", {"id": 1, "v": "a"})
    assert data._incoming('{"id": 2}') == (None, {"id": 2})
    assert data._incoming("not json") == (None, "not json")

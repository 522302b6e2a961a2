"""The Replication page's writing routes refuse what another site could send in the user's name.

Every writing route is found from the app's own routes (any method but GET/HEAD/OPTIONS), so a route
added later is attacked here too. Airflow's ``get_user`` is replaced by a stand-in that answers 418:
a request that reaches it passed the cross-site layer; a refused one never reaches it (nor any
endpoint, so no run can be created). The real api-server is attacked from a real browser in
tests/integration/airflow/test_replication_page.py.
"""

from __future__ import annotations

import logging
import re
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest
from airflow.api_fastapi.core_api.security import get_user
from fastapi import HTTPException, Request
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from snaprepl.airflow.ui import app as app_module
from snaprepl.airflow.ui.app import app
from snaprepl.airflow.ui.csrf import PAGE_HEADER, SAFE_METHODS, forbid_cross_site, origin_of

OWN = "http://testserver"  # the TestClient's Host
REACHED = 418
COOKIE = "the-session-cookie-value"
JSON = {"Content-Type": "application/json", PAGE_HEADER: "1"}

#: What a form, an <img>, a no-CORS fetch or another origin can send (headers; body).
ATTACKS: dict[str, tuple[dict[str, str], str]] = {
    "cross-site form": (
        {"Content-Type": "application/x-www-form-urlencoded", "Origin": "http://localhost:8080"},
        "a=1",
    ),
    "same-origin form": ({"Content-Type": "application/x-www-form-urlencoded", "Origin": OWN}, "a=1"),
    "multipart form": ({"Content-Type": "multipart/form-data; boundary=b", "Origin": OWN}, "--b--\r\n"),
    "text/plain form": ({"Content-Type": "text/plain", "Origin": "http://127.0.0.1:9999"}, '{"a": 1}'),
    "no body (an <img>-like request)": ({"Origin": OWN}, ""),
    "JSON without the page's header": ({"Content-Type": "application/json", "Origin": OWN}, "{}"),
    "cross-site JSON": ({**JSON, "Origin": "http://localhost:8080"}, "{}"),
    "another port of the host": ({**JSON, "Origin": "http://testserver:8081"}, "{}"),
    "another scheme": ({**JSON, "Origin": "https://testserver"}, "{}"),
    "Origin null": ({**JSON, "Origin": "null"}, "{}"),
    "cross-site Referer": ({**JSON, "Referer": "http://evil.example/testserver/snaprepl/"}, "{}"),
    "neither Origin nor Referer": (dict(JSON), "{}"),
    "Basic credentials (a browser may send them on its own)": (
        {"Content-Type": "text/plain", "Authorization": "Basic YTpi", "Origin": "http://localhost"},
        "{}",
    ),
    "an empty bearer": ({"Content-Type": "text/plain", "Authorization": "Bearer ", "Origin": "http://x"}, "{}"),
}
PASSES: dict[str, dict[str, str]] = {
    "the page's own request": {**JSON, "Origin": OWN},
    "its origin spelled otherwise": {**JSON, "Content-Type": "application/json; charset=utf-8", "Origin": "http://TESTSERVER:80"},
    "Referer when there is no Origin": {**JSON, "Referer": f"{OWN}/snaprepl/?x=1"},
    "an API client's bearer token": {"Content-Type": "application/x-www-form-urlencoded", "Authorization": "Bearer t"},
}  # fmt: skip


def writing_routes() -> list[tuple[str, str]]:
    found = []
    for route in app.routes:
        assert isinstance(route, APIRoute), f"{route} escapes the app's dependencies"
        for method in sorted(route.methods - SAFE_METHODS):
            found.append((method, re.sub(r"\{[^}]+\}", "main.t@dst", route.path_format)))
    return found


@pytest.fixture
def reached(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Paths of the requests that passed the cross-site layer (and got 418 from the stand-in user)."""
    calls: list[str] = []

    def stand_in(request: Request) -> None:
        calls.append(request.url.path)
        raise HTTPException(REACHED, "passed the cross-site layer")

    def no_run(*args: Any) -> None:
        calls.append("a run was triggered")

    monkeypatch.delenv("AIRFLOW__API__BASE_URL", raising=False)
    monkeypatch.setattr(app_module, "trigger_dag", no_run)
    app.dependency_overrides[get_user] = stand_in
    yield calls
    app.dependency_overrides.pop(get_user, None)


def anyone() -> object:
    return object()


@pytest.fixture
def client() -> TestClient:
    return TestClient(app, base_url=OWN, cookies={"_token": COOKIE})


def test_the_app_has_writing_routes_and_each_depends_on_the_check() -> None:
    routes = writing_routes()
    assert ("POST", "/api/snapshots/main.t@dst/refresh") in routes
    assert ("POST", "/api/snapshots/main.t@dst/verify") in routes
    for route in app.routes:
        assert isinstance(route, APIRoute) and route.dependant.dependencies[0].call is forbid_cross_site


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_what_another_site_can_send_gets_403_and_no_run(
    attack: str, client: TestClient, reached: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    headers, body = ATTACKS[attack]
    for method, path in writing_routes():
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="snaprepl.airflow.ui.csrf"):
            response = client.request(method, f"{path}?complete=true", headers=headers, content=body)
        assert response.status_code == 403, (attack, method, path, response.text)
        [line] = [r.getMessage() for r in caplog.records if r.name == "snaprepl.airflow.ui.csrf"]
        assert "refused" in line and path in line and COOKIE not in line and "YTpi" not in line
    assert reached == []


@pytest.mark.parametrize("case", sorted(PASSES))
def test_the_pages_own_requests_and_api_clients_pass(case: str, client: TestClient, reached: list[str]) -> None:
    for method, path in writing_routes():
        response = client.request(method, path, headers=PASSES[case], content="{}")
        assert response.status_code == REACHED, (case, method, path, response.text)
    assert len(reached) == len(writing_routes())


def test_reads_are_not_refused(client: TestClient, reached: list[str]) -> None:
    cross = {"Origin": "http://localhost:8080", "Content-Type": "text/plain"}
    for path in ("/", "/api/overview", "/api/history", "/static/replication.js"):
        assert client.get(path, headers=cross).status_code == REACHED
    assert len(reached) == 4


def test_behind_a_proxy_the_own_origin_is_airflows_base_url(
    client: TestClient, reached: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIRFLOW__API__BASE_URL", "https://airflow.example.com/airflow/")
    routes = writing_routes()
    for method, path in routes:
        assert client.request(method, path, headers={**JSON, "Origin": OWN}).status_code == 403
        for origin in ("https://airflow.example.com", "https://Airflow.Example.com:443"):
            assert client.request(method, path, headers={**JSON, "Origin": origin}).status_code == REACHED
    assert len(reached) == 2 * len(routes)


def test_origins_compare_scheme_host_and_port() -> None:
    assert origin_of("http://a.b") == origin_of("HTTP://A.B:80/x?y") == "http://a.b:80"
    assert origin_of("https://[::1]/") == "https://[::1]:443"
    for other in ("null", "", "/snaprepl/", "file:///etc/passwd", "http://", "http://a:99999"):
        assert origin_of(other) is None, other


def test_no_other_site_may_frame_the_page(reached: list[str]) -> None:
    app.dependency_overrides[get_user] = anyone
    response = TestClient(app).get("/")
    assert response.status_code == 200
    assert response.headers["content-security-policy"] == "frame-ancestors 'self'"
    assert response.headers["x-frame-options"] == "SAMEORIGIN"


# No "%" here: Starlette's TestClient decodes the path twice (uvicorn once); the integration test's
# hidden snapshot has one.
@pytest.mark.parametrize("name", ["main.a/b@dst", "main.x/refresh@dst", 'public.we ird"?#&=+@my/conn'])
def test_a_snapshot_name_with_a_slash_or_quoted_characters_reaches_its_route(
    name: str, reached: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    app.dependency_overrides[get_user] = anyone
    monkeypatch.setattr(app_module, "readable_dag_ids", lambda user: set())  # the route answers "no snapshot <name>"
    path = f"/api/snapshots/{urllib.parse.quote(name, safe='')}/refresh"
    response = TestClient(app).post(path, headers={"Authorization": "Bearer t"})
    assert response.status_code == 404 and response.json() == {"detail": f"no snapshot {name}"}, response.text

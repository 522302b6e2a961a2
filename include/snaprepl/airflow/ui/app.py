"""The Replication page's FastAPI app, mounted by Airflow's api-server under :data:`URL_PREFIX`.

Every route depends on the logged-in user (:data:`~.access.CurrentUser`: 401/403 without a valid
Airflow token) and returns only what the user's DAG rights allow: snapshots and publications whose
DAG they may read, and a trigger only on a DAG they may run.

- ``GET /`` the page, ``GET /static/{name}`` its script, styles and chart library;
- ``GET /api/overview`` snapshots, snapshot groups, logs, publications and subscriptions, conflict counts;
- ``GET /api/conflicts`` one page of the conflict ledger (filters: item, type, decision);
- ``GET /api/history`` the run history, per copy, for the charts;
- ``POST /api/snapshots/{name}/refresh`` "Refresh now" (``complete=false``) or "Complete refresh";
  ``name`` is a path parameter: a snapshot named ``main."a/b"@dst`` arrives as ``main.a/b@dst``; a
  snapshot group's member is refreshed by a run of its group's DAG;
- ``POST /api/snapshots/{name}/verify`` and ``POST /api/publications/{item}/verify`` "Verify": a run
  of the copy's verify DAG (there is one when the copy has a verify schedule).

Every writing request (any method but GET/HEAD/OPTIONS, on any route) first passes
:func:`~.csrf.forbid_cross_site`, a dependency of the whole app: no other site can press a button.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import FileResponse, HTMLResponse
from starlette.concurrency import run_in_threadpool

from snaprepl.airflow.runs import INCREMENTAL, NONINCREMENTAL
from snaprepl.airflow.ui import data
from snaprepl.airflow.ui.access import CurrentUser, readable_dag_ids, require_trigger, triggerable, user_token
from snaprepl.airflow.ui.csrf import forbid_cross_site
from snaprepl.airflow.ui.trigger import trigger_dag
from snaprepl.common.dag_names import (
    GROUP_PREFIX,
    group_dag_id,
    publication_dag_id,
    publication_verify_dag_id,
    snapshot_dag_id,
    verify_dag_id,
)

URL_PREFIX = "/snaprepl"
STATIC = Path(__file__).resolve().parent / "static"
#: Files the page loads (the vendor files come from scripts/setup.sh).
STATIC_FILES = {
    "replication.js": "text/javascript",
    "replication.css": "text/css",
    "icon.svg": "image/svg+xml",
    "vendor/uPlot.iife.min.js": "text/javascript",
    "vendor/uPlot.min.css": "text/css",
}
#: Headers of every answer: the page runs inside Airflow's UI (same origin) and nowhere else (no other
#: site may frame it and have the user click its buttons).
NO_CACHE = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "frame-ancestors 'self'",
    "X-Frame-Options": "SAMEORIGIN",
}

app = FastAPI(
    title="snaprepl Replication page",
    docs_url=None,
    redoc_url=None,
    openapi_url=None,
    dependencies=[Depends(forbid_cross_site)],
)


@app.get("/", response_class=HTMLResponse)
def page(user: CurrentUser) -> HTMLResponse:
    return HTMLResponse((STATIC / "replication.html").read_text(encoding="utf-8"), headers=NO_CACHE)


@app.get("/static/{name:path}")
def static(name: str, user: CurrentUser) -> FileResponse:
    media = STATIC_FILES.get(name)
    path = STATIC / name
    if media is None or not path.is_file():
        hint = " (run scripts/setup.sh to fetch the chart library)" if name.startswith("vendor/") else ""
        raise HTTPException(404, f"no such file: {name}{hint}")
    return FileResponse(path, media_type=media, headers=NO_CACHE)


@app.get("/api/overview")
async def overview(user: CurrentUser) -> dict[str, Any]:
    def collect() -> dict[str, Any]:
        readable = readable_dag_ids(user)
        report = data.overview(readable)
        verify_dags = [c["verify_dag_id"] for c in report["snapshots"] + report["publications"] if c["verify_dag_id"]]
        allowed = triggerable(user, [s["dag_id"] for s in report["snapshots"]] + verify_dags)
        for snapshot in report["snapshots"]:
            snapshot["can_trigger"] = snapshot["dag_id"] in allowed
        for copy in report["snapshots"] + report["publications"]:
            copy["can_verify"] = copy["verify_dag_id"] in allowed
        return {"user": getattr(user, "get_name", lambda: None)(), **report}

    return await run_in_threadpool(collect)


@app.get("/api/conflicts")
async def conflicts(
    user: CurrentUser,
    item: str | None = None,
    type: str | None = Query(None, pattern="^[IUD]$"),
    decision: int | None = Query(None, ge=1, le=4),
    offset: int = Query(0, ge=0),
    limit: int = Query(20, ge=1, le=data.MAX_PAGE),
) -> dict[str, Any]:
    filters = {"item": item, "type": type, "decision": decision}
    return await run_in_threadpool(lambda: data.conflicts_page(readable_dag_ids(user), filters, offset, limit))


@app.get("/api/history")
async def history(user: CurrentUser, days: int = Query(7, ge=1, le=366)) -> dict[str, Any]:
    return await run_in_threadpool(lambda: data.history(readable_dag_ids(user), days))


@app.post("/api/snapshots/{name:path}/refresh")
async def refresh(name: str, request: Request, user: CurrentUser, complete: bool = False) -> dict[str, Any]:
    """Trigger the snapshot's DAG: incremental ("Refresh now") or complete ("Complete refresh"); a
    group's member's is its group's DAG (which refreshes every member)."""

    def start() -> dict[str, Any]:
        dag_id = _readable_dag_of(name, readable_dag_ids(user))
        if dag_id is None:
            raise HTTPException(404, f"no snapshot {name}")
        require_trigger(user, dag_id)
        catalog, _ = data.open_catalog()
        snapshot = catalog.snapshot(name)
        if snapshot is None:
            raise HTTPException(404, f"no snapshot {name}")
        mode = NONINCREMENTAL if complete or not snapshot.incremental else INCREMENTAL
        return trigger_dag(_own_address(request), user_token(request), dag_id, mode)

    return await run_in_threadpool(start)


@app.post("/api/snapshots/{name:path}/verify")
async def verify_snapshot(name: str, request: Request, user: CurrentUser) -> dict[str, Any]:
    """Trigger the snapshot's verify DAG ("Verify")."""

    def start() -> dict[str, Any]:
        if _readable_dag_of(name, readable_dag_ids(user)) is None:
            raise HTTPException(404, f"no snapshot {name}")
        catalog, _ = data.open_catalog()
        snapshot = catalog.snapshot(name)
        if snapshot is None:
            raise HTTPException(404, f"no snapshot {name}")
        return _verify(request, user, verify_dag_id(name), snapshot.sn_verify_schedule, f"snapshot {name}")

    return await run_in_threadpool(start)


@app.post("/api/publications/{item:path}/verify")
async def verify_publication(item: str, request: Request, user: CurrentUser) -> dict[str, Any]:
    """Trigger the verify DAG of the publication's replicas ("Verify")."""

    def start() -> dict[str, Any]:
        if publication_dag_id(item) not in readable_dag_ids(user):
            raise HTTPException(404, f"no publication {item}")
        catalog, _ = data.open_catalog()
        publication = catalog.publication(item)
        if publication is None:
            raise HTTPException(404, f"no publication {item}")
        what = f"publication {item}"
        return _verify(request, user, publication_verify_dag_id(item), publication.sp_verify_schedule, what)

    return await run_in_threadpool(start)


def _readable_dag_of(name: str, readable: set[str]) -> str | None:
    """The DAG that refreshes snapshot ``name``, its own or its group's, if the user may read it (the
    catalog is asked only when the user may read a group's DAG)."""
    own = snapshot_dag_id(name)
    if own in readable:
        return own
    if not any(dag_id.startswith(GROUP_PREFIX) for dag_id in readable):
        return None
    catalog, _ = data.open_catalog()
    group = catalog.group_of(name)
    return group_dag_id(group) if group and group_dag_id(group) in readable else None


def _verify(request: Request, user: Any, dag_id: str, schedule: str | None, what: str) -> dict[str, Any]:
    if not schedule:
        raise HTTPException(409, f"{what} has no verify DAG: give it a verify schedule first")
    require_trigger(user, dag_id)
    return trigger_dag(_own_address(request), user_token(request), dag_id, None)


def _own_address(request: Request) -> str:
    """The api-server's address as this connection reached it: the socket's, never the Host header
    (a request must not steer where the user's token is sent)."""
    host, port = request.scope.get("server") or ("127.0.0.1", 8080)
    host = f"[{host}]" if ":" in str(host) else host
    return f"{request.url.scheme}://{host}:{port}"

"""The ``snaprepl_watchdog`` DAG: every ``[snaprepl] watchdog_schedule`` (5 minutes), the checks of
:mod:`snaprepl.ops.watchdog`. Which snaprepl DAGs are paused the task asks the api-server itself,
through the Task SDK with its own token (``RuntimeTaskInstance.get_dag``: the Execution API's
``GET /dags/{dag_id}``), so nothing has to be configured. Where that does not answer, it asks
Airflow's REST API through the HTTP connection ``[snaprepl] airflow_api_conn_id`` (host and port of
the api-server; login and password when its users must log in), and without that connection the
paused check is not made, which the task's log says. Each run also sends
``snaprepl.watchdog.<condition>`` gauges: how many copies each condition holds for.
"""

from __future__ import annotations

import json
import logging
import urllib.parse
import urllib.request
from typing import Any

from airflow.sdk import DAG, task
from airflow.sdk.observability.stats import Stats

from snaprepl.catalog.store import Catalog
from snaprepl.common.dag_names import group_dag_id, publication_dag_id, snapshot_dag_id
from snaprepl.connections.lookup import ConnectionInfo, get_connection
from snaprepl.errors import ConnectionNotFound
from snaprepl.ops.watchdog import CONDITIONS, check
from snaprepl.settings import Settings

log = logging.getLogger(__name__)

WATCHDOG_DAG = "snaprepl_watchdog"
#: What the DAG's tasks are tagged with among snaprepl's DAGs.
TAG = "snaprepl"


def dag_args(settings: Settings) -> dict[str, Any]:
    """The DAG's own arguments (the factory adds what every snaprepl DAG has)."""
    return {
        "dag_id": WATCHDOG_DAG,
        "description": "check every snaprepl copy for lag, staleness, paused DAGs and log backlogs",
        "tags": [TAG, "watchdog"],
        "doc_md": "Alerts once when a copy starts lagging, goes stale, has its DAG paused or lets its log "
        "grow, and once when that clears (`lag_alert_minutes`, `stale_after_hours`, `log_backlog_alert_rows`); "
        "the conditions that hold show on the Replication page and in `snaprepl status`.",
    }


def add_tasks(dag: DAG, settings: Settings) -> DAG:
    with dag:

        @task(task_id="check")
        def watch(**context: Any) -> str:
            catalog = Catalog.open(settings)
            paused = paused_through_task(context.get("ti"), watched_dag_ids(catalog))
            report = check(catalog, settings, paused=paused_dags(settings) if paused is None else paused)
            for condition in CONDITIONS:
                Stats.gauge(f"snaprepl.watchdog.{condition}", sum(c.condition == condition for c in report.holding))
            for started in report.started:
                log.warning("%s%s: %s: %s", started.copy, started.server or "", started.condition, started.detail)
            return str(report)

        watch()
    return dag


def watched_dag_ids(catalog: Catalog) -> list[str]:
    """The DAGs whose pause the watchdog reports: every snapshot's (a group's member has none: its
    group's), every loaded publication's."""
    grouped = catalog.grouped_snapshots()
    ids = [snapshot_dag_id(s.sn_name) for s in catalog.snapshots() if s.sn_name not in grouped]
    ids += [group_dag_id(g.sg_name) for g in catalog.groups()]
    for publication in catalog.publications():
        if any(s.ss_init_state == "done" for s in catalog.subscriptions(publication.sp_item)):
            ids.append(publication_dag_id(publication.sp_item))
    return ids


def paused_through_task(ti: Any, dag_ids: list[str]) -> set[str] | None:
    """Which of ``dag_ids`` are paused, asked through the running task's Task SDK (its own token);
    None when it cannot say (no task instance, or no answer for any of them). A DAG not parsed yet
    is not paused."""
    get_dag = getattr(ti, "get_dag", None)
    if get_dag is None:
        return None
    paused: set[str] = set()
    answered = 0
    for dag_id in dag_ids:
        try:
            dag = get_dag(dag_id)
        except Exception as err:  # not parsed yet, or gone: it pauses nothing
            log.info("watchdog: the api-server did not return DAG %s: %s", dag_id, err)
            continue
        answered += 1
        if dag.is_paused:
            paused.add(dag_id)
    return paused if answered or not dag_ids else None


def paused_dags(settings: Settings) -> set[str] | None:
    """Ids of the paused snaprepl DAGs, from the REST API; None without its connection or answer."""
    try:
        conn = get_connection(settings.airflow_api_conn_id)
    except ConnectionNotFound:
        log.warning(
            "watchdog: paused DAGs are not checked: the Task SDK did not answer and there is no HTTP connection "
            "%r to Airflow's REST API ([snaprepl] airflow_api_conn_id: host and port of the api-server, login and "
            "password if its users log in)",
            settings.airflow_api_conn_id,
        )
        return None
    try:
        return _paused(_base_url(conn), _token(conn))
    except Exception as err:  # the other checks go on; paused conditions stay as they were
        log.warning("watchdog: Airflow's REST API did not say which DAGs are paused: %s", err)
        return None


def _base_url(conn: ConnectionInfo) -> str:
    host = conn.host or "localhost"
    if "://" in host:
        return host.rstrip("/")
    scheme = str(conn.extra.get("scheme") or ("https" if conn.conn_type == "https" else "http"))
    return f"{scheme}://{host}" + (f":{conn.port}" if conn.port else "")


def _token(conn: ConnectionInfo) -> str | None:
    if not conn.login:
        return None
    body = json.dumps({"username": conn.login, "password": conn.password or ""}).encode()
    request = urllib.request.Request(
        _base_url(conn) + "/auth/token", data=body, method="POST", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return str(json.loads(response.read())["access_token"])


def _paused(base: str, token: str | None) -> set[str]:
    found: set[str] = set()
    offset = 0
    while True:
        query = urllib.parse.urlencode({"paused": "true", "tags": TAG, "limit": 100, "offset": offset})
        request = urllib.request.Request(f"{base}/api/v2/dags?{query}", headers={"Accept": "application/json"})
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        with urllib.request.urlopen(request, timeout=30) as response:
            page = json.loads(response.read())
        dags = page.get("dags") or []
        found.update(d["dag_id"] for d in dags)
        offset += len(dags)
        if not dags or offset >= int(page.get("total_entries") or 0):
            return found

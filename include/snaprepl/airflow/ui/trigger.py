"""Start a snapshot's DAG through Airflow's REST API, as the logged-in user.

The run is created by ``POST /api/v2/dags/{dag_id}/dagRuns`` with the user's own token, so Airflow
checks their rights again and records them as the run's triggering user, exactly as if they had
pressed "Trigger" in the DAG's page with the same conf.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from fastapi import HTTPException

from snaprepl.airflow.runs import MODES

#: Seconds the api-server waits for its own ``POST .../dagRuns`` (a busy scheduler's database can be slow).
ANSWER_WITHIN = 60


def trigger_dag(origin: str, token: str, dag_id: str, mode: str | None) -> dict[str, Any]:
    """Create a manual run of ``dag_id`` with conf ``{"mode": mode}`` (an empty conf without a mode:
    a verify DAG); Airflow's answer (the run).

    :param origin: the api-server's own address (``http://host:port``) as the request reached it.
    """
    if mode is not None and mode not in MODES:
        raise HTTPException(422, f"mode must be one of {', '.join(MODES)}")
    url = f"{origin.rstrip('/')}/api/v2/dags/{urllib.parse.quote(dag_id, safe='')}/dagRuns"
    body = json.dumps({"logical_date": None, "conf": {"mode": mode} if mode else {}}).encode()
    request = urllib.request.Request(url, data=body, method="POST")
    request.add_header("Content-Type", "application/json")
    request.add_header("Accept", "application/json")
    request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=ANSWER_WITHIN) as response:
            run: dict[str, Any] = json.loads(response.read())
    except urllib.error.HTTPError as err:
        detail = err.read().decode(errors="replace")[:500]
        raise HTTPException(err.code, f"Airflow refused to trigger {dag_id}: {detail}") from None
    except (TimeoutError, urllib.error.URLError) as err:  # no answer: the run may exist all the same
        raise HTTPException(
            504,
            f"Airflow did not answer the trigger of {dag_id} within {ANSWER_WITHIN} s ({err}): "
            "look at the DAG's runs before pressing again, the run may have been created",
        ) from None
    return {"dag_id": run.get("dag_id"), "dag_run_id": run.get("dag_run_id"), "state": run.get("state")}

"""Airflow 3's REST API as a test uses it: calls, log-in, and DAGs, runs, XComs and task instances.

:class:`AirflowRest` is what :class:`tests.support.airflow_cluster.AirflowCluster` adds to its
processes; on its own it talks to any api-server at ``base_url``. Its waits check :meth:`check_alive`
and end in :meth:`fail`, which the cluster overrides to add its processes' logs.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any, NoReturn

#: Task-instance states after which the run cannot succeed without a retry.
_TI_BAD_STATES = {"failed", "up_for_retry", "upstream_failed", "removed"}


class AirflowRest:
    """Calls to the REST API of the api-server at ``base_url`` (with ``token`` as bearer, if set)."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        #: A JWT sent with every :meth:`api` call (a cluster whose users must log in, see :meth:`login`).
        self.token: str | None = None

    def check_alive(self) -> None:
        """Fail if the server is known to be gone (nothing is known here)."""

    def fail(self, message: str, *, dag_id: str | None = None, run_id: str | None = None) -> NoReturn:
        """Raise an AssertionError with ``message``."""
        raise AssertionError(message)

    def api(self, method: str, path: str, body: Any = None, *, timeout: float = 30) -> Any:
        """Call the REST API; return the decoded JSON. Any status but 2xx fails with the response."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base_url + path, data=data, method=method)
        request.add_header("Accept", "application/json")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        for attempt in range(5):
            try:
                with urllib.request.urlopen(request, timeout=timeout) as response:
                    payload = response.read()
                break
            except urllib.error.HTTPError as err:
                detail = err.read().decode(errors="replace")
                # SQLite lets one process write at a time: a request that met a busy database committed
                # nothing and can be sent again.
                if err.code == 500 and "Database error" in detail and attempt < 4:
                    time.sleep(1 + attempt)
                    continue
                raise AssertionError(f"{method} {path}: HTTP {err.code}: {detail}") from None
        return json.loads(payload) if payload else None

    def login(self, username: str, password: str) -> str:
        """A JWT for a user of the simple auth manager (``POST /auth/token``)."""
        token = self.api("POST", "/auth/token", {"username": username, "password": password})["access_token"]
        return str(token)

    # ------------------------------------------------------------------ DAGs and runs

    def wait_for_dag(self, dag_id: str, timeout: float = 120, *, import_error_grace: float = 15) -> dict[str, Any]:
        """Wait until the dag-processor has serialized ``dag_id`` and it is unpaused.

        Import errors that last ``import_error_grace`` seconds (several parses) fail at once.
        """
        quoted = urllib.parse.quote(dag_id, safe="")
        deadline = time.monotonic() + timeout
        erring_since: float | None = None
        errors: list[Any] = []
        while time.monotonic() < deadline:
            self.check_alive()
            try:
                dag = self.api("GET", f"/api/v2/dags/{quoted}")
            except AssertionError:  # 404 until it is parsed
                dag = None
            if dag and not dag.get("is_stale") and not dag.get("is_paused"):
                return dag
            errors = self.api("GET", "/api/v2/importErrors").get("import_errors") or []
            if not errors:
                erring_since = None
            elif erring_since is None:
                erring_since = time.monotonic()
            elif time.monotonic() - erring_since > import_error_grace:
                self.fail(f"DAG import errors: {json.dumps(errors, indent=1)[:4000]}")
            time.sleep(1)
        self.fail(
            f"DAG {dag_id} did not appear within {timeout:.0f} s; DAGs: {self.dag_ids()}; import errors: {errors}"
        )

    def wait_for_tasks(self, dag_id: str, task_ids: set[str], timeout: float = 120) -> None:
        """Wait until the serialized ``dag_id`` has every task of ``task_ids``: a DAG built from the
        catalog can appear before the catalog holds everything it will be built from (a publication's
        DAG with its first loaded subscriber), and a run triggered then runs that DAG."""
        quoted = urllib.parse.quote(dag_id, safe="")
        deadline = time.monotonic() + timeout
        present: set[str] = set()
        while time.monotonic() < deadline:
            self.check_alive()
            present = {t["task_id"] for t in self.api("GET", f"/api/v2/dags/{quoted}/tasks").get("tasks", [])}
            if task_ids <= present:
                return
            time.sleep(1)
        self.fail(f"DAG {dag_id} lacks tasks {sorted(task_ids - present)} after {timeout:.0f} s")

    def dag_ids(self) -> list[str]:
        return [d["dag_id"] for d in self.api("GET", "/api/v2/dags?limit=100").get("dags", [])]

    def trigger(self, dag_id: str, conf: Mapping[str, Any] | None = None) -> str:
        """Trigger a manual run of ``dag_id``; return its run id."""
        quoted = urllib.parse.quote(dag_id, safe="")
        run = self.api("POST", f"/api/v2/dags/{quoted}/dagRuns", {"logical_date": None, "conf": dict(conf or {})})
        return run["dag_run_id"]

    def backfill(self, dag_id: str, from_date: str, to_date: str, **options: Any) -> dict[str, Any]:
        """Create a backfill as a user does (``POST /api/v2/backfills``); return it (``id`` ...)."""
        return self.api(
            "POST", "/api/v2/backfills", {"dag_id": dag_id, "from_date": from_date, "to_date": to_date, **options}
        )

    def dag_runs(self, dag_id: str, run_type: str | None = None) -> list[dict[str, Any]]:
        """Every run of ``dag_id`` (of one type: ``backfill``, ``scheduled``, ``manual``)."""
        query = "?limit=100" + (f"&run_type={run_type}" if run_type else "")
        return self.api("GET", f"/api/v2/dags/{urllib.parse.quote(dag_id, safe='')}/dagRuns{query}")["dag_runs"]

    def xcom(self, dag_id: str, run_id: str, task_id: str, key: str = "return_value") -> Any:
        """A task's XCom value as Airflow stored it (JSON)."""
        path = (
            f"/api/v2/dags/{urllib.parse.quote(dag_id, safe='')}/dagRuns/{urllib.parse.quote(run_id, safe='')}"
            f"/taskInstances/{urllib.parse.quote(task_id, safe='')}/xcomEntries/{key}"
        )
        value = self.api("GET", path)["value"]
        return json.loads(value) if isinstance(value, str) and value[:1] in "[{" else value

    def import_errors(self) -> list[dict[str, Any]]:
        return self.api("GET", "/api/v2/importErrors").get("import_errors") or []

    def run_state(self, dag_id: str, run_id: str) -> str:
        path = f"/api/v2/dags/{urllib.parse.quote(dag_id, safe='')}/dagRuns/{urllib.parse.quote(run_id, safe='')}"
        return self.api("GET", path)["state"]

    def task_instances(self, dag_id: str, run_id: str) -> list[dict[str, Any]]:
        path = (
            f"/api/v2/dags/{urllib.parse.quote(dag_id, safe='')}/dagRuns/"
            f"{urllib.parse.quote(run_id, safe='')}/taskInstances"
        )
        return self.api("GET", path).get("task_instances", [])

    def wait_for_run(self, dag_id: str, run_id: str, timeout: float = 240) -> None:
        """Wait until the run succeeds; fail as soon as it fails or a task fails (before its retries).

        ``timeout`` bounds the wait for the next task to change state, so a slow machine whose run
        still moves is waited for (up to three timeouts in all), while a run stuck in one state fails.
        """
        start = time.monotonic()
        deadline, seen = start + timeout, None
        state = "unknown"
        while time.monotonic() < min(deadline, start + 3 * timeout):
            self.check_alive()
            state = self.run_state(dag_id, run_id)
            if state == "success":
                return
            tis = self.task_instances(dag_id, run_id)
            bad = [ti for ti in tis if ti.get("state") in _TI_BAD_STATES]
            if state == "failed" or bad:
                what = ", ".join(f"{ti['task_id']}: {ti['state']}" for ti in bad)
                self.fail(f"run {run_id} of {dag_id} is {state} ({what})", dag_id=dag_id, run_id=run_id)
            if (now := sorted((ti["task_id"], ti.get("state")) for ti in tis)) != seen:
                deadline, seen = time.monotonic() + timeout, now
            time.sleep(1)
        waited = time.monotonic() - start
        why = f"no task moved for {timeout:.0f} s" if waited < 3 * timeout else f"after {waited:.0f} s in all"
        self.fail(f"run {run_id} of {dag_id} is still {state}: {why}", dag_id=dag_id, run_id=run_id)

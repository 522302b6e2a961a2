"""Airflow's SimpleAuthManager with per-DAG rights, for tests of what a user may see.

The simple auth manager grants by role only (a viewer reads every DAG); FAB or Keycloak grant per
DAG. This one keeps the simple manager's users, roles, passwords and login, and also refuses some
DAGs to some users: ``SNAPREPL_TEST_HIDDEN_DAGS='{"carol": ["dag_a", ...]}'`` (JSON in the
api-server's environment). Airflow's own endpoints and the Replication page ask it the same
questions (``is_authorized_dag``, and ``get_authorized_dag_ids`` through it), so both hide the DAG.
"""

from __future__ import annotations

import json
import os
from typing import Any

from airflow.api_fastapi.auth.managers.simple.simple_auth_manager import SimpleAuthManager


def hidden_dags() -> dict[str, set[str]]:
    return {user: set(dags) for user, dags in json.loads(os.environ.get("SNAPREPL_TEST_HIDDEN_DAGS", "{}")).items()}


class DagAclAuthManager(SimpleAuthManager):
    def is_authorized_dag(self, *, method: Any, user: Any, access_entity: Any = None, details: Any = None) -> bool:
        dag_id = getattr(details, "id", None)
        if dag_id and dag_id in hidden_dags().get(user.get_name(), set()):
            return False
        return bool(super().is_authorized_dag(method=method, user=user, access_entity=access_entity, details=details))

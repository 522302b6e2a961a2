"""What the logged-in user may see and do, asked of Airflow's own auth manager.

The plugin's endpoints are not protected by Airflow: each one depends on :func:`current_user`
(Airflow's ``get_user``: the JWT of the UI's cookie or a bearer token, else 401/403), then filters
what it returns by the DAGs the user may read and checks the DAG it triggers with the same calls
Airflow's REST API makes (``get_authorized_dag_ids``, ``is_authorized_dag``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any

from airflow.api_fastapi.app import get_auth_manager
from airflow.api_fastapi.auth.managers.base_auth_manager import COOKIE_NAME_JWT_TOKEN
from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity, DagDetails
from airflow.api_fastapi.core_api.security import get_user
from airflow.models.dag import DagModel
from fastapi import Depends, HTTPException, Request, status

#: The logged-in user (Airflow answers 401 without a token, 403 with a bad one).
CurrentUser = Annotated[Any, Depends(get_user)]


def readable_dag_ids(user: Any) -> set[str]:
    """The DAGs ``user`` may read (the Airflow UI lists the same)."""
    return set(get_auth_manager().get_authorized_dag_ids(user=user, method="GET"))


def can_trigger(user: Any, dag_id: str) -> bool:
    """Whether ``user`` may create runs of ``dag_id`` (what ``POST .../dagRuns`` requires)."""
    return bool(
        get_auth_manager().is_authorized_dag(
            method="POST",
            access_entity=DagAccessEntity.RUN,
            details=DagDetails(id=dag_id, team_name=DagModel.get_team_name(dag_id)),
            user=user,
        )
    )


def triggerable(user: Any, dag_ids: Iterable[str]) -> set[str]:
    return {dag_id for dag_id in dag_ids if can_trigger(user, dag_id)}


def require_trigger(user: Any, dag_id: str) -> None:
    """403 unless ``user`` may trigger ``dag_id``."""
    if not can_trigger(user, dag_id):
        raise HTTPException(status.HTTP_403_FORBIDDEN, f"you may not trigger {dag_id}")


def user_token(request: Request) -> str:
    """The user's own JWT (bearer header, else the UI's cookie), to call Airflow's API as them."""
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    token = request.cookies.get(COOKIE_NAME_JWT_TOKEN)
    if not token:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "Not authenticated")
    return token

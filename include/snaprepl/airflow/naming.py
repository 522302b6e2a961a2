"""Names of snaprepl's generated DAGs (importable without Airflow)."""

from __future__ import annotations

import re

RPLOG_PURGE_DAG = "snaprepl_purge_replay_logs"
LOG_PURGE_DAG = "snaprepl_purge_snapshot_logs"
URPLOG_PURGE_DAG = "snaprepl_purge_update_replay_logs"


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_")[:200]


def snapshot_dag_id(name: str) -> str:
    """DAG id of a snapshot's refresh DAG: ``snaprepl_refresh__<conn>__<schema>__<table>``."""
    table, _, conn = name.rpartition("@")
    schema, _, table = table.partition(".")
    return f"snaprepl_refresh__{slug(conn)}__{slug(schema)}__{slug(table)}"


def publication_dag_id(item: str) -> str:
    """DAG id of a publication's sync DAG: ``snaprepl_sync__<conn>__<schema>__<table>``."""
    return snapshot_dag_id(item).replace("snaprepl_refresh__", "snaprepl_sync__", 1)

"""A scheduler listener that tells each backfill run of a snaprepl DAG which backfill it belongs to.

A task sees its run's type but not its backfill (the Task SDK's ``DagRun`` has no ``backfill_id``),
and a backfill of N intervals must refresh completely once, not N times. When the scheduler starts a
backfill run of a ``snaprepl_*`` DAG, this listener copies the run's ``backfill_id`` into its conf
(key ``snaprepl_backfill_id``, visible in the UI); the run's tasks then record and find their
complete refresh in the catalog under that id (:mod:`snaprepl.catalog.backfills`).

It runs inside the scheduler, in its session: it only changes the run's conf, which the scheduler
commits with the run's new state. The plugin registers it (the package's ``airflow.plugins`` entry point).
"""

from __future__ import annotations

from typing import Any

from airflow.listeners import hookimpl

from snaprepl.airflow.runs import BACKFILL, BACKFILL_CONF_KEY, run_type_value

DAG_PREFIX = "snaprepl_"


def label_backfill_run(dag_run: Any) -> bool:
    """Put the run's backfill id in its conf; whether it changed anything."""
    backfill_id = getattr(dag_run, "backfill_id", None)
    if backfill_id is None or run_type_value(dag_run) != BACKFILL:
        return False
    if not str(getattr(dag_run, "dag_id", "")).startswith(DAG_PREFIX):
        return False
    conf = dict(dag_run.conf or {})
    if conf.get(BACKFILL_CONF_KEY) == str(backfill_id):
        return False
    conf[BACKFILL_CONF_KEY] = str(backfill_id)
    dag_run.conf = conf  # a new dict, so that the ORM sees the change
    return True


@hookimpl
def on_dag_run_running(dag_run: Any, msg: str) -> None:
    label_backfill_run(dag_run)

"""snaprepl's Airflow DAGs, generated from its catalog (see snaprepl.airflow.dag_factory).

One DAG per snapshot refreshes it with spark-submit; two scheduled DAGs purge replay logs and
snapshot logs. If the catalog cannot be read, this file fails to import and Airflow shows why.
"""

from snaprepl.airflow.dag_factory import build_dags

globals().update(build_dags())

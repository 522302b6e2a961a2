"""The scheduler deployment's fixtures (tests/support/scheduler_*.py), for test_scheduler_run.py: one
real Airflow deployment with a snapshot, a Connect-mode snapshot, a collection publication and a
publication with three subscribers, and the PostgreSQL metadata database each module's Airflow
runs on. A module that defines a fixture of the same name (its own deployment) uses its own."""

from tests.support.scheduler_collections import collection_publication
from tests.support.scheduler_connect import connect_snapshot
from tests.support.scheduler_deployment import airflow_metadata_url, deployment
from tests.support.scheduler_subscribers import three_subscribers

__all__ = [
    "airflow_metadata_url",
    "collection_publication",
    "connect_snapshot",
    "deployment",
    "three_subscribers",
]

"""What every test needs: the environment set before Airflow or Spark is imported, and one session directory.

Airflow reads its configuration when first imported, so AIRFLOW_HOME (in this session's own temporary
directory, removed when the session ends) and the rest of its configuration are set here, before any
test module imports it. The database, Airflow and Spark fixtures live in tests/integration/conftest.py:
the unit tests need no service.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path

import pytest

_SESSION_DIR = Path(tempfile.mkdtemp(prefix="snaprepl-tests-"))
AIRFLOW_HOME = _SESSION_DIR / "airflow"
AIRFLOW_HOME.mkdir()
REPO = Path(__file__).resolve().parents[1]
os.environ.update(
    {
        "AIRFLOW_HOME": str(AIRFLOW_HOME),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{AIRFLOW_HOME / 'airflow.db'}",
        "AIRFLOW__DATABASE__EXTERNAL_DB_MANAGERS": "snaprepl.catalog.db_manager.SnapreplDBManager",
        "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
        "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
        # Spark's testing mode (its testing guide), inherited by spark-submit children too.
        "SPARK_TESTING": "1",
    }
)
os.environ.pop("AIRFLOW_CONN_SNAPREPL_CATALOG", None)

# Names of this session's databases and files, unique so concurrent sessions never share one.
SESSION_TAG = uuid.uuid4().hex[:8]


def pytest_unconfigure(config: pytest.Config) -> None:
    """Removes the session directory, whatever the outcome of the tests."""
    shutil.rmtree(_SESSION_DIR, ignore_errors=True)


@pytest.fixture(scope="session")
def session_dir() -> Path:
    return _SESSION_DIR

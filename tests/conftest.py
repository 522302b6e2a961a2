"""What every test needs: the environment set before Airflow or Spark is imported, and one session directory.

Airflow reads its configuration when first imported, so AIRFLOW_HOME (in this session's own temporary
directory, removed when the session ends) and the rest of its configuration are set here, before any
test module imports it. The database, Airflow and Spark fixtures live in tests/integration/conftest.py:
the unit tests need no service.
"""

from __future__ import annotations

import os
import shutil
import sys
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


#: Modules that run a whole Airflow deployment (api-server, scheduler, dag-processor), in two groups of
#: about equal length: under pytest-xdist each group runs on one worker, so the two workers each run
#: one deployment at a time (at most two at once). All four in one group made that worker the run's
#: long pole (a 40-minute run, the other worker idle at the end).
HEAVY_MODULES = {
    "tests/integration/airflow/test_airflow_uses.py": "heavy-a",
    "tests/integration/test_tls.py": "heavy-a",
    "tests/integration/airflow/test_scheduler_run.py": "heavy-b",
    "tests/integration/airflow/test_replication_page.py": "heavy-b",
}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``-n 2 --dist loadgroup``), each module's tests run on one worker (module
    fixtures, e.g. an Airflow deployment, start once), and the heavy modules in two groups.
    Every session fixture is per worker already: this file runs in each, with its own tag and home.

    ``tryfirst``: xdist reads the marks in its own ``pytest_collection_modifyitems`` (appending the
    group to each node id); run after it, these marks would be ignored and every module split over
    both workers, starting its deployment twice."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        module = item.path.relative_to(REPO).as_posix()
        item.add_marker(pytest.mark.xdist_group(HEAVY_MODULES.get(module, module)))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Stops the run when xdist's grouping did not take. It appends ``@group`` to each node id, which
    pytest 9.2 ignores (xdist 3.8 sets ``item._nodeid``, pytest 9.2 reads ``item._id``): a silent no-op
    splits modules over both workers and starts their deployments twice. (On a worker ``dist`` is
    ``no``; the ``loadgroup`` flag says what the run asked for.) The controller loses a worker's error
    text, hence the line on the real stderr."""
    if not session.config.pluginmanager.hasplugin("xdist") or not session.config.getoption("loadgroup", default=False):
        return
    ungrouped = [item.nodeid for item in session.items if "@" not in item.nodeid]
    if ungrouped:
        message = (
            f"pytest-xdist --dist loadgroup left {len(ungrouped)} tests ungrouped (e.g. {ungrouped[0]}): "
            "this pytest/pytest-xdist pair ignores xdist_group marks; pin a pair that works in requirements.in"
        )
        print(f"snaprepl tests: {message}", file=sys.__stderr__, flush=True)
        raise pytest.UsageError(message)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Removes the session directory, whatever the outcome of the tests."""
    shutil.rmtree(_SESSION_DIR, ignore_errors=True)


@pytest.fixture(scope="session")
def session_dir() -> Path:
    return _SESSION_DIR

"""Smoke test of an installed snaprepl wheel (scripts/wheel_smoke.sh runs it with ``python -I`` in a
scratch virtual environment, from a temporary directory: only the installed copy is importable).

It parses a statement (the grammar is package data), creates a snapshot log on a SQLite database with
a SQLite catalog (the migrations are package data), builds the DAGs from that catalog, finds the plugin
through its entry point and gets the Replication page and its files, and reads the [snaprepl] section
Airflow's configuration takes from the provider entry point.
"""

from __future__ import annotations

import importlib.util
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

WORK = Path(tempfile.mkdtemp(prefix="snaprepl-wheel-smoke-"))
os.environ.update(
    {
        "AIRFLOW_HOME": str(WORK / "airflow"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(WORK / "plugins"),  # empty: the entry point must bring the plugin
        "AIRFLOW__CORE__DAGS_FOLDER": str(WORK / "dags"),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{WORK / 'airflow.db'}",
        "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
        "AIRFLOW_CONN_SNAPREPL_CATALOG": f"sqlite:///{WORK / 'catalog.db'}",
        "AIRFLOW_CONN_SMOKE_SRC": f"sqlite:///{WORK / 'src.db'}",
    }
)
for folder in ("airflow", "plugins", "dags"):
    (WORK / folder).mkdir()


def check(what: str, ok: bool) -> None:
    print(f"wheel smoke: {what}: {'ok' if ok else 'FAILED'}", flush=True)
    if not ok:
        sys.exit(1)


def installed_copy() -> None:
    import snaprepl

    where = Path(snaprepl.__file__).resolve()
    check(f"snaprepl imported from {where.parent}", "site-packages" in where.parts)
    undeclared = [name for name in ("pytest", "ruff", "wsgidav", "selenium") if importlib.util.find_spec(name)]
    check("only declared distributions importable (no development tools)", undeclared == [])


def statements() -> None:
    from snaprepl.statements.parser import parse_script

    [statement] = parse_script("CREATE SNAPSHOT LOG FOR main.orders@smoke_src")
    check(f"a statement parsed ({type(statement).__name__})", "SnapshotLog" in type(statement).__name__)


def dags() -> None:
    from snaprepl.airflow.dag_factory import build_dags
    from snaprepl.catalog.store import Catalog
    from snaprepl.settings import Settings

    with sqlite3.connect(WORK / "src.db") as db:
        db.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, amount INTEGER)")
    command = str(Path(sys.executable).parent / "snaprepl")  # the console script of the wheel
    for argv in (["catalog", "upgrade"], ["sql", "CREATE SNAPSHOT LOG FOR main.orders@smoke_src"]):
        done = subprocess.run([command, *argv], check=False, capture_output=True, text=True)
        check(f"snaprepl {' '.join(argv)}{': ' + done.stderr.strip() if done.returncode else ''}", done.returncode == 0)
    settings = Settings.load()
    built = build_dags(catalog=Catalog.open(settings), settings=settings)
    tasks = {task for dag in built.values() for task in dag.task_ids}
    check(f"{len(built)} DAGs built from the SQLite catalog", any("orders" in task for task in tasks))


def page() -> None:
    from airflow import plugins_manager
    from airflow.api_fastapi.core_api.security import get_user
    from fastapi.testclient import TestClient

    plugins, errors = plugins_manager._get_plugins()
    ours = [plugin for plugin in plugins if plugin.name == "snaprepl"]
    check("the plugin found by its entry point, once", len(ours) == 1 and not errors)
    [mounted] = ours[0].fastapi_apps
    app = mounted["app"]
    app.dependency_overrides[get_user] = object  # any user: the routes' access checks are unit-tested
    client = TestClient(app)
    answers = [client.get(path) for path in ("/", "/static/replication.js", "/static/vendor/uPlot.iife.min.js")]
    check("the Replication page and its files answer", [a.status_code for a in answers] == [200, 200, 200])


def config() -> None:
    from airflow.configuration import conf

    value = conf.get("snaprepl", "lock_timeout_seconds")  # the provider's defaults, loaded lazily
    check(f"[snaprepl] lock_timeout_seconds = {value} in Airflow's configuration", value == "60")


if __name__ == "__main__":
    installed_copy()
    statements()
    dags()
    page()
    config()

"""``snaprepl --help`` starts fast: it loads none of Airflow, Spark, the grammar, SQLAlchemy or Alembic
(each command imports what it runs when it runs); ``snaprepl status --no-probe`` loads only SQLAlchemy
and sqlglot (the catalog's records and dialects)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

HEAVY = ("airflow", "pyspark", "lark", "alembic", "sqlalchemy", "sqlglot")


def test_snaprepl_help_loads_no_heavy_module() -> None:
    code = (
        "import json, sys\n"
        "from snaprepl.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)

    assert result.returncode == 0, result.stderr[-4000:]
    assert "usage: snaprepl" in result.stdout
    assert json.loads(result.stdout.splitlines()[-1]) == []


def test_status_without_probes_loads_neither_airflow_nor_alembic(tmp_path) -> None:
    """With the catalog connection in the environment, ``status --no-probe`` reads settings, the
    connection and the catalog's revision without importing Airflow (its ORM) or Alembic."""
    env = {
        **os.environ,
        "AIRFLOW_HOME": str(tmp_path),
        "AIRFLOW_CONN_SNAPREPL_CATALOG": f"sqlite:///{tmp_path}/catalog.db",
        "AIRFLOW__SNAPREPL__REFRESH_COMMIT_ROWS": "77",
    }
    migrated = subprocess.run(
        [sys.executable, "-m", "snaprepl", "catalog", "upgrade"], capture_output=True, text=True, env=env, timeout=120
    )
    assert migrated.returncode == 0, migrated.stderr[-4000:]
    code = (
        "import json, sys\n"
        "from snaprepl.cli import main\n"
        "from snaprepl.settings import Settings\n"
        "code = main(['status', '--no-probe'])\n"
        "assert code == 0, code\n"
        "assert Settings.load().refresh_commit_rows == 77\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)

    assert result.returncode == 0, result.stderr[-4000:]
    assert f"catalog: sqlite database {tmp_path}/catalog.db" in result.stdout
    loaded = {m.split(".")[0] for m in json.loads(result.stdout.splitlines()[-1])}
    assert loaded <= {"sqlalchemy", "sqlglot"}, loaded


def test_an_update_snapshot_loads_no_sqlglot() -> None:
    """Only statements that create snapshots parse SQL (sqlglot, 0.09 s of every command that loaded
    it): the API, a refresh's job path and the statement's parse leave it unloaded."""
    code = (
        "import json, sys\n"
        "import snaprepl.api.script, snaprepl.refresh.job, snaprepl.submit.refresh\n"
        "import snaprepl.dialects.postgres_pipe, snaprepl.spark.connect\n"
        "from snaprepl.statements.parser import parse_script\n"
        "parse_script('UPDATE SNAPSHOT a@b')\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('sqlglot', 'pyspark'))))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)

    assert result.returncode == 0, result.stderr[-4000:]
    assert json.loads(result.stdout.splitlines()[-1]) == []

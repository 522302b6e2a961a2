"""Parsing snaprepl's DAG file must stay light: importing the DAG factory and building DAGs loads no
grammar, no SQL parser, no Spark and no migrations (each DAG-processor parse and each task process
pays for what it imports)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = ("lark", "sqlglot", "pyspark", "alembic")
REPO = Path(__file__).resolve().parents[2]


def heavy_modules_after(code: str) -> list[str]:
    code += f"import json, sys\nprint(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))\n"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False, cwd=REPO
    )
    assert result.returncode == 0, result.stderr[-4000:]
    return json.loads(result.stdout.splitlines()[-1])


def test_importing_the_dag_factory_loads_no_lark_sqlglot_pyspark_or_alembic() -> None:
    assert heavy_modules_after("import snaprepl.airflow.dag_factory\n") == []


def test_building_snapshot_purge_and_publication_dags_loads_none_of_them() -> None:
    code = (
        "from snaprepl.airflow.dag_factory import build_dags\n"
        "from tests.unit.test_dag_factory import FakeCatalog, log, publication, snapshot\n"
        "catalog = publication()\n"
        "catalog._snapshots = [snapshot('main.a@dst', schedule='@hourly'), snapshot('main.b@dst', incremental=False)]\n"
        "catalog._logs = [log('public.t@src')]\n"
        "dags = build_dags(catalog)\n"
        "assert len(dags) >= 5, sorted(dags)\n"
    )
    assert heavy_modules_after(code) == []

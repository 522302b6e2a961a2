"""Parsing snaprepl's DAG file must stay light: importing the DAG factory loads no grammar, no Spark
and no migrations (each DAG-processor parse and each task process pays for what it imports)."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("lark", "pyspark", "alembic")


def test_importing_the_dag_factory_loads_no_lark_pyspark_or_alembic() -> None:
    code = (
        "import json, sys\n"
        "import snaprepl.airflow.dag_factory\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)

    assert result.returncode == 0, result.stderr[-4000:]
    assert json.loads(result.stdout.splitlines()[-1]) == []

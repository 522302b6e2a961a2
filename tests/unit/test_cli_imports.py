"""``snaprepl --help`` starts fast: it loads none of Airflow, Spark, the grammar, SQLAlchemy or Alembic
(each command imports what it runs when it runs)."""

from __future__ import annotations

import json
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

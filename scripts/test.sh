#!/usr/bin/env bash
# Run the whole test suite: setup (idempotent), real PostgreSQL and MariaDB, ruff, mypy, import contracts,
# the documentation build (mkdocs --strict), the installed wheel, pytest.
# Extra arguments go to pytest, e.g. scripts/test.sh tests/unit -x (-n 0: one process)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
. scripts/services.sh
ensure_services

echo "== ruff"
"$VENV/bin/ruff" check .
"$VENV/bin/ruff" format --check . >/dev/null || { echo "ruff format would change files: run ruff format ."; exit 1; }

echo "== mypy (strict, the files of [tool.mypy] in pyproject.toml)"
"$VENV/bin/mypy"

echo "== import contracts ([tool.importlinter] in pyproject.toml)"
"$VENV/bin/lint-imports" --no-cache

echo "== the documentation site (mkdocs.yml; its reference pages are generated from the code)"
# Not --quiet: it drops the warnings that --strict counts.
site="$(mktemp -d)"
NO_MKDOCS_2_WARNING=1 "$VENV/bin/mkdocs" build --strict --site-dir "$site"
rm -rf "$site"

echo "== the wheel, installed with only what it declares into a scratch venv (scripts/wheel_smoke.sh)"
VENV="$VENV" bash scripts/wheel_smoke.sh

echo "== pytest (two workers: pytest-xdist, each module on one worker, the Airflow-deployment modules in two groups)"
exec "$VENV/bin/python" -m pytest -n 2 --dist loadgroup "$@"

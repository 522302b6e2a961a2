"""Shared benchmark plumbing: throw-away databases, a throw-away catalog, printing a table.

Benchmarks print figures; they assert nothing about time.
"""

from __future__ import annotations

import compileall
import importlib.util
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg2
import pymysql

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORK = Path(tempfile.mkdtemp(prefix="snaprepl-bench-"))
os.environ.setdefault("AIRFLOW_HOME", str(WORK / "airflow"))
os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
os.environ["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] = f"sqlite:///{WORK / 'airflow.db'}"
os.environ["AIRFLOW_CONN_SNAPREPL_CATALOG"] = f"sqlite:///{WORK / 'catalog.db'}"


def compile_snaprepl() -> None:
    """Write the bytecode of the snaprepl the commands import (this checkout's, or a worktree's on
    PYTHONPATH), as an installed wheel has it: with PYTHONDONTWRITEBYTECODE set and an editable
    install, every command measured would first compile about 190 modules (0.4 s on the 2-core
    machine), which no installed copy does."""
    spec = importlib.util.find_spec("snaprepl")
    assert spec is not None and spec.submodule_search_locations, "snaprepl is not importable"
    compileall.compile_dir(spec.submodule_search_locations[0], quiet=1, workers=0)


compile_snaprepl()


def catalog() -> Any:
    """A fresh, migrated catalog for this run."""
    from snaprepl.catalog.migrate import upgrade
    from snaprepl.catalog.store import Catalog
    from snaprepl.settings import Settings

    opened = Catalog.open(Settings.load())
    upgrade(opened.engine)
    return opened


@contextmanager
def bench_catalog(kind: str) -> Iterator[Any]:
    """A fresh, migrated catalog in ``kind`` (sqlite: the embedded default, a file; postgres: a new
    database, as a production Airflow's metadata database would hold it), dropped afterwards."""
    if kind == "sqlite":
        yield catalog()
        return
    name = f"snaprepl_bench_catalog_{uuid.uuid4().hex[:8]}"
    admin = psycopg2.connect(host="127.0.0.1", user="postgres", dbname="postgres")
    admin.autocommit = True
    admin.cursor().execute(f'CREATE DATABASE "{name}"')
    os.environ["AIRFLOW_CONN_SNAPREPL_CATALOG"] = f"postgresql://postgres@127.0.0.1:5432/{name}"
    opened = catalog()
    try:
        yield opened
    finally:
        opened.dispose()
        admin.cursor().execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


@contextmanager
def bench_database(dialect: str, conn_id: str | None = None) -> Iterator[tuple[str, Any]]:
    """A new database of ``dialect`` with an Airflow connection (``bench_<dialect>`` unless named);
    dropped afterwards.

    Yields (conn_id, connect) where connect() opens an autocommit DB-API connection.
    """
    name = f"snaprepl_bench_{uuid.uuid4().hex[:8]}"
    conn_id = conn_id or f"bench_{dialect}"
    if dialect == "postgres":
        admin = psycopg2.connect(host="127.0.0.1", user="postgres", dbname="postgres")
        admin.autocommit = True
        admin.cursor().execute(f'CREATE DATABASE "{name}"')
        os.environ[f"AIRFLOW_CONN_{conn_id.upper()}"] = f"postgresql://postgres@127.0.0.1:5432/{name}"

        def connect() -> Any:
            conn = psycopg2.connect(host="127.0.0.1", user="postgres", dbname=name)
            conn.autocommit = True
            return conn

        try:
            yield conn_id, connect
        finally:
            admin.cursor().execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.close()
    elif dialect == "mysql":
        admin = pymysql.connect(host="127.0.0.1", user="root", autocommit=True)
        admin.cursor().execute(f"CREATE DATABASE `{name}`")
        os.environ[f"AIRFLOW_CONN_{conn_id.upper()}"] = f"mysql://root@127.0.0.1:3306/{name}"

        def connect() -> Any:
            return pymysql.connect(host="127.0.0.1", user="root", database=name, autocommit=True)

        try:
            yield conn_id, connect
        finally:
            admin.cursor().execute(f"DROP DATABASE IF EXISTS `{name}`")
            admin.close()
    else:
        path = WORK / f"{name}.db"
        os.environ[f"AIRFLOW_CONN_{conn_id.upper()}"] = f"sqlite:///{path}"

        def connect() -> Any:
            conn = sqlite3.connect(path, isolation_level=None, timeout=60)
            conn.execute("PRAGMA journal_mode=WAL")
            return conn

        try:
            yield conn_id, connect
        finally:
            path.unlink(missing_ok=True)


def snaprepl(statement: str) -> tuple[float, str]:
    """Run statements through the CLI as a user would; return the wall time and what it printed."""
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "snaprepl", "sql", statement], capture_output=True, text=True, env=os.environ.copy()
    )
    elapsed = time.monotonic() - started
    if result.returncode != 0:
        raise SystemExit(f"{statement!r} failed: {result.stderr[-3000:]}")
    return elapsed, result.stdout


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in cells:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |")

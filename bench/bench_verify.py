"""Verify cost, each figure beside its reference from the same run (issue 21's benchmark).

(a) a verify of two identical --rows-row PostgreSQL tables (a snapshot and its source), wall time of
    the whole ``snaprepl verify`` command, beside reading both tables once with
    ``psql -c "COPY t TO STDOUT" > /dev/null`` (goal: at most 1.5 times);
(b) the same for PostgreSQL -> MariaDB, beside ``psql COPY`` of the source plus
    ``mariadb --quick -e "SELECT * FROM t" > /dev/null`` of the copy;
(c) a verify with --repair of --diffs scattered differences (changed rows) in the PostgreSQL copy.

Spark runs in --spark mode (``connect``: a Spark Connect server this script starts and stops, as
bench_refresh.py does; or ``submit``).

    .venv/bin/python bench/bench_verify.py                        # 10,000,000 rows, 1,000 differences
    .venv/bin/python bench/bench_verify.py --rows 1000000 --diffs 100
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

from bench_refresh import FILL, TABLE_DDL, spark_mode
from common import bench_database, catalog, print_table, snaprepl


def timed(command: list[str], env: dict[str, str] | None = None) -> float:
    started = time.monotonic()
    with open(os.devnull, "w") as devnull:
        subprocess.run(command, check=True, stdout=devnull, env={**os.environ, **(env or {})})
    return time.monotonic() - started


def psql_read(dbname: str, table: str) -> float:
    return timed(["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", dbname, "-c", f"COPY {table} TO STDOUT"])


def mariadb_read(dbname: str, table: str) -> float:
    return timed(["mariadb", "-h", "127.0.0.1", "-u", "root", "--quick", "-D", dbname, "-e", f"SELECT * FROM {table}"])


def verify(copy: str, *options: str) -> tuple[float, dict[str, Any]]:
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "snaprepl", "verify", copy, "--json", *options],
        capture_output=True, text=True, env=os.environ.copy(),
    )  # fmt: skip
    elapsed = time.monotonic() - started
    if result.returncode not in (0, 3):
        raise SystemExit(f"verify {copy} failed: {result.stderr[-3000:]}")
    return elapsed, json.loads(result.stdout)


def _row(what: str, found: dict[str, Any], took: float, reading: float) -> list[Any]:
    return [what, found["rows"], f"{took:.1f}", f"{reading:.1f}", f"{took / reading:.2f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--diffs", type=int, default=1_000)
    parser.add_argument("--spark", choices=("connect", "submit"), default="connect")
    args = parser.parse_args()
    catalog()
    rows: list[list[Any]] = []
    with bench_database("postgres") as (pg, pg_connect), bench_database("mysql") as (my, _):
        pg_name = os.environ[f"AIRFLOW_CONN_{pg.upper()}"].rsplit("/", 1)[1]
        my_name = os.environ[f"AIRFLOW_CONN_{my.upper()}"].rsplit("/", 1)[1]
        pg_connect().cursor().execute(TABLE_DDL.format(t="src") + "; " + FILL.format(t="src", rows=args.rows))
        pg_connect().cursor().execute("VACUUM ANALYZE src")
        snaprepl(f"CREATE SNAPSHOT LOG FOR src@{pg}; CREATE SNAPSHOT copy_pg@{pg} FROM src@{pg}")
        snaprepl(f"CREATE SNAPSHOT copy_my@{my} FROM src@{pg}")
        pg_connect().cursor().execute("VACUUM ANALYZE copy_pg")
        with spark_mode(args.spark):
            verify(f"copy_pg@{pg}")  # warm: the Connect session, the JVM's classes
            reading = psql_read(pg_name, "src") + psql_read(pg_name, "copy_pg")
            took, found = verify(f"copy_pg@{pg}")
            rows.append(_row("PG -> PG, identical", found, took, reading))
            reading = psql_read(pg_name, "src") + mariadb_read(my_name, "copy_my")
            took, found = verify(f"copy_my@{my}")
            rows.append(_row("PG -> MariaDB, identical", found, took, reading))
            step = max(1, args.rows // args.diffs)
            pg_connect().cursor().execute(f"UPDATE copy_pg SET n = n + 1 WHERE id % {step} = 0")
            reading = psql_read(pg_name, "src") + psql_read(pg_name, "copy_pg")
            took, found = verify(f"copy_pg@{pg}", "--repair")
            what = f"PG -> PG, {found['different']} differences, repaired (equal: {found['equal']})"
            rows.append(_row(what, found, took, reading))
    print(f"verify cost, {args.spark} mode, {args.rows} rows")
    print_table(["case", "rows", "verify s", "read both once s", "ratio"], rows)


if __name__ == "__main__":
    main()

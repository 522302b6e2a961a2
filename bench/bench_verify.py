"""Verify cost, each figure beside its reference from the same run (issue 21's benchmark).

(a) a verify of two identical --rows-row PostgreSQL tables (a snapshot and its source), wall time of
    the whole ``snaprepl verify`` command, beside reading both tables once with
    ``psql -c "COPY t TO STDOUT" > /dev/null`` (goal: at most 1.5 times);
(b) the same for PostgreSQL -> MariaDB, beside ``psql COPY`` of the source plus
    ``mariadb --quick -e "SELECT * FROM t" > /dev/null`` of the copy (of --mariadb-rows rows: a
    heterogeneous copy is hashed in Spark, and its initial load goes through Spark's JDBC writer,
    which take several times longer than the PostgreSQL case);
(c) a verify with --repair of --diffs scattered differences (changed rows) in the PostgreSQL copy.

The tables are filled with ``generate_series`` before their primary key is added (10,000,000 rows in
about a minute and a half on a busy 2-core machine). Each row prints the whole command's seconds and
the job's own (the JSON's ``seconds``: from the job's start to its result, without the CLI, the
catalog and the submission).

Spark runs in --spark mode (``connect``: a Spark Connect server this script starts and stops, as
bench_refresh.py does; or ``submit``).

    .venv/bin/python bench/bench_verify.py                        # 10,000,000 rows, 1,000 differences
    .venv/bin/python bench/bench_verify.py --mariadb-rows 1000000  # (b) at 1,000,000 rows
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
    job = float(found["seconds"])
    row = [what, found["rows"], f"{took:.1f}", f"{job:.1f}", f"{reading:.1f}", f"{took / reading:.2f}"]
    print(*row, sep=" | ", flush=True)
    return row


def fill(connect: Any, table: str, rows: int) -> None:
    """``table`` of ``rows`` rows, its primary key added after them (faster than row by row)."""
    cursor = connect().cursor()
    cursor.execute(TABLE_DDL.format(t=table).replace(" PRIMARY KEY", "") + "; " + FILL.format(t=table, rows=rows))
    cursor.execute(f"ALTER TABLE {table} ADD PRIMARY KEY (id)")
    cursor.execute(f"VACUUM ANALYZE {table}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--diffs", type=int, default=1_000)
    parser.add_argument("--mariadb-rows", type=int, help="rows of the PostgreSQL -> MariaDB case (default --rows)")
    parser.add_argument("--spark", choices=("connect", "submit"), default="connect")
    args = parser.parse_args()
    catalog()
    load_before = os.getloadavg()
    rows: list[list[Any]] = []
    with bench_database("postgres") as (pg, pg_connect), bench_database("mysql") as (my, _):
        pg_name = os.environ[f"AIRFLOW_CONN_{pg.upper()}"].rsplit("/", 1)[1]
        my_name = os.environ[f"AIRFLOW_CONN_{my.upper()}"].rsplit("/", 1)[1]
        fill(pg_connect, "src", args.rows)
        snaprepl(f"CREATE SNAPSHOT LOG FOR src@{pg}; CREATE SNAPSHOT copy_pg@{pg} FROM src@{pg}")
        my_source = "src"
        if args.mariadb_rows not in (None, args.rows):
            my_source = "src_my"
            fill(pg_connect, my_source, args.mariadb_rows)
            snaprepl(f"CREATE SNAPSHOT LOG FOR {my_source}@{pg}")
        snaprepl(f"CREATE SNAPSHOT copy_my@{my} FROM {my_source}@{pg}")
        pg_connect().cursor().execute("VACUUM ANALYZE copy_pg")
        with spark_mode(args.spark):
            verify(f"copy_pg@{pg}")  # warm: the Connect session, the JVM's classes
            reading = psql_read(pg_name, "src") + psql_read(pg_name, "copy_pg")
            took, found = verify(f"copy_pg@{pg}")
            rows.append(_row("PG -> PG, identical", found, took, reading))
            reading = psql_read(pg_name, my_source) + mariadb_read(my_name, "copy_my")
            took, found = verify(f"copy_my@{my}")
            rows.append(_row("PG -> MariaDB, identical", found, took, reading))
            step = max(1, args.rows // args.diffs)
            pg_connect().cursor().execute(f"UPDATE copy_pg SET n = n + 1 WHERE id % {step} = 0")
            reading = psql_read(pg_name, "src") + psql_read(pg_name, "copy_pg")
            took, found = verify(f"copy_pg@{pg}", "--repair")
            what = f"PG -> PG, {found['different']} differences, repaired (equal: {found['equal']})"
            rows.append(_row(what, found, took, reading))
    loads = " / ".join(", ".join(f"{x:.1f}" for x in load) for load in (load_before, os.getloadavg()))
    print(f"verify cost, {args.spark} mode, {args.rows} rows; load average (1, 5, 15 min) at start / end: {loads}")
    print_table(["case", "rows", "verify s", "of which the job s", "read both once s", "ratio"], rows)


if __name__ == "__main__":
    main()

"""Incremental refresh throughput, PostgreSQL into MariaDB and SQLite: the whole command beside the
destination's own floor, same run (bench_throughput.py's cases, other destinations).

For N changed rows of a PostgreSQL table of --table-rows rows (bigint key, int, double, varchar(40),
timestamp), in connect mode (a Spark Connect server this script starts), each run:

- *whole*: the wall time of ``snaprepl sql "UPDATE SNAPSHOT ..."`` applying the N changes to a
  snapshot in the destination database;
- *floor*: the same joined rows (``SELECT l.k, t.* FROM (SELECT DISTINCT key FROM RLOG_src WHERE
  SNAPTIME >= <mark>) l LEFT JOIN src t ON t.id = l.k``) loaded with the destination's fastest bulk
  path into a staging table, then applied in one transaction with one DELETE of the keys that are gone
  and one upsert into a second copy of the table:
  MariaDB: ``COPY (...) TO STDOUT`` streamed through a named pipe into ``LOAD DATA LOCAL INFILE``,
  then ``INSERT ... SELECT ... ON DUPLICATE KEY UPDATE``;
  SQLite: the rows fetched and written by one ``executemany`` in one transaction, then
  ``INSERT ... SELECT ... ON CONFLICT (id) DO UPDATE``.

Kinds as in bench_throughput.py (``update``, ``scattered``, ``mix``). Both copies are checked against the source
(row count and sums) after every run. Prints min / median of --runs runs, rows per second and whole/floor.

    .venv/bin/python bench/bench_throughput_dests.py                    # N = 100,000, MariaDB and SQLite
    .venv/bin/python bench/bench_throughput_dests.py --large --runs 1   # also N = 1,000,000
    .venv/bin/python bench/bench_throughput_dests.py --dests sqlite --changes 20000 --table-rows 200000 --phases
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pymysql
from bench_refresh import FILL, TABLE_DDL, print_phases, spark_mode
from bench_throughput import COLUMNS, KINDS, change, log_names, row, size_arguments, sizes_and_kinds
from common import bench_catalog, bench_database, print_table, snaprepl

DESTS = ("mysql", "sqlite")
NAMES = {"mysql": "MariaDB", "sqlite": "SQLite"}
#: The floor's copy of the table and its staging table, per destination.
DDL = {
    "mysql": (
        "CREATE TABLE {t} (id bigint PRIMARY KEY, n int, x double, s varchar(40), ts datetime(6))",
        "CREATE TABLE {t} (k bigint, id bigint, n int, x double, s varchar(40), ts datetime(6))",
    ),
    "sqlite": (
        "CREATE TABLE {t} (id INTEGER PRIMARY KEY, n INTEGER, x REAL, s TEXT, ts TEXT)",
        "CREATE TABLE {t} (k INTEGER, id INTEGER, n INTEGER, x REAL, s TEXT, ts TEXT)",
    ),
}


def joined(log: tuple[str, str, str], src: str, mark: str) -> str:
    """The changed keys since ``mark`` with their current rows (ts as ISO text with microseconds)."""
    rlog, key, snaptime = log
    changed = f'SELECT DISTINCT "{key}" AS k FROM "{rlog}" WHERE "{snaptime}" >= \'{mark}\''
    return (
        "SELECT l.k, t.id, t.n, t.x, t.s, to_char(t.ts, 'YYYY-MM-DD HH24:MI:SS.US') "
        f"FROM ({changed}) l LEFT JOIN {src} t ON t.id = l.k"
    )


def floor_mysql(pg: Any, dest: Any, query: str, target: tuple[str, str]) -> float:
    """COPY TO STDOUT through a named pipe into LOAD DATA LOCAL INFILE, then one delete and one upsert."""
    dst, stage = target
    cur = dest.cursor()
    cur.execute(f"TRUNCATE {stage}")
    fifo = Path(tempfile.mkdtemp()) / "rows"
    os.mkfifo(fifo)
    sets = ", ".join(f"{c} = VALUES({c})" for c in COLUMNS)
    started = time.monotonic()

    def produce() -> None:
        with open(fifo, "w") as out:
            pg.cursor().copy_expert(f"COPY ({query}) TO STDOUT", out)

    writer = threading.Thread(target=produce)
    writer.start()
    cur.execute(f"LOAD DATA LOCAL INFILE '{fifo}' INTO TABLE {stage}")
    writer.join()
    cur.execute("BEGIN")
    cur.execute(f"DELETE d FROM {dst} d JOIN {stage} s ON d.id = s.k WHERE s.id IS NULL")
    cur.execute(
        f"INSERT INTO {dst} SELECT id, {', '.join(COLUMNS)} FROM {stage} WHERE id IS NOT NULL "
        f"ON DUPLICATE KEY UPDATE {sets}"
    )
    cur.execute("COMMIT")
    elapsed = time.monotonic() - started
    fifo.unlink()
    return elapsed


def floor_sqlite(pg: Any, dest: Any, query: str, target: tuple[str, str]) -> float:
    """The rows fetched and written by one executemany in one transaction, then one delete and one upsert."""
    dst, stage = target
    dest.execute(f"DELETE FROM {stage}")
    sets = ", ".join(f"{c} = excluded.{c}" for c in COLUMNS)
    started = time.monotonic()
    cur = pg.cursor()
    cur.execute(query)
    rows = cur.fetchall()
    dest.execute("BEGIN")
    dest.executemany(f"INSERT INTO {stage} VALUES (?, ?, ?, ?, ?, ?)", rows)
    dest.execute(f"DELETE FROM {dst} WHERE id IN (SELECT k FROM {stage} WHERE id IS NULL)")
    dest.execute(
        f"INSERT INTO {dst} SELECT id, {', '.join(COLUMNS)} FROM {stage} WHERE id IS NOT NULL "
        f"ON CONFLICT (id) DO UPDATE SET {sets}"
    )
    dest.execute("COMMIT")
    return time.monotonic() - started


def sums(cur: Any, table: str) -> tuple[int, ...]:
    cur.execute(f"SELECT COUNT(*), SUM(id), SUM(n), COUNT(DISTINCT s) FROM {table}")
    return tuple(int(v or 0) for v in cur.fetchone())


def measure(dest: str, ends: dict[str, Any], changes: int, kind: str, args: argparse.Namespace) -> dict[str, Any]:
    """``ends``: the source's conn id and connection, the destination's conn id and connection."""
    tag = f"{dest}_{kind}_{changes}"
    src, dst, ref, stage = f"td_src_{tag}", f"td_dst_{tag}", f"td_floor_{tag}", f"td_stage_{tag}"
    pg, out = ends["pg"], ends["dest"]
    cur, dcur = pg.cursor(), out.cursor()
    cur.execute(TABLE_DDL.format(t=src))
    cur.execute(FILL.format(t=src, rows=args.table_rows))
    cur.execute(f"VACUUM ANALYZE {src}")
    source, target = f"{src}@{ends['pg_id']}", f"{dst}@{ends['dest_id']}"
    snaprepl(f"CREATE SNAPSHOT LOG FOR {source}; CREATE SNAPSHOT {target} FROM {source}")
    table_ddl, stage_ddl = DDL[dest]
    dcur.execute(table_ddl.format(t=ref))
    dcur.execute(f"INSERT INTO {ref} SELECT id, {', '.join(COLUMNS)} FROM {dst}")
    dcur.execute(stage_ddl.format(t=stage))
    log = log_names(cur, src)
    load = floor_mysql if dest == "mysql" else floor_sqlite
    wholes, floors = [], []
    for run in range(args.runs):
        cur.execute("SELECT (now() AT TIME ZONE 'UTC')::text")
        mark = cur.fetchone()[0]
        change(cur, src, kind, changes, args.table_rows, run)
        whole, printed = snaprepl(f"UPDATE SNAPSHOT {dst}@{ends['dest_id']}")
        wholes.append(whole)
        floors.append(load(pg, out, joined(log, src, mark), (ref, stage)))
        expected = sums(cur, src)
        if sums(dcur, dst) != expected or sums(dcur, ref) != expected:
            raise SystemExit(f"{dst} or {ref} differs from {src} after run {run + 1}: {printed.strip()}")
        print(
            f"  {dest} {kind} {changes:,} run {run + 1}: whole {whole:.2f} s, "
            f"floor {floors[-1]:.2f} s; {printed.strip()}"
        )
    if args.phases:
        change(cur, src, kind, changes, args.table_rows, args.runs)
        print_phases(f"UPDATE SNAPSHOT {dst}@{ends['dest_id']}", f"{dest}, {kind}, {changes:,} changes")
    snaprepl(f"DROP SNAPSHOT {dst}@{ends['dest_id']}; DROP SNAPSHOT LOG FOR {src}@{ends['pg_id']}")
    for table in (ref, stage, dst):
        dcur.execute(f"DROP TABLE IF EXISTS {table}")
    cur.execute(f"DROP TABLE IF EXISTS {src}")
    return {"dest": dest, "changes": changes, "kind": kind, "wholes": wholes, "floors": floors}


def dest_row(result: dict[str, Any]) -> list[str]:
    return [NAMES[result["dest"]], *row(result)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dests", default=",".join(DESTS), help="mysql, sqlite or both")
    size_arguments(parser)
    args = parser.parse_args()
    sizes, kinds = sizes_and_kinds(args)
    dests = [d.strip() for d in args.dests.split(",") if d.strip()]
    if set(kinds) - set(KINDS) or set(dests) - set(DESTS):
        parser.error(f"--kinds takes {', '.join(KINDS)}; --dests mysql, sqlite or both")
    results = []
    with bench_catalog(args.catalog), bench_database("postgres") as (pg_id, pg_connect), spark_mode("connect"):
        pg = pg_connect()
        for dest in dests:
            with bench_database(dest) as (dest_id, dest_connect):
                out = dest_connect()
                if dest == "mysql":  # the floor's LOAD DATA LOCAL needs a client that allows it
                    out.close()
                    params = os.environ[f"AIRFLOW_CONN_{dest_id.upper()}"].rsplit("/", 1)[1]
                    out = pymysql.connect(
                        host="127.0.0.1", user="root", database=params, autocommit=True, local_infile=True
                    )
                ends = {"pg_id": pg_id, "pg": pg, "dest_id": dest_id, "dest": out}
                for n in sizes:
                    for kind in kinds:
                        results.append(measure(dest, ends, n, kind, args))
                out.close()
        pg.close()
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    print(
        f"\nconnect mode, PostgreSQL into MariaDB / SQLite, {args.table_rows:,}-row table, {args.catalog} catalog; "
        f"min / median of {args.runs} runs; load average at the end {' '.join(load)}\n"
    )
    headers = [
        "destination",
        "changes",
        "kind",
        "whole (s)",
        "floor (s)",
        "whole rows/s",
        "floor rows/s",
        "whole/floor",
    ]
    print_table(headers, [dest_row(r) for r in results])
    subprocess.run(["uptime"], check=False)


if __name__ == "__main__":
    main()

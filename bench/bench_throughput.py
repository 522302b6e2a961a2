"""Incremental refresh throughput, PostgreSQL to PostgreSQL: the whole command beside its floor, same run.

For N changed rows of a table of --table-rows rows (bigint key, int, double, varchar(40), timestamp),
in connect mode (a Spark Connect server this script starts), each run:

- *whole*: the wall time of ``snaprepl sql "UPDATE SNAPSHOT ..."`` applying the N changes;
- *floor* (pipe + upsert, what a replicator between two databases cannot beat): ``psql -c "COPY
  (SELECT l.k, t.* FROM (SELECT DISTINCT key FROM RLOG_src WHERE SNAPTIME >= <mark>) l LEFT JOIN src
  t ON t.id = l.k) TO STDOUT" | psql -c "COPY staging FROM STDIN"`` into an unlogged table, then in
  one transaction ``DELETE … USING staging`` for the keys that are gone and one ``INSERT … SELECT FROM
  staging ON CONFLICT (id) DO UPDATE``, into a second copy of the table.

Three kinds of change, each one transaction: ``update`` (N rows updated, in key order),
``scattered`` (N rows updated in random key order, as an application's traffic changes them) and
``mix`` (a third each of deletes, updates and inserts). Runs after the first have the earlier runs' entries,
already applied, still in the log. Prints min / median of --runs runs of each, rows per second (of
the medians) and whole/floor (of the minima and of the medians). Both destinations are checked
equal to the source after every run.

    .venv/bin/python bench/bench_throughput.py                   # N = 100,000
    .venv/bin/python bench/bench_throughput.py --large           # also N = 1,000,000
    .venv/bin/python bench/bench_throughput.py --changes 20000 --table-rows 200000 --runs 1 --phases
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from typing import Any

from bench_refresh import FILL, TABLE_DDL, min_median, print_phases, spark_mode
from common import bench_catalog, bench_database, print_table, snaprepl

KINDS = ("update", "mix", "scattered")
COLUMNS = ("n", "x", "s", "ts")


def change(cur: Any, src: str, kind: str, changes: int, table_rows: int, run: int) -> None:
    """Make ``changes`` changes to ``src`` in one transaction: all updates (in key order, or
    ``scattered`` in random key order, as an application's traffic writes them: the log's entries, and
    so the change set, come in that order), or a third each of deletes, updates and inserts (new keys
    above the table's, different in every run)."""
    cur.execute("BEGIN")
    step = max(table_rows // changes, 1)
    if kind == "update":
        cur.execute(f"UPDATE {src} SET n = n + 1, s = md5(s) WHERE id % {step} = 0")
    elif kind == "scattered":  # a nested loop over the shuffled keys: the rows are updated in that order
        cur.execute("SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off")
        shuffled = f"SELECT id FROM {src} WHERE id % {step} = 0 ORDER BY random()"
        cur.execute(f"UPDATE {src} t SET n = t.n + 1, s = md5(t.s) FROM ({shuffled}) r WHERE t.id = r.id")
    else:
        third = changes // 3
        step = max(table_rows // (2 * third), 1)
        cur.execute(f"UPDATE {src} SET n = n + 1, s = md5(s) WHERE id % {step} = 0 AND id <= {step * third}")
        gone = f"SELECT id FROM {src} WHERE id % {step} = {1 + run % (step - 1)} LIMIT {third}"
        cur.execute(f"DELETE FROM {src} WHERE id IN ({gone})")
        base = table_rows * (2 + run)
        cur.execute(FILL.format(t=src, rows=third).replace("g,", f"g + {base},", 1))
    cur.execute("COMMIT")


def floor(dbname: str, log: tuple[str, str, str], src: str, target: tuple[str, str], mark: str) -> float:
    """The pipe + upsert floor of the changes logged since ``mark`` into ``target`` (table, staging)."""
    rlog, key, snaptime = log
    dst, stage = target
    psql = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", dbname, "-q", "-v", "ON_ERROR_STOP=1", "-c"]
    subprocess.run([*psql, f"TRUNCATE {stage}"], check=True)
    changed = f'SELECT DISTINCT "{key}" AS k FROM "{rlog}" WHERE "{snaptime}" >= \'{mark}\''
    query = f"SELECT l.k, t.* FROM ({changed}) l LEFT JOIN {src} t ON t.id = l.k"
    sets = ", ".join(f"{c} = EXCLUDED.{c}" for c in COLUMNS)
    apply = (
        f"BEGIN; DELETE FROM {dst} d USING {stage} s WHERE s.id IS NULL AND d.id = s.k; "
        f"INSERT INTO {dst} SELECT id, {', '.join(COLUMNS)} FROM {stage} WHERE id IS NOT NULL "
        f"ON CONFLICT (id) DO UPDATE SET {sets}; COMMIT"
    )
    started = time.monotonic()
    out = subprocess.Popen([*psql, f"COPY ({query}) TO STDOUT"], stdout=subprocess.PIPE)
    subprocess.run([*psql, f"COPY {stage} FROM STDIN"], stdin=out.stdout, check=True)
    out.wait()
    subprocess.run([*psql, apply], check=True)
    return time.monotonic() - started


def differences(cur: Any, src: str, dst: str) -> int:
    cur.execute(
        f"SELECT COUNT(*) FROM {src} a FULL JOIN {dst} b USING (id) "
        "WHERE a.id IS NULL OR b.id IS NULL OR (a.n, a.x, a.s, a.ts) IS DISTINCT FROM (b.n, b.x, b.s, b.ts)"
    )
    return int(cur.fetchone()[0])


def log_names(cur: Any, src: str) -> tuple[str, str, str]:
    """The log table of ``src``, its key column and its SNAPTIME column, as the database names them."""
    cur.execute(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE lower(table_name) = lower(%s) ORDER BY ordinal_position",
        (f"RLOG_{src}",),
    )
    rows = cur.fetchall()
    names = [r[1] for r in rows]
    return (
        rows[0][0],
        next(n for n in names if n.lower().endswith("id")),
        next(n for n in names if "snaptime" in n.lower()),
    )


def measure(cur: Any, conn_id: str, dbname: str, changes: int, kind: str, args: argparse.Namespace) -> dict[str, Any]:
    tag = f"{kind}_{changes}"
    src, dst, ref, stage = f"tp_src_{tag}", f"tp_dst_{tag}", f"tp_floor_{tag}", f"tp_stage_{tag}"
    cur.execute(TABLE_DDL.format(t=src))
    cur.execute(FILL.format(t=src, rows=args.table_rows))
    cur.execute(f"VACUUM ANALYZE {src}")
    cur.execute(f"CREATE TABLE {ref} (LIKE {src} INCLUDING ALL)")
    cur.execute(f"INSERT INTO {ref} SELECT * FROM {src}")
    cur.execute(f"VACUUM ANALYZE {ref}")
    cur.execute(f"CREATE UNLOGGED TABLE {stage} AS SELECT NULL::bigint AS k, * FROM {src} WITH NO DATA")
    snaprepl(f"CREATE SNAPSHOT LOG FOR {src}@{conn_id}; CREATE SNAPSHOT {dst}@{conn_id} FROM {src}@{conn_id}")
    log = log_names(cur, src)
    wholes, floors = [], []
    for run in range(args.runs):
        cur.execute("SELECT (now() AT TIME ZONE 'UTC')::text")
        mark = cur.fetchone()[0]
        change(cur, src, kind, changes, args.table_rows, run)
        whole, printed = snaprepl(f"UPDATE SNAPSHOT {dst}@{conn_id}")
        wholes.append(whole)
        floors.append(floor(dbname, log, src, (ref, stage), mark))
        if differences(cur, src, dst) or differences(cur, src, ref):
            raise SystemExit(f"{dst} or {ref} differs from {src} after run {run + 1}: {printed.strip()}")
        print(f"  {kind} {changes:,} run {run + 1}: whole {whole:.2f} s, floor {floors[-1]:.2f} s; {printed.strip()}")
    if args.phases:
        change(cur, src, kind, changes, args.table_rows, args.runs)
        print_phases(f"UPDATE SNAPSHOT {dst}@{conn_id}", f"{kind}, {changes:,} changes")
    for table in (src, ref, stage, dst):
        cur.execute(f"DROP TABLE IF EXISTS {table}")
    return {"changes": changes, "kind": kind, "wholes": wholes, "floors": floors}


def row(result: dict[str, Any]) -> list[str]:
    """A result's table row: changes, kind, min / median of the whole and of the floor, rows per
    second of each (medians), whole/floor of the minima and of the medians."""
    wholes, floors, n = result["wholes"], result["floors"], result["changes"]
    whole_mid, floor_mid = statistics.median(wholes), statistics.median(floors)
    return [
        f"{n:,}",
        result["kind"],
        min_median(wholes),
        min_median(floors),
        f"{n / whole_mid:,.0f}",
        f"{n / floor_mid:,.0f}",
        f"{min(wholes) / min(floors):.2f} / {whole_mid / floor_mid:.2f}",
    ]


def size_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments every throughput benchmark takes: change-set sizes, table size, kinds, runs, phases."""
    parser.add_argument("--changes", default="100000", help="changed rows per refresh, comma-separated")
    parser.add_argument("--large", action="store_true", help="also 1,000,000 changes")
    parser.add_argument("--table-rows", type=int, default=2_000_000)
    parser.add_argument("--kinds", default=",".join(KINDS), help="update, mix, scattered (comma-separated)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--phases", action="store_true", help="one more refresh under bench/phases.py")
    parser.add_argument(
        "--catalog", choices=("sqlite", "postgres"), default="sqlite", help="where the catalog lives (sqlite: embedded)"
    )


def sizes_and_kinds(args: argparse.Namespace) -> tuple[list[int], list[str]]:
    sizes = [int(s) for s in args.changes.split(",") if s.strip()] + ([1_000_000] if args.large else [])
    return sizes, [k.strip() for k in args.kinds.split(",") if k.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    size_arguments(parser)
    args = parser.parse_args()
    sizes, kinds = sizes_and_kinds(args)
    if set(kinds) - set(KINDS):
        parser.error(f"--kinds takes {', '.join(KINDS)}")
    results = []
    with bench_catalog(args.catalog), bench_database("postgres") as (conn_id, connect), spark_mode("connect"):
        dbname = os.environ[f"AIRFLOW_CONN_{conn_id.upper()}"].rsplit("/", 1)[1]
        conn = connect()
        cur = conn.cursor()
        for n in sizes:
            for kind in kinds:
                results.append(measure(cur, conn_id, dbname, n, kind, args))
        conn.close()
    print(
        f"\nconnect mode, PostgreSQL to PostgreSQL, {args.table_rows:,}-row table, {args.catalog} catalog; "
        f"min / median of {args.runs} runs\n"
    )
    headers = ["changes", "kind", "whole (s)", "pipe+upsert floor (s)", "whole rows/s", "floor rows/s", "whole/floor"]
    print_table(headers, [row(r) for r in results])


if __name__ == "__main__":
    main()

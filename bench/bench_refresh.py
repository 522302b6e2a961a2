"""Refresh cost, PostgreSQL to PostgreSQL, each figure beside its reference from the same run.

(a) fixed cost: wall time of ``snaprepl sql "UPDATE SNAPSHOT ..."`` (a whole spark-submit) when there
    is nothing to do: an incremental refresh with an idle log (answered without starting Spark), and a
    complete refresh of an empty table (the fixed cost of every refresh that moves rows, which (b)
    and (c) subtract), beside a spark-submit that only starts and stops a SparkSession;
(b) complete refresh of --sizes rows (bigint key, int, double, varchar(40), timestamp), which takes the
    COPY pipe (COPY TO piped into COPY FROM per key range in Spark tasks; the run stops if it does
    not): wall time of the whole spark-submit, beside ``psql COPY ... TO STDOUT | psql COPY ... FROM
    STDIN`` of the same rows into a table of the same definition; whole/COPY and (whole - fixed)/COPY,
    each as min / median of --runs runs;
(c) incremental refresh of --changes changed rows in tables of --inc-sizes rows.

    .venv/bin/python bench/bench_refresh.py                 # 1M and 10M rows; 10,000 changes in 100k and 1M
    .venv/bin/python bench/bench_refresh.py --sizes 2000 --inc-sizes 2000,4000 --changes 100   # a smoke run
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from common import bench_database, catalog, print_table, snaprepl

from snaprepl.submit.submission import spark_binary, spark_home

TABLE_DDL = "CREATE TABLE {t} (id bigint PRIMARY KEY, n int, x double precision, s varchar(40), ts timestamp(6))"
FILL = (
    "INSERT INTO {t} SELECT g, (g % 100000)::int, g * 1.5, md5(g::text), "
    "timestamp '2026-01-01' + g * interval '1 millisecond' FROM generate_series(1, {rows}) g"
)


def spark_start_stop() -> float:
    app = Path(tempfile.mkdtemp()) / "start_stop.py"
    app.write_text("from pyspark.sql import SparkSession\nSparkSession.builder.getOrCreate().stop()\n")
    started = time.monotonic()
    subprocess.run(  # the spark-submit and SPARK_HOME the refresh jobs get
        [spark_binary(), "--master", "local[*]", str(app)],
        capture_output=True,
        check=True,
        env={**os.environ, "SPARK_HOME": spark_home()},
    )
    return time.monotonic() - started


def min_median(values: list[float]) -> tuple[float, float]:
    return min(values), statistics.median(values)


def copy_pipe(dbname: str, source: str, target: str) -> float:
    psql = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", dbname, "-q", "-c"]
    subprocess.run([*psql, f"TRUNCATE {target}"], check=True)
    started = time.monotonic()
    out = subprocess.Popen([*psql, f"COPY (SELECT * FROM {source}) TO STDOUT"], stdout=subprocess.PIPE)
    subprocess.run([*psql, f"COPY {target} FROM STDIN"], stdin=out.stdout, check=True)
    out.wait()
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000000,10000000", help="rows of the complete refreshes")
    parser.add_argument("--inc-sizes", default="100000,1000000", help="rows of the incremental tables")
    parser.add_argument("--changes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3, help="runs of each complete refresh and COPY pipe")
    args = parser.parse_args()
    catalog()
    with bench_database("postgres") as (conn_id, connect):
        dbname = os.environ[f"AIRFLOW_CONN_{conn_id.upper()}"].rsplit("/", 1)[1]
        conn = connect()
        cur = conn.cursor()

        # (a) fixed cost
        cur.execute(TABLE_DDL.format(t="fixed_src"))
        cur.execute(FILL.format(t="fixed_src", rows=1000))
        snaprepl(
            f"CREATE SNAPSHOT LOG FOR fixed_src@{conn_id}; CREATE SNAPSHOT fixed_dst@{conn_id} FROM fixed_src@{conn_id}"
        )
        idle = min(snaprepl(f"UPDATE SNAPSHOT fixed_dst@{conn_id}")[0] for _ in range(2))
        # An idle incremental refresh answers without Spark; every refresh that moves rows starts it.
        # Its fixed cost is a complete refresh of an empty table: what (b) and (c) subtract.
        cur.execute(TABLE_DDL.format(t="empty_src"))
        snaprepl(f"CREATE NONINCREMENTAL SNAPSHOT empty_dst@{conn_id} AS 'SELECT * FROM empty_src@{conn_id}'")
        fixed = min(snaprepl(f"UPDATE SNAPSHOT empty_dst@{conn_id}")[0] for _ in range(2))
        start_stop = min(spark_start_stop() for _ in range(2))
        print(
            f"(a) incremental refresh with nothing to do {idle:.1f} s; complete refresh of an empty table "
            f"{fixed:.1f} s; spark-submit start and stop alone {start_stop:.1f} s",
            flush=True,
        )

        # (b) complete refreshes: PostgreSQL to PostgreSQL with the same column types, so the refresh
        # streams COPY TO into COPY FROM per key range inside Spark tasks (the COPY pipe, issue 11.6)
        complete_rows = []
        for rows in (int(s) for s in args.sizes.split(",")):
            src, dst, ref = f"src_{rows}", f"dst_{rows}", f"copy_{rows}"
            cur.execute(TABLE_DDL.format(t=src))
            cur.execute(FILL.format(t=src, rows=rows))
            cur.execute(f"VACUUM ANALYZE {src}")
            cur.execute(TABLE_DDL.format(t=ref))
            snaprepl(f"CREATE NONINCREMENTAL SNAPSHOT {dst}@{conn_id} AS 'SELECT * FROM {src}@{conn_id}'")
            wholes, copies = [], []
            for _ in range(args.runs):
                whole, printed = snaprepl(f"UPDATE SNAPSHOT {dst}@{conn_id}")
                if "through the COPY pipe" not in printed:
                    raise SystemExit(f"the complete refresh of {dst} did not take the COPY pipe: {printed.strip()}")
                wholes.append(whole)
                copies.append(copy_pipe(dbname, src, ref))
            cur.execute(f"SELECT COUNT(*) FROM {dst}")
            assert cur.fetchone()[0] == rows
            (w_min, w_med), (c_min, c_med) = min_median(wholes), min_median(copies)
            complete_rows.append(
                [
                    f"{rows:,}",
                    f"{w_min:.1f} / {w_med:.1f}",
                    f"{c_min:.1f} / {c_med:.1f}",
                    f"{w_min / c_min:.2f} / {w_med / c_med:.2f}",
                    f"{(w_min - fixed) / c_min:.2f} / {(w_med - fixed) / c_med:.2f}",
                ]
            )
            print(f"(b) {rows:,} rows: whole {w_min:.1f} / {w_med:.1f} s, COPY {c_min:.1f} / {c_med:.1f} s", flush=True)
            for table in (src, ref):
                cur.execute(f"DROP TABLE {table}")

        # (c) incremental refreshes
        incremental_rows = []
        for rows in (int(s) for s in args.inc_sizes.split(",")):
            src, dst = f"inc_src_{rows}", f"inc_dst_{rows}"
            cur.execute(TABLE_DDL.format(t=src))
            cur.execute(FILL.format(t=src, rows=rows))
            snaprepl(f"CREATE SNAPSHOT LOG FOR {src}@{conn_id}; CREATE SNAPSHOT {dst}@{conn_id} FROM {src}@{conn_id}")
            step = rows // args.changes
            cur.execute(f"UPDATE {src} SET n = n + 1, s = md5(s) WHERE id % {step} = 0")
            whole = snaprepl(f"UPDATE SNAPSHOT {dst}@{conn_id}")[0]
            cur.execute(f"SELECT COUNT(*) FROM {src} s JOIN {dst} d USING (id) WHERE s.n <> d.n OR s.s <> d.s")
            assert cur.fetchone()[0] == 0
            incremental_rows.append([f"{rows:,}", f"{args.changes:,}", f"{whole:.1f}", f"{whole - fixed:.1f}"])
            print(f"(c) {args.changes:,} changes in {rows:,} rows: {whole:.1f} s", flush=True)
        conn.close()

    print(
        f"\n(a) incremental refresh with nothing to do: {idle:.1f} s; fixed cost of a refresh that moves rows "
        f"(complete refresh of an empty table): {fixed:.1f} s; spark-submit start and stop alone: {start_stop:.1f} s\n"
    )
    print(f"complete refreshes through the COPY pipe; each cell min / median of {args.runs} runs")
    print_table(
        ["rows", "complete refresh (s)", "psql COPY pipe (s)", "whole/COPY", "(whole - fixed)/COPY"], complete_rows
    )
    print()
    print_table(["table rows", "changed rows", "incremental refresh (s)", "minus fixed cost (s)"], incremental_rows)
    if len(incremental_rows) == 2:
        a, b = float(incremental_rows[0][2]), float(incremental_rows[1][2])
        print(f"\nincremental: the larger table took {b / a:.2f}x the time of the smaller one")


if __name__ == "__main__":
    main()

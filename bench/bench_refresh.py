"""Refresh cost, PostgreSQL to PostgreSQL, each figure beside its reference from the same run.

(a) fixed cost: wall time of the whole ``snaprepl sql "UPDATE SNAPSHOT ..."`` command when there is
    nothing to do (an incremental refresh with an idle log, decided before any Spark), of an
    incremental refresh of 10 changed rows, and of a complete refresh of an empty table (the fixed
    cost of every refresh that moves rows, which (b) and (c) subtract), beside a spark-submit that
    only starts and stops a SparkSession;
(b) complete refresh of --sizes rows (bigint key, int, double, varchar(40), timestamp), which takes the
    COPY pipe (COPY TO piped into COPY FROM per key range in Spark tasks; the run stops if it does
    not): wall time of the whole command, beside ``psql COPY ... TO STDOUT | psql COPY ... FROM
    STDIN`` of the same rows into a table of the same definition; whole/COPY and (whole - fixed)/COPY;
(c) incremental refresh of --changes changed rows in tables of --inc-sizes rows.

Every figure is "min / median" of --runs runs (3). With --phases, one more 10-change and one more empty
complete refresh in each mode run under bench/phases.py, which prints where their time goes.

Each figure is measured in every --spark mode: ``submit`` (a spark-submit per refresh) and
``connect`` (the refresh runs in the CLI on a Spark Connect server that this script starts with
``snaprepl spark-server``'s code on a free loopback port, and stops at the end).

    .venv/bin/python bench/bench_refresh.py                 # 1M and 10M rows; 10,000 changes in 100k and 1M
    .venv/bin/python bench/bench_refresh.py --spark submit,connect --sizes 10000 --inc-sizes 10000 --runs 1
    .venv/bin/python bench/bench_refresh.py --spark connect --sizes '' --inc-sizes '' --phases
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from common import bench_database, catalog, print_table, snaprepl

from snaprepl.submit import server
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


def min_median(values: list[float]) -> str:
    """A figure as min / median of its runs."""
    return f"{min(values):.1f} / {statistics.median(values):.1f}"


def ratio(wholes: list[float], copies: list[float], fixed: float = 0.0) -> str:
    """(whole - fixed) / COPY, of the minima and of the medians."""
    lo = (min(wholes) - fixed) / min(copies)
    mid = (statistics.median(wholes) - fixed) / statistics.median(copies)
    return f"{lo:.2f} / {mid:.2f}"


def copy_pipe(dbname: str, source: str, target: str) -> float:
    psql = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", dbname, "-q", "-c"]
    subprocess.run([*psql, f"TRUNCATE {target}"], check=True)
    started = time.monotonic()
    out = subprocess.Popen([*psql, f"COPY (SELECT * FROM {source}) TO STDOUT"], stdout=subprocess.PIPE)
    subprocess.run([*psql, f"COPY {target} FROM STDIN"], stdin=out.stdout, check=True)
    out.wait()
    return time.monotonic() - started


@contextlib.contextmanager
def spark_mode(mode: str) -> Iterator[None]:
    """Run the block's snaprepl commands in ``mode``: ``connect`` starts a Connect server first."""
    if mode == "submit":
        yield
        return
    state = Path(tempfile.mkdtemp(prefix="bench-connect-"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    os.environ["SNAPREPL_STATE_DIR"] = str(state)
    info = server.start(port, directory=state / "connect-server")
    conn = {"conn_type": "spark_connect", "host": "localhost", "port": port, "password": info.token}
    os.environ["AIRFLOW_CONN_SNAPREPL_SPARK"] = json.dumps(conn)
    try:
        yield
    finally:
        del os.environ["AIRFLOW_CONN_SNAPREPL_SPARK"]
        server.stop(state / "connect-server")
        shutil.rmtree(state, ignore_errors=True)


def fixed_costs(cur: Any, conn_id: str, tag: str, runs: int, phases: bool = False) -> dict[str, list[float]]:
    """(a): an idle incremental refresh, one of 10 changed rows, and a complete refresh of an empty
    table (the fixed cost of every refresh that moves rows, which (b) and (c) subtract)."""
    src, dst = f"fixed_src_{tag}", f"fixed_dst_{tag}"
    cur.execute(TABLE_DDL.format(t=src))
    cur.execute(FILL.format(t=src, rows=1000))
    snaprepl(f"CREATE SNAPSHOT LOG FOR {src}@{conn_id}; CREATE SNAPSHOT {dst}@{conn_id} FROM {src}@{conn_id}")
    idle, ten = [], []
    for _ in range(runs):
        idle.append(snaprepl(f"UPDATE SNAPSHOT {dst}@{conn_id}")[0])
        cur.execute(f"UPDATE {src} SET n = n + 1 WHERE id <= 10")
        ten.append(snaprepl(f"UPDATE SNAPSHOT {dst}@{conn_id}")[0])
    cur.execute(TABLE_DDL.format(t=f"empty_src_{tag}"))
    snaprepl(f"CREATE NONINCREMENTAL SNAPSHOT empty_dst_{tag}@{conn_id} AS 'SELECT * FROM empty_src_{tag}@{conn_id}'")
    empty = [snaprepl(f"UPDATE SNAPSHOT empty_dst_{tag}@{conn_id}")[0] for _ in range(runs)]
    print(f"(a) {tag}: idle {min_median(idle)} s; 10 changes {min_median(ten)} s; empty complete {min_median(empty)} s")
    if phases:
        cur.execute(f"UPDATE {src} SET n = n + 1 WHERE id <= 10")
        print_phases(f"UPDATE SNAPSHOT {dst}@{conn_id}", f"{tag}, 10 changes")
        print_phases(f"UPDATE SNAPSHOT empty_dst_{tag}@{conn_id}", f"{tag}, empty complete")
    return {"idle": idle, "ten": ten, "empty": empty}


def print_phases(statement: str, what: str) -> None:
    """The statement run under bench/phases.py: its phases as it printed them, and its wall time."""
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("phases.py")), "sql", statement],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
    )
    elapsed = time.monotonic() - started
    if result.returncode != 0:
        raise SystemExit(f"{statement!r} failed: {result.stderr[-3000:]}")
    lines = [line for line in result.stderr.splitlines() if line.startswith("[")]
    print(f"phases ({what}), seconds since start and each phase's own:", *lines, sep="\n  ")
    print(f"  whole command (the interpreter's exit included): {elapsed:.3f} s", flush=True)


def complete_refresh(cur: Any, conn_id: str, dbname: str, rows: int, tag: str, runs: int) -> tuple[list[float], ...]:
    """(b): the whole complete refresh of ``rows`` rows (through the COPY pipe), and the COPY pipe of
    the same rows, ``runs`` times each."""
    src, dst, ref = f"src_{rows}_{tag}", f"dst_{rows}_{tag}", f"copy_{rows}_{tag}"
    cur.execute(TABLE_DDL.format(t=src))
    cur.execute(FILL.format(t=src, rows=rows))
    cur.execute(f"VACUUM ANALYZE {src}")
    cur.execute(TABLE_DDL.format(t=ref))
    snaprepl(f"CREATE NONINCREMENTAL SNAPSHOT {dst}@{conn_id} AS 'SELECT * FROM {src}@{conn_id}'")
    wholes, copies = [], []
    for _ in range(runs):
        whole, printed = snaprepl(f"UPDATE SNAPSHOT {dst}@{conn_id}")
        if "through the COPY pipe" not in printed:
            raise SystemExit(f"the complete refresh of {dst} did not take the COPY pipe: {printed.strip()}")
        wholes.append(whole)
        copies.append(copy_pipe(dbname, src, ref))
    cur.execute(f"SELECT COUNT(*) FROM {dst}")
    assert cur.fetchone()[0] == rows
    print(f"(b) {tag} {rows:,} rows: whole {min_median(wholes)} s, COPY {min_median(copies)} s", flush=True)
    for table in (src, ref):
        cur.execute(f"DROP TABLE {table}")
    return wholes, copies


def incremental_refresh(cur: Any, conn_id: str, rows: int, changes: int, tag: str, runs: int) -> list[float]:
    """(c): an incremental refresh of ``changes`` changed rows in a table of ``rows`` rows, ``runs`` times."""
    src, dst = f"inc_src_{rows}_{tag}", f"inc_dst_{rows}_{tag}"
    cur.execute(TABLE_DDL.format(t=src))
    cur.execute(FILL.format(t=src, rows=rows))
    snaprepl(f"CREATE SNAPSHOT LOG FOR {src}@{conn_id}; CREATE SNAPSHOT {dst}@{conn_id} FROM {src}@{conn_id}")
    step = max(rows // changes, 1)
    wholes = []
    for _ in range(runs):
        cur.execute(f"UPDATE {src} SET n = n + 1, s = md5(s) WHERE id % {step} = 0")
        wholes.append(snaprepl(f"UPDATE SNAPSHOT {dst}@{conn_id}")[0])
        cur.execute(f"SELECT COUNT(*) FROM {src} s JOIN {dst} d USING (id) WHERE s.n <> d.n OR s.s <> d.s")
        assert cur.fetchone()[0] == 0
    print(f"(c) {tag} {changes:,} changes in {rows:,} rows: {min_median(wholes)} s", flush=True)
    return wholes


def measure(mode: str, args: argparse.Namespace, conn_id: str, dbname: str, cur: Any) -> dict[str, Any]:
    """Every figure of one Spark mode."""
    runs = args.runs
    with spark_mode(mode):
        fixed = fixed_costs(cur, conn_id, mode, runs, args.phases)
        complete = {rows: complete_refresh(cur, conn_id, dbname, rows, mode, runs) for rows in _sizes(args.sizes)}
        incremental = {
            rows: incremental_refresh(cur, conn_id, rows, args.changes, mode, runs) for rows in _sizes(args.inc_sizes)
        }
    return {**fixed, "complete": complete, "incremental": incremental}


def _sizes(text: str) -> list[int]:
    return [int(s) for s in text.split(",") if s.strip()]


def report(results: dict[str, dict[str, Any]], start_stop: list[float], args: argparse.Namespace) -> None:
    print(f"\nevery cell: min / median of {args.runs} runs; the whole command (CLI included)\n")
    print_table(
        [
            "mode",
            "idle incremental (s)",
            "10-change incremental (s)",
            "empty complete (s)",
            "spark-submit start+stop (s)",
        ],
        [
            [m, min_median(r["idle"]), min_median(r["ten"]), min_median(r["empty"]), min_median(start_stop)]
            for m, r in results.items()
        ],
    )
    print()
    rows = []
    for mode, r in results.items():
        fixed = statistics.median(r["empty"])
        for size, (wholes, copies) in r["complete"].items():
            rows.append(
                [
                    mode,
                    f"{size:,}",
                    min_median(wholes),
                    min_median(copies),
                    ratio(wholes, copies),
                    ratio(wholes, copies, fixed),
                ]
            )
    if rows:
        headers = ["mode", "rows", "complete refresh (s)", "COPY pipe (s)", "whole/COPY", "(whole - fixed)/COPY"]
        print_table(headers, rows)
        print()
    rows = [
        [mode, f"{size:,}", f"{args.changes:,}", min_median(wholes)]
        for mode, r in results.items()
        for size, wholes in r["incremental"].items()
    ]
    if rows:
        print_table(["mode", "table rows", "changed rows", "incremental refresh (s)"], rows)
    for mode, r in results.items():
        medians = [statistics.median(w) for w in r["incremental"].values()]
        if len(medians) == 2:
            print(
                f"\nincremental ({mode}): the larger table took {medians[1] / medians[0]:.2f}x the smaller one's time"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000000,10000000", help="rows of the complete refreshes")
    parser.add_argument("--inc-sizes", default="100000,1000000", help="rows of the incremental tables")
    parser.add_argument("--changes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3, help="runs of every figure (min / median)")
    parser.add_argument("--spark", default="submit", help="Spark modes, side by side: submit, connect or both")
    parser.add_argument("--phases", action="store_true", help="also print where a refresh's time goes")
    args = parser.parse_args()
    modes = [m.strip() for m in args.spark.split(",") if m.strip()]
    if not modes or set(modes) - {"submit", "connect"}:
        parser.error("--spark takes submit, connect, or submit,connect")
    catalog()
    with bench_database("postgres") as (conn_id, connect):
        dbname = os.environ[f"AIRFLOW_CONN_{conn_id.upper()}"].rsplit("/", 1)[1]
        conn = connect()
        cur = conn.cursor()
        start_stop = [spark_start_stop() for _ in range(args.runs)]
        results = {mode: measure(mode, args, conn_id, dbname, cur) for mode in modes}
        conn.close()
    report(results, start_stop, args)


if __name__ == "__main__":
    main()

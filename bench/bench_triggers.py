"""Cost of the snapshot-log triggers on source DML.

Per real dialect: a table of --rows rows (bigint key, int, varchar(40)); --clients processes each
run single-row UPDATEs of random keys, one transaction each, for --seconds; transactions per second
without the snapshot log, then with it (created by snaprepl), and their ratio.

    .venv/bin/python bench/bench_triggers.py            # 1,000,000 rows, 2 clients, 20 s each
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import time
from typing import Any

from common import bench_database, catalog, print_table

LOAD = {
    "postgres": [
        "CREATE TABLE bench (id bigint PRIMARY KEY, n int NOT NULL, s varchar(40))",
        "INSERT INTO bench SELECT g, 0, md5(g::text) FROM generate_series(1, {rows}) g",
        "VACUUM ANALYZE bench",
    ],
    "mysql": [
        "CREATE TABLE bench (id bigint PRIMARY KEY, n int NOT NULL, s varchar(40)) ENGINE=InnoDB",
        "INSERT INTO bench SELECT seq, 0, md5(seq) FROM seq_1_to_{rows}",
    ],
    "sqlite": [
        "CREATE TABLE bench (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, s TEXT)",
        "WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < {rows}) "
        "INSERT INTO bench SELECT i, 0, hex(randomblob(16)) FROM g",
    ],
}
PARAM = {"postgres": "%s", "mysql": "%s", "sqlite": "?"}


def _client(connect: Any, dialect: str, rows: int, seconds: float, results: Any) -> None:
    conn = connect()
    cur = conn.cursor()
    statement = f"UPDATE bench SET n = n + 1 WHERE id = {PARAM[dialect]}"
    rng = random.Random()
    warm_until = time.monotonic() + 2
    while time.monotonic() < warm_until:
        cur.execute(statement, (rng.randint(1, rows),))
    done = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        cur.execute(statement, (rng.randint(1, rows),))
        done += 1
    results.put(done)
    conn.close()


def measure(connect: Any, dialect: str, rows: int, seconds: float, clients: int) -> float:
    ctx = mp.get_context("fork")
    results = ctx.Queue()
    procs = [ctx.Process(target=_client, args=(connect, dialect, rows, seconds, results)) for _ in range(clients)]
    for p in procs:
        p.start()
    total = sum(results.get() for _ in procs)
    for p in procs:
        p.join()
    return total / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--dialects", default="postgres,mysql,sqlite")
    args = parser.parse_args()

    from snaprepl.ops.snapshot_logs import create_snapshot_log
    from snaprepl.statements.parser import parse_table_ref

    cat = catalog()
    table = []
    for dialect in args.dialects.split(","):
        with bench_database(dialect) as (conn_id, connect):
            conn = connect()
            for statement in LOAD[dialect]:
                conn.cursor().execute(statement.format(rows=args.rows))
            conn.close()
            without = measure(connect, dialect, args.rows, args.seconds, args.clients)
            create_snapshot_log(parse_table_ref(f"bench@{conn_id}"), catalog=cat)
            with_log = measure(connect, dialect, args.rows, args.seconds, args.clients)
            table.append(
                [
                    dialect,
                    f"{args.rows:,}",
                    args.clients,
                    f"{without:,.0f}",
                    f"{with_log:,.0f}",
                    f"{with_log / without:.2f}",
                ]
            )
            print(f"{dialect}: {without:,.0f} tps without the log, {with_log:,.0f} with it", flush=True)
    print()
    print_table(["dialect", "rows", "clients", "tps without log", "tps with log", "ratio"], table)


if __name__ == "__main__":
    main()

"""Bi-directional replication cost, each figure beside its reference measured in the same run.

(a) REPL_UPDATE_SNAPSHOT (the whole command: pull from each subscriber, then push to each) of
    --changes changes spread over a PostgreSQL publisher and a MariaDB and a SQLite subscriber of a
    --rows-row table, --conflict-share of them conflicting, beside the same call with nothing to do;
(b) REPL_INIT_SNAPSHOT of --init-rows rows (bigint key, int, double, varchar(40), timestamp) from a
    PostgreSQL publisher into a PostgreSQL subscriber, at the seed's default 100 rows per commit and
    at 10,000, beside ``psql COPY ... TO STDOUT | psql COPY ... FROM STDIN`` of the same rows.

Each figure is measured in every --spark mode (``submit``: a spark-submit per sync; ``connect``: the
sync runs in the CLI on a Spark Connect server this script starts and stops), as min / median of
--runs runs (each sync run with a fresh set of changes).

    .venv/bin/python bench/bench_bidir.py --spark submit,connect [--only sync|init] [--phases]

With --phases, one more initial load at each setting runs under bench/phases.py, which prints where
its time goes (the Spark session, the copy, the apply, the CLI around them).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import time
from typing import Any

from bench_refresh import FILL, TABLE_DDL, min_median, print_phases, ratio, spark_mode
from common import bench_database, catalog, print_table, snaprepl

ITEMS_DDL = "CREATE TABLE items (id int PRIMARY KEY, name varchar(40), price numeric(10,2))"


def mark(conn: object) -> str:
    return "?" if type(conn).__module__.startswith("sqlite3") else "%s"


def apply_changes(conn: object, changes: list[tuple[str, int, str]]) -> None:
    cur = conn.cursor()  # type: ignore[attr-defined]
    m = mark(conn)
    cur.execute("BEGIN")
    for op, key, price in changes:
        if op == "insert":
            cur.execute(f"INSERT INTO items (id, name, price) VALUES ({m}, 'new', {m})", (key, price))
        elif op == "delete":
            cur.execute(f"DELETE FROM items WHERE id = {m}", (key,))
        else:
            cur.execute(f"UPDATE items SET price = {m}, name = 'changed' WHERE id = {m}", (price, key))
    cur.execute("COMMIT")


def plan_changes(
    rows: int, total: int, conflict_share: float, rng: random.Random, new_from: int | None = None
) -> dict[str, list]:
    """``total`` changes over three servers; ``conflict_share`` of them are subscribers' updates of keys
    the publisher updates too (update conflicts)."""
    conflicting = int(total * conflict_share)
    keys = rng.sample(range(1, rows + 1), total)
    plan: dict[str, list] = {"pub": [], "my": [], "lite": []}
    # The publisher's share includes the keys the subscribers' conflicting changes collide with.
    collide, rest = keys[: conflicting // 2], keys[conflicting // 2 :]
    for key in collide:  # the publisher and both subscribers update it: two conflicts
        plan["pub"].append(("update", key, "1.00"))
        plan["my"].append(("update", key, "9.00"))
        plan["lite"].append(("update", key, "8.00"))
    servers = ["pub", "my", "lite"]
    new_key = rows if new_from is None else new_from  # keys above every key inserted so far
    for i, key in enumerate(rest[: total - 3 * len(collide)]):
        server = servers[i % 3]
        roll = rng.random()
        if roll < 0.1:
            new_key += 1
            plan[server].append(("insert", new_key, "5.00"))
        elif roll < 0.2:
            plan[server].append(("delete", key, ""))
        else:
            plan[server].append(("update", key, f"{rng.randint(1, 9)}.00"))
    return plan


def fingerprint(conn: object) -> tuple:
    cur = conn.cursor()  # type: ignore[attr-defined]
    rowguid = "ROWGUID" if type(conn).__module__.startswith("pymysql") else '"ROWGUID"'
    cur.execute(f"SELECT id, name, price, {rowguid} FROM items")
    return tuple(sorted((r[0], r[1], f"{float(r[2]):.2f}", r[3]) for r in cur.fetchall()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000, help="rows of the synced table")
    parser.add_argument("--changes", type=int, default=10_000)
    parser.add_argument("--conflict-share", type=float, default=0.1)
    parser.add_argument("--init-rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3, help="runs of every figure (min / median)")
    parser.add_argument("--spark", default="submit", help="Spark modes, side by side: submit, connect or both")
    parser.add_argument("--only", choices=["sync", "init"], help="measure (a) sync or (b) init alone")
    parser.add_argument("--phases", action="store_true", help="(b): one more load a setting under bench/phases.py")
    args = parser.parse_args()
    modes = [m.strip() for m in args.spark.split(",") if m.strip()]
    if not modes or set(modes) - {"submit", "connect"}:
        parser.error("--spark takes submit, connect, or submit,connect")
    catalog()
    sync_rows = measure_syncs(args, modes, random.Random(7)) if args.only != "init" else []
    init_rows = measure_inits(args, modes) if args.only != "sync" else []
    print(f"\nevery cell: min / median of {args.runs} runs; the whole command (CLI included)\n")
    if sync_rows:
        print_table(["mode", "changes", "conflicts", "REPL_UPDATE_SNAPSHOT (s)", "with nothing to do (s)"], sync_rows)
        print()
    if init_rows:
        print_table(
            ["mode", "rows", "rows per commit", "REPL_INIT_SNAPSHOT (s)", "COPY pipe (s)", "init/COPY"], init_rows
        )


def measure_syncs(args: argparse.Namespace, modes: list[str], rng: random.Random) -> list[list[str]]:
    """(a), in every mode: --runs syncs of fresh changes, and --runs syncs with nothing to do."""
    rows = []
    with (
        bench_database("postgres", "bench_pub") as (pub_id, pub_connect),
        bench_database("mysql", "bench_my") as (my_id, my_connect),
        bench_database("sqlite", "bench_lite") as (lite_id, lite_connect),
    ):
        pub = pub_connect()
        pub.cursor().execute(ITEMS_DDL)
        pub.cursor().execute(
            f"INSERT INTO items SELECT g, 'item ' || g, (g % 9) + 1 FROM generate_series(1, {args.rows}) g"
        )
        item = f"items@{pub_id}"
        setup = [f"REPL_CREATE_SNAPSHOT_PUB('{item}', 2)"]
        for conn_id in (my_id, lite_id):
            setup += [
                f"REPL_CREATE_SNAPSHOT_SUB(REPL_SNP_SERVER('{conn_id}'), '{item}', 2)",
                f"REPL_INIT_SNAPSHOT(REPL_SERVER_NAME('{conn_id}'), '{item}', 2, 10000)",
            ]
        snaprepl("; ".join(setup))
        conns = {"pub": pub, "my": my_connect(), "lite": lite_connect()}
        for mode in modes:
            with spark_mode(mode):
                rows.append(_syncs(args, mode, item, conns, rng))
        for conn in conns.values():
            conn.close()
    return rows


def _syncs(args: argparse.Namespace, mode: str, item: str, conns: dict[str, Any], rng: random.Random) -> list[str]:
    idle = [snaprepl(f"REPL_UPDATE_SNAPSHOT('{item}', 2)")[0] for _ in range(args.runs)]
    synced, conflicts = [], []
    for _ in range(args.runs):
        cur = conns["pub"].cursor()
        cur.execute("SELECT MAX(id) FROM items")
        plan = plan_changes(args.rows, args.changes, args.conflict_share, rng, new_from=cur.fetchone()[0])
        for server, changes in plan.items():
            apply_changes(conns[server], changes)
        elapsed, report = snaprepl(f"REPL_UPDATE_SNAPSHOT('{item}', 2)")
        print(f"(a) {mode}: {elapsed:.1f} s\n{report}", flush=True)
        prints = {server: fingerprint(conn) for server, conn in conns.items()}
        assert prints["pub"] == prints["my"] == prints["lite"], "the replicas differ after the sync"
        synced.append(elapsed)
        conflicts.append(sum(int(line.split(",")[2].split()[0]) for line in report.splitlines() if "pull from" in line))
    spread = f"{min(conflicts):,}" if min(conflicts) == max(conflicts) else f"{min(conflicts):,}-{max(conflicts):,}"
    return [mode, f"{args.changes:,}", spread, min_median(synced), min_median(idle)]


def measure_inits(args: argparse.Namespace, modes: list[str]) -> list[list[str]]:
    """(b), in every mode: --runs initial loads at 100 and at 10,000 rows per commit, and as many COPY pipes."""
    rows = []
    with (
        bench_database("postgres", "bench_init_pub") as (src_id, src_connect),
        bench_database("postgres", "bench_init_sub") as (dst_id, dst_connect),
    ):
        src, dst = src_connect(), dst_connect()
        src.cursor().execute(TABLE_DDL.format(t="big"))
        src.cursor().execute(FILL.format(t="big", rows=args.init_rows))
        src.cursor().execute("VACUUM ANALYZE big")
        snaprepl(f"REPL_CREATE_SNAPSHOT_PUB('big@{src_id}', 2)")
        src.cursor().execute("VACUUM ANALYZE big")
        dst.cursor().execute(
            TABLE_DDL.format(t="copy_ref").replace("ts timestamp(6))", 'ts timestamp(6), "ROWGUID" varchar(255))')
        )
        src_name = os.environ[f"AIRFLOW_CONN_{src_id.upper()}"].rsplit("/", 1)[1]
        dst_name = os.environ[f"AIRFLOW_CONN_{dst_id.upper()}"].rsplit("/", 1)[1]
        server = f"REPL_SNP_SERVER('{dst_id}')"
        for mode in modes:
            with spark_mode(mode):
                for per_commit in (100, 10_000):
                    inits, copies = [], []
                    for _ in range(args.runs):
                        snaprepl(f"REPL_CREATE_SNAPSHOT_SUB({server}, 'big@{src_id}', 2)")
                        elapsed, report = snaprepl(
                            f"REPL_INIT_SNAPSHOT(REPL_SERVER_NAME('{dst_id}'), 'big@{src_id}', 2, {per_commit})"
                        )
                        cur = dst.cursor()
                        cur.execute("SELECT COUNT(*) FROM big")
                        assert cur.fetchone()[0] == args.init_rows
                        snaprepl(f"REPL_DROP_SNAPSHOT_SUB({server}, 'big@{src_id}', 2)")
                        dst.cursor().execute("TRUNCATE copy_ref")
                        inits.append(elapsed)
                        copies.append(copy_pipe_between(src_name, dst_name, "big", "copy_ref"))
                        print(f"(b) {mode}, {per_commit} rows per commit: {elapsed:.1f} s\n{report}", flush=True)
                    if args.phases:  # where one more load's time goes (not among the figures)
                        snaprepl(f"REPL_CREATE_SNAPSHOT_SUB({server}, 'big@{src_id}', 2)")
                        print_phases(
                            f"REPL_INIT_SNAPSHOT(REPL_SERVER_NAME('{dst_id}'), 'big@{src_id}', 2, {per_commit})",
                            f"{mode}, {per_commit} rows per commit",
                        )
                        snaprepl(f"REPL_DROP_SNAPSHOT_SUB({server}, 'big@{src_id}', 2)")
                    rows.append(
                        [
                            mode,
                            f"{args.init_rows:,}",
                            f"{per_commit:,}",
                            min_median(inits),
                            min_median(copies),
                            ratio(inits, copies),
                        ]
                    )
        src.close()
        dst.close()
    return rows


def copy_pipe_between(source_db: str, target_db: str, source: str, target: str) -> float:
    """``psql COPY TO STDOUT | psql COPY FROM STDIN`` between two databases."""
    psql = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-q"]
    started = time.monotonic()
    out = subprocess.Popen(
        [*psql, "-d", source_db, "-c", f"COPY (SELECT * FROM {source}) TO STDOUT"], stdout=subprocess.PIPE
    )
    subprocess.run([*psql, "-d", target_db, "-c", f"COPY {target} FROM STDIN"], stdin=out.stdout, check=True)
    out.wait()
    return time.monotonic() - started


if __name__ == "__main__":
    main()

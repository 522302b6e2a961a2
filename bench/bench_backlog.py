"""An incremental refresh's cost with and without older, already-applied entries in its log
(issue 20, item 3): PostgreSQL to PostgreSQL, in one run, side by side.

(d) ``without``: an incremental refresh of --changes changed rows, whose log holds only those
    entries; ``with``: the same refresh after another --changes rows were changed and applied by an
    earlier refresh a moment before, so that the log also holds that many older entries (inside the
    tolerance window, which a SNAPTIME window reads again and drops by the replay log). With exact
    watermarks (PostgreSQL reads its log by transaction ids) the two should be within 10 %.

Every figure is the whole ``snaprepl sql "UPDATE SNAPSHOT ..."`` command, "min / median" of --runs
runs, in every --spark mode (``connect`` starts a Spark Connect server as bench_refresh.py does).

    .venv/bin/python bench/bench_backlog.py --spark connect                 # 100,000 changes
    .venv/bin/python bench/bench_backlog.py --spark connect --changes 20000 --runs 3
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

from bench_refresh import FILL, TABLE_DDL, min_median, spark_mode
from common import bench_database, catalog, print_table, snaprepl


def _snapshot(cur: Any, conn_id: str, name: str, changes: int) -> tuple[str, str]:
    src, dst = f"{name}_src", f"{name}_dst"
    cur.execute(TABLE_DDL.format(t=src))
    cur.execute(FILL.format(t=src, rows=2 * changes))
    snaprepl(f"CREATE SNAPSHOT LOG FOR {src}@{conn_id}; CREATE SNAPSHOT {dst}@{conn_id} FROM {src}@{conn_id}")
    return src, dst


def _refresh(cur: Any, conn_id: str, src: str, dst: str, ids: str) -> float:
    """Change the rows ``ids`` (a condition), refresh, check the copy; the refresh's wall time."""
    cur.execute(f"UPDATE {src} SET n = n + 1, s = md5(s) WHERE {ids}")
    seconds, printed = snaprepl(f"UPDATE SNAPSHOT {dst}@{conn_id}")
    cur.execute(f"SELECT COUNT(*) FROM {src} s JOIN {dst} d USING (id) WHERE s.n <> d.n OR s.s <> d.s")
    assert cur.fetchone()[0] == 0, printed
    return seconds


def measure(cur: Any, conn_id: str, mode: str, changes: int, runs: int) -> tuple[list[float], list[float]]:
    """(d) in ``mode``: the refresh times without and with ``changes`` older applied entries."""
    first, second = f"id <= {changes}", f"id > {changes}"
    with spark_mode(mode):
        plain_src, plain_dst = _snapshot(cur, conn_id, f"plain_{mode}", changes)
        older_src, older_dst = _snapshot(cur, conn_id, f"older_{mode}", changes)
        without, with_older = [], []
        for _ in range(runs):
            without.append(_refresh(cur, conn_id, plain_src, plain_dst, first))
            _refresh(cur, conn_id, older_src, older_dst, second)  # the older entries, applied
            with_older.append(_refresh(cur, conn_id, older_src, older_dst, first))
        cur.execute(f'SELECT COUNT(*) FROM "RLOG_{older_src}"')
        assert cur.fetchone()[0] == 2 * changes, "the older entries are still in the log"
    print(f"(d) {mode}: without {min_median(without)} s, with older entries {min_median(with_older)} s", flush=True)
    return without, with_older


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--changes", type=int, default=100_000, help="changed rows per refresh (N)")
    parser.add_argument("--runs", type=int, default=3, help="runs of every figure (min / median)")
    parser.add_argument("--spark", default="connect", help="Spark modes, side by side: submit, connect or both")
    args = parser.parse_args()
    modes = [m.strip() for m in args.spark.split(",") if m.strip()]
    if not modes or set(modes) - {"submit", "connect"}:
        parser.error("--spark takes submit, connect, or submit,connect")
    catalog()
    with bench_database("postgres") as (conn_id, connect):
        conn = connect()
        results = {mode: measure(conn.cursor(), conn_id, mode, args.changes, args.runs) for mode in modes}
        conn.close()
    print(f"\nevery cell: min / median of {args.runs} runs; the whole command (CLI included)\n")
    rows = [
        [
            mode,
            f"{args.changes:,}",
            min_median(without),
            min_median(with_older),
            f"{min(with_older) / min(without):.2f} / {statistics.median(with_older) / statistics.median(without):.2f}",
        ]
        for mode, (without, with_older) in results.items()
    ]
    older = f"with {args.changes:,} older applied (s)"
    headers = ["mode", "changes (N)", "without older (s)", older, "with/without (min / median)"]
    print_table(headers, rows)


if __name__ == "__main__":
    main()

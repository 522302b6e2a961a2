"""Applying many changes into MariaDB against the same into PostgreSQL (issue 9.8).

One PostgreSQL source of --rows rows with a snapshot log feeds two snapshots, one on MariaDB and one
on PostgreSQL. Then, for each destination, the wall time of ``snaprepl sql "UPDATE SNAPSHOT ..."``
(a whole spark-submit) after:

(a) --changes log entries (a third deletes, a third updates, a third inserts): an incremental refresh;
(b) as many changes again, on destinations that now carry a snapshot log of their own (so a complete
    refresh must apply the difference by key instead of swapping tables): a complete refresh.

Each refresh is checked: the destination equals the source afterwards.

    .venv/bin/python bench/bench_mariadb_apply.py               # 100,000 changes in 150,000 rows
"""

from __future__ import annotations

import argparse
from typing import Any

from common import bench_database, catalog, print_table, snaprepl

SOURCE_DDL = "CREATE TABLE src (id bigint PRIMARY KEY, n int, s varchar(40))"


def change(cur: Any, first_new: int, changes: int) -> None:
    """``changes`` log entries: deletes, updates and inserts, a third each."""
    third = changes // 3
    cur.execute(f"DELETE FROM src WHERE id IN (SELECT id FROM src ORDER BY id LIMIT {third})")
    cur.execute(f"UPDATE src SET n = n + 1, s = md5(s) WHERE id IN (SELECT id FROM src ORDER BY id DESC LIMIT {third})")
    cur.execute(
        f"INSERT INTO src SELECT g, g % 1000, md5(g::text) FROM generate_series({first_new}, "
        f"{first_new + changes - 2 * third - 1}) g"
    )


def source_rows(cur: Any) -> set[tuple[int, int, str]]:
    cur.execute("SELECT id, n, s FROM src")
    return {(int(i), int(n), s) for i, n, s in cur.fetchall()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=150_000)
    parser.add_argument("--changes", type=int, default=100_000)
    args = parser.parse_args()
    catalog()
    with bench_database("postgres") as (pg, pg_connect), bench_database("mysql") as (my, my_connect):
        pcur, mcur = pg_connect().cursor(), my_connect().cursor()
        pcur.execute(SOURCE_DDL)
        pcur.execute(f"INSERT INTO src SELECT g, g % 1000, md5(g::text) FROM generate_series(1, {args.rows}) g")
        snaprepl(
            f"CREATE SNAPSHOT LOG FOR src@{pg}; CREATE SNAPSHOT mdst@{my} FROM src@{pg}; "
            f"CREATE SNAPSHOT pdst@{pg} FROM src@{pg}"
        )
        cursors = {"MariaDB": (mcur, f"mdst@{my}", "mdst"), "PostgreSQL": (pcur, f"pdst@{pg}", "pdst")}
        results: list[list[str]] = []
        next_id = 10 * args.rows
        for part, mode in (("(a) incremental", ""), ("(b) complete, difference apply", " AS NONINCREMENTAL")):
            if mode:
                snaprepl(f"CREATE SNAPSHOT LOG FOR mdst@{my}; CREATE SNAPSHOT LOG FOR pdst@{pg}")
            change(pcur, next_id, args.changes)
            next_id += args.changes
            expected = source_rows(pcur)
            for name, (cur, ref, table) in cursors.items():
                seconds = snaprepl(f"UPDATE SNAPSHOT {ref}{mode}")[0]
                cur.execute(f"SELECT id, n, s FROM {table}")
                assert {(int(i), int(n), s) for i, n, s in cur.fetchall()} == expected, f"{name} differs"
                results.append([part, name, f"{args.changes:,}", f"{len(expected):,}", f"{seconds:.1f}"])
                print(f"{part}: {name} {seconds:.1f} s", flush=True)
    print()
    print_table(["refresh", "destination", "changes", "rows after", "wall time (s)"], results)


if __name__ == "__main__":
    main()

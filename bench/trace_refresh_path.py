"""How many snaprepl modules an incremental refresh passes through, from the statement to the copy.

Runs ``snaprepl sql "UPDATE SNAPSHOT ..."`` (PostgreSQL to PostgreSQL, 100 changed rows) with
``bench/tracer`` on PYTHONPATH, so the CLI process and the Spark driver each record, in order, the
snaprepl modules whose functions run, and for each database statement they send, the chain of
snaprepl modules on the call stack from the entry point down to the statement (the path a change
travels). Prints per process: distinct modules run, module changes, returns to a module already
left (the path "doubling back"); and the longest statement chain with its distinct modules and
returns.

    .venv/bin/python bench/trace_refresh_path.py                      # this checkout
    PYTHONPATH=/tmp/before/include .venv/bin/python bench/trace_refresh_path.py   # another checkout
"""

from __future__ import annotations

import itertools
import os
import tempfile
from pathlib import Path

from common import bench_database, catalog, print_table, snaprepl

TRACER = Path(__file__).resolve().parent / "tracer"


def summary(path: list[str]) -> tuple[int, int, int]:
    """(distinct modules, module changes, returns to a module already left)."""
    left: set[str] = set()
    returns = 0
    for before, after in itertools.pairwise(path):
        left.add(before)
        returns += after in left
    return len(set(path)), max(len(path) - 1, 0), returns


def main() -> None:
    import importlib.util

    spec = importlib.util.find_spec("snaprepl")
    print(f"snaprepl from {Path(spec.origin).parents[1] if spec and spec.origin else '?'}")
    catalog()
    with bench_database("postgres") as (conn_id, connect):
        cur = connect().cursor()
        cur.execute("CREATE TABLE src (id bigint PRIMARY KEY, v text)")
        cur.execute("INSERT INTO src SELECT g, md5(g::text) FROM generate_series(1, 1000) g")
        snaprepl(f"CREATE SNAPSHOT LOG FOR src@{conn_id}; CREATE SNAPSHOT dst@{conn_id} FROM src@{conn_id}")
        cur.execute("UPDATE src SET v = 'changed' WHERE id <= 100")
        out = Path(tempfile.mkdtemp(prefix="snaprepl-trace-"))
        inherited = os.environ.get("PYTHONPATH", "")
        traced = os.pathsep.join(filter(None, [inherited, str(TRACER)]))
        os.environ.update(SNAPREPL_TRACE_DIR=str(out), PYTHONPATH=traced)
        try:
            snaprepl(f"UPDATE SNAPSHOT dst@{conn_id}")
        finally:
            os.environ.pop("SNAPREPL_TRACE_DIR")
            os.environ["PYTHONPATH"] = inherited
        rows, everything = [], []
        for trace in sorted(out.glob("*.txt"), key=lambda p: p.stat().st_mtime):
            command, *lines = trace.read_text().splitlines()
            cut = lines.index("--statements--")
            path, chains = lines[:cut], [c.split() for c in lines[cut + 1 :]]
            if path:
                longest = max(chains, key=len, default=[])
                rows.append([command[-60:], *summary(path), *summary(longest)[::2]])
                everything.append(path)
                on_the_way = sorted({m.removeprefix("snaprepl.") for c in chains for m in c})
                print(
                    f"\n{command}\n  longest chain to a statement: "
                    + " > ".join(m.removeprefix("snaprepl.") for m in longest)
                )
                print(
                    f"  modules on the way to any of its {len(chains)} statements ({len(on_the_way)}): "
                    + ", ".join(on_the_way)
                )
        print()
        distinct = len({m for path in everything for m in path})
        rows.append(["all processes", distinct, *(sum(r[i] for r in rows) for i in range(2, 6))])
        print_table(["process", "modules run", "module changes", "returns", "longest chain", "its returns"], rows)


if __name__ == "__main__":
    main()

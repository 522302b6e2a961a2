"""The PostgreSQL -> SQLite pipe's block fetcher and writer travel to Spark's Python workers by value
(issue 24): unpickled and run where snaprepl cannot be imported, they still write every block."""

from __future__ import annotations

import subprocess
import sys

from pyspark import cloudpickle

from snaprepl.dialects.postgres_sqlite_pipe import block_writer, fetch_ahead

WORKER = r"""
import pickle, sqlite3, sys

class NoSnaprepl:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "snaprepl":
            raise ImportError("snaprepl is not installed here")

sys.meta_path.insert(0, NoSnaprepl())
blocks, write = pickle.loads(sys.stdin.buffer.read())

class Cursor:  # a server-side cursor's blocks
    left = [[(1, 10), (2, 20)], [(3, 30)], [(4, 40)], []]
    def fetchmany(self, n):
        return self.left.pop(0)

db = sqlite3.connect(":memory:", isolation_level=None)
db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER)")
written = write(db, blocks(Cursor()))
print(written, db.execute("SELECT sum(v) FROM t").fetchone()[0], "snaprepl" in sys.modules)
"""


def test_the_fetcher_and_writer_run_without_snaprepl() -> None:
    payload = cloudpickle.dumps((fetch_ahead(2, 2), block_writer("INSERT INTO t (id, v) VALUES (?, ?)", 3)))
    ran = subprocess.run([sys.executable, "-c", WORKER], input=payload, capture_output=True, timeout=60, check=False)
    assert ran.returncode == 0, ran.stderr.decode()
    assert ran.stdout.decode().split() == ["4", "100", "False"]

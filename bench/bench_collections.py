"""Collection replication cost (type 1), each figure beside its reference measured in the same run.

(a) REPL_INIT_SNAPSHOT of --resources resources of --size bytes in nested subcollections, from one
    WebDAV server to another (wsgidav on loopback, both in this process), beside a plain copy of the
    same resources with the same client (webdav4 through fsspec, streamed in the same chunks);
(b) REPL_UPDATE_SNAPSHOT with --changes resources changed on the publisher, beside the same call
    with nothing to do (the cost of scanning both sides).

The sync job runs in this process (its ``run``, as the Spark driver runs it, with a SparkSession
started only if the job asks for one): spark-submit's own start (tens of seconds here) is left out.

    .venv/bin/python bench/bench_collections.py [--resources 1000 --size 100000 --changes 100]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import sqlalchemy as sa
from common import print_table

from tests.support.collections import put
from tests.support.jobs import in_process_syncer
from tests.support.webdav import PASSWORD, USER, webdav_server

COLL = "/bench/c/"


def _setup(base: Path, resources: int, size: int) -> None:
    for i in range(resources):
        put(base / "one", COLL, f"d{i % 10}/e{i % 7}/r{i}.bin", os.urandom(size))


def _plain_copy(source: object, target: object, resources: int) -> float:
    from snaprepl.collections.stores import CHUNK

    started = time.perf_counter()
    for i in range(resources):
        rel = f"d{i % 10}/e{i % 7}/r{i}.bin"
        with source.fs.open(source.full(rel), "rb") as src:  # type: ignore[attr-defined]
            target.fs.makedirs(f"/plain/d{i % 10}/e{i % 7}", exist_ok=True)  # type: ignore[attr-defined]
            with target.fs.open(f"/plain/{rel}", "wb") as out:  # type: ignore[attr-defined]
                shutil.copyfileobj(src, out, CHUNK)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--resources", type=int, default=1000)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--changes", type=int, default=100)
    args = parser.parse_args()
    from snaprepl import api
    from snaprepl.catalog.migrate import upgrade
    from snaprepl.catalog.store import Catalog
    from snaprepl.collections.stores import Store
    from snaprepl.connections import ConnectionInfo, write_connections_file
    from snaprepl.spark.session import LazySession

    base = Path(tempfile.mkdtemp(prefix="bench-coll-"))
    (base / "one").mkdir()
    (base / "two").mkdir()
    _setup(base, args.resources, args.size)
    engine = sa.create_engine(f"sqlite:///{base / 'catalog.db'}")
    upgrade(engine)
    catalog = Catalog(engine)
    spark = LazySession("bench-collections")
    syncer = in_process_syncer(spark)
    with webdav_server(base / "one") as one, webdav_server(base / "two") as two:
        conns = [
            ConnectionInfo(n, "webdav", host=d.url, login=USER, password=PASSWORD)
            for n, d in (("one", one), ("two", two))
        ]
        os.environ["SNAPREPL_CONNECTIONS_FILE"] = str(write_connections_file(conns, str(base)))
        plain = _plain_copy(Store(conns[0], COLL), Store(conns[1], COLL), args.resources)
        api.repl_create_snapshot_pub(f"{COLL}@one", 1, catalog=catalog)
        api.repl_create_snapshot_sub(api.repl_snp_server("two", catalog=catalog), f"{COLL}@one", 1, catalog=catalog)
        started = time.perf_counter()
        api.repl_init_snapshot("two", f"{COLL}@one", 1, catalog=catalog, syncer=syncer)
        init = time.perf_counter() - started
        for i in range(args.changes):
            put(base / "one", COLL, f"d{i % 10}/e{i % 7}/r{i}.bin", os.urandom(args.size))
        started = time.perf_counter()
        api.repl_update_snapshot(f"{COLL}@one", 1, catalog=catalog, syncer=syncer)
        sync = time.perf_counter() - started
        started = time.perf_counter()
        api.repl_update_snapshot(f"{COLL}@one", 1, catalog=catalog, syncer=syncer)
        idle = time.perf_counter() - started
    megabytes = args.resources * args.size / 1e6
    print_table(
        ["what", "seconds", "per resource (ms)"],
        [
            [
                f"plain copy, {args.resources} x {args.size} B ({megabytes:.0f} MB)",
                f"{plain:.2f}",
                f"{plain / args.resources * 1000:.1f}",
            ],
            ["REPL_INIT_SNAPSHOT, same resources", f"{init:.2f}", f"{init / args.resources * 1000:.1f}"],
            ["REPL_UPDATE_SNAPSHOT, nothing to do (scan both sides)", f"{idle:.2f}", ""],
            [
                f"REPL_UPDATE_SNAPSHOT, {args.changes} changed",
                f"{sync:.2f}",
                f"{sync / max(args.changes, 1) * 1000:.1f}",
            ],
        ],
    )
    spark.stop()
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

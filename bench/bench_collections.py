"""Collection replication cost (type 1), each figure beside its reference measured in the same run.

(a) REPL_INIT_SNAPSHOT of --resources resources of --size bytes in nested subcollections, from one
    WebDAV server to another (wsgidav on loopback, both in this process), beside a plain copy of the
    same resources with the same client (webdav4 through fsspec, streamed in the same chunks);
(b) REPL_UPDATE_SNAPSHOT with --changes resources changed on the publisher, beside the same call
    with nothing to do (the cost of scanning both sides).

Each is measured twice, side by side, on two collections of the same resources: the copies in this
process (what ``snaprepl`` runs today), and spread over Spark tasks (``CollectionSync(spark=...)``,
a local session on --master, started before the clock). The WebDAV servers run in this process,
so the Spark tasks' requests come back to it: on a small machine its threads are a bottleneck too.

    .venv/bin/python bench/bench_collections.py [--resources 1000 --size 100000 --changes 100 --master local[2]]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the Spark tasks' Python: this venv, with snaprepl

import sqlalchemy as sa
from common import print_table

from tests.support.collections import put
from tests.support.webdav import PASSWORD, USER, webdav_server

COLL = "/bench/c/"
SPARK_COLL = "/bench/s/"


def _setup(base: Path, resources: int, size: int) -> None:
    for i in range(resources):
        body = os.urandom(size)
        for coll in (COLL, SPARK_COLL):
            put(base / "one", coll, f"d{i % 10}/e{i % 7}/r{i}.bin", body)


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


def _timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def _runs(
    base: Path, coll: str, args: argparse.Namespace, init: Callable[[], object], sync: Callable[[], object]
) -> tuple[float, float, float]:
    """(init, sync of ``args.changes`` changed resources, sync with nothing to do) of collection ``coll``."""
    loaded = _timed(init)
    for i in range(args.changes):
        put(base / "one", coll, f"d{i % 10}/e{i % 7}/r{i}.bin", os.urandom(args.size))
    return loaded, _timed(sync), _timed(sync)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--resources", type=int, default=1000)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--changes", type=int, default=100)
    parser.add_argument("--master", default="local[2]", help="the Spark master of the Spark path")
    args = parser.parse_args()
    from snaprepl import api
    from snaprepl.catalog.migrate import upgrade
    from snaprepl.catalog.store import Catalog
    from snaprepl.collections.stores import Store
    from snaprepl.collections.sync import CollectionSync
    from snaprepl.connections.lookup import ConnectionInfo, write_connections_file
    from snaprepl.spark.session import build_session

    base = Path(tempfile.mkdtemp(prefix="bench-coll-"))
    (base / "one").mkdir()
    (base / "two").mkdir()
    _setup(base, args.resources, args.size)
    engine = sa.create_engine(f"sqlite:///{base / 'catalog.db'}")
    upgrade(engine)
    catalog = Catalog(engine)
    spark = build_session("bench-collections", args.master, {"spark.ui.enabled": "false"})
    spark.range(4).collect()
    with webdav_server(base / "one") as one, webdav_server(base / "two") as two:
        conns = [
            ConnectionInfo(n, "webdav", host=d.url, login=USER, password=PASSWORD)
            for n, d in (("one", one), ("two", two))
        ]
        os.environ["SNAPREPL_CONNECTIONS_FILE"] = str(write_connections_file(conns, str(base)))
        plain = _plain_copy(Store(conns[0], COLL), Store(conns[1], COLL), args.resources)
        server = api.repl_snp_server("two", catalog=catalog)
        for coll in (COLL, SPARK_COLL):
            api.repl_create_snapshot_pub(f"{coll}@one", 1, catalog=catalog)
            api.repl_create_snapshot_sub(server, f"{coll}@one", 1, catalog=catalog)

        def in_process() -> CollectionSync:  # the copies in this process, one after another
            return CollectionSync(catalog, f"{COLL}@one", Store(conns[0], COLL), [Store(conns[1], COLL)])

        local = _runs(base, COLL, args, lambda: (s := in_process()).init(s.subs[0]), lambda: in_process().sync())

        def distributed() -> CollectionSync:
            subs = [Store(conns[1], SPARK_COLL)]
            return CollectionSync(catalog, f"{SPARK_COLL}@one", Store(conns[0], SPARK_COLL), subs, spark=spark)

        remote = _runs(
            base, SPARK_COLL, args, lambda: (s := distributed()).init(s.subs[0]), lambda: distributed().sync()
        )
    spark.stop()
    _print(args, plain, local, remote)
    shutil.rmtree(base, ignore_errors=True)


def _print(args: argparse.Namespace, plain: float, local: tuple[float, ...], remote: tuple[float, ...]) -> None:
    megabytes = args.resources * args.size / 1e6

    def cells(seconds: float, per: int) -> list[str]:
        return [f"{seconds:.2f}", f"{seconds / max(per, 1) * 1000:.1f}" if per else ""]

    print_table(
        ["what", "in process: s", "ms each", f"Spark {args.master}: s", "ms each"],
        [
            [
                f"plain copy, {args.resources} x {args.size} B ({megabytes:.0f} MB)",
                *cells(plain, args.resources),
                "",
                "",
            ],
            [
                "REPL_INIT_SNAPSHOT, same resources",
                *cells(local[0], args.resources),
                *cells(remote[0], args.resources),
            ],
            [
                f"REPL_UPDATE_SNAPSHOT, {args.changes} changed",
                *cells(local[1], args.changes),
                *cells(remote[1], args.changes),
            ],
            ["REPL_UPDATE_SNAPSHOT, nothing to do (scan both sides)", *cells(local[2], 0), *cells(remote[2], 0)],
        ],
    )


if __name__ == "__main__":
    main()

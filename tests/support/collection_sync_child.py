"""A collection sync with its copies in Spark tasks, in a process of its own (to be killed, or measured).

    python -m tests.support.collection_sync_child classic|connect init|sync

Environment: ``ITEM`` (``/coll/@dav1``), ``SUBS`` (subscriber connection ids, comma-separated),
``CATALOG_URL``; connect mode: the Spark connection ``snaprepl_spark`` of type spark_connect. Prints
one JSON line: the counts, the copies per Spark task, the worker pids, this process's pid and how
much its peak resident memory grew during the sync (KiB).
"""

from __future__ import annotations

import functools
import json
import os
import resource
import sys
from typing import Any

import sqlalchemy as sa

from snaprepl.catalog.store import Catalog
from snaprepl.collections.stores import Store, parse_item
from snaprepl.collections.sync import CollectionSync


def _session(mode: str) -> Any:
    if mode == "connect":
        from snaprepl.spark.connect import connection_url, session_for

        return session_for(connection_url("snaprepl_spark"), "snaprepl_spark")
    from snaprepl.spark.session import build_session

    return build_session("snaprepl-coll-child", "local[2]", {"spark.ui.enabled": "false"})


def main(mode: str, op: str) -> None:
    spark = functools.cache(lambda: _session(mode))  # a factory, as the sync job hands it
    spark().range(4).collect()  # started before the measure: the session is not the sync's memory
    root, conn_id = parse_item(os.environ["ITEM"])
    subs = [Store.open(c, root) for c in os.environ["SUBS"].split(",")]
    catalog = Catalog(sa.create_engine(os.environ["CATALOG_URL"]))
    syncer = CollectionSync(catalog, os.environ["ITEM"], Store.open(conn_id, root), subs, spark=spark)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if op == "init":
        for sub in subs:
            syncer.init(sub)
    else:
        syncer.sync()
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert syncer.remote is not None
    report = {
        "counts": str(syncer.counts),
        "by_task": dict(syncer.remote.by_task),
        "workers": sorted(syncer.remote.workers),
        "pid": os.getpid(),
        "grown_kib": grown,
    }
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:3])

"""The plain copies of a collection sync spread over Spark tasks (``CollectionSync(..., spark=...)``).

The driver scans and judges (metadata only) and keeps what needs judgement: conflicts, deletions a
subscriber made, and resources found locked. The rest, the bulk (an initial load, a pull the
publisher has not changed since, a push), becomes small rows (path, both manifest entries) that
``mapInArrow`` hands to tasks a partition at a time. Each task opens its own catalog connection and
both sides from connection details carried in the function's closure (never on a command line, in a
log or on disk), and runs the sync's own per-resource step on each row: the body streamed in chunks
from one side to the other, then the resource committed on its own (manifests and SYS_URPLOG in one
catalog transaction). A sync killed anywhere converges on its next run, as in the calling process.

DataFrame API only (``createDataFrame``, ``repartition``, ``mapInArrow``), so a classic session
(``local[*]``, spark-submit, a standalone cluster) and a Spark Connect session both run it. Every
executor must reach both servers and the catalog (a local-folder side: the same path on every host).
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from snaprepl.catalog.manifests import ManifestEntry
from snaprepl.catalog.store import Catalog
from snaprepl.collections.stores import Store
from snaprepl.connections.lookup import ConnectionInfo
from snaprepl.database.sessions import create_engine
from snaprepl.errors import CollectionError, ResourceLockedError, SnapreplError, error_class
from snaprepl.spark.errors import root_cause
from snaprepl.spark.session import session_of

log = logging.getLogger("snaprepl.collections")

#: What each task reports per resource (small: the driver collects one row a resource).
RESULT_SCHEMA = "path STRING, outcome STRING, task INT, pid INT, error_type STRING, message STRING, hint STRING"
#: Tasks per core of the cluster: more than one evens out resources of different sizes.
TASKS_PER_CORE = 2
#: Cores assumed where Spark does not say (a Connect session without ``spark.default.parallelism``).
DEFAULT_CORES = 4

Entry = ManifestEntry | None


class Syncer(Protocol):
    """What of :class:`snaprepl.collections.sync.CollectionSync` the distribution uses."""

    catalog: Catalog
    item: str
    pub: Store
    counts: Any


@dataclass(frozen=True)
class Work:
    """One plain copy (or deletion) for a task: the resource and both sides' manifest entries."""

    path: str
    publisher: Entry
    subscriber: Entry

    def row(self) -> tuple[str, str | None, str | None]:
        return (self.path, _dump(self.publisher), _dump(self.subscriber))


def _dump(entry: Entry) -> str | None:
    return None if entry is None else json.dumps(asdict(entry))


def _load(text: str | None) -> Entry:
    return None if text is None else ManifestEntry(**json.loads(text))


def plain_pushes(rels: Iterable[str], mine: dict[str, ManifestEntry], theirs: dict[str, ManifestEntry]) -> list[Work]:
    """The resources a push copies or deletes without judgement (``mine``: the publisher's manifest)."""
    found = []
    for rel in rels:
        p, s = mine.get(rel), theirs.get(rel)
        if p is None or (s is not None and s.rowguid == p.rowguid) or (p.deleted and (s is None or s.deleted)):
            continue  # nothing to do: the driver's loop passes over it at no cost
        found.append(Work(rel, p, s))
    return found


def plain_pulls(mine: dict[str, ManifestEntry], theirs: dict[str, ManifestEntry]) -> list[Work]:
    """The subscriber's changes (``mine``) the publisher takes as they are: a body the publisher has
    not changed since the last sync, or does not have. Deletions and conflicts stay in the driver."""
    found = []
    for rel in sorted(mine):
        s, p = mine[rel], theirs.get(rel)
        if not s.pending or s.deleted or (p is not None and p.rowguid == s.rowguid):
            continue
        if p is None or p.deleted or p.rowguid == s.old_rowguid:
            found.append(Work(rel, p, s))
    return found


class RemoteCopies:
    """Runs a sync's plain copies in Spark tasks; remembers how many each task made (``by_task``)."""

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self.by_task: Counter[int] = Counter()
        self.workers: set[int] = set()

    def push(
        self,
        syncer: Syncer,
        sub: Store,
        rels: list[str],
        mine: dict[str, ManifestEntry],
        theirs: dict[str, ManifestEntry],
    ) -> list[str]:
        """Push the plain resources of ``rels`` in tasks; return the paths left for the driver, in order."""
        return self._left(rels, self.run(syncer, sub, "push", plain_pushes(rels, mine, theirs)))

    def pull(
        self, syncer: Syncer, sub: Store, mine: dict[str, ManifestEntry], theirs: dict[str, ManifestEntry]
    ) -> list[str]:
        """Pull the plain changes of ``sub`` (``mine``) in tasks; return the paths left for the driver."""
        return self._left(sorted(mine), self.run(syncer, sub, "pull", plain_pulls(mine, theirs)))

    @staticmethod
    def _left(rels: list[str], done: set[str]) -> list[str]:
        return [rel for rel in rels if rel not in done]

    def run(self, syncer: Syncer, sub: Store, direction: str, work: list[Work]) -> set[str]:
        """Run ``work`` in Spark tasks; the paths handled there (a locked resource is not: the driver
        takes it again). Counts go to ``syncer.counts``.

        :raises SnapreplError: the first error a task met (the resources committed before it stay).
        """
        url = catalog_url(syncer.catalog)
        if not work or url is None:
            return set()
        spark = session_of(self.spark)
        task = copy_task(type(syncer), url, syncer.item, (syncer.pub, sub), direction)
        frame = spark.createDataFrame([w.row() for w in work], "path STRING, p STRING, s STRING")
        try:
            rows = frame.repartition(min(len(work), tasks(spark))).mapInArrow(task, RESULT_SCHEMA).collect()
        except Exception as err:  # Spark's own failure (a lost worker, an executor out of memory)
            raise CollectionError(
                f"the Spark tasks copying {syncer.item} ({direction}, {sub.server}) failed: {root_cause(err)}",
                "the resources committed so far stay; run the sync again",
            ) from None
        done, errors = self._tally(syncer, rows)
        used = len({row.task for row in rows})
        log.info("%s: %s %s: %d resources in %d Spark tasks", syncer.item, direction, sub.server, len(done), used)
        if errors:
            kind, message, hint = errors[0]
            raise error_class(kind, CollectionError)(message, hint)
        return done

    def _tally(self, syncer: Syncer, rows: list[Any]) -> tuple[set[str], list[tuple[str, str, str | None]]]:
        """Add what the tasks did to ``syncer.counts``; the paths they handled, and their errors."""
        done: set[str] = set()
        errors = []
        for row in rows:
            if row.outcome == "error":
                errors.append((row.error_type, row.message, row.hint))
            if row.outcome != "done":
                continue
            done.add(row.path)
            delta = json.loads(row.message)
            for name, change in delta.items():  # every field of the counts: numbers add up, lists extend
                setattr(syncer.counts, name, getattr(syncer.counts, name) + change)
            if delta.get("copied"):
                self.by_task[row.task] += 1
                self.workers.add(row.pid)
        return done, errors


def catalog_url(catalog: Catalog) -> str | None:
    """The catalog's URL for the tasks' own connections (a relative SQLite path made absolute), or
    None for an in-memory SQLite catalog, which no other process can reach (copies stay in the driver)."""
    url = catalog.engine.url
    if url.get_backend_name() == "sqlite":
        if not url.database or url.database == ":memory:" or url.database.startswith("file::memory:"):
            log.warning("the catalog is an in-memory SQLite database: the copies run in this process")
            return None
        url = url.set(database=os.path.abspath(url.database))
    return str(url.render_as_string(hide_password=False))


def tasks(spark: Any) -> int:
    """How many tasks to split a sync's copies into: a few per core of the cluster."""
    try:
        cores = int(spark.sparkContext.defaultParallelism)
    except Exception:  # a Spark Connect session has no SparkContext
        cores = int(spark.conf.get("spark.default.parallelism", None) or DEFAULT_CORES)
    return max(2, TASKS_PER_CORE * cores)


def copy_task(
    sync_class: Callable[..., Any], url: str, item: str, stores: tuple[Store, Store], direction: str
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The ``mapInArrow`` function of one push or pull: each task runs ``sync_class``'s own step per row.

    The catalog's URL and the stores' connections (with their credentials) travel in its closure only.
    """
    pub_conn, sub_conn = (store.conn.to_dict() for store in stores)
    root = stores[0].root

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa  # noqa: PLC0415  (imported where the Python worker runs this)
        from pyspark import TaskContext

        schema = pa.schema([(name.split()[0], pa.string()) for name in RESULT_SCHEMA.split(", ")])
        schema = schema.set(2, pa.field("task", pa.int32())).set(3, pa.field("pid", pa.int32()))
        context = TaskContext.get()
        where = {"task": context.partitionId() if context is not None else -1, "pid": os.getpid()}
        catalog = Catalog(create_engine(url))
        pub, sub = Store(ConnectionInfo.from_dict(pub_conn), root), Store(ConnectionInfo.from_dict(sub_conn), root)
        syncer = sync_class(catalog, item, pub, [sub])
        syncer.locks.load()  # bodies earlier runs left waiting on locks are placed, not copied again
        failed = False
        try:
            for batch in batches:
                for row in batch.to_pylist():
                    result = ("aborted", None, None, None) if failed else _step(syncer, sub, direction, row)
                    failed = failed or result[0] == "error"
                    values = dict(zip(("outcome", "error_type", "message", "hint"), result, strict=True))
                    yield pa.RecordBatch.from_pylist([{"path": row["path"], **where, **values}], schema=schema)
        finally:
            catalog.dispose()

    return run


def _step(
    syncer: Any, sub: Store, direction: str, row: dict[str, Any]
) -> tuple[str, str | None, str | None, str | None]:
    """One resource, as the driver's loop would do it: (outcome, error class, message, hint). Done:
    the message is what it added to the counts (JSON); locked: the driver takes it again."""
    p, s = _load(row["p"]), _load(row["s"])
    before = {name: list(v) if isinstance(v, list) else v for name, v in vars(syncer.counts).items()}
    try:
        if direction == "push":
            syncer._push_one(sub, row["path"], p, s)
        else:
            syncer._pull_one(sub, s, p)
    except ResourceLockedError:
        return ("locked", None, None, None)
    except SnapreplError as err:  # the first one stops this task; the driver raises it
        return ("error", type(err).__name__, err.message, err.hint)
    except Exception as err:  # e.g. the catalog's database failed: reported the same way, in one line
        log.exception("copying %s failed", row["path"])  # the traceback, in the executor's log
        first = (str(err).strip().splitlines() or [""])[0]
        return ("error", "CollectionError", f"copying {row['path']} failed: {type(err).__name__}: {first}", None)
    return ("done", None, json.dumps(_delta(before, vars(syncer.counts))), None)


def _delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What a step added to each field of the counts: a number's increase, a list's new items."""
    delta = {}
    for name, now in after.items():
        if now != before[name]:
            delta[name] = now[len(before[name]) :] if isinstance(now, list) else now - before[name]
    return delta

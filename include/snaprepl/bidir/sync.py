"""The sync engine of a publication: initial load, pull (subscriber to publisher, with conflict
resolution) and push (publisher to subscribers).

Reads go through Spark (JDBC, pushed-down joins of log and table); conflict resolution runs in the
driver, since resolvers are Python callables; writes are replicated DML the triggers do not log.

* **pull** from S: mark S's pending log entries as in flight; read every in-flight entry with S's
  current row; per batch (along SNAPTIME groups), in one publisher transaction, judge each change
  against the publisher's locked current row, apply it, and log it in the publisher's log with its
  ORIGIN; then record the entries in SYS_URPLOG (with the conflicts) and delete them from S's log.
  A pull killed anywhere is run again: entries already applied are recognised by SYS_URPLOG, or by
  the publisher already holding their version.
* **push** to S: read the publisher's log since SS_LAST_PUSH_TS minus the tolerance, except
  entries whose ORIGIN is S, with the publisher's current rows; apply them to S, except keys with a
  local change not yet pulled (they are retried at the next push, after the pull decided them).
* **init** of S: copy the publisher's rows into S, committing every ``rows_per_commit`` rows; the
  push watermark is taken before the copy, so changes made meanwhile are pushed afterwards.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from functools import cached_property
from typing import Any

from snaprepl.bidir import resolvers as R
from snaprepl.bidir.judge import ROWGUID, Change, Verdict, judge
from snaprepl.bidir.servers import server_conn
from snaprepl.catalog.store import Catalog, LogRecord, PublicationRecord, SubscriptionRecord, utcnow
from snaprepl.connections import get_connection
from snaprepl.db import Database, Session
from snaprepl.dialects import Column
from snaprepl.dialects.base import BIDIR
from snaprepl.dialects.types import GenericType, render, to_generic
from snaprepl.errors import ReplicationError
from snaprepl.names import Ident
from snaprepl.refresh import partitioning
from snaprepl.refresh.lock import RunLock, check_leases
from snaprepl.spark.io import SparkJdbc

K = "SNAPREPL_K"
SYNC = "SNAPREPL_SYNC"
SNAPTIME = "SNAPREPL_SNAPTIME"
OP = "SNAPREPL_OP"
GUID = "SNAPREPL_GUID"
OLD = "SNAPREPL_OLD"
ORIGIN = "SNAPREPL_ORIGIN"
PRESENT = "SNAPREPL_PRESENT"
CHUNK = "SNAPREPL_CHUNK"

#: Python types of values of generic column types, as the publisher's driver returns them, so a
#: resolver compares an incoming row with the publisher's on equal terms (Spark carries numerics
#: without precision as text, and SQLite's NUMERIC holds integers and reals).
_PYTHON_TYPES: dict[str, Any] = {
    "numeric": lambda v: Decimal(str(v)),
    "numeric(p, s)": lambda v: Decimal(str(v)),
    "integer": int,
    "smallint": int,
    "bigint": int,
    "real": float,
    "double precision": float,
    "boolean": bool,
}


@dataclass
class Side:
    """One server's copy of a published table."""

    name: str
    db: Database
    io: SparkJdbc
    log: LogRecord
    columns: list[Column]

    @property
    def dialect(self) -> Any:
        return self.db.dialect

    @property
    def key(self) -> list[str]:
        return self.log.key_columns

    @property
    def table(self) -> str:
        return self.dialect.qualified(self.log.snl_schema, self.log.snl_table)

    @property
    def rlog(self) -> str:
        return self.dialect.qualified(self.log.snl_schema, self.log.objects.rlog)

    def as_own_values(self, row: dict[str, Any] | None) -> dict[str, Any] | None:
        """``row`` (read from another side) with values of the Python types of this side's columns."""
        if row is None:
            return None
        out = dict(row)
        for name, convert in self._converters.items():
            if out.get(name) is not None:
                out[name] = convert(out[name])
        return out

    @cached_property
    def _converters(self) -> dict[str, Any]:
        found = {c.name: _PYTHON_TYPES.get(to_generic(c.type_sql, self.dialect.name).name) for c in self.columns}
        return {name: convert for name, convert in found.items() if convert is not None}

    @classmethod
    def open(cls, name: str, log: LogRecord) -> Side:
        conn = get_connection(log.snl_conn)
        database = Database(conn)
        with database.session() as session:
            info = database.dialect.describe(
                session, Ident(log.snl_schema, True), Ident(log.snl_table, True), log.snl_conn
            )
        return cls(name, database, SparkJdbc(conn), log, list(info.columns))


@dataclass
class Outcome:
    """What one sync step did."""

    step: str
    server: str
    changes: int = 0
    applied: int = 0
    conflicts: int = 0
    skipped: int = 0
    rows: int = 0
    duration_s: float = 0.0
    notes: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        if self.step == "init":
            text = f"init of {self.server}: {self.rows} rows copied"
        elif self.step == "pull":
            text = (
                f"pull from {self.server}: {self.changes} changes, {self.applied} applied, {self.conflicts} conflicts"
            )
        else:
            text = f"push to {self.server}: {self.changes} changes, {self.applied} applied"
            if self.skipped:
                text += f", {self.skipped} waiting for the subscriber's own changes to be pulled"
        return f"{text} ({self.duration_s:.1f} s)" + "".join(f"; {n}" for n in self.notes)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class PublicationSync:
    """Syncs of one publication.

    :param spark: the SparkSession reads go through, or a function that starts it when first needed.
    :param catalog: the catalog.
    :param item: the publication's SP_ITEM.
    :param run_id: this run (locks, in-flight marks, the conflict ledger).
    """

    def __init__(
        self, spark: Any, catalog: Catalog, item: str, run_id: str, *, tolerance_minutes: int, commit_rows: int
    ) -> None:
        publication = catalog.publication(item)
        if publication is None:
            raise ReplicationError(f"there is no publication {item}")
        log = catalog.log(item)
        if log is None:
            raise ReplicationError(f"the log of publication {item} is missing", "drop and create the publication again")
        self._spark = spark
        self.catalog = catalog
        self.publication: PublicationRecord = publication
        self.run_id = run_id
        self.tolerance = timedelta(minutes=tolerance_minutes)
        self.commit_rows = commit_rows
        self.publisher = Side.open(publication.sp_server, log)
        self._resolvers: dict[str, list[tuple[str, R.Resolver]]] | None = None

    @property
    def item(self) -> str:
        return self.publication.sp_item

    @property
    def spark(self) -> Any:
        """The SparkSession (started now if it was given as a function that starts it)."""
        from snaprepl.spark.session import session_of

        self._spark = session_of(self._spark)
        return self._spark

    def subscription(self, server: str) -> SubscriptionRecord:
        record = self.catalog.subscription(server, self.item)
        if record is None:
            raise ReplicationError(f"server {server} does not subscribe to {self.item}")
        return record

    def subscriber(self, server: str) -> Side:
        record = self.subscription(server)
        conn_id = server_conn(server, catalog=self.catalog)
        log = self.catalog.log(f"{record.ss_schema}.{record.ss_table}@{conn_id}")
        if log is None:
            raise ReplicationError(f"the log of {server}'s replica of {self.item} is missing")
        return Side.open(server, log)

    def resolvers(self) -> dict[str, list[tuple[str, R.Resolver]]]:
        if self._resolvers is None:
            self._resolvers = {"I": [], "U": [], "D": []}
            for record in self.catalog.resolvers(self.item):
                name = (record.cr_class or record.cr_proc) + (f"({record.cr_column})" if record.cr_column else "")
                self._resolvers[record.cr_type].append(
                    (name, R.build(record.cr_class, record.cr_proc, record.cr_column))
                )
        return self._resolvers

    def dispose(self) -> None:
        self.publisher.db.dispose()

    # ------------------------------------------------------------------ reading

    def read_changes(self, side: Side, where: str) -> list[dict[str, Any]]:
        """Log entries of ``side`` matching ``where`` (on log alias ``l``), each with ``side``'s current row."""
        d = side.dialect
        q = d.quote
        objects, cols, bidir = side.log.objects, d.log_columns, BIDIR
        names = [c.name for c in side.columns]
        inner = f"SELECT 1 AS {q(PRESENT)}, {', '.join(q(n) for n in names)} FROM {side.table}"
        on = " AND ".join(f"s.{q(k)} = l.{q(lk)}" for k, lk in zip(side.key, objects.key_columns, strict=True))
        select = [f"l.{q(lk)} AS {q(f'{K}{i}')}" for i, lk in enumerate(objects.key_columns)]
        select += [
            f"l.{q(bidir.sync_id)} AS {q(SYNC)}",
            f"l.{q(cols.snaptime)} AS {q(SNAPTIME)}",
            f"l.{q(cols.dmltype)} AS {q(OP)}",
            f"l.{q(cols.rowguid)} AS {q(GUID)}",
            f"l.{q(bidir.old_rowguid)} AS {q(OLD)}",
            f"l.{q(bidir.origin)} AS {q(ORIGIN)}",
            f"s.{q(PRESENT)}",
            *(f"s.{q(n)}" for n in names),
        ]
        query = f"SELECT {', '.join(select)} FROM {side.rlog} l LEFT JOIN ({inner}) s ON {on} WHERE {where}"
        text = render(GenericType("varchar(n)", length=255), d.name)
        by_name = {c.name: c for c in side.columns}
        read_columns = [Column(f"{K}{i}", by_name[k].type_sql) for i, k in enumerate(side.key)]
        read_columns += [
            Column(SYNC, text),
            Column(SNAPTIME, render(GenericType("timestamp"), d.name)),
            Column(OP, text),
            Column(GUID, text),
            Column(OLD, text),
            Column(ORIGIN, text),
            Column(PRESENT, render(GenericType("integer"), d.name)),
            *side.columns,
        ]
        with side.db.session() as session:  # no Spark job for an empty log, the usual case of frequent syncs
            if not session.query(f"SELECT COUNT(*) FROM {side.rlog} l WHERE {where}")[0][0]:
                return []
        rows = [r.asDict() for r in side.io.read(self.spark, query, read_columns).collect()]
        rows.sort(key=lambda r: (r[SNAPTIME], r[SYNC] or ""))
        return rows

    @staticmethod
    def _key_of(entry: dict[str, Any], side: Side) -> tuple[Any, ...]:
        return tuple(entry[f"{K}{i}"] for i in range(len(side.key)))

    @staticmethod
    def _row_of(entry: dict[str, Any], side: Side) -> dict[str, Any] | None:
        if entry.get(PRESENT) is None:
            return None
        return {c.name: entry[c.name] for c in side.columns}

    def _batches(self, entries: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
        """Entries in SNAPTIME order, cut into batches of about ``commit_rows`` along SNAPTIME groups."""
        batch: list[dict[str, Any]] = []
        for entry in entries:
            if len(batch) >= self.commit_rows and entry[SNAPTIME] != batch[-1][SNAPTIME]:
                yield batch
                batch = []
            batch.append(entry)
        if batch:
            yield batch

    # ------------------------------------------------------------------ writing

    @staticmethod
    def _norm(value: Any) -> Any:
        if isinstance(value, datetime):
            return value.isoformat(sep=" ", timespec="microseconds")
        if isinstance(value, bytes | bytearray | memoryview):
            return bytes(value).hex()
        if isinstance(value, bool | int | float):
            return value
        if value is None:
            return None
        return str(value)

    def _key_filters(self, dialect: Any, columns: Sequence[str], keys: Sequence[tuple[Any, ...]]) -> Iterator[str]:
        """``(columns) IN (...)`` predicates over distinct ``keys``, 500 keys each."""
        unique = list({tuple(self._norm(v) for v in k): k for k in keys}.values())
        target = ", ".join(dialect.quote(c) for c in columns)
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            if len(columns) == 1:
                yield f"{target} IN ({', '.join(dialect.literal_value(k[0]) for k in chunk)})"
            else:
                values = ", ".join(f"({', '.join(dialect.literal_value(v) for v in k)})" for k in chunk)
                yield f"({target}) IN ({values})"

    def current_rows(
        self, session: Session, side: Side, keys: Sequence[tuple[Any, ...]]
    ) -> dict[tuple, dict[str, Any]]:
        """``side``'s current rows for ``keys``, locked for this transaction where the dialect can."""
        d = side.dialect
        names = [c.name for c in side.columns]
        key_idx = [names.index(k) for k in side.key]
        columns = ", ".join(d.quote(n) for n in names)
        found: dict[tuple, dict[str, Any]] = {}
        for condition in self._key_filters(d, side.key, keys):
            for row in session.query(f"SELECT {columns} FROM {side.table} WHERE {condition}{d.for_update}"):
                found[tuple(self._norm(row[i]) for i in key_idx)] = dict(zip(names, row, strict=True))
        return found

    def tombstones(
        self, session: Session, keys: Sequence[tuple[Any, ...]], current: dict[tuple, dict[str, Any]]
    ) -> dict[tuple, str]:
        """For keys the publisher has no row for, the version of the delete its log holds: a pull that
        deleted a row logs the delete under the incoming entry's own version, so a pull run again
        after being killed recognises the delete as applied rather than as a conflict."""
        publisher = self.publisher
        d = publisher.dialect
        missing = [k for k in keys if tuple(self._norm(v) for v in k) not in current]
        log_keys = publisher.log.objects.key_columns
        select = f"SELECT {', '.join(d.quote(k) for k in log_keys)}, {d.quote(d.log_columns.rowguid)}"
        found: dict[tuple, str] = {}
        for condition in self._key_filters(d, log_keys, missing):
            sql = f"{select} FROM {publisher.rlog} WHERE {condition} AND {d.quote(d.log_columns.dmltype)} = 'D'"
            for row in session.query(sql):
                found[tuple(self._norm(v) for v in row[:-1])] = row[-1]
        return found

    def pending_keys(self, session: Session, side: Side, keys: Sequence[tuple[Any, ...]]) -> set[tuple]:
        """Keys with a logged change at ``side`` not yet pulled (pending or in flight)."""
        d = side.dialect
        log_keys = side.log.objects.key_columns
        columns = ", ".join(d.quote(k) for k in log_keys)
        found: set[tuple] = set()
        for condition in self._key_filters(d, log_keys, keys):
            sql = f"SELECT DISTINCT {columns} FROM {side.rlog} WHERE {condition}"
            found.update(tuple(self._norm(v) for v in row) for row in session.query(sql))
        return found

    def _match(self, side: Side, prefix: str = "k") -> str:
        return " AND ".join(f"{side.dialect.quote(k)} = :{prefix}{i}" for i, k in enumerate(side.key))

    def write_row(self, session: Session, side: Side, row: dict[str, Any], exists: bool) -> None:
        """Insert or update ``row`` with its ROWGUID: a replicated write, which the triggers do not log."""
        d = side.dialect
        names = [c.name for c in side.columns]
        params = {f"c{i}": d.python_param(row.get(n)) for i, n in enumerate(names)}
        if exists:
            sets = ", ".join(f"{d.quote(n)} = :c{i}" for i, n in enumerate(names) if n not in side.key)
            where = " AND ".join(f"{d.quote(k)} = :c{names.index(k)}" for k in side.key)
            session.execute(f"UPDATE {side.table} SET {sets} WHERE {where}", params)
        else:
            marks = ", ".join(f":c{i}" for i in range(len(names)))
            session.execute(
                f"INSERT INTO {side.table} ({', '.join(d.quote(n) for n in names)}) VALUES ({marks})", params
            )

    def delete_row(self, session: Session, side: Side, key: tuple[Any, ...]) -> None:
        params = {f"k{i}": side.dialect.python_param(v) for i, v in enumerate(key)}
        for statement in side.dialect.replicated_delete_sql(side.table, self._match(side)):
            session.execute(statement, params)

    def log_change(
        self, session: Session, side: Side, op: str, key: tuple[Any, ...], guid: str, old: str | None, origin: str
    ) -> None:
        """Record a change applied to the publisher in its log, for pushes (folded like users' changes)."""
        d = side.dialect
        keys = [f":k{i}" for i in range(len(key))]
        params = {f"k{i}": d.python_param(v) for i, v in enumerate(key)}
        params.update({"guid": guid, "old": old, "origin": origin})
        for statement in d.bidir_put_sql(
            side.rlog, side.log.objects, op, keys, ":guid", ":old", ":origin", publisher=True
        ):
            session.execute(statement, params)

    # ------------------------------------------------------------------ pull

    def pull(self, server: str) -> Outcome:
        started = time.monotonic()
        outcome = Outcome("pull", server)
        sub = self.subscriber(server)
        publisher = self.publisher
        sync = sub.dialect.quote(BIDIR.sync_id)
        with RunLock(self.catalog, f"pull:{self.item}", self.run_id, what=f"publication {self.item} (pull)"):
            with sub.db.session() as session:
                session.execute(f"UPDATE {sub.rlog} SET {sync} = :run WHERE {sync} = ''", {"run": self.run_id})
            entries = self.read_changes(sub, f"l.{sync} <> ''")
            outcome.changes = len(entries)
            applied_before = self.catalog.urplog_contains(self.item, server, publisher.name, [e[GUID] for e in entries])
            resolvers = self.resolvers()
            for batch in self._batches(entries):
                todo = [e for e in batch if e[GUID] not in applied_before]
                conflicts: list[dict[str, Any]] = []
                cleared: list[str] = []
                if todo:
                    with publisher.db.session() as session:
                        current = self.current_rows(session, publisher, [self._key_of(e, sub) for e in todo])
                        tombstones = self.tombstones(
                            session, [self._key_of(e, sub) for e in todo if e[OP].strip() == "D"], current
                        )
                        for entry in todo:
                            key = self._key_of(entry, sub)
                            norm = tuple(self._norm(v) for v in key)
                            incoming = publisher.as_own_values(self._row_of(entry, sub))
                            change = Change(entry[OP].strip(), key, entry[OLD], incoming, entry[GUID])
                            before = current.get(norm)
                            verdict = judge(
                                change,
                                before,
                                resolvers,
                                origin=server,
                                publisher=publisher.name,
                                key_columns=sub.key,
                                new_version=lambda: f"{publisher.name}@{uuid.uuid4()}",
                                tombstone=tombstones.get(norm),
                            )
                            current[norm] = self._apply(session, key, before, verdict, entry[GUID])
                            if verdict.action in {"write", "delete"}:
                                outcome.applied += 1
                            if verdict.conflict:
                                conflicts.append(self._ledger(verdict, change, before, server, entry[GUID]))
                            elif verdict.action != "noop":
                                cleared.append(entry[GUID])
                        # Before the publisher commits: a run killed after that commit finds the
                        # entries applied (no conflict any more) and must find their conflicts recorded.
                        check_leases()  # a run taken over (thought dead) commits nothing more
                        self.catalog.record_conflicts(self.item, server, conflicts, cleared)
                    outcome.conflicts += len(conflicts)
                newest = max(e[SNAPTIME] for e in batch)
                self.catalog.record_replayed(
                    self.item,
                    server,
                    publisher.name,
                    [(e[GUID], e[SNAPTIME]) for e in todo],
                    subscription=(server, {"ss_last_pull_ts": newest, "ss_last_pull_at": utcnow()}),
                )
                match = " AND ".join(
                    f"{sub.dialect.quote(lk)} = :k{i}" for i, lk in enumerate(sub.log.objects.key_columns)
                )
                with sub.db.session() as session:
                    session.execute_many(
                        f"DELETE FROM {sub.rlog} WHERE {match} AND {sync} = :sync",
                        [
                            {
                                **{f"k{i}": sub.dialect.python_param(v) for i, v in enumerate(self._key_of(e, sub))},
                                "sync": e[SYNC],
                            }
                            for e in batch
                        ],
                    )
        sub.db.dispose()
        outcome.duration_s = time.monotonic() - started
        return outcome

    def _apply(
        self, session: Session, key: tuple[Any, ...], current: dict[str, Any] | None, verdict: Verdict, version: str
    ) -> dict[str, Any] | None:
        """Carry out ``verdict`` on the publisher; return the publisher's row for the key afterwards.

        :param version: the incoming entry's RLOG_ROWGUID; a delete is logged under it (see
            :meth:`tombstones`)."""
        publisher = self.publisher
        mine = current.get(ROWGUID) if current else None
        if verdict.action == "write" and verdict.row is not None:
            row = {c.name: verdict.row.get(c.name) for c in publisher.columns}
            self.write_row(session, publisher, row, exists=current is not None)
            self.log_change(session, publisher, "U" if current else "I", key, row[ROWGUID], mine, verdict.origin)
            return row
        if verdict.action == "delete":
            if current is not None:
                self.delete_row(session, publisher, key)
                self.log_change(session, publisher, "D", key, version, mine, verdict.origin)
            return None
        if verdict.action == "reassert":
            if current is not None:
                self.log_change(session, publisher, "U", key, mine or "", mine, publisher.name)
            else:
                self.log_change(session, publisher, "D", key, f"{publisher.name}@{uuid.uuid4()}", None, publisher.name)
        return current

    def _ledger(
        self, verdict: Verdict, change: Change, before: dict[str, Any] | None, origin: str, entry: str
    ) -> dict[str, Any]:
        """A conflict ledger row: both versions, who decided, what, and which row lost."""
        publisher_lost = verdict.decision in {R.Decision.SUBSCRIBER_WINS, R.Decision.SUBSCRIBER_WINS_CHANGED}
        loser = {"side": self.publisher.name, "row": before} if publisher_lost else {"side": origin, "row": change.row}
        return {
            "CF_ITEM": self.item,
            "CF_TYPE": verdict.conflict,
            "CF_ORIGIN": origin,
            "CF_KEY": json.dumps(list(change.key), default=str),
            "CF_INCOMING": json.dumps({"op": change.op, "old": change.old, "row": change.row}, default=str),
            "CF_CURRENT": json.dumps(before, default=str) if before is not None else None,
            "CF_RESOLVER": verdict.resolver,
            "CF_DECISION": int(verdict.decision or 0),
            "CF_LOSER": json.dumps(loser, default=str),
            "CF_AT": utcnow(),
            "CF_NOTIFIED": False,
            "CF_RUN_ID": self.run_id,
            "CF_ENTRY": entry,
        }

    # ------------------------------------------------------------------ push

    def push(self, server: str) -> Outcome:
        started = time.monotonic()
        outcome = Outcome("push", server)
        record = self.subscription(server)
        if record.ss_init_state != "done":
            raise ReplicationError(
                f"server {server} has not loaded {self.item} yet",
                f"run REPL_INIT_SNAPSHOT('{server}', '{self.item}', 2) first",
            )
        sub = self.subscriber(server)
        publisher = self.publisher
        d = publisher.dialect
        with RunLock(
            self.catalog, f"push:{self.item}:{server}", self.run_id, what=f"{server}'s replica of {self.item}"
        ):
            start = record.ss_last_push_ts - self.tolerance if record.ss_last_push_ts else None
            where = f"l.{d.quote(BIDIR.sync_id)} = '' AND l.{d.quote(BIDIR.origin)} <> {d.literal(server)}"
            if start is not None:
                where += f" AND l.{d.quote(d.log_columns.snaptime)} >= {d.timestamp_literal(start)}"
            entries = self.read_changes(publisher, where)
            outcome.changes = len(entries)
            done = self.catalog.urplog_contains(self.item, publisher.name, server, [e[GUID] for e in entries])
            waiting: list[datetime] = []
            for batch in self._batches(entries):
                todo = [e for e in batch if e[GUID] not in done]
                applied = []
                if todo:
                    keys = [self._key_of(e, publisher) for e in todo]
                    with sub.db.session() as session:
                        current = self.current_rows(session, sub, keys)
                        pending = self.pending_keys(session, sub, keys)
                        for entry, key in zip(todo, keys, strict=True):
                            norm = tuple(self._norm(v) for v in key)
                            if norm in pending:
                                waiting.append(entry[SNAPTIME])
                                continue
                            row = self._row_of(entry, publisher)
                            theirs = current.get(norm)
                            if row is not None:
                                if theirs is None or theirs.get(ROWGUID) != row[ROWGUID]:
                                    self.write_row(session, sub, row, exists=theirs is not None)
                                current[norm] = row
                            elif theirs is not None:
                                self.delete_row(session, sub, key)
                                current[norm] = None
                            applied.append(entry)
                        check_leases()  # a run taken over (thought dead) commits nothing more
                outcome.applied += len(applied)
                watermark = min(waiting) if waiting else max(e[SNAPTIME] for e in batch)
                self.catalog.record_replayed(
                    self.item,
                    publisher.name,
                    server,
                    [(e[GUID], e[SNAPTIME]) for e in applied],
                    subscription=(server, {"ss_last_push_ts": watermark, "ss_last_push_at": utcnow()}),
                )
            outcome.skipped = len(waiting)
            if not entries:
                self.catalog.update_subscription(server, self.item, ss_last_push_at=utcnow())
        sub.db.dispose()
        outcome.duration_s = time.monotonic() - started
        return outcome

    # ------------------------------------------------------------------ initial load

    def init(self, server: str, rows_per_commit: int, max_partitions: int = 8, *, atomic: bool = False) -> Outcome:
        """REPL_INIT_SNAPSHOT of ``server``: stage the publisher's rows on the subscriber, then apply them
        ``rows_per_commit`` at a time; ``atomic`` applies them all, and removes the rows the publisher
        lacks, in one transaction (a backfill's reload: readers see the old replica or the new one)."""
        from pyspark.sql import functions as F

        started = time.monotonic()
        if rows_per_commit < 1:
            raise ReplicationError("rows_per_commit must be at least 1")
        outcome = Outcome("init", server)
        record = self.subscription(server)
        sub = self.subscriber(server)
        publisher = self.publisher
        sd = sub.dialect
        with RunLock(
            self.catalog, f"push:{self.item}:{server}", self.run_id, what=f"{server}'s replica of {self.item}"
        ):
            bookmark = (
                json.loads(record.ss_init_bm) if record.ss_init_state == "running" and record.ss_init_bm else None
            )
            if bookmark is None:  # watermarks before the copy: nothing changed meanwhile is lost
                with publisher.db.session() as session:
                    push_ts = publisher.dialect.now_utc(session)
                with sub.db.session() as session:
                    pull_ts = sd.now_utc(session)
                bookmark = {"push_ts": push_ts.isoformat(), "pull_ts": pull_ts.isoformat(), "run_id": self.run_id}
                self.catalog.update_subscription(
                    server, self.item, ss_init_state="running", ss_init_bm=json.dumps(bookmark)
                )
            names = [c.name for c in publisher.columns]
            query = f"SELECT {', '.join(publisher.dialect.quote(n) for n in names)} FROM {publisher.table}"
            key_columns = [c for c in publisher.columns if c.name in publisher.key]
            with publisher.db.session() as session:
                estimate = publisher.dialect.estimate_rows(session, publisher.log.snl_schema, publisher.log.snl_table)
                plan = partitioning.plan(session, publisher.dialect, query, key_columns, estimate, max_partitions)
            frame = publisher.io.read(self.spark, query, publisher.columns, plan)
            # Chunks of rows_per_commit rows without a shuffle: the id's high bits are the partition.
            row_id = F.monotonically_increasing_id()
            chunk = F.shiftright(row_id, 33) * F.lit(10**9) + F.floor(
                row_id.bitwiseAND(F.lit((1 << 33) - 1)) / F.lit(rows_per_commit)
            )
            frame = frame.withColumn(CHUNK, chunk.cast("long"))
            stage = sd.shorten(f"snaprepl_init_{uuid.uuid5(uuid.NAMESPACE_URL, self.item + server).hex[:10]}")
            stage_sql = sd.qualified(sub.log.snl_schema, stage)
            sub_by_name = {c.name: c for c in sub.columns}
            stage_columns = [Column(n, sub_by_name[n].type_sql) for n in names] + [
                Column(CHUNK, render(GenericType("bigint"), sd.name))
            ]
            with sub.db.session() as session:
                session.execute(sd.drop_table_sql(sub.log.snl_schema, stage))
                session.execute(sd.create_table_sql(sub.log.snl_schema, stage, stage_columns, []))
            try:
                sub.io.write(frame, sub.log.snl_schema, stage, stage_columns)
                with sub.db.session() as session:
                    # The chunk index drives the commits; the key index the final anti-join (MariaDB
                    # would otherwise scan the staging table once per replica row).
                    session.execute(
                        sd.create_index_sql(sub.log.snl_schema, stage, sd.shorten(f"{stage}_chunk"), [CHUNK])
                    )
                    session.execute(sd.create_index_sql(sub.log.snl_schema, stage, sd.shorten(f"{stage}_key"), sub.key))
                    sd.analyze(session, sub.log.snl_schema, stage)
                    chunks = [
                        row[0]
                        for row in session.query(f"SELECT DISTINCT {sd.quote(CHUNK)} FROM {stage_sql} ORDER BY 1")
                    ]
                    outcome.rows = int(session.query(f"SELECT COUNT(*) FROM {stage_sql}")[0][0])
                merge = sd.replicated_merge_sql(
                    sub.table, stage_sql, names, sub.key, sub.rlog, sub.log.objects.key_columns
                )
                staged = time.monotonic()
                with _transactions(sub.db, atomic) as transaction:
                    for number in chunks:  # one commit per chunk of about rows_per_commit rows
                        with transaction() as session:
                            for statement in merge:
                                session.execute(statement, {"chunk": number})
                            check_leases()  # a run taken over (thought dead) commits nothing more
                    # Rows an interrupted earlier load left that the publisher no longer has.
                    match = " AND ".join(f"s.{sd.quote(k)} = {sub.table}.{sd.quote(k)}" for k in sub.key)
                    no_pending = sd._no_pending(
                        sub.rlog, sub.log.objects.key_columns, [f"{sub.table}.{sd.quote(k)}" for k in sub.key]
                    )
                    extra = f"NOT EXISTS (SELECT 1 FROM {stage_sql} s WHERE {match}) AND {no_pending}"
                    with transaction() as session:
                        for statement in sd.replicated_delete_sql(sub.table, extra):
                            session.execute(statement)
                commits = 1 if atomic else len(chunks) + 1
                outcome.notes.append(
                    f"copied to a staging table in {staged - started:.1f} s, "
                    f"applied in {commits} commits in {time.monotonic() - staged:.1f} s"
                )
            finally:
                with sub.db.session() as session:
                    session.execute(sd.drop_table_sql(sub.log.snl_schema, stage))
            self.catalog.update_subscription(
                server,
                self.item,
                ss_init_state="done",
                ss_init_bm=None,
                ss_last_push_ts=datetime.fromisoformat(bookmark["push_ts"]),
                ss_last_pull_ts=datetime.fromisoformat(bookmark["pull_ts"]),
                ss_last_push_at=utcnow(),
            )
        sub.db.dispose()
        outcome.duration_s = time.monotonic() - started
        return outcome


@contextmanager
def _transactions(db: Database, atomic: bool) -> Iterator[Callable[[], AbstractContextManager[Session]]]:
    """A factory of transactions on ``db``: each call a transaction of its own, or, when ``atomic``,
    the one transaction this block holds (committed when the block ends)."""
    if not atomic:
        yield db.session
        return
    with db.session() as whole:
        yield lambda: nullcontext(whole)

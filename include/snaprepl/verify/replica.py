"""Verify of a subscriber's replica of a published table against the publisher's table, ROWGUID
included, and its repair from the publisher (the publisher's row wins, as a complete reload would
decide) through the push's set-based apply (:class:`snaprepl.bidir.push_stage.PushStage`), which
leaves alone keys with a local change not yet pulled. The publisher is only read.

Keys in flight are not differences: the replica's own log entries (changes not pulled yet) and the
publisher's entries not from this subscriber since its push watermark (less the tolerance).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from pyspark.sql import functions as F

from snaprepl.bidir.push_stage import PushStage
from snaprepl.bidir.sides import PRESENT, K, Side
from snaprepl.bidir.state import PublicationState
from snaprepl.catalog.store import Catalog
from snaprepl.dialects import Column
from snaprepl.dialects.base import BIDIR
from snaprepl.spark.io import SparkJdbc
from snaprepl.spark.session import session_of
from snaprepl.verify import sides as S
from snaprepl.verify.bisect import find
from snaprepl.verify.canonical import KEY, key_text, quoted
from snaprepl.verify.compare import DEST_KEY, KIND, SOURCE_ROW, Comparison, bucket_count
from snaprepl.verify.db_sums import DatabaseSums
from snaprepl.verify.model import EXTRA, VerifyOutcome, VerifyRequest
from snaprepl.verify.narrow import narrowed
from snaprepl.verify.ranges import plan_ranges
from snaprepl.verify.replicas import Replica


def replica_sides(publisher: Side, sub: Side, where: str | None) -> S.Sides:
    """The publisher's table and the replica, in the replica's column order (ROWGUID included)."""
    d, p = sub.dialect, publisher.dialect
    columns = list(sub.columns)
    by_name = {c.name: c for c in publisher.columns}
    source_columns = [next(by_name[n] for n in by_name if d.same_name(c.name, n)) for c in columns]
    source_list = ", ".join(p.quote(c.name) for c in source_columns)
    source_query = S._limited(f"SELECT {source_list} FROM {publisher.table}", where)
    dest_query = S._limited(f"SELECT {', '.join(d.quote(c.name) for c in columns)} FROM {sub.table}", where)
    with publisher.db.session(read_only=True) as session:
        S._check_where(session, source_query, where, "publisher")
    with sub.db.session(read_only=True) as session:
        S._check_where(session, dest_query, where, "replica")
    return S.Sides(
        S.Side(SparkJdbc(publisher.io.conn, read_only=True), source_query, source_columns, None, None),
        S.Side(SparkJdbc(sub.io.conn, read_only=True), dest_query, columns, None, None),
        columns,
        list(sub.key),
    )


def pending_keys(spark: Any, state: PublicationState, server: str, sides: S.Sides, target_type: Any) -> Any:
    """Keys in flight: the replica's log (not pulled yet), and the publisher's entries not from
    ``server`` since its push watermark less the tolerance (not pushed yet)."""
    sub, publisher = state.subscriber(server), state.publisher
    since = state.subscription(server).ss_last_push_ts
    by_name = {c.name: c for c in sides.dest_columns}
    key_columns = [by_name[k] for k in sides.key]
    frames = [_log_keys(spark, sub, key_columns, None, target_type)]
    p = publisher.dialect
    where = f"{p.quote(BIDIR.origin)} <> {p.literal(server)}"
    if since is not None:
        start = since - state.tolerance
        where += f" AND {p.quote(p.log_columns.snaptime)} >= {p.timestamp_literal(start)}"
    frames.append(_log_keys(spark, publisher, key_columns, where, target_type))
    return frames[0].unionByName(frames[1]).distinct()


def _log_keys(spark: Any, side: Side, key_columns: list[Column], where: str | None, target_type: Any) -> Any:
    d = side.dialect
    selected = ", ".join(
        f"{d.quote(lk)} AS {d.quote(c.name)}" for lk, c in zip(side.log.objects.key_columns, key_columns, strict=True)
    )
    query = f"SELECT {selected} FROM {side.rlog}" + (f" WHERE {where}" if where else "")
    frame = side.io.read(session_of(spark), query, key_columns)
    typed = frame.select(*(F.col(quoted(c.name)).cast(target_type(c)).alias(c.name) for c in key_columns))
    return typed.select(key_text(key_columns, target_type, d.name).alias(KEY))


def repair_replica(state: PublicationState, server: str, differences: Any, sides: S.Sides) -> tuple[int, int]:
    """Apply the publisher's rows for the differing keys to the replica through the push's staged
    merge; (rows written, keys deleted), keys with a local change not yet pulled left alone."""
    sub, publisher = state.subscriber(server), state.publisher
    names = [c.name for c in sides.dest_columns]
    todo: list[dict[str, Any]] = []
    for row in differences.select(KIND, SOURCE_ROW, DEST_KEY).collect():
        extra = row[KIND] == EXTRA
        keys = [row[DEST_KEY][k] if extra else row[SOURCE_ROW][k] for k in sides.key]
        entry: dict[str, Any] = {f"{K}{i}": v for i, v in enumerate(keys)}
        entry[PRESENT] = None if extra else 1
        if not extra:
            source_names = {c.name: s.name for c, s in zip(sides.dest_columns, sides.source.columns, strict=True)}
            entry.update({source_names[n]: row[SOURCE_ROW][n] for n in names})
        todo.append(entry)
    stage = PushStage(sub, state.item)
    stage.create()
    try:
        with sub.db.session() as session:
            waiting = stage.apply(session, publisher, todo)
    finally:
        stage.drop()
    applied = [e for i, e in enumerate(todo) if i not in waiting]
    return sum(1 for e in applied if e[PRESENT]), sum(1 for e in applied if not e[PRESENT])


def verify_replica(spark: Any, catalog: Catalog, request: VerifyRequest, replica: Replica) -> VerifyOutcome:
    """Compare ``replica`` with its publisher's table; with ``request.repair`` make it hold the
    publisher's rows for the keys that differ (never writing the publisher)."""
    started = time.monotonic()
    state = PublicationState(
        spark, catalog, replica.item, request.run_id,
        tolerance_minutes=request.tolerance_minutes, commit_rows=request.commit_rows,
    )  # fmt: skip
    try:
        sub = state.subscriber(replica.server)
        sides = replica_sides(state.publisher, sub, request.where)
        with sub.db.session() as session:
            estimate = sub.dialect.estimate_rows(session, sub.log.snl_schema, sub.log.snl_table)
        buckets = bucket_count(estimate or 0)
        ranges = plan_ranges(state.publisher.db, sub.db, sides, buckets)
        comparison = Comparison(spark, sides, sub.io.target_type, sub.dialect.name, buckets, ranges)
        found = find(comparison, DatabaseSums.of(state.publisher.db, sub.db, sides))
        outcome = VerifyOutcome(
            copy=replica.name, equal=not found.differing, rows=found.rows, ranges=comparison.buckets,
            ranges_differing=found.differing, computed_in=found.computed_in, rows_narrowed=found.rows_narrowed,
        )  # fmt: skip
        if found.differing:
            pending = pending_keys(spark, state, replica.server, sides, sub.io.target_type)
            outcome = narrowed(
                request, comparison, found.target, outcome, pending,
                lambda differences: repair_replica(state, replica.server, differences, sides),
            )  # fmt: skip
    finally:
        state.subscriber(replica.server).db.dispose()
        state.dispose()
    return dataclasses.replace(outcome, seconds=time.monotonic() - started)

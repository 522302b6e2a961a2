"""A snapshot group's incremental refresh to one consistent point (issue 25; Oracle's refresh groups
with ``atomic_refresh``).

0. Every member's lease; its sources and its log's triggers checked; its columns compared with its
   source's and followed as a single snapshot's refresh follows them (:mod:`snaprepl.refresh.columns`:
   added and widened in the destination before the pass, a dropped one kept and never written).
1. Per source database one read transaction that sees one state of it
   (``Dialect.consistent_high_water``: PostgreSQL REPEATABLE READ, whose snapshot is the transaction-id
   watermark; MariaDB a consistent snapshot begun just after the mark; SQLite the write lock), and the
   high water that goes with it, taken once and given to every member of that source as its bound.
2. In that transaction, each member's change query (:mod:`snaprepl.sql.change_queries`): its log
   entries in its window joined with its rows, all as of that one state. A member read **in full**
   instead: every row of its source as of that state, when columns were added at its source (they are
   filled in every row), or when it needs a complete refresh (a TRUNCATE or a disabled trigger caught
   by its log's guard, a purged log) and the request allows falling back to one; without that the
   group fails in one line naming the member and why.
3. Each member's changes into a staging table of the destination.
4. One destination transaction for the whole group: upserts parents first, then deletes children
   first (foreign keys between copies hold inside it; a member read in full deletes the rows its source
   no longer has), so a reader sees all of the group's changes or none. A group has one destination
   connection, so this is the whole group.
5. Then, per member, the replay log and SN_LAST_TS (``window.watermark``), SN_XID_SNAPSHOT, the
   outcome and the history (a member read in full as a complete refresh: SN_LAST_TS the point's mark).
   A run that dies between 4 and 5 is run again: rows are read current, so re-applying them changes
   nothing.

Chains: a member whose source is another member's destination (the lineage of
:mod:`snaprepl.catalog.table_lineage`) is read only after that member's changes are committed, so steps
1 to 5 run once per level of the chains (:func:`chain_levels`), upstream first: one destination
transaction per level, and a chained copy equals its upstream copy as of this refresh.

No Spark: the changes pass through this process (a group's incremental refresh is meant for changes
between refreshes; a complete refresh of a member runs as its own job).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from snaprepl.catalog import run_history
from snaprepl.catalog.records import LogRecord, utcnow
from snaprepl.catalog.run_lock import RunLock, check_leases, snapshot_lock_name
from snaprepl.catalog.snapshots import in_replay_order
from snaprepl.catalog.store import Catalog
from snaprepl.catalog.table_lineage import chain_levels
from snaprepl.common.table_names import Ident
from snaprepl.database.errors import one_line
from snaprepl.database.sessions import Database
from snaprepl.dialects import Column, Dialect
from snaprepl.dialects.model import SqlSession
from snaprepl.dialects.watermarks import HighWater
from snaprepl.errors import CompleteRefreshRequired, RefreshFailed, SnapreplError, SnapshotLogNotFound, SnapshotNotFound
from snaprepl.refresh.checks import check_sources
from snaprepl.refresh.columns import ColumnPlan, plan_columns, record_plan
from snaprepl.refresh.endpoints import Endpoints
from snaprepl.refresh.idle import record_succeeded
from snaprepl.refresh.model import COMPLETE, INCREMENTAL, RefreshOutcome, RefreshRequest
from snaprepl.refresh.window import Window, log_window, record_xids
from snaprepl.sql.change_queries import BATCH, OP, change_query, incremental_snapshot_query, staging_columns

#: Bound parameters per INSERT into a staging table (under every dialect's limit).
_PARAMS_PER_INSERT = 900


@dataclass
class _Member:
    """One member during a group refresh: its ends, window (or why it is read in full, and the point it
    was read at), destination columns and staged changes."""

    ends: Endpoints
    log: LogRecord | None = None
    window: Window | None = None
    plan: ColumnPlan | None = None
    full: str | None = None
    high: HighWater | None = None
    xids: bool = False
    columns: list[Column] = field(default_factory=list)
    rows: dict[tuple[Any, ...], tuple[Any, ...]] = field(default_factory=dict)
    entries: list[tuple[str, datetime]] = field(default_factory=list)
    stage: str = ""

    @property
    def name(self) -> str:
        return self.ends.snapshot.sn_name

    @property
    def key(self) -> list[str]:
        assert self.log is not None
        return self.log.key_columns

    def count(self, op: str) -> int:
        return sum(1 for row in self.rows.values() if row[1] == op)


@dataclass(frozen=True)
class GroupPass:
    """What a group refresh did: each member's outcome, and the point per source connection."""

    outcomes: list[RefreshOutcome]
    points: dict[str, datetime]


def refresh_group(catalog: Catalog, names: Sequence[str], request: RefreshRequest) -> GroupPass:
    """Bring the snapshots ``names`` (parents first) to one point per source (steps 0 to 5 above), level
    by level along their chains.

    :param request: the tolerance, run id and ``fallback_complete`` every member's window uses (its
        ``snapshot`` is the group's name).
    """
    started, started_at = time.monotonic(), utcnow()
    with ExitStack() as stack:
        members = []
        for name in names:
            stack.enter_context(RunLock(catalog, snapshot_lock_name(name), request.run_id, what=f"snapshot {name}"))
            snapshot = catalog.snapshot(name)
            if snapshot is None:
                raise SnapshotNotFound(f"there is no snapshot {name}", "`snaprepl status` lists the snapshots")
            ends = Endpoints.of(snapshot)
            stack.callback(ends.dispose)
            members.append(_Member(ends))
        outcomes: list[RefreshOutcome] = []
        points: dict[str, datetime] = {}
        try:
            by_name = {m.name: m for m in members}
            levels = [[by_name[n] for n in level] for level in chain_levels([m.ends.snapshot for m in members])]
            for member in (m for level in levels for m in level):  # upstream first: a column it adds is seen
                _check(catalog, member)
            for group in levels:
                for conn, mark in _read_all(catalog, request, group).items():
                    points.setdefault(conn, mark)  # a chained level's source is read later: the first point
                _stage_and_apply(group)
                outcomes += [_record(catalog, m, started, started_at) for m in group]
        except BaseException as err:
            done = {o.snapshot for o in outcomes}
            failure = _failure(err, request.snapshot, bool(done))
            _record_failure(catalog, [m for m in members if m.name not in done], started_at, failure)
            if failure is err:
                raise
            raise failure from err
    return GroupPass(outcomes, points)


def _check(catalog: Catalog, member: _Member) -> None:
    """Step 0: the member's sources and log checked, its source's columns followed."""
    ends = member.ends
    ends.snapshot = check_sources(catalog, ends.snapshot)
    source_table = ends.snapshot.sn_source_table
    member.log = catalog.log(source_table) if source_table else None
    if member.log is None:
        raise SnapshotLogNotFound(
            f"the snapshot log of {source_table}, which snapshot {member.name} reads, is gone",
            f"create it again and refresh {member.name} completely",
        )
    member.plan = plan_columns(catalog, ends)
    if member.plan is not None:
        ends.snapshot = dataclasses.replace(ends.snapshot, sn_query=member.plan.query)
        ends.columns = member.plan.columns
        if member.plan.complete:
            member.full = "columns added at the source are filled in every row"


def _read_all(catalog: Catalog, request: RefreshRequest, members: list[_Member]) -> dict[str, datetime]:
    """Step 1 and 2: per source connection one consistent read for all its members."""
    points: dict[str, datetime] = {}
    by_source: dict[str, list[_Member]] = {}
    for member in members:
        by_source.setdefault(member.ends.snapshot.sn_source_conn, []).append(member)
    for conn, group in by_source.items():
        database = group[0].ends.source_db
        with database.session() as session:
            high = database.dialect.consistent_high_water(session)
            for member in group:
                member.window = None if member.full else _window(catalog, request, member, high)
                member.high = high
                _read(session, database.dialect, member)
        points[conn] = high.clock
    return points


def _window(catalog: Catalog, request: RefreshRequest, member: _Member, high: HighWater) -> Window | None:
    """The member's window bounded by the group's ``high``; None (and the member read in full) when it
    needs a complete refresh and the request falls back to one.

    :raises CompleteRefreshRequired: it needs one and the request does not fall back.
    """
    try:
        return log_window(catalog, request, member.ends, shared=high)
    except CompleteRefreshRequired as err:
        if not request.fallback_complete:
            raise CompleteRefreshRequired(
                f"{err.message} (a member of group {request.snapshot})",
                f"run UPDATE SNAPSHOT GROUP {request.snapshot} AS NONINCREMENTAL, or trigger the group's DAG "
                "with mode nonincremental",
            ) from err
        member.full = err.message
        return None


def _read(session: SqlSession, source: Dialect, member: _Member) -> None:
    """The member's pending changes as staging rows (one per key: rows are current, so every entry of a
    key says the same), and every log entry they stand for; or, read in full, every row."""
    snapshot, log = member.ends.snapshot, member.log
    assert log is not None
    info = source.describe(session, Ident(log.snl_schema, True), Ident(log.snl_table, True), log.snl_conn)
    present = {c.name for c in info.columns}
    # A column dropped at the source is kept in the destination with its values: never written (NULL).
    member.columns = [c for c in member.ends.written_columns(member.ends.dest_table()) if c.name in present]
    read = [c.name for c in member.columns]
    keys = log.key_columns
    if member.window is None:  # in full, as of the group's point
        member.xids = source.logs_xids and source.log_has_xids(session, log.snl_schema, log.objects.rlog)
        query = incremental_snapshot_query(source, read, log.snl_schema, log.snl_table, snapshot.sn_condition)
        for row in session.query(query):
            member.rows[tuple(row[read.index(k)] for k in keys)] = (0, "U", None, None, *row)
        return
    window = member.window.condition(source, "snaprepl_l.")
    query = change_query(source, member.window.log, read, snapshot.sn_condition, member.window.start, window)
    replayed = set(member.window.replayed)
    for row in session.query(query):
        key, (snaptime, guid, is_present), values = (
            row[: len(keys)],
            row[len(keys) : len(keys) + 3],
            row[len(keys) + 3 :],
        )
        if guid in replayed:
            continue
        stamp = source.snaptime_value(snaptime)
        assert stamp is not None
        member.entries.append((str(guid), stamp))
        current = dict(zip(read, values, strict=True))
        current.update(zip(keys, key, strict=True))
        data = tuple(current.get(c.name) for c in member.columns)
        member.rows[tuple(key)] = (0, "U" if is_present is not None else "D", str(guid), stamp, *data)


def _stage_and_apply(members: list[_Member]) -> None:
    """Steps 3 and 4: stage each member's changes, apply them all in one destination transaction."""
    changed = [m for m in members if m.rows or m.full]  # one read in full deletes what its source lost
    if not changed:
        return
    try:
        for member in changed:
            _stage(member)
        dest_db = changed[0].ends.dest_db
        with dest_db.session() as session:
            for member in changed:  # parents first: a child's new parent is there
                _run(session, dest_db, member, "U")
            for member in reversed(changed):  # children first: no child is left without its parent
                _run(session, dest_db, member, "D")
            check_leases()  # a run taken over (thought dead) commits nothing
    finally:
        for member in changed:
            if member.stage:
                member.ends.drop_after_failure(member.ends.snapshot.sn_dest_schema, member.stage)


def _stage(member: _Member) -> None:
    dest_db = member.ends.dest_db
    dest, schema = dest_db.dialect, member.ends.snapshot.sn_dest_schema
    member.stage = member.ends.staging_name("grp")
    stage_columns = staging_columns(dest, member.columns)
    with dest_db.session() as session:
        session.execute(dest.drop_table_sql(schema, member.stage))
        session.execute(dest.create_table_sql(schema, member.stage, stage_columns, member.key))
    with dest_db.session() as session:
        _insert(session, dest, dest.qualified(schema, member.stage), [c.name for c in stage_columns], member.rows)


def _insert(
    session: SqlSession, dialect: Dialect, table: str, names: list[str], rows: dict[tuple[Any, ...], tuple[Any, ...]]
) -> None:
    """Insert ``rows`` into ``table``, many rows per statement."""
    columns = ", ".join(dialect.quote(n) for n in names)
    values = list(rows.values())
    per_insert = max(1, _PARAMS_PER_INSERT // len(names))
    for start in range(0, len(values), per_insert):
        chunk = values[start : start + per_insert]
        params = {f"p{i}_{j}": dialect.python_param(v) for i, row in enumerate(chunk) for j, v in enumerate(row)}
        marks = ", ".join(f"({', '.join(f':p{i}_{j}' for j in range(len(names)))})" for i in range(len(chunk)))
        session.execute(f"INSERT INTO {table} ({columns}) VALUES {marks}", params)


def _run(session: SqlSession, dest_db: Database, member: _Member, op: str) -> None:
    if not member.count(op) and not (op == "D" and member.full):
        return
    dest, snapshot = dest_db.dialect, member.ends.snapshot
    target = dest.qualified(snapshot.sn_dest_schema, snapshot.sn_dest_table)
    staged = dest.qualified(snapshot.sn_dest_schema, member.stage)
    if op == "U":
        sql = dest.upsert_staged_sql(target, staged, member.columns, member.key, BATCH, OP)
    elif member.full:  # every row of the source is staged: the others are gone
        sql = dest.delete_missing_sql(target, staged, member.key)
    else:
        sql = dest.delete_staged_sql(target, staged, member.key, BATCH, OP)
    session.execute(sql, {"batch": 0})


def _in_replay_order(entries: list[tuple[str, datetime]]) -> list[tuple[str, datetime]]:
    by_time: dict[datetime, list[str]] = {}
    for guid, ts in entries:
        by_time.setdefault(ts, []).append(guid)
    return in_replay_order(by_time)


def _record(catalog: Catalog, member: _Member, started: float, started_at: datetime) -> RefreshOutcome:
    """Step 5 for one member."""
    snapshot = member.ends.snapshot
    notes = [*(member.plan.notes if member.plan else ())]
    if member.window is None:  # read in full at the point: a complete refresh from its mark
        assert member.high is not None
        last_ts: datetime | None = member.high.mark
        catalog.record_complete(snapshot.sn_name, last_ts, member.high.xids if member.xids else None)
        kind, notes = COMPLETE, [*notes, f"read in full at the group's point: {member.full}"]
    else:
        kind, last_ts = INCREMENTAL, snapshot.sn_last_ts
        if member.entries:
            last_ts = member.window.watermark(max(ts for _, ts in member.entries))
            entries = _in_replay_order(member.entries) if member.window.needs_replay_log else []
            catalog.record_applied(snapshot.sn_name, entries, last_ts)
        record_xids(catalog, snapshot, member.window)
        notes += [member.window.note] if member.window.note else []
    if member.plan is not None:
        record_plan(catalog, catalog.snapshot(snapshot.sn_name) or snapshot, member.plan)
    full = member.window is None
    outcome = RefreshOutcome(
        snapshot=snapshot.sn_name,
        kind=kind,
        rows_copied=member.count("U") if full else 0,
        rows_upserted=0 if full else member.count("U"),
        rows_deleted=0 if full else member.count("D"),
        batches=1 if member.rows else 0,
        last_ts=last_ts,
        duration_s=time.monotonic() - started,
        note="; ".join(notes) or None,
        columns_followed=member.plan.followed if member.plan else 0,
    )
    return record_succeeded(catalog, outcome, started, started_at)


def _failure(err: BaseException, group: str, committed: bool) -> BaseException:
    """snaprepl's errors and interruptions as they are; a database's error as one line."""
    if isinstance(err, SnapreplError) or not isinstance(err, Exception):
        return err
    kept = (
        "the levels of the group's chains before the failing one were committed; the rest keep their last point"
        if committed
        else "nothing of this refresh was committed (the copies keep their last common point)"
    )
    hint = f"{kept}; fix the cause and refresh the group again"
    return RefreshFailed(f"refresh of group {group} failed: {one_line(err)}", hint)


def _record_failure(catalog: Catalog, members: list[_Member], started_at: datetime, err: BaseException) -> None:
    why = run_history.clean_error(err) if isinstance(err, Exception) else type(err).__name__
    for member in members:
        catalog.update_snapshot(member.name, sn_last_status="failed", sn_last_error=why, sn_last_refresh_at=utcnow())
        run_history.record_refresh(catalog, member.name, INCREMENTAL, started_at, "failed", rh_error=why)

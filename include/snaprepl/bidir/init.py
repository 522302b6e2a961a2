"""REPL_INIT_SNAPSHOT of a subscriber: the publisher's rows copied straight into an empty replica
where the COPY pipe can, else staged on the subscriber (:mod:`snaprepl.bidir.init_stage`), then merged
into its replica (see :mod:`snaprepl.bidir.sync`)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import datetime
from typing import Any

from snaprepl.bidir.guard import guard_init
from snaprepl.bidir.init_loop import apply_in_loops
from snaprepl.bidir.init_stage import BY_PIPE, CHUNK, AlreadyThere, InitCopy
from snaprepl.bidir.sides import Side
from snaprepl.bidir.state import PublicationState
from snaprepl.catalog.records import SubscriptionRecord, utcnow
from snaprepl.catalog.run_lock import RunLock, check_leases
from snaprepl.common.progress import Progress
from snaprepl.database.sessions import Database, Session
from snaprepl.errors import ReplicationError
from snaprepl.publications.leases import push_lease
from snaprepl.publications.outcome import Outcome
from snaprepl.settings import Settings
from snaprepl.spark.tasks import reporting_tasks


def init(
    state: PublicationState,
    server: str,
    rows_per_commit: int,
    max_partitions: int = Settings.refresh_max_partitions,
    *,
    atomic: bool = False,
) -> Outcome:
    """REPL_INIT_SNAPSHOT of ``server``: copy the publisher's rows straight into an empty replica, or
    stage them on the subscriber, then apply them; ``rows_per_commit`` at a time either way. ``atomic``
    stages and applies them all, and removes the rows the publisher lacks, in one transaction (a
    backfill's reload: readers see the old replica or the new one)."""
    started = time.monotonic()
    if rows_per_commit < 1:
        raise ReplicationError("rows_per_commit must be at least 1")
    outcome = Outcome("init", server)
    guard_init(state, server)
    record = state.subscription(server)
    sub = state.subscriber(server)
    with RunLock(
        state.catalog, push_lease(state.item, server), state.run_id, what=f"{server}'s replica of {state.item}"
    ):
        bookmark = _bookmark(state, record, sub, server)
        # An empty replica (a first load, not a resumed or repeated one) only gets inserts: no row to
        # update, none the publisher lacks. Rows users write meanwhile have pending log entries, which
        # every chunk leaves alone anyway.
        fresh = is_empty(sub)
        source = InitCopy(state, max_partitions)
        if not (fresh and not atomic and _straight(source, sub, outcome, rows_per_commit)):
            _staged(source, sub, outcome, (rows_per_commit, atomic, fresh))
        state.catalog.update_subscription(
            server,
            state.item,
            ss_init_state="done",
            ss_needs_init=None,
            ss_init_bm=None,
            ss_last_push_ts=datetime.fromisoformat(bookmark["push_ts"]),
            ss_last_pull_ts=datetime.fromisoformat(bookmark["pull_ts"]),
            ss_last_push_at=utcnow(),
        )
    sub.db.dispose()
    outcome.duration_s = time.monotonic() - started
    return outcome


def _straight(source: InitCopy, sub: Side, outcome: Outcome, rows_per_commit: int) -> bool:
    """Copy the rows straight into ``sub``'s empty replica (no staging table), committing every
    ``rows_per_commit`` rows; False when it cannot, or when a row it copied was there already (a user's
    insert since the replica was found empty): the rows committed stay, and the staged load merges."""
    started = time.monotonic()
    copy = Progress(f"initial load of {outcome.server}: copy", source.estimate, estimated=True, bar=True).start()
    try:
        copied = source.straight_into(sub, rows_per_commit)
    except AlreadyThere as there:
        outcome.notes.append(f"a row was in the replica already ({there}): staged and merged instead")
        return False
    if copied is None:
        return False
    outcome.rows = copied
    copy.reached(copied, total=copied)
    outcome.notes.append(
        f"copied straight into the empty replica by {BY_PIPE} (without Spark), committing every "
        f"{rows_per_commit} rows, in {time.monotonic() - started:.1f} s"
    )
    return True


def _staged(source: InitCopy, sub: Side, outcome: Outcome, how: tuple[int, bool, bool]) -> None:
    """Copy the rows into a staging table on ``sub``, then apply them to its replica ``rows_per_commit``
    at a time (or in one transaction when ``atomic``); ``fresh``: the replica was found empty."""
    rows_per_commit, atomic, fresh = how
    fresh = fresh and is_empty(sub)  # not when a straight copy stopped at a row there already
    started = time.monotonic()
    state, server = source.state, outcome.server
    copy = Progress(f"initial load of {server}: copy", source.estimate, estimated=True, bar=True).start()
    stage = sub.dialect.shorten(f"snaprepl_init_{uuid.uuid5(uuid.NAMESPACE_URL, state.item + server).hex[:10]}")
    try:
        with reporting_tasks(state.spark, copy.tasks):
            copied_by = source.into(sub, stage, rows_per_commit)
        chunks = _chunks(sub, stage, outcome, fresh)
        copy.reached(outcome.rows, total=outcome.rows)
        staged = time.monotonic()
        apply = Progress(f"initial load of {server}: apply", outcome.rows, bar=True).start()
        apply_staged(sub, stage, [c.name for c in state.publisher.columns], chunks, (atomic, fresh), apply)
        commits = 1 if atomic else len(chunks) + 1
        outcome.notes.append(
            f"copied to a staging table by {copied_by} in {staged - started:.1f} s, "
            f"applied in {commits} commits in {time.monotonic() - staged:.1f} s"
        )
    finally:
        with sub.db.session() as session:
            session.execute(sub.dialect.drop_table_sql(sub.log.snl_schema, stage))


def _bookmark(state: PublicationState, record: SubscriptionRecord, sub: Side, server: str) -> dict[str, str]:
    """The push and pull watermarks of the load: an interrupted load's, or taken now, before the copy,
    so nothing changed meanwhile is lost."""
    if record.ss_init_state == "running" and record.ss_init_bm:
        bookmark: dict[str, str] = json.loads(record.ss_init_bm)
        return bookmark
    # Capped at the start of the oldest open transaction: one still open misses the copy, and its
    # change must be in the first push's window (see snaprepl.dialects.watermarks).
    with state.publisher.db.session() as session:
        push_ts = state.publisher.dialect.high_water(session).mark
    with sub.db.session() as session:
        pull_ts = sub.dialect.high_water(session).mark
    bookmark = {"push_ts": push_ts.isoformat(), "pull_ts": pull_ts.isoformat(), "run_id": state.run_id}
    state.catalog.update_subscription(server, state.item, ss_init_state="running", ss_init_bm=json.dumps(bookmark))
    return bookmark


def is_empty(sub: Side) -> bool:
    """``sub``'s replica has no row."""
    with sub.db.session() as session:
        return not session.query(f"SELECT CASE WHEN EXISTS (SELECT 1 FROM {sub.table}) THEN 1 ELSE 0 END")[0][0]


def _chunks(sub: Side, stage: str, outcome: Outcome, fresh: bool) -> list[tuple[Any, int]]:
    """Index the staging table ``stage``; its chunk numbers and their rows. ``fresh``: the replica is
    empty (no anti-join of it with the staged rows to come)."""
    sd = sub.dialect
    schema = sub.log.snl_schema
    stage_sql = sd.qualified(schema, stage)
    with sub.db.session() as session:
        # The chunk index drives the commits; the key index the final anti-join (MariaDB
        # would otherwise scan the staging table once per replica row).
        session.execute(sd.create_index_sql(schema, stage, sd.shorten(f"{stage}_chunk"), [CHUNK]))
        if not fresh:
            session.execute(sd.create_index_sql(schema, stage, sd.shorten(f"{stage}_key"), sub.key))
        sd.analyze(session, schema, stage)
        chunk = sd.quote(CHUNK)
        chunks = [
            (row[0], int(row[1]))
            for row in session.query(f"SELECT {chunk}, COUNT(*) FROM {stage_sql} GROUP BY {chunk} ORDER BY 1")
        ]
        outcome.rows = sum(rows for _, rows in chunks)
    return chunks


def apply_staged(
    sub: Side, stage: str, names: list[str], chunks: list[tuple[Any, int]], how: tuple[bool, bool], progress: Progress
) -> None:
    """Merge the staged rows into the replica, one commit per chunk (or one in all when ``atomic``),
    then delete the replica's rows the staging table lacks (none when ``fresh``: the replica was empty).

    The chunks' commits do not wait for the disk (:meth:`~snaprepl.dialects.bidir_sets.BidirSets.unflushed_commit_sql`);
    the last transaction flushes them all, before the load is recorded as done."""
    atomic, fresh = how
    sd = sub.dialect
    stage_sql = sd.qualified(sub.log.snl_schema, stage)
    log_keys = sub.log.objects.key_columns
    if fresh:  # no row to update: only the merge's insert
        merge = [sd.replicated_insert_sql(sub.table, stage_sql, names, sub.key, sub.rlog, log_keys)]
    else:
        merge = sd.replicated_merge_sql(sub.table, stage_sql, names, sub.key, sub.rlog, log_keys)
    setup = sd.staged_apply_setup_sql() + ([] if atomic else sd.unflushed_commit_sql())
    looped = not atomic and apply_in_loops(sub, chunks, setup, merge, progress)
    with _transactions(sub.db, atomic) as transaction:
        for number, rows in [] if looped else chunks:  # one commit per chunk of about rows_per_commit rows
            with transaction() as session:
                for statement in setup:
                    session.execute(statement)
                for statement in merge:
                    session.execute(statement, {"chunk": number})
                check_leases()  # a run taken over (thought dead) commits nothing more
            progress.advance(rows)
        with transaction() as session:
            for statement in sd.flushing_commit_sql():
                session.execute(statement)
            if not fresh:  # rows an interrupted earlier load left that the publisher no longer has
                for statement in sd.replicated_delete_sql(sub.table, _lacking(sub, stage_sql)):
                    session.execute(statement)


def _lacking(sub: Side, stage_sql: str) -> str:
    """The replica's rows the staging table lacks, without a pending local change."""
    sd = sub.dialect
    match = " AND ".join(f"s.{sd.quote(k)} = {sub.table}.{sd.quote(k)}" for k in sub.key)
    no_pending = sd.no_pending_sql(
        sub.rlog, sub.log.objects.key_columns, [f"{sub.table}.{sd.quote(k)}" for k in sub.key]
    )
    return f"NOT EXISTS (SELECT 1 FROM {stage_sql} s WHERE {match}) AND {no_pending}"


@contextmanager
def _transactions(db: Database, atomic: bool) -> Iterator[Callable[[], AbstractContextManager[Session]]]:
    """A factory of transactions on ``db``: each call a transaction of its own, or, when ``atomic``,
    the one transaction this block holds (committed when the block ends)."""
    if not atomic:
        yield db.session
        return
    with db.session() as whole:
        yield lambda: nullcontext(whole)

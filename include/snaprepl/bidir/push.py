"""Push to a subscriber: the publisher's logged changes, except the subscriber's own, applied to its
replica (see :mod:`snaprepl.bidir.sync`)."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from snaprepl.bidir.push_stage import PushStage
from snaprepl.bidir.sides import (
    GUID,
    SNAPTIME,
    Side,
    batches,
    change_guids,
    count_changes,
    read_changes,
)
from snaprepl.bidir.state import PublicationState
from snaprepl.catalog.records import SubscriptionRecord, utcnow
from snaprepl.catalog.run_lock import RunLock, check_leases
from snaprepl.common.progress import Progress
from snaprepl.dialects.base import BIDIR
from snaprepl.dialects.watermarks import HighWater
from snaprepl.errors import ReplicationError
from snaprepl.publications.leases import push_lease
from snaprepl.publications.outcome import Outcome


def push(state: PublicationState, server: str) -> Outcome:
    """Push the publisher's changes to ``server``."""
    started = time.monotonic()
    outcome = Outcome("push", server)
    record = loaded_subscription(state, server)
    sub = state.subscriber(server)
    publisher = state.publisher
    with RunLock(
        state.catalog, push_lease(state.item, server), state.run_id, what=f"{server}'s replica of {state.item}"
    ):
        high = publisher_high_water(state)
        where = push_window(state, record, high)
        entries = read_changes(state.spark, publisher, where)
        outcome.changes = len(entries)
        done = state.catalog.urplog_contains(state.item, publisher.name, server, [e[GUID] for e in entries])
        waiting: list[datetime] = []
        progress = Progress(f"push of {state.item} to {server}", len(entries)).start()
        stage = PushStage(sub, state.item)
        staged = any(e[GUID] not in done for e in entries)
        if staged:
            stage.create()
        try:
            for batch in batches(entries, state.commit_rows):
                todo = [e for e in batch if e[GUID] not in done]
                applied = _apply_batch(publisher, sub, todo, waiting, stage) if todo else []
                outcome.applied += len(applied)
                # Never past a change of the publisher that can still commit (see snaprepl.dialects.watermarks).
                watermark = high.limit(min(waiting) if waiting else max(e[SNAPTIME] for e in batch))
                state.catalog.record_replayed(
                    state.item,
                    publisher.name,
                    server,
                    [(e[GUID], e[SNAPTIME]) for e in applied],
                    subscription=(server, {"ss_last_push_ts": watermark, "ss_last_push_at": utcnow()}),
                )
                progress.advance(len(batch))
        finally:
            if staged:
                stage.drop()
        outcome.skipped = len(waiting)
        if not entries:
            state.catalog.update_subscription(server, state.item, ss_last_push_at=utcnow())
    sub.db.dispose()
    outcome.duration_s = time.monotonic() - started
    return outcome


def loaded_subscription(state: PublicationState, server: str) -> SubscriptionRecord:
    """``server``'s subscription, which a push needs loaded (REPL_INIT_SNAPSHOT done)."""
    record = state.subscription(server)
    if record.ss_init_state != "done":
        raise ReplicationError(
            f"server {server} has not loaded {state.item} yet",
            f"run REPL_INIT_SNAPSHOT('{server}', '{state.item}', 2) first",
        )
    return record


def publisher_high_water(state: PublicationState) -> HighWater:
    """The publisher's high water, taken before its log is read."""
    with state.publisher.db.session() as session:
        high: HighWater = state.publisher.dialect.high_water(session)
    return high


def push_window(state: PublicationState, record: SubscriptionRecord, high: HighWater) -> str:
    """The publisher's log entries a push to ``record``'s server reads (a WHERE on log alias ``l``):
    not in flight, not of the server's own origin, since its last push (which never passed a change
    that could still commit), minus the tolerance where that is not exact or the clock went back."""
    d = state.publisher.dialect
    last = record.ss_last_push_ts
    exact = high.exact and last is not None and high.clock >= last
    start = last if exact else (last - state.tolerance if last else None)
    where = f"l.{d.quote(BIDIR.sync_id)} = '' AND l.{d.quote(BIDIR.origin)} <> {d.literal(record.ss_server)}"
    if start is not None:
        where += f" AND l.{d.quote(d.log_columns.snaptime)} >= {d.timestamp_literal(start)}"
    return where


def pending_push(state: PublicationState, server: str) -> int:
    """How many entries a push to ``server`` would apply or retry (SQL only, no Spark): those in its
    window that the update replay log does not list as pushed to it."""
    publisher = state.publisher
    where = push_window(state, loaded_subscription(state, server), publisher_high_water(state))
    if not count_changes(publisher, where):
        return 0
    guids = change_guids(publisher, where)
    return len(set(guids) - state.catalog.urplog_contains(state.item, publisher.name, server, guids))


def _apply_batch(
    publisher: Side, sub: Side, todo: list[dict[str, Any]], waiting: list[datetime], stage: PushStage
) -> list[dict[str, Any]]:
    """Apply ``todo`` to the subscriber in one transaction, set-based; return the entries applied. Keys
    with a local change not yet pulled wait (their SNAPTIME goes to ``waiting``)."""
    with sub.db.session() as session:
        left = stage.apply(session, publisher, todo)
        check_leases()  # a run taken over (thought dead) commits nothing more
    waiting.extend(todo[seq][SNAPTIME] for seq in sorted(left))
    return [entry for seq, entry in enumerate(todo) if seq not in left]

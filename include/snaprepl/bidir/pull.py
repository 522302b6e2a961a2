"""Pull from a subscriber: its logged changes, judged against the publisher's rows, applied to the
publisher (see :mod:`snaprepl.bidir.sync`)."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from snaprepl.bidir import resolvers as R
from snaprepl.bidir.judge import ROWGUID, Change, Verdict, judge
from snaprepl.bidir.pull_stage import PullStage
from snaprepl.bidir.rows import current_rows, delete_row, log_change, norm_key, tombstones, write_row
from snaprepl.bidir.sides import (
    GUID,
    OLD,
    OP,
    SNAPTIME,
    SYNC,
    Side,
    batches,
    count_changes,
    key_of,
    read_changes,
    row_of,
)
from snaprepl.bidir.state import PublicationState
from snaprepl.catalog.records import utcnow
from snaprepl.catalog.run_lock import RunLock, check_leases
from snaprepl.common.progress import Progress
from snaprepl.database.sessions import Session
from snaprepl.dialects.base import BIDIR
from snaprepl.publications.leases import pull_lease
from snaprepl.publications.outcome import Outcome


def pull(state: PublicationState, server: str) -> Outcome:
    """Pull ``server``'s changes into the publisher."""
    started = time.monotonic()
    outcome = Outcome("pull", server)
    sub = state.subscriber(server)
    sync = sub.dialect.quote(BIDIR.sync_id)
    with RunLock(state.catalog, pull_lease(state.item), state.run_id, what=f"publication {state.item} (pull)"):
        with sub.db.session() as session:  # not the entries of a transaction still open: next time
            for statement in sub.dialect.claim_pending_sql(sub.rlog, sync):
                session.execute(statement, {"run": state.run_id} if ":run" in statement else None)
        entries = read_changes(state.spark, sub, f"l.{sync} <> ''")
        outcome.changes = len(entries)
        guids = [e[GUID] for e in entries]
        applied_before = state.catalog.urplog_contains(state.item, server, state.publisher.name, guids)
        progress = Progress(f"pull of {state.item} from {server}", len(entries)).start()
        stage = PullStage(state.publisher, state.item, server)
        staged = any(e[GUID] not in applied_before for e in entries)
        if staged:
            stage.create()
        try:
            for batch in batches(entries, state.commit_rows):
                todo = [e for e in batch if e[GUID] not in applied_before]
                if todo:
                    _apply_batch(state, sub, todo, outcome, stage)
                newest = max(e[SNAPTIME] for e in batch)
                state.catalog.record_replayed(
                    state.item,
                    server,
                    state.publisher.name,
                    [(e[GUID], e[SNAPTIME]) for e in todo],
                    subscription=(server, {"ss_last_pull_ts": newest, "ss_last_pull_at": utcnow()}),
                )
                _forget_pulled(sub, batch)
                progress.advance(len(batch))
        finally:
            if staged:
                stage.drop()
    sub.db.dispose()
    outcome.duration_s = time.monotonic() - started
    return outcome


def pending_pull(state: PublicationState, server: str) -> int:
    """How many entries a pull from ``server`` would take (SQL only, no Spark): every entry of its
    log, pending or in flight (a pull deletes the entries it pulled)."""
    sub = state.subscriber(server)
    try:
        return count_changes(sub, "1 = 1")
    finally:
        sub.db.dispose()


def _apply_batch(
    state: PublicationState, sub: Side, todo: list[dict[str, Any]], outcome: Outcome, stage: PullStage
) -> None:
    """Judge and apply ``todo`` in one publisher transaction, recording their conflicts: the changes
    without conflict set-based in the publisher (:mod:`snaprepl.bidir.pull_stage`), the others one
    by one with the resolvers."""
    conflicts: list[dict[str, Any]] = []
    cleared: list[str] = []
    with state.publisher.db.session() as session:
        for number, positions in enumerate(stage.load(session, sub, todo)):
            classes = stage.classify(session, number)
            stage.apply(session, number)
            in_conflict = [todo[seq] for seq in positions if classes[seq] == "conflict"]
            for seq in positions:
                if classes[seq] in {"insert", "update", "delete"}:
                    cleared.append(todo[seq][GUID])
                    outcome.applied += 1
            if in_conflict:
                _judge_rows(state, session, sub, in_conflict, outcome, (conflicts, cleared))
        # Before the publisher commits: a run killed after that commit finds the
        # entries applied (no conflict any more) and must find their conflicts recorded.
        check_leases()  # a run taken over (thought dead) commits nothing more
        state.catalog.record_conflicts(state.item, sub.name, conflicts, cleared)
    outcome.conflicts += len(conflicts)


def _judge_rows(
    state: PublicationState,
    session: Session,
    sub: Side,
    todo: list[dict[str, Any]],
    outcome: Outcome,
    ledger: tuple[list[dict[str, Any]], list[str]],
) -> None:
    """Judge ``todo`` (entries of distinct keys) one by one with :func:`~snaprepl.bidir.judge.judge`
    and the resolvers, and carry out each verdict; conflicts and cleared entries go to ``ledger``."""
    publisher = state.publisher
    server = sub.name
    resolvers = state.resolvers()
    conflicts, cleared = ledger
    current = current_rows(session, publisher, [key_of(e, sub) for e in todo])
    deleted = tombstones(session, publisher, [key_of(e, sub) for e in todo if e[OP].strip() == "D"], current)
    for entry in todo:
        key = key_of(entry, sub)
        norm = norm_key(key)
        incoming = publisher.as_own_values(row_of(entry, sub))
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
            tombstone=deleted.get(norm),
        )
        current[norm] = _apply(session, publisher, key, before, verdict, entry[GUID])
        if verdict.action in {"write", "delete"}:
            outcome.applied += 1
        if verdict.conflict:
            conflicts.append(_ledger(state, verdict, change, before, server, entry[GUID]))
        elif verdict.action != "noop":
            cleared.append(entry[GUID])


def _forget_pulled(sub: Side, batch: list[dict[str, Any]]) -> None:
    """Delete the pulled entries of ``batch`` from the subscriber's log."""
    sync = sub.dialect.quote(BIDIR.sync_id)
    match = " AND ".join(f"{sub.dialect.quote(lk)} = :k{i}" for i, lk in enumerate(sub.log.objects.key_columns))
    params = [
        {**{f"k{i}": sub.dialect.python_param(v) for i, v in enumerate(key_of(e, sub))}, "sync": e[SYNC]} for e in batch
    ]
    with sub.db.session() as session:
        session.execute_many(f"DELETE FROM {sub.rlog} WHERE {match} AND {sync} = :sync", params)


def _apply(
    session: Session,
    publisher: Side,
    key: tuple[Any, ...],
    current: dict[str, Any] | None,
    verdict: Verdict,
    version: str,
) -> dict[str, Any] | None:
    """Carry out ``verdict`` on the publisher; return the publisher's row for the key afterwards.

    :param version: the incoming entry's RLOG_ROWGUID; a delete is logged under it (see
        :func:`~snaprepl.bidir.rows.tombstones`)."""
    mine = current.get(ROWGUID) if current else None
    if verdict.action == "write" and verdict.row is not None:
        row: dict[str, Any] = {c.name: verdict.row.get(c.name) for c in publisher.columns}
        write_row(session, publisher, row, exists=current is not None)
        log_change(session, publisher, "U" if current else "I", key, row[ROWGUID], mine, verdict.origin)
        return row
    if verdict.action == "delete":
        if current is not None:
            delete_row(session, publisher, key)
            log_change(session, publisher, "D", key, version, mine, verdict.origin)
        return None
    if verdict.action == "reassert":
        if current is not None:
            log_change(session, publisher, "U", key, mine or "", mine, publisher.name)
        else:
            log_change(session, publisher, "D", key, f"{publisher.name}@{uuid.uuid4()}", None, publisher.name)
    return current


def _ledger(
    state: PublicationState, verdict: Verdict, change: Change, before: dict[str, Any] | None, origin: str, entry: str
) -> dict[str, Any]:
    """A conflict ledger row: both versions, who decided, what, and which row lost."""
    publisher_lost = verdict.decision in {R.Decision.SUBSCRIBER_WINS, R.Decision.SUBSCRIBER_WINS_CHANGED}
    loser = {"side": state.publisher.name, "row": before} if publisher_lost else {"side": origin, "row": change.row}
    return {
        "CF_ITEM": state.item,
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
        "CF_RUN_ID": state.run_id,
        "CF_ENTRY": entry,
    }

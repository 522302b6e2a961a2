"""The catalog's side of the guards of log triggers (the dialects' side: :mod:`snaprepl.dialects.guards`).

At each refresh and sync step one query per log asks whether its triggers are there and enabled and
what bypassed them since the last check (a ``TRUNCATE``, a trigger disabled or recreated meanwhile).
Anything found is said in one line naming the table and the trigger, and makes the copies fed by the
log unsafe: every incremental snapshot of the log needs a complete refresh (``SN_NEEDS_COMPLETE``,
which ``fallback_complete`` applies), and a publication's replica a new initial load
(``SS_NEEDS_INIT``, REPL_INIT_SNAPSHOT). A trigger still missing or disabled fails every run until it
is repaired; an event is reported once (the log's recorded state moves past it).
"""

from __future__ import annotations

import json
from typing import Any

from snaprepl.catalog.records import LogRecord
from snaprepl.catalog.store import Catalog
from snaprepl.common.table_names import ResolvedTable
from snaprepl.dialects import Dialect, get_dialect
from snaprepl.dialects.guards import GuardFindings
from snaprepl.dialects.model import SqlSession
from snaprepl.errors import LogBypassed


def log_state(log: LogRecord) -> dict[str, Any] | None:
    """The guard state recorded for ``log``; None for a log created before guards existed."""
    return json.loads(log.snl_guard) if log.snl_guard else None


def guard_notes(log: LogRecord) -> list[str]:
    """What the guards of ``log``'s triggers cannot catch (for status), one line each."""
    state = log_state(log)
    if state is None:
        return ["created before its triggers were guarded: a TRUNCATE is not caught; recreate the log to guard it"]
    return get_dialect(log.snl_dialect).guard_notes(state)


def inspect(catalog: Catalog, log: LogRecord, dialect: Dialect, session: SqlSession) -> GuardFindings:
    """Check ``log``'s triggers (one query) and record the state the check moved to."""
    table = ResolvedTable(log.snl_conn, log.snl_schema, log.snl_table)
    state = log_state(log)
    findings = dialect.guard_check(session, table, log.objects, state)
    if state is not None and findings.state != state:
        catalog.set_log_guard(log.snl_source, json.dumps(findings.state, sort_keys=True))
    return findings


def reason(findings: GuardFindings) -> str:
    """The findings in one line."""
    return "; ".join([*findings.broken, *findings.events])


def repair_hint(log: LogRecord, then: str) -> str:
    """How to make the log whole again, then what to run."""
    return (
        "enable a disabled trigger for every session (PostgreSQL: ALTER TABLE ... ENABLE ALWAYS TRIGGER ...); "
        f"recreate a missing or replaced one by recreating the log (DROP SNAPSHOT LOG FOR {log.snl_source} and "
        f"CREATE SNAPSHOT LOG FOR {log.snl_source}, after dropping the snapshots that read it); then {then}"
    )


def guard_snapshot_log(catalog: Catalog, log: LogRecord, dialect: Dialect, session: SqlSession) -> bool:
    """Check the log a refresh reads; whatever was found marks every incremental snapshot of the log as
    needing a complete refresh. Returns whether any was marked.

    :raises LogBypassed: a trigger is missing or disabled (every run fails until it is repaired).
    """
    findings = inspect(catalog, log, dialect, session)
    if findings.clean:
        return False
    why = reason(findings)
    for snapshot in catalog.snapshots_of_log(log.snl_source):
        if snapshot.incremental and not snapshot.sn_needs_complete:
            catalog.update_snapshot(snapshot.sn_name, sn_needs_complete=why[:4000])
    if findings.broken:
        raise LogBypassed(
            f"the snapshot log of {log.snl_source} misses changes: {why}",
            repair_hint(log, "refresh its snapshots completely (UPDATE SNAPSHOT name AS NONINCREMENTAL)"),
        )
    return True


def guard_publication_side(
    catalog: Catalog,
    item: str,
    log: LogRecord,
    dialect: Dialect,
    session: SqlSession,
    servers: list[str],
    *,
    settles: str | None = None,
) -> None:
    """Check one side's log of publication ``item``: whatever was found makes the replicas of
    ``servers`` (every subscriber for the publisher's log, the one for a subscriber's) need a new
    initial load, which makes them equal to the publisher again.

    :param settles: the server whose initial load is about to run (it settles events found now).
    :raises LogBypassed: anything was found (the step cannot sync a replica that differs), except events
        an initial load of ``settles`` settles; a trigger still missing or disabled always.
    """
    findings = inspect(catalog, log, dialect, session)
    if findings.clean:
        return
    why = reason(findings)
    for server in servers:
        catalog.update_subscription(server, item, ss_needs_init=why[:4000])
    if settles is not None and not findings.broken:
        return
    loads = ", ".join(f"REPL_INIT_SNAPSHOT('{s}', '{item}', 2)" for s in [*servers, *([settles] if settles else [])])
    raise LogBypassed(f"publication {item}: {why}", repair_hint(log, f"load the replicas again: {loads or 'none'}"))

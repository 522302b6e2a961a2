"""What the publisher does with one change pulled from a subscriber (docs/semantics.md section 6), as a pure
function of the change, the publisher's current row and the resolvers.

* insert of a key the publisher has -> uniqueness conflict ('I' resolvers, default publisher wins);
* update based on a version the publisher no longer has -> update conflict ('U', default publisher wins);
* update of a missing row, or delete of a missing row or of another version -> delete conflict
  ('D', default ignore);
* an incoming version equal to the publisher's current one is already applied: nothing to do; so is
  a delete whose own version is the one the publisher logged for the key's deletion.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from snaprepl.bidir.resolvers import Decision, Resolver, decide
from snaprepl.dialects.base import BIDIR

ROWGUID = BIDIR.rowguid


@dataclass(frozen=True)
class Change:
    """One logged change as a pull sees it.

    :param op: 'I', 'U' or 'D' as logged (folded).
    :param key: the key's values, in key order.
    :param old: OLD_ROWGUID: the version the change was based on (None for inserts).
    :param row: the subscriber's current row (with ROWGUID), or None if it has none.
    :param version: the entry's RLOG_ROWGUID (for a delete, the version id the delete made).
    """

    op: str
    key: tuple[Any, ...]
    old: str | None
    row: dict[str, Any] | None
    version: str | None = None


@dataclass
class Verdict:
    """What to do on the publisher.

    :param action: ``noop`` (already there), ``write`` (insert or update ``row``), ``delete``,
        ``reassert`` (send the publisher's own state to everyone) or ``ignore``.
    :param origin: ORIGIN of the publisher's log entry: the subscriber, or the publisher (everyone
        receives it, the originator too).
    """

    action: str
    row: dict[str, Any] | None = None
    origin: str = ""
    conflict: str | None = None
    decision: Decision | None = None
    resolver: str | None = None
    incoming: dict[str, Any] | None = field(default=None)


def judge(
    change: Change,
    current: Mapping[str, Any] | None,
    resolvers: Mapping[str, list[tuple[str, Resolver]]],
    *,
    origin: str,
    publisher: str,
    key_columns: list[str],
    new_version: Callable[[], str],
    tombstone: str | None = None,
) -> Verdict:
    """Decide what the publisher does with ``change`` from subscriber ``origin``.

    :param current: the publisher's row for the key (with ROWGUID), or None.
    :param resolvers: by conflict type, in CR_ORDER.
    :param new_version: makes a fresh '<publisher>@<uuid>' (for code 2).
    :param tombstone: when the publisher has no row for the key, the version id of the delete its log
        holds for it: equal to a delete's own version, the delete is already applied.
    """
    op = change.op
    if op in {"I", "U"} and change.row is None:
        # Deleted at the subscriber after the pull marked the entry: the change that reaches us is a delete.
        op = "D"
    found = _conflict_kind(change, op, current, origin, tombstone)
    if isinstance(found, Verdict):
        return found
    kind = found
    presented = dict(change.row) if kind != "D" and change.row else dict(zip(key_columns, change.key, strict=True))
    decision, name = decide(list(resolvers.get(kind, [])), presented, origin, dict(current) if current else None, kind)
    verdict = Verdict("ignore", conflict=kind, decision=decision, resolver=name, incoming=change.row)
    if decision is Decision.IGNORE:
        return verdict
    if decision is Decision.PUBLISHER_WINS:
        verdict.action, verdict.origin = "reassert", publisher
        return verdict
    if op == "D":
        verdict.action = "delete" if current is not None else "noop"
        verdict.origin = origin if decision is Decision.SUBSCRIBER_WINS else publisher
        return verdict
    row = dict(change.row or {})
    if decision is Decision.SUBSCRIBER_WINS_CHANGED:
        if kind != "D":
            row.update(presented)  # the resolver's changes
        row[ROWGUID] = new_version()
        verdict.origin = publisher
    else:
        verdict.origin = origin
    verdict.action, verdict.row = "write", row
    return verdict


def _conflict_kind(
    change: Change, op: str, current: Mapping[str, Any] | None, origin: str, tombstone: str | None
) -> Verdict | str:
    """The verdict of a change without conflict, or the type ('I', 'U' or 'D') of its conflict."""
    mine = current.get(ROWGUID) if current is not None else None
    if op in {"I", "U"}:
        incoming = change.row or {}
        if mine is not None and mine == incoming.get(ROWGUID):
            return Verdict("noop")
        if current is None:
            # An update of a row the publisher does not have is a delete conflict.
            return Verdict("write", row=dict(incoming), origin=origin) if op == "I" else "D"
        if op == "U" and mine == change.old:
            return Verdict("write", row=dict(incoming), origin=origin)
        return op
    if current is not None and mine == change.old:
        return Verdict("delete", origin=origin)
    if current is None and tombstone is not None and tombstone == change.version:
        return Verdict("noop")
    return "D"

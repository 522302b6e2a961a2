"""The set-based classification of pulled changes (:func:`snaprepl.bidir.pull_stage.class_case`), run
by each real database, agrees with the reference, :func:`snaprepl.bidir.judge.judge`, on every
combination of operation, versions, publisher row and tombstone."""

from __future__ import annotations

import itertools
import uuid
from typing import Any

from snaprepl.bidir.judge import Change, judge
from snaprepl.bidir.pull_stage import CLS, HAS, MINE, SOLD, SOP, SPRESENT, TOMB, class_case
from tests.support.databases import RealDatabase

VERSION = "sub@d"  # the entry's own version (RLOG_ROWGUID)
OPS = ("I", "U", "D")
INCOMING = (None, "sub@2")  # the subscriber's row: absent, or present with this ROWGUID
OLDS = (None, "pub@1", "pub@0")
#: The publisher's row: none, or one with this ROWGUID (None: a row without a version).
CURRENT = ("none", "pub@1", "sub@2", None)
TOMBSTONES = (None, VERSION, "sub@other")


def reference(op: str, incoming: str | None, old: str | None, current: Any, tombstone: str | None) -> str:
    """The class judge() gives the change, without resolvers."""
    row = {"id": 1, "ROWGUID": incoming} if incoming is not None else None
    now = None if current == "none" else {"id": 1, "ROWGUID": current}
    verdict = judge(
        Change(op, (1,), old, row, VERSION),
        now,
        {},
        origin="sub",
        publisher="pub",
        key_columns=["id"],
        new_version=lambda: "pub@new",
        tombstone=tombstone,
    )
    if verdict.conflict:
        return "conflict"
    if verdict.action == "write":
        return "insert" if now is None else "update"
    assert verdict.action in {"noop", "delete"}, verdict
    return verdict.action


def literal(value: Any) -> str:
    return "NULL" if value is None else f"'{value}'" if isinstance(value, str) else str(value)


def test_the_databases_classify_as_judge_does(real_db: RealDatabase) -> None:
    q = real_db.q
    table = f"classes_{uuid.uuid4().hex[:8]}"
    text = "varchar(255)" if real_db.dialect != "sqlite" else "TEXT"
    cases = list(itertools.product(OPS, INCOMING, OLDS, CURRENT, TOMBSTONES))
    columns = ["SEQ", SOP, SPRESENT, "ROWGUID", SOLD, MINE, HAS, TOMB, CLS]
    types = ["integer", text, "integer", text, text, text, "integer", "integer", text]
    rows = []
    for seq, (op, incoming, old, current, tombstone) in enumerate(cases):
        mine = None if current == "none" else current
        values = [seq, op, int(incoming is not None), incoming, old, mine, int(current != "none")]
        values.append(int(tombstone == VERSION))
        rows.append(f"({', '.join(literal(v) for v in values)}, NULL)")
    with real_db.connect() as conn:
        cur = conn.cursor()
        definitions = ", ".join(f"{q(c)} {t}" for c, t in zip(columns, types, strict=True))
        cur.execute(f"CREATE TABLE {q(table)} ({definitions})")
        try:
            cur.execute(f"INSERT INTO {q(table)} ({', '.join(q(c) for c in columns)}) VALUES {', '.join(rows)}")
            cur.execute(f"UPDATE {q(table)} SET {q(CLS)} = {class_case(q)}")
            cur.execute(f"SELECT {q('SEQ')}, {q(CLS)} FROM {q(table)}")
            found = dict(cur.fetchall())
        finally:
            cur.execute(f"DROP TABLE {q(table)}")
    expected = {seq: reference(*case) for seq, case in enumerate(cases)}
    disagreements = {cases[s]: (found[s], expected[s]) for s in expected if found[s] != expected[s]}
    assert not disagreements
    # Every class occurs, so the comparison covers each branch of the CASE.
    assert set(expected.values()) == {"noop", "insert", "update", "delete", "conflict"}

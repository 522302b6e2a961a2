"""The set-based statements of a pull (:class:`~snaprepl.bidir.pull_stage.PullStage`) and a push
(:class:`~snaprepl.bidir.push_stage.PushStage`), run by each real database as publisher or subscriber:
what they write to the table, what they log, and that the triggers do not log them again."""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

from snaprepl.bidir.pull_stage import PullStage
from snaprepl.bidir.push_stage import PushStage
from snaprepl.bidir.sides import GUID, OLD, OP, PRESENT, SNAPTIME, Side
from snaprepl.catalog.records import LogRecord
from snaprepl.common.table_names import Ident
from snaprepl.database.sessions import Database
from tests.support.databases import RealDatabase

ROWS = [(1, "a", "pub@1"), (2, "b", "pub@2"), (3, "c", "pub@3"), (4, "d", "pub@4")]


def make_side(db: RealDatabase, *, publisher: bool) -> Side:
    """A fresh bi-directional table on ``db`` with its log and triggers, and ROWS (written as replicated
    rows, which are not logged)."""
    table = f"staged_{uuid.uuid4().hex[:8]}"
    q = db.q
    rowguid = q("ROWGUID")
    db.run(f"CREATE TABLE {q(table)} (id integer PRIMARY KEY, name varchar(20), {rowguid} varchar(255))")
    database = Database.for_conn_id(db.conn_id)
    d = database.dialect
    with database.session() as session:
        info = d.describe(session, Ident(db.schema, True), Ident(table, True), db.conn_id)
        objects = d.bidir_log_objects(info.table, ["id"])
        for step in d.create_bidir_log_ddl(info, objects, "here", publisher=publisher):
            session.execute(step.sql)
    values = ", ".join(f"({i}, '{n}', '{g}')" for i, n, g in ROWS)
    db.run(f"INSERT INTO {q(table)} (id, name, {rowguid}) VALUES {values}")
    record = LogRecord(
        snl_source=info.table.key,
        snl_rlog=objects.rlog,
        snl_rplog="",
        snl_conn=db.conn_id,
        snl_schema=info.table.schema,
        snl_table=info.table.table,
        snl_dialect=d.name,
        snl_key_columns=json.dumps(["id"]),
        snl_objects=objects.to_json(),
        snl_kind="bidir",
        snl_created_at=datetime(2026, 1, 1),
    )
    return Side("here", database, None, record, list(info.columns))  # type: ignore[arg-type]


def entry(op: str, key: int, guid: str, old: str | None, row: tuple[str, str] | None) -> dict[str, Any]:
    """A log entry as read_changes gives it: the key, the change, and the side's current row (if any)."""
    found = {"id": key, "name": row[0], "ROWGUID": row[1]} if row else {"id": None, "name": None, "ROWGUID": None}
    return {"SNAPREPL_K0": key, OP: op, GUID: guid, OLD: old, PRESENT: 1 if row else None, SNAPTIME: 0, **found}


def table_and_log(db: RealDatabase, side: Side) -> tuple[dict[int, tuple[str, str]], dict[int, tuple[Any, ...]]]:
    q = db.q
    with db.connect() as conn:
        cur = conn.cursor()
        cur.execute(f"SELECT id, name, {q('ROWGUID')} FROM {q(side.log.snl_table)}")
        rows = {r[0]: (r[1], r[2]) for r in cur.fetchall()}
        log_key = q(side.log.objects.key_columns[0])
        names = ", ".join(q(c) for c in ("DMLTYPE", "RLOG_ROWGUID", "OLD_ROWGUID", "ORIGIN"))
        cur.execute(f"SELECT {log_key}, {names} FROM {q(side.log.objects.rlog)}")
        log = {r[0]: tuple(r[1:]) for r in cur.fetchall()}
    return rows, log


def test_a_pull_batch_is_classified_applied_and_logged_set_based(real_db: RealDatabase) -> None:
    pub = make_side(real_db, publisher=True)
    todo = [
        entry("I", 10, "sub@10", None, ("new", "sub@10")),  # insert
        entry("U", 1, "sub@11", "pub@1", ("a2", "sub@11")),  # update based on the publisher's version
        entry("D", 2, "sub@d2", "pub@2", None),  # delete of the publisher's version
        entry("U", 3, "sub@13", "pub@0", ("c2", "sub@13")),  # based on another version: conflict
        entry("U", 4, "pub@4", "pub@3", ("d", "pub@4")),  # the publisher has it already
        entry("U", 1, "sub@12", "sub@11", ("a3", "sub@12")),  # the same key again: the next round
    ]
    stage = PullStage(pub, "item", "sub")
    stage.create()
    try:
        classes: dict[int, str] = {}
        with pub.db.session() as session:
            rounds = stage.load(session, pub, todo)
            for number in range(len(rounds)):
                classes.update(stage.classify(session, number))
                stage.apply(session, number)
    finally:
        stage.drop()
    assert rounds == [[0, 1, 2, 3, 4], [5]]
    assert classes == {0: "insert", 1: "update", 2: "delete", 3: "conflict", 4: "noop", 5: "update"}
    rows, log = table_and_log(real_db, pub)
    assert rows == {1: ("a3", "sub@12"), 3: ("c", "pub@3"), 4: ("d", "pub@4"), 10: ("new", "sub@10")}
    # Each change logged once, with the subscriber as ORIGIN; U+U folded, based on the first version.
    assert log == {
        10: ("I", "sub@10", None, "sub"),
        1: ("U", "sub@12", "pub@1", "sub"),
        2: ("D", "sub@d2", "pub@2", "sub"),
    }


def test_a_push_batch_is_applied_set_based_and_keys_changed_locally_wait(real_db: RealDatabase) -> None:
    sub = make_side(real_db, publisher=False)
    q = real_db.q
    real_db.run(f"UPDATE {q(sub.log.snl_table)} SET name = 'mine' WHERE id = 3")  # a local change, not pulled
    todo = [
        entry("I", 10, "pub@10", None, ("new", "pub@10")),  # write a row it lacks
        entry("U", 1, "pub@11", "pub@1", ("a2", "pub@11")),  # write a newer version
        entry("D", 2, "pub@d2", "pub@2", None),  # the publisher has no row: delete
        entry("U", 3, "pub@13", "pub@3", ("c2", "pub@13")),  # changed locally: waits for the pull
        entry("D", 77, "pub@d77", "pub@7", None),  # a row it does not have: nothing to do
    ]
    stage = PushStage(sub, "item")
    stage.create()
    try:
        with sub.db.session() as session:
            waiting = stage.apply(session, sub, todo)
    finally:
        stage.drop()
    assert waiting == {3}
    rows, log = table_and_log(real_db, sub)
    assert rows[3][0] == "mine"
    assert {k: v for k, v in rows.items() if k != 3} == {1: ("a2", "pub@11"), 4: ("d", "pub@4"), 10: ("new", "pub@10")}
    assert list(log) == [3]  # only the local change: replicated writes are not logged

"""Set-based judging and applying of a pull's batch on the publisher.

The batch's changes are staged in a table on the publisher (key, version, base version, operation and
the subscriber's row, in the publisher's column types), joined there with the publisher's rows and
log to classify each change exactly as :func:`snaprepl.bidir.judge.judge` does (:func:`class_case`;
a unit test holds the two to agreeing), and the changes without conflict are applied with a few
statements per batch: inserts, updates and deletes, each folded into the publisher's log. Only the
changes in conflict go back to the driver, to the resolvers.

A key that occurs more than once in a batch (a pull run again after one was killed holds an in-flight
entry and a newer pending one) is staged in rounds: round ``n`` holds each key's ``n``-th entry, so
every round's keys are distinct and applied after the round before.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from snaprepl.bidir.judge import ROWGUID
from snaprepl.bidir.rows import insert_rows, norm_key
from snaprepl.bidir.sides import GUID, OLD, OP, Side, key_of, row_of
from snaprepl.database.sessions import Session
from snaprepl.dialects import Column
from snaprepl.dialects.types import GenericType, render

SEQ, RND, SOP, SGUID, SOLD, SPRESENT = (f"SNAPREPL_{n}" for n in ("SEQ", "RND", "OP", "GUID", "OLD", "PRESENT"))
MINE, HAS, TOMB, CLS = (f"SNAPREPL_{n}" for n in ("MINE", "HAS", "TOMB", "CLS"))
#: What :func:`class_case` calls a change: applied set-based (``insert``, ``update``, ``delete``),
#: nothing to do (``noop``), or judged in the driver with the resolvers (``conflict``).
CLASSES = ("noop", "insert", "update", "delete", "conflict")


def class_case(quote: Any) -> str:
    """The class of a staged change, from its own columns and what :meth:`PullStage.look_up` found:
    the publisher's ROWGUID for the key (MINE), whether it has the row (HAS), whether its log holds
    the change's own delete (TOMB). See :func:`snaprepl.bidir.judge.judge`."""
    op, present, mine, old = quote(SOP), quote(SPRESENT), quote(MINE), quote(SOLD)
    has, tomb, incoming = quote(HAS), quote(TOMB), quote(ROWGUID)
    based_on_mine = f"({mine} = {old} OR ({mine} IS NULL AND {old} IS NULL))"
    return (
        f"CASE WHEN {op} IN ('I', 'U') AND {present} = 1 THEN CASE"
        f" WHEN {mine} IS NOT NULL AND {mine} = {incoming} THEN 'noop'"
        f" WHEN {has} = 0 THEN CASE WHEN {op} = 'I' THEN 'insert' ELSE 'conflict' END"
        f" WHEN {op} = 'U' AND {based_on_mine} THEN 'update'"
        " ELSE 'conflict' END"
        f" WHEN {has} = 1 AND {based_on_mine} THEN 'delete'"
        f" WHEN {has} = 0 AND {tomb} = 1 THEN 'noop'"
        " ELSE 'conflict' END"
    )


def stage_columns(publisher: Side) -> list[Column]:
    """The staging table's columns: the change's own, what the join finds, then the publisher's."""
    d = publisher.dialect
    text = render(GenericType("varchar(n)", length=255), d.name)
    integer = render(GenericType("integer"), d.name)
    own = [(SEQ, render(GenericType("bigint"), d.name)), (RND, integer), (SOP, text), (SGUID, text), (SOLD, text)]
    own += [(SPRESENT, integer), (MINE, text), (HAS, integer), (TOMB, integer), (CLS, text)]
    return [Column(n, t) for n, t in own] + [Column(c.name, c.type_sql) for c in publisher.columns]


class PullStage:
    """The staging table of one publication's pulls from one subscriber, on the publisher."""

    def __init__(self, publisher: Side, item: str, server: str) -> None:
        self.publisher = publisher
        self.server = server
        d = publisher.dialect
        self.name = d.shorten(f"snaprepl_pull_{uuid.uuid5(uuid.NAMESPACE_URL, f'{item}@{server}').hex[:10]}")
        self.sql = d.qualified(publisher.log.snl_schema, self.name)
        self.columns = stage_columns(publisher)

    def create(self) -> None:
        """(Re)create the table: one a killed pull left is dropped."""
        d, schema = self.publisher.dialect, self.publisher.log.snl_schema
        with self.publisher.db.session() as session:
            session.execute(d.drop_table_sql(schema, self.name))
            session.execute(d.create_table_sql(schema, self.name, self.columns, []))
            session.execute(d.create_index_sql(schema, self.name, d.shorten(f"{self.name}_key"), self.publisher.key))

    def drop(self) -> None:
        with self.publisher.db.session() as session:
            session.execute(self.publisher.dialect.drop_table_sql(self.publisher.log.snl_schema, self.name))

    def load(self, session: Session, sub: Side, todo: Sequence[dict[str, Any]]) -> list[list[int]]:
        """Stage ``todo`` (entries read from ``sub``, in SNAPTIME order); return the positions of the
        entries of each round."""
        d, publisher = self.publisher.dialect, self.publisher
        for statement in d.staged_apply_setup_sql():
            session.execute(statement)
        session.execute(f"DELETE FROM {self.sql}")
        rounds: list[list[int]] = []
        seen: dict[tuple[Any, ...], int] = {}
        rows = []
        for seq, entry in enumerate(todo):
            key = key_of(entry, sub)
            norm = norm_key(key)
            number = seen.get(norm, -1) + 1
            seen[norm] = number
            if number == len(rounds):
                rounds.append([])
            rounds[number].append(seq)
            row = row_of(entry, sub)
            values = publisher.as_own_values({**(row or {}), **dict(zip(publisher.key, key, strict=True))}) or {}
            own = {SEQ: seq, RND: number, SOP: entry[OP].strip(), SGUID: entry[GUID], SOLD: entry[OLD]}
            own.update({SPRESENT: 1 if row is not None else 0, MINE: None, HAS: None, TOMB: None, CLS: None})
            rows.append([own.get(c.name, values.get(c.name)) for c in self.columns])
        insert_rows(session, d, self.sql, [c.name for c in self.columns], rows)
        return rounds

    def classify(self, session: Session, number: int) -> dict[int, str]:
        """Lock the publisher's rows of round ``number``, classify its changes; return each one's class."""
        publisher, d = self.publisher, self.publisher.dialect
        q, stage, table = d.quote, self.sql, publisher.table
        at_stage = " AND ".join(f"t.{q(k)} = {stage}.{q(k)}" for k in publisher.key)
        lock = " AND ".join(f"t.{q(k)} = s.{q(k)}" for k in publisher.key)
        session.query(f"SELECT 1 FROM {stage} s JOIN {table} t ON {lock} WHERE s.{q(RND)} = {number}{d.for_update}")
        cols, log_keys = d.log_columns, publisher.log.objects.key_columns
        at_log = " AND ".join(f"l.{q(lk)} = {stage}.{q(k)}" for lk, k in zip(log_keys, publisher.key, strict=True))
        deleted_here = (
            f"SELECT 1 FROM {publisher.rlog} l WHERE {at_log} AND l.{q(cols.dmltype)} = 'D' "
            f"AND l.{q(cols.rowguid)} = {stage}.{q(SGUID)}"
        )
        session.execute(
            f"UPDATE {stage} SET {q(MINE)} = (SELECT t.{q(ROWGUID)} FROM {table} t WHERE {at_stage}), "
            f"{q(HAS)} = CASE WHEN EXISTS (SELECT 1 FROM {table} t WHERE {at_stage}) THEN 1 ELSE 0 END, "
            f"{q(TOMB)} = CASE WHEN EXISTS ({deleted_here}) THEN 1 ELSE 0 END WHERE {q(RND)} = {number}"
        )
        session.execute(f"UPDATE {stage} SET {q(CLS)} = {class_case(q)} WHERE {q(RND)} = {number}")
        found = session.query(f"SELECT {q(SEQ)}, {q(CLS)} FROM {stage} WHERE {q(RND)} = {number}")
        return {int(seq): str(kind) for seq, kind in found}

    def apply(self, session: Session, number: int) -> None:
        """Apply round ``number``'s inserts, updates and deletes, and log them with the subscriber as ORIGIN."""
        publisher, d = self.publisher, self.publisher.dialect
        q, stage, table = d.quote, self.sql, publisher.table
        names = [c.name for c in publisher.columns]
        origin = d.literal(self.server)

        def where(kind: str) -> str:
            return f"s.{q(RND)} = {number} AND s.{q(CLS)} = '{kind}'"

        def put(op: str, guid: str, old: str, kind: str) -> list[str]:
            objects = publisher.log.objects
            return d.stage_put_sql(publisher.rlog, objects, op, stage, publisher.key, (guid, old, origin), where(kind))

        statements = [
            f"INSERT INTO {table} ({', '.join(q(n) for n in names)}) "
            f"SELECT {', '.join(f's.{q(n)}' for n in names)} FROM {stage} s WHERE {where('insert')}",
            *put("I", f"s.{q(ROWGUID)}", "NULL", "insert"),
            d.stage_update_sql(table, stage, names, publisher.key, where("update")),
            *put("U", f"s.{q(ROWGUID)}", f"s.{q(MINE)}", "update"),
            *put("D", f"s.{q(SGUID)}", f"s.{q(MINE)}", "delete"),
            *d.stage_delete_sql(table, stage, publisher.key, where("delete")),
        ]
        for statement in statements:
            session.execute(statement)

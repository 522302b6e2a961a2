"""Set-based applying of a push's batch on a subscriber: the publisher's rows (or, for a key it no
longer has, the key) staged in a table on the subscriber, then merged into its replica with a few
statements per batch; keys with a local change not yet pulled are left alone and wait."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from snaprepl.bidir.rows import insert_rows
from snaprepl.bidir.sides import Side, key_of, row_of
from snaprepl.database.sessions import Session
from snaprepl.dialects import Column
from snaprepl.dialects.types import GenericType, render

SEQ = "SNAPREPL_SEQ"
#: The column :meth:`~snaprepl.dialects.bidir_logs.BidirLogs.replicated_merge_sql` applies by: 0 for
#: rows to write, 1 for keys to delete.
CHUNK = "SNAPREPL_CHUNK"


class PushStage:
    """The staging table of one publication's pushes to one subscriber, on the subscriber."""

    def __init__(self, sub: Side, item: str) -> None:
        self.sub = sub
        d = sub.dialect
        self.name = d.shorten(f"snaprepl_push_{uuid.uuid5(uuid.NAMESPACE_URL, f'{item}@{sub.name}').hex[:10]}")
        self.sql = d.qualified(sub.log.snl_schema, self.name)
        bigint = render(GenericType("bigint"), d.name)
        self.columns = [Column(SEQ, bigint), Column(CHUNK, bigint)] + [Column(c.name, c.type_sql) for c in sub.columns]

    def create(self) -> None:
        """(Re)create the table: one a killed push left is dropped."""
        d, schema = self.sub.dialect, self.sub.log.snl_schema
        with self.sub.db.session() as session:
            session.execute(d.drop_table_sql(schema, self.name))
            session.execute(d.create_table_sql(schema, self.name, self.columns, []))
            session.execute(d.create_index_sql(schema, self.name, d.shorten(f"{self.name}_key"), self.sub.key))

    def drop(self) -> None:
        with self.sub.db.session() as session:
            session.execute(self.sub.dialect.drop_table_sql(self.sub.log.snl_schema, self.name))

    def apply(self, session: Session, publisher: Side, todo: Sequence[dict[str, Any]]) -> set[int]:
        """Stage ``todo`` (entries of distinct keys read from the publisher) and apply them to the replica;
        return the positions of the entries whose key has a local change not yet pulled (not applied)."""
        sub, d = self.sub, self.sub.dialect
        q = d.quote
        for statement in d.staged_apply_setup_sql():
            session.execute(statement)
        session.execute(f"DELETE FROM {self.sql}")
        rows = []
        for seq, entry in enumerate(todo):
            row = row_of(entry, publisher)
            values = {**(row or {}), **dict(zip(sub.key, key_of(entry, publisher), strict=True))}
            own = {SEQ: seq, CHUNK: 0 if row is not None else 1}
            rows.append([own.get(c.name, values.get(c.name)) for c in self.columns])
        insert_rows(session, d, self.sql, [c.name for c in self.columns], rows)
        log_keys = sub.log.objects.key_columns
        at_stage = " AND ".join(f"l.{q(lk)} = s.{q(k)}" for lk, k in zip(log_keys, sub.key, strict=True))
        pending = f"EXISTS (SELECT 1 FROM {sub.rlog} l WHERE {at_stage})"
        waiting_sql = f"SELECT s.{q(SEQ)} FROM {self.sql} s WHERE {pending}"
        waiting = {int(r[0]) for r in session.query(waiting_sql)}
        names = [c.name for c in sub.columns]
        for statement in d.replicated_merge_sql(sub.table, self.sql, names, sub.key, sub.rlog, log_keys):
            session.execute(statement, {"chunk": 0})
        gone = f"s.{q(CHUNK)} = 1 AND NOT {pending}"
        for statement in d.stage_delete_sql(sub.table, self.sql, sub.key, gone):
            session.execute(statement)
        # Both before and after: a key pending at either moment may have been left alone.
        waiting.update(int(r[0]) for r in session.query(waiting_sql))
        return waiting

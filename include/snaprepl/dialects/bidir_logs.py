"""Bi-directional logs, per dialect: the log table, the ROWGUID column, the triggers' put statements
and replicated writes (mixed into every dialect as :class:`BidirLogs`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from snaprepl.common.table_names import ResolvedTable
from snaprepl.dialects.model import BIDIR, DELETE_MARK, DdlStep, LogColumns, LogObjects, TableInfo
from snaprepl.errors import UnsupportedConnection


@dataclass(frozen=True)
class PutParts:
    """SQL pieces shared by the dialects' put statements (see :meth:`BidirLogs.bidir_put_sql`)."""

    #: The key condition on the log; ``pending`` adds the pending entry's empty SYNC_ID.
    match: str
    pending: str
    #: DMLTYPE and OLD_ROWGUID folded into the pending entry.
    type: str
    old: str
    #: The log's column list and the new entry's values, in that order.
    columns: str
    values: str
    items: tuple[str, ...]
    #: Conditions guarding the upsert, and statements to run after it.
    conditions: tuple[str, ...]
    after: tuple[str, ...]


@dataclass(frozen=True)
class MergeShape:
    """How a MERGE dialect writes the put of :meth:`BidirLogs._merge_put_sql`: the statement's head
    (``{rlog}`` filled in), each clause's indent, the aliases of log and rows, the rows' version
    columns, and whether key aliases are quoted."""

    head: str
    using_indent: str
    on_indent: str
    when_indent: str
    target: str
    source: str
    guid: str
    old: str
    quote_aliases: bool


def _folded(op: str, dml: str, based_on: str) -> tuple[str, str]:
    """DMLTYPE and OLD_ROWGUID of a pending entry (columns ``dml`` and ``based_on``) once change ``op``
    is folded into it: I+U -> I, U+U -> U, U+D -> D, D+I -> U."""
    folded_type = {
        "I": f"CASE WHEN {dml} = 'D' THEN 'U' ELSE 'I' END",
        "U": f"CASE WHEN {dml} = 'I' THEN 'I' ELSE 'U' END",
        "D": "'D'",
    }[op]
    folded_old = {
        "I": f"CASE WHEN {dml} = 'D' THEN {based_on} ELSE NULL END",
        "U": f"CASE WHEN {dml} = 'I' THEN NULL ELSE {based_on} END",
        "D": based_on,
    }[op]
    return folded_type, folded_old


class BidirLogs:
    """The bi-directional part of a dialect."""

    if TYPE_CHECKING:
        name: ClassVar[str]
        snaptime_type: ClassVar[str]
        dmltype_type: ClassVar[str]
        rowguid_type: ClassVar[str]
        log_columns: ClassVar[LogColumns]

        def quote(self, name: str) -> str: ...

        def qualified(self, schema: str | None, table: str) -> str: ...

        def literal(self, value: str) -> str: ...

        def utc_now_sql(self) -> str: ...

        def uuid_sql(self) -> str: ...

        def table_options(self) -> str: ...

        def log_objects(self, table: ResolvedTable, key_columns: Sequence[str]) -> LogObjects: ...

    # ------------------------------------------------------------------ bi-directional logs
    #
    # Replicated writes are told from users' writes by ROWGUID alone, so no session state is needed:
    # a user's insert has no ROWGUID, a user's update leaves it unchanged (users never write it), and
    # a replicated delete first sets it to DELETE_MARK. Users' changes get a new version
    # '<server>@<uuid>' and are logged, folded into the key's pending entry (SYNC_ID ''):
    # I+U -> I, U+U -> U, U+D -> D, D+I -> U, I+D -> nothing; OLD_ROWGUID stays the version the
    # pending change is based on. An entry a pull has marked (SYNC_ID set) is never folded into: a
    # change made meanwhile starts a new pending entry, based on the version being pulled.

    #: The empty text of SYNC_ID (pending) and ORIGIN (a user's change): '' (Oracle, where '' is NULL,
    #: uses a single space).
    empty_text: ClassVar[str] = "''"
    #: How the dialect's MERGE puts look (None: the dialect puts otherwise).
    merge_shape: ClassVar[MergeShape | None] = None
    #: The dialect puts with ``INSERT ... ON CONFLICT`` (PostgreSQL, SQLite), the log aliased as
    #: :attr:`log_alias` (None: named by itself).
    on_conflict_puts: ClassVar[bool] = False
    log_alias: ClassVar[str | None] = None

    def bidir_log_objects(self, table: ResolvedTable, key_columns: Sequence[str]) -> LogObjects:
        """Names of a bi-directional log's objects (the seed lists other triggers for some dialects)."""
        return self.log_objects(table, key_columns)

    def create_bidir_log_table_sql(self, info: TableInfo, objects: LogObjects) -> str:
        cols, bidir = self.log_columns, BIDIR
        key_defs = [
            f"{self.quote(log_col)} {col.type_sql} NOT NULL"
            for log_col, col in zip(objects.key_columns, info.primary_key, strict=True)
        ]
        text = self.bidir_text_type(64)
        body = ",\n  ".join(
            [
                *key_defs,
                f"{self.quote(bidir.sync_id)} {text} DEFAULT {self.empty_text} NOT NULL",
                f"{self.quote(cols.snaptime)} {self.snaptime_type} NOT NULL",
                f"{self.quote(cols.dmltype)} {self.dmltype_type} NOT NULL",
                f"{self.quote(cols.rowguid)} {self.rowguid_type} NOT NULL",
                f"{self.quote(bidir.old_rowguid)} {self.rowguid_type}",
                f"{self.quote(bidir.origin)} {self.rowguid_type} DEFAULT {self.empty_text} NOT NULL",
                f"PRIMARY KEY ({', '.join(self.quote(c) for c in (*objects.key_columns, bidir.sync_id))})",
            ]
        )
        rlog = self.qualified(info.table.schema, objects.rlog)
        return f"CREATE TABLE {rlog} (\n  {body}\n){self.table_options()}"

    def bidir_text_type(self, length: int) -> str:
        return f"VARCHAR({length})"

    def add_rowguid_steps(self, table: ResolvedTable, server: str) -> list[DdlStep]:
        """Add the ROWGUID column to a published table and give existing rows '<server>@<uuid>'."""
        target = self.qualified(table.schema, table.table)
        rowguid = self.quote(BIDIR.rowguid)
        return [
            DdlStep(
                f"ALTER TABLE {target} ADD {rowguid} {self.rowguid_type}",
                f"ALTER TABLE {target} DROP COLUMN {rowguid}",
            ),
            DdlStep(f"UPDATE {target} SET {rowguid} = {self.new_version_sql(server)} WHERE {rowguid} IS NULL"),
        ]

    def new_version_sql(self, server: str) -> str:
        """A fresh version id of ``server``: '<server>@<uuid>'."""
        return f"{self.literal(server + '@')} || {self.uuid_sql()}"

    def bidir_put_sql(
        self,
        rlog: str,
        objects: LogObjects,
        op: str,
        keys: Sequence[str],
        guid: str,
        old: str,
        origin: str,
        now: str | None = None,
        when: str | None = None,
        publisher: bool = False,
    ) -> list[str]:
        """Statements that record change ``op`` ('I', 'U' or 'D') of key ``keys`` in the pending entry,
        folding it into one already there. The arguments are SQL expressions (trigger row values or
        ``:parameters``); ``when``, a condition the statements run under (for triggers without IF).

        :param publisher: the log is a publisher's, whose entries pushes read again and again: a delete
            after an insert is kept as a delete (the insert may have reached subscribers already),
            where a subscriber's log, whose pending entries no one has seen, forgets both."""
        if not self.on_conflict_puts:
            raise UnsupportedConnection(f"snaprepl does not run bi-directional replication on {self.name}")
        return self._on_conflict_put_sql(
            rlog, objects, op, keys, (guid, old, origin, now), alias=self.log_alias, publisher=publisher, when=when
        )

    def _merge_put_sql(
        self, rlog: str, objects: LogObjects, source: str, aliases: list[str], op: str, *, publisher: bool
    ) -> str:
        """Fold change ``op`` of the rows of ``source`` (columns ``aliases``, guid, old) into the log with
        one MERGE, written as the dialect's :attr:`merge_shape` says (SQL Server, DB2)."""
        shape, q, cols, bidir = self.merge_shape, self.quote, self.log_columns, BIDIR
        if shape is None:
            raise UnsupportedConnection(f"{self.name} writes no MERGE puts")
        t, s, w = shape.target, shape.source, shape.when_indent
        names = [q(a) if shape.quote_aliases else a for a in aliases]
        keys = [f"{s}.{n}" for n in names]
        entry = (f"{s}.{shape.guid}", f"{s}.{shape.old}", "''", None)
        parts = self._put_parts(rlog, objects, op, keys, entry, existing=f"{t}.", publisher=publisher, when=None)
        on = " AND ".join(f"{t}.{q(lk)} = {k}" for lk, k in zip(objects.key_columns, keys, strict=True))
        forget = f"{w}WHEN MATCHED AND {t}.{q(cols.dmltype)} = 'I' THEN DELETE\n" if op == "D" and not publisher else ""
        return (
            f"{shape.head.format(rlog=rlog)}\n"
            f"{shape.using_indent}USING ({source}) AS {s} ({', '.join(names)}, {shape.guid}, {shape.old})\n"
            f"{shape.on_indent}ON {on} AND {t}.{q(bidir.sync_id)} = ''\n"
            f"{forget}"
            f"{w}WHEN MATCHED THEN UPDATE SET {q(cols.snaptime)} = {self.utc_now_sql()}, "
            f"{q(cols.rowguid)} = {s}.{shape.guid}, {q(bidir.origin)} = '', "
            f"{q(cols.dmltype)} = {parts.type}, {q(bidir.old_rowguid)} = {parts.old}\n"
            f"{w}WHEN NOT MATCHED THEN INSERT ({parts.columns}) VALUES ({parts.values});"
        )

    def _put_parts(
        self,
        rlog: str,
        objects: LogObjects,
        op: str,
        keys: Sequence[str],
        entry: tuple[str, str, str, str | None],
        *,
        existing: str,
        publisher: bool,
        when: str | None,
    ) -> PutParts:
        """Pieces shared by the dialects' put statements.

        :param entry: SQL expressions of the new entry's ROWGUID, OLD_ROWGUID, ORIGIN and SNAPTIME
            (None: the dialect's UTC clock).
        :param existing: prefix of the pending entry's columns in the upsert's update.
        """
        guid, old, origin, now = entry
        cols, bidir = self.log_columns, BIDIR
        q = self.quote
        match = " AND ".join(f"{q(lk)} = {k}" for lk, k in zip(objects.key_columns, keys, strict=True))
        pending = f"{match} AND {q(bidir.sync_id)} = {self.empty_text}"
        dml, based_on = f"{existing}{q(cols.dmltype)}", f"{existing}{q(bidir.old_rowguid)}"
        folded_type, folded_old = _folded(op, dml, based_on)
        forget_insert = op == "D" and not publisher  # I+D: nothing to tell anyone
        conditions = (
            [f"NOT EXISTS (SELECT 1 FROM {rlog} WHERE {pending} AND {q(cols.dmltype)} = 'I')"] if forget_insert else []
        )
        conditions += [when] if when else []
        after = (
            [f"DELETE FROM {rlog} WHERE {pending} AND {q(cols.dmltype)} = 'I'" + (f" AND {when}" if when else "")]
            if forget_insert
            else []
        )
        values = [
            *keys,
            self.empty_text,
            now or self.utc_now_sql(),
            f"'{op}'",
            guid,
            "NULL" if op == "I" else old,
            origin,
        ]
        return PutParts(
            match=match,
            pending=pending,
            type=folded_type,
            old=folded_old,
            columns=self._bidir_log_column_list(objects),
            conditions=tuple(conditions),
            after=tuple(after),
            values=", ".join(values),
            items=tuple(values),
        )

    def _bidir_log_column_list(self, objects: LogObjects) -> str:
        """The bi-directional log's columns, in the order of :attr:`PutParts.values`."""
        cols, bidir = self.log_columns, BIDIR
        names = (cols.snaptime, cols.dmltype, cols.rowguid, bidir.old_rowguid, bidir.origin)
        return ", ".join(self.quote(c) for c in (*objects.key_columns, bidir.sync_id, *names))

    def _on_conflict_put_sql(
        self,
        rlog: str,
        objects: LogObjects,
        op: str,
        keys: Sequence[str],
        entry: tuple[str, str, str, str | None],
        *,
        alias: str | None,
        publisher: bool,
        when: str | None,
        source: str | None = None,
    ) -> list[str]:
        """:meth:`bidir_put_sql` as ``INSERT ... ON CONFLICT DO UPDATE`` (PostgreSQL, SQLite).

        :param alias: the log's alias in the statement, to name the existing row's columns by; without
            one, bare column names in DO UPDATE are the existing row's (SQLite).
        :param source: a FROM clause the values are selected from (a set-based put), else one row.
        """
        cols, bidir, q = self.log_columns, BIDIR, self.quote
        existing = f"{alias}." if alias else ""
        parts = self._put_parts(rlog, objects, op, keys, entry, existing=existing, publisher=publisher, when=when)
        target = f"{rlog} AS {alias}" if alias else rlog
        conflict = ", ".join(q(c) for c in (*objects.key_columns, bidir.sync_id))
        return [
            f"INSERT INTO {target} ({parts.columns}) SELECT {parts.values} {source + ' ' if source else ''}"
            f"WHERE {' AND '.join(parts.conditions) or 'true'} "
            f"ON CONFLICT ({conflict}) DO UPDATE SET {q(cols.snaptime)} = excluded.{q(cols.snaptime)}, "
            f"{q(cols.rowguid)} = excluded.{q(cols.rowguid)}, {q(bidir.origin)} = excluded.{q(bidir.origin)}, "
            f"{q(cols.dmltype)} = {parts.type}, {q(bidir.old_rowguid)} = {parts.old}",
            *parts.after,
        ]

    def create_bidir_log_ddl(
        self, info: TableInfo, objects: LogObjects, server: str, *, publisher: bool
    ) -> list[DdlStep]:
        """The bi-directional log table and the triggers that version and log users' changes.

        :param publisher: the table is the publisher's (see :meth:`bidir_put_sql`)."""
        raise UnsupportedConnection(
            f"bi-directional replication is not available on {self.name}",
            "snaprepl runs it on PostgreSQL, MariaDB/MySQL and SQLite, and generates its DDL for SQL Server, "
            "Oracle and DB2 (the databases the seed lists)",
        )

    #: Appended to a SELECT that reads rows a transaction is about to change (SQLite locks at BEGIN).
    for_update: ClassVar[str] = " FOR UPDATE"

    def python_param(self, value: Any) -> Any:
        """A Python value as this dialect's driver should receive it as a bound parameter."""
        if isinstance(value, bytearray | memoryview):
            return bytes(value)
        return value

    def replicated_delete_sql(self, table: str, match: str) -> list[str]:
        """A delete the triggers do not log: mark the row, then delete it."""
        rowguid = self.quote(BIDIR.rowguid)
        return [
            f"UPDATE {table} SET {rowguid} = {self.literal(DELETE_MARK)} WHERE {match}",
            f"DELETE FROM {table} WHERE {match}",
        ]

    def replicated_merge_sql(
        self, table: str, stage: str, columns: Sequence[str], keys: Sequence[str], rlog: str, log_keys: Sequence[str]
    ) -> list[str]:
        """Set-based replicated writes of one chunk (``:chunk``) of a staging table into ``table``: update
        rows whose version differs, insert missing ones; keys with a pending local change are left alone
        (the next pull decides them)."""
        raise UnsupportedConnection(f"snaprepl does not run bi-directional replication on {self.name}")

    def no_pending_sql(self, rlog: str, log_keys: Sequence[str], keys_of: Sequence[str]) -> str:
        """A condition: ``rlog`` has no pending change of the row whose key columns ``log_keys`` are
        the SQL expressions ``keys_of``."""
        match = " AND ".join(f"{self.quote(lk)} = {k}" for lk, k in zip(log_keys, keys_of, strict=True))
        return f"NOT EXISTS (SELECT 1 FROM {rlog} WHERE {match})"


class MergeTriggers:
    """What the set-based triggers of a MERGE dialect (SQL Server, DB2) share for one table: its names,
    key conditions between row sets, and the put of a change (:meth:`BidirLogs._merge_put_sql`).

    :param new: the new rows' table and alias (``("inserted i", "i")``, ``("N", "N")``); ``old`` likewise.
    :param alias: prefix of the key columns' aliases in the put's row source.
    """

    def __init__(
        self,
        dialect: BidirLogs,
        info: TableInfo,
        objects: LogObjects,
        server: str,
        *,
        publisher: bool,
        new: tuple[str, str],
        old: tuple[str, str],
        alias: str,
    ) -> None:
        self.dialect, self.objects, self.publisher = dialect, objects, publisher
        q = dialect.quote
        self.source = dialect.qualified(info.table.schema, info.table.table)
        self.rlog = dialect.qualified(info.table.schema, objects.rlog)
        self.keys = [c.name for c in info.primary_key]
        self.aliases = [f"{alias}{i}" for i in range(1, len(self.keys) + 1)]
        self.rowguid, self.version = q(BIDIR.rowguid), dialect.new_version_sql(server)
        self.same_key = self.on(new[1], old[1])
        self.paired = f"{new[0]} JOIN {old[0]} ON {old[1]}.{self.rowguid} = {new[1]}.{self.rowguid}"

    def on(self, left: str, right: str) -> str:
        """The rows of ``left`` and ``right`` have the same key."""
        q = self.dialect.quote
        return " AND ".join(f"{left}.{q(k)} = {right}.{q(k)}" for k in self.keys)

    def cols(self, alias: str) -> str:
        """The key columns of ``alias``."""
        return ", ".join(f"{alias}.{self.dialect.quote(k)}" for k in self.keys)

    def merge(self, op: str, rows: str) -> str:
        """Fold change ``op`` of ``rows`` (keys, guid, old guid) into the log."""
        return self.dialect._merge_put_sql(self.rlog, self.objects, rows, self.aliases, op, publisher=self.publisher)

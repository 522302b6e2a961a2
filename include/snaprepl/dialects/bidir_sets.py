"""Set-based replicated writes of a bi-directional pull, per dialect: rows of a staging table (alias
``s``) applied to a published table and folded into its log with a few statements per batch (mixed
into every dialect as :class:`BidirSets`; PostgreSQL's and SQLite's in :class:`OnConflictBidirSets`,
their aliases as data, MariaDB's in :class:`MySqlBidirSets`).

The statements are replicated writes: they keep the incoming ROWGUID, so the triggers do not log them
(see :class:`~snaprepl.dialects.bidir_logs.BidirLogs`); the log entries are written by
:meth:`BidirSets.stage_put_sql` instead, with the ORIGIN the pull gives them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from snaprepl.dialects import postgres_loop
from snaprepl.dialects.model import BIDIR, DELETE_MARK, Column, LogColumns, LogObjects
from snaprepl.errors import UnsupportedConnection

if TYPE_CHECKING:
    from snaprepl.dialects.bidir_logs import PutParts


class BidirSets:
    """The set-based part of a dialect's bi-directional replication."""

    if TYPE_CHECKING:
        name: ClassVar[str]
        log_columns: ClassVar[LogColumns]
        log_alias: ClassVar[str | None]

        def quote(self, name: str) -> str: ...

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
        ) -> PutParts: ...

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
        ) -> list[str]: ...

        def literal(self, value: str) -> str: ...

        def replicated_delete_sql(self, table: str, match: str) -> list[str]: ...

        def no_pending_sql(self, rlog: str, log_keys: Sequence[str], keys_of: Sequence[str]) -> str: ...

        def qualified(self, schema: str | None, table: str) -> str: ...

        def shorten(self, name: str) -> str: ...

        def create_table_sql(
            self, schema: str | None, table: str, columns: Sequence[Column], key: Sequence[str]
        ) -> str: ...

    def staged_apply_setup_sql(self) -> list[str]:
        """Statements that begin a transaction applying a staging table to a (large) table by key."""
        return []

    def create_scratch_table_sql(self, schema: str | None, table: str, columns: Sequence[Column]) -> str:
        """A keyless table of rows staged for a while (dropped afterwards, never needed after a crash)."""
        return self.create_table_sql(schema, table, columns, [])

    def numbered_chunks_sql(self, schema: str | None, stage: str, chunk: str, rows_per_commit: int) -> list[str]:
        """Statements that make the scratch table ``stage`` number the rows loaded into it in column
        ``chunk``: commits of at most ``rows_per_commit`` rows, in the order they arrive (none: the
        dialect does not, and the loader numbers them)."""
        return []

    def unflushed_commit_sql(self) -> list[str]:
        """Statements that let a transaction's commit return before the database has flushed it to disk
        (an initial load's chunks: a thousand commits need not wait for a thousand flushes, as long as
        the load's last transaction, run after :meth:`flushing_commit_sql`, flushes them all)."""
        return []

    def flushing_commit_sql(self) -> list[str]:
        """Statements that make a transaction's commit flush every commit before it to disk, even when
        the transaction writes nothing itself."""
        return []

    def duplicate_key(self, message: str) -> bool:
        """Whether ``message``, a failed bulk copy's (see :meth:`~snaprepl.dialects.model.BulkPipe.failure`),
        says a row's key was in the table already."""
        return False

    def chunk_loop_sql(
        self, setup: Sequence[str], statements: Sequence[str], chunks: Sequence[int]
    ) -> list[str] | None:
        """Statements, run in one session outside a transaction, that commit ``chunks`` one after
        another inside the database, each running ``setup`` then ``statements`` with its ``:chunk``;
        None: the client commits each chunk itself."""
        return None

    def replicated_insert_sql(
        self, table: str, stage: str, columns: Sequence[str], keys: Sequence[str], rlog: str, log_keys: Sequence[str]
    ) -> str:
        """The insert of :meth:`~snaprepl.dialects.bidir_logs.BidirLogs.replicated_merge_sql`: the rows of
        chunk ``:chunk`` of ``stage`` missing from ``table``, except keys with a pending local change."""
        q = self.quote
        match = " AND ".join(f"t.{q(k)} = s.{q(k)}" for k in keys)
        no_pending = self.no_pending_sql(rlog, log_keys, [f"s.{q(k)}" for k in keys])
        return (
            f"INSERT INTO {table} ({', '.join(q(c) for c in columns)}) "
            f"SELECT {', '.join(f's.{q(c)}' for c in columns)} FROM {stage} AS s "
            f"WHERE s.{q('SNAPREPL_CHUNK')} = :chunk AND NOT EXISTS (SELECT 1 FROM {table} AS t WHERE {match}) "
            f"AND {no_pending}"
        )

    def stage_put_sql(
        self,
        rlog: str,
        objects: LogObjects,
        op: str,
        stage: str,
        keys: Sequence[str],
        entry: tuple[str, str, str],
        where: str,
    ) -> list[str]:
        """Fold change ``op`` of every row of ``stage`` (alias ``s``) matching ``where`` into a publisher's
        log, as :meth:`~snaprepl.dialects.bidir_logs.BidirLogs.bidir_put_sql` does for one row.

        :param keys: the rows' key columns (in the log's key order); ``entry``: SQL expressions over
            ``s`` of each row's ROWGUID, OLD_ROWGUID and ORIGIN."""
        raise UnsupportedConnection(f"snaprepl does not run bi-directional replication on {self.name}")

    def stage_update_sql(self, table: str, stage: str, columns: Sequence[str], keys: Sequence[str], where: str) -> str:
        """Update ``columns`` of the rows of ``table`` from the rows of ``stage`` (alias ``s``) with the
        same ``keys`` that match ``where``."""
        raise UnsupportedConnection(f"snaprepl does not run bi-directional replication on {self.name}")

    def stage_keys_sql(self, table: str, stage: str, keys: Sequence[str], where: str) -> str:
        """A condition on ``table``'s rows: their key is one of the rows of ``stage`` (alias ``s``)
        matching ``where``."""
        q = self.quote
        inner = f"SELECT {', '.join(f's.{q(k)}' for k in keys)} FROM {stage} s WHERE {where}"
        if len(keys) == 1:
            return f"{q(keys[0])} IN ({inner})"
        return f"({', '.join(q(k) for k in keys)}) IN ({inner})"

    def stage_delete_sql(self, table: str, stage: str, keys: Sequence[str], where: str) -> list[str]:
        """Replicated deletes (which the triggers do not log) of the rows of ``table`` whose key is one
        of the rows of ``stage`` (alias ``s``) matching ``where``."""
        return self.replicated_delete_sql(table, self.stage_keys_sql(table, stage, keys, where))

    def _stage_keys(self, keys: Sequence[str]) -> list[str]:
        return [f"s.{self.quote(k)}" for k in keys]


class OnConflictBidirSets(BidirSets):
    """Set-based writes of the dialects with ``INSERT ... ON CONFLICT`` and ``UPDATE ... FROM``
    (PostgreSQL, SQLite); they differ only in the aliases they give the log (``log_alias``, as their
    one-row puts do) and the table."""

    #: The updated table's alias in ``UPDATE ... FROM`` (None: named by itself).
    stage_table_alias: ClassVar[str | None] = None

    def stage_put_sql(
        self,
        rlog: str,
        objects: LogObjects,
        op: str,
        stage: str,
        keys: Sequence[str],
        entry: tuple[str, str, str],
        where: str,
    ) -> list[str]:
        return self._on_conflict_put_sql(
            rlog,
            objects,
            op,
            self._stage_keys(keys),
            (*entry, None),
            alias=self.log_alias,
            publisher=True,
            when=where,
            source=f"FROM {stage} AS s",
        )

    def stage_update_sql(self, table: str, stage: str, columns: Sequence[str], keys: Sequence[str], where: str) -> str:
        q, alias = self.quote, self.stage_table_alias
        target = alias or table
        match = " AND ".join(f"{target}.{q(k)} = s.{q(k)}" for k in keys)
        sets = ", ".join(f"{q(c)} = s.{q(c)}" for c in columns if c not in keys)
        updated = f"{table} AS {alias}" if alias else table
        return f"UPDATE {updated} SET {sets} FROM {stage} AS s WHERE {match} AND {where}"


class PostgresBidirSets(OnConflictBidirSets):
    stage_table_alias = "t"

    def create_scratch_table_sql(self, schema: str | None, table: str, columns: Sequence[Column]) -> str:
        # Unlogged: no WAL for a million staged rows (a crash empties it; a rerun stages again).
        return "CREATE UNLOGGED TABLE" + self.create_table_sql(schema, table, columns, [])[len("CREATE TABLE") :]

    def numbered_chunks_sql(self, schema: str | None, stage: str, chunk: str, rows_per_commit: int) -> list[str]:
        # A sequence owned by the column (dropped with the table); each session caches a block of
        # numbers, so a commit may get fewer rows than rows_per_commit, never more.
        sequence = self.qualified(schema, self.shorten(f"{stage}_chunks"))
        column = f"{self.qualified(schema, stage)}.{self.quote(chunk)}"
        return [
            f"DROP SEQUENCE IF EXISTS {sequence}",
            f"CREATE SEQUENCE {sequence} MINVALUE 0 START 0 CACHE 1000 OWNED BY {column}",
            f"ALTER TABLE {self.qualified(schema, stage)} ALTER COLUMN {self.quote(chunk)} "
            f"SET DEFAULT nextval({self.literal(sequence)}) / {int(rows_per_commit)}",
        ]

    def unflushed_commit_sql(self) -> list[str]:
        # Still atomic and, once committed, visible to every session; only a crash of the server within
        # a fraction of a second (wal_writer_delay) could lose it, and the load's last commit flushes it.
        return ["SET LOCAL synchronous_commit = off"]

    def duplicate_key(self, message: str) -> bool:
        # The COPY pipe's failures start with psycopg's class of the SQLSTATE (23505).
        return message.startswith("UniqueViolation")

    def flushing_commit_sql(self) -> list[str]:
        # A transaction without a transaction id commits without flushing the WAL: take one.
        return ["SELECT txid_current()"]

    def chunk_loop_sql(
        self, setup: Sequence[str], statements: Sequence[str], chunks: Sequence[int]
    ) -> list[str] | None:
        return postgres_loop.chunk_loop_sql(setup, statements, chunks)

    def staged_apply_setup_sql(self) -> list[str]:
        # Key lookups only: the planner's statistics lag behind a table being loaded (or a staging
        # table never analyzed), and it hash-joined the whole table once per chunk of an initial load.
        return ["SET LOCAL enable_hashjoin = off", "SET LOCAL enable_mergejoin = off"]


class SqliteBidirSets(OnConflictBidirSets):
    """No aliases: the log and the updated table are named by themselves."""


class MySqlBidirSets(BidirSets):
    def stage_put_sql(
        self,
        rlog: str,
        objects: LogObjects,
        op: str,
        stage: str,
        keys: Sequence[str],
        entry: tuple[str, str, str],
        where: str,
    ) -> list[str]:
        cols, bidir, q = self.log_columns, BIDIR, self.quote
        parts = self._put_parts(
            rlog, objects, op, self._stage_keys(keys), (*entry, None), existing="", publisher=True, when=None
        )
        # A derived table with its own column names: ON DUPLICATE KEY UPDATE may name the log's columns
        # only, whatever the published table's columns are called.
        values = ", ".join(f"{v} AS v{i}" for i, v in enumerate(parts.items))
        return [
            f"INSERT INTO {rlog} ({parts.columns}) "
            f"SELECT * FROM (SELECT {values} FROM {stage} AS s WHERE {where}) AS x "
            f"ON DUPLICATE KEY UPDATE "
            f"{q(bidir.old_rowguid)} = {parts.old}, {q(cols.dmltype)} = {parts.type}, "
            f"{q(cols.snaptime)} = VALUES({q(cols.snaptime)}), {q(cols.rowguid)} = VALUES({q(cols.rowguid)}), "
            f"{q(bidir.origin)} = VALUES({q(bidir.origin)})"
        ]

    def stage_update_sql(self, table: str, stage: str, columns: Sequence[str], keys: Sequence[str], where: str) -> str:
        q = self.quote
        match = " AND ".join(f"t.{q(k)} = s.{q(k)}" for k in keys)
        sets = ", ".join(f"t.{q(c)} = s.{q(c)}" for c in columns if c not in keys)
        return f"UPDATE {table} AS t JOIN {stage} AS s ON {match} SET {sets} WHERE {where}"

    def stage_delete_sql(self, table: str, stage: str, keys: Sequence[str], where: str) -> list[str]:
        # Joins: MariaDB runs "key IN (SELECT ...)" as a dependent subquery, once per row of the table.
        q = self.quote
        match = " AND ".join(f"t.{q(k)} = s.{q(k)}" for k in keys)
        joined = f"{table} AS t JOIN {stage} AS s ON {match}"
        return [
            f"UPDATE {joined} SET t.{q(BIDIR.rowguid)} = {self.literal(DELETE_MARK)} WHERE {where}",
            f"DELETE t FROM {joined} WHERE {where}",
        ]

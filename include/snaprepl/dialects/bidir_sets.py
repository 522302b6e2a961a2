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

from snaprepl.dialects.model import BIDIR, DELETE_MARK, LogColumns, LogObjects
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

    def staged_apply_setup_sql(self) -> list[str]:
        """Statements that begin a transaction applying a staging table to a (large) table by key."""
        return []

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

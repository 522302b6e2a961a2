"""How a refresh changes a destination's rows from a staging table, per dialect.

A complete refresh loads the query's result into a staging table beside the destination, then either

- **swaps** the tables (drop and rename, in one transaction) where nothing hangs on the destination:
  no triggers, no foreign keys into or out of it, no views, grants, extra indexes (see each dialect's
  ``is_plain_table``); or
- **applies the difference by key**, in one transaction: delete the destination's rows whose key the
  staging table lacks, update the rows whose columns differ (compared NULL-safely, so unchanged rows
  are not written and triggers log nothing for them), insert the new keys. Row triggers, among them
  snapshot logs and bi-directional logs, see every change, and foreign keys are checked row by row:
  rows other tables reference survive unless the source lost them.

Never ``TRUNCATE``: it fires no row triggers (a snapshot log would miss every delete, and every
snapshot fed from the destination would keep deleted rows) and is refused on referenced tables.

Every set-based statement joins on the key with an index on at least one side: the destination's
primary key, or the staging table's (complete refreshes key the staging table before applying it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from snaprepl.dialects.model import Column, SqlSession

#: PostgreSQL types without an equality operator, or whose ``=`` is not equality (box compares areas,
#: PostGIS geometry once compared bounding boxes): compared as text.
_PG_TEXT_COMPARED = (
    "json",
    "xml",
    "point",
    "line",
    "lseg",
    "box",
    "path",
    "polygon",
    "circle",
    "geometry",
    "geography",
)


def _driver_error(err: BaseException) -> Any:
    """The driver's own exception behind a SQLAlchemy one."""
    return getattr(err, "orig", None) or err


class RowReplacement:
    """Statements that give a destination the content of a staging table (mixed into every dialect)."""

    if TYPE_CHECKING:

        def quote(self, name: str) -> str: ...

        def qualified(self, schema: str | None, table: str) -> str: ...

        def create_table_sql(
            self, schema: str | None, table: str, columns: Sequence[Column], key: Sequence[str]
        ) -> str: ...

    #: Whether ANALYZE takes a column list (PostgreSQL: 40 against 140 ms for 100,000 staged changes).
    analyze_columns: ClassVar[bool] = False

    def analyze(self, session: SqlSession, schema: str | None, table: str, columns: Sequence[str] = ()) -> None:
        """Gather the planner's statistics of a table just loaded, so that statements applying it chunk by
        chunk use its indexes (without them PostgreSQL hash-joins whole tables once per chunk); of
        ``columns`` only (those the statements filter and join on) where :attr:`analyze_columns`."""
        session.execute(self.analyze_sql(schema, table, columns))

    def analyze_sql(self, schema: str | None, table: str, columns: Sequence[str] = ()) -> str:
        listed = f" ({', '.join(self.quote(c) for c in columns)})" if columns and self.analyze_columns else ""
        return f"ANALYZE {self.qualified(schema, table)}{listed}"

    def create_staging_sql(
        self, schema: str, staging: str, dest: str, columns: Sequence[Column], key: Sequence[str], *, swap: bool
    ) -> str:
        """The staging table of a complete refresh of ``dest``; ``swap`` when it will replace ``dest``
        (:meth:`swap_table_steps`), which must then carry over what the destination's owner defined."""
        return self.create_table_sql(schema, staging, columns, key)

    def is_plain_table(self, session: SqlSession, schema: str, table: str) -> bool:
        """Whether nothing but data would be lost by replacing the table with another of the same shape
        (no views on it, foreign keys into or out of it, triggers, extra indexes, grants or policies)."""
        return False

    def swap_table_steps(self, session: SqlSession, schema: str, dest: str, staging: str) -> list[str]:
        """Statements, run in one transaction, that replace the plain table ``dest`` by ``staging``
        (keyed like ``dest``). Only called where :meth:`is_plain_table` holds."""
        raise NotImplementedError(f"{type(self).__name__} has no table swap")

    def replace_rows_steps(
        self, schema: str, dest: str, staging: str, columns: Sequence[Column], key: Sequence[str]
    ) -> list[str]:
        """Statements, run in one transaction, that give ``dest`` the content of ``staging`` by key
        difference, then drop ``staging``. Without a key (no trigger log can hang on such a table)
        every row is deleted and inserted again."""
        target, source = self.qualified(schema, dest), self.qualified(schema, staging)
        names = [c.name for c in columns]
        if not key:
            cols = ", ".join(self.quote(c) for c in names)
            return [
                f"DELETE FROM {target}",
                f"INSERT INTO {target} ({cols}) SELECT {cols} FROM {source}",
                f"DROP TABLE {source}",
            ]
        steps = [self.delete_missing_sql(target, source, key)]
        changeable = [c for c in columns if c.name not in key]
        if changeable:
            steps.append(self.update_changed_sql(target, source, changeable, key))
        steps += [self.insert_new_sql(target, source, names, key), f"DROP TABLE {source}"]
        return steps

    def _match(self, left: str, right: str, key: Sequence[str]) -> str:
        return " AND ".join(f"{left}.{self.quote(k)} = {right}.{self.quote(k)}" for k in key)

    def _differs(self, columns: Sequence[Column]) -> str:
        return " OR ".join(self.differs_sql(f"d.{self.quote(c.name)}", f"s.{self.quote(c.name)}", c) for c in columns)

    def differs_sql(self, left: str, right: str, column: Column) -> str:
        """A condition true when two values of ``column`` differ, NULLs included."""
        return f"{left} IS DISTINCT FROM {right}"

    def delete_missing_sql(self, target: str, source: str, key: Sequence[str]) -> str:
        """Delete the rows of ``target`` whose key ``source`` lacks (an anti-join)."""
        return (
            f"DELETE FROM {target} AS d WHERE NOT EXISTS "
            f"(SELECT 1 FROM {source} AS s WHERE {self._match('s', 'd', key)})"
        )

    def update_changed_sql(self, target: str, source: str, columns: Sequence[Column], key: Sequence[str]) -> str:
        """Update the rows of ``target`` whose ``columns`` differ from ``source``'s row of the same key."""
        sets = ", ".join(f"{self.quote(c.name)} = s.{self.quote(c.name)}" for c in columns)
        return (
            f"UPDATE {target} AS d SET {sets} FROM {source} AS s "
            f"WHERE {self._match('d', 's', key)} AND ({self._differs(columns)})"
        )

    def insert_new_sql(self, target: str, source: str, columns: Sequence[str], key: Sequence[str]) -> str:
        """Insert the rows of ``source`` whose key ``target`` lacks."""
        cols = ", ".join(self.quote(c) for c in columns)
        return (
            f"INSERT INTO {target} ({cols}) SELECT {', '.join(f's.{self.quote(c)}' for c in columns)} "
            f"FROM {source} AS s WHERE NOT EXISTS (SELECT 1 FROM {target} AS d WHERE {self._match('d', 's', key)})"
        )

    def is_foreign_key_violation(self, err: BaseException) -> bool:
        """Whether a failed statement broke a foreign key."""
        return False

    def delete_staged_sql(self, dest: str, stage: str, keys: Sequence[str], batch_column: str, op_column: str) -> str:
        """Delete from ``dest`` the keys staged as deletions in one batch (``:batch``)."""
        key_list = ", ".join(self.quote(k) for k in keys)
        target = f"({key_list})" if len(keys) > 1 else key_list
        return (
            f"DELETE FROM {dest} WHERE {target} IN (SELECT {key_list} FROM {stage} "
            f"WHERE {self.quote(batch_column)} = :batch AND {self.quote(op_column)} = 'D')"
        )

    def _in_key_order(self, keys: Sequence[str], alias: str) -> str:
        """The ORDER BY that upserts a batch in key order (:meth:`_upsert_where_differs`)."""
        return f" ORDER BY {', '.join(f'{alias}.{self.quote(k)}' for k in keys)}"

    def _upsert_where_differs(
        self, dest: str, stage: str, columns: Sequence[Column], keys: Sequence[str], batch_column: str, op_column: str
    ) -> str:
        """:meth:`upsert_staged_sql` as ``INSERT ... ON CONFLICT DO UPDATE ... WHERE`` the row differs
        (PostgreSQL, SQLite): the conflict check finds each staged row's destination row once, through
        the key's index, and leaves an equal row alone (no update, so no row trigger's UPDATE).
        Joining the destination first to drop equal rows read it once more: PostgreSQL read it whole
        into a hash (1,000,000 changed rows of 2,000,000: 43.6-52.6 s that way, 16.8-24.2 s this way,
        loaded machine), SQLite looked each row up a second time (1,000,000 shuffled rows into
        2,000,000, sorted: 5.9-7.2 s joined, 1.9-2.0 s this way).

        In key order: the change set comes in the order the source changed its rows, and an upsert in
        that order reads and writes the destination's pages and key index all over, each page many
        times (PostgreSQL, 1,000,000 shuffled rows into 2,000,000: 14.4-15.0 s; sorted first, 6.2-7.4 s;
        SQLite, joined: 15.5-15.8 s against 5.9-7.2 s)."""
        q = self.quote
        changeable = [c for c in columns if c.name not in keys]
        # The SELECT's WHERE is also what lets SQLite tell ON CONFLICT from a join's ON.
        select = (
            f"SELECT {', '.join(f's.{q(c.name)}' for c in columns)} FROM {stage} AS s "
            f"WHERE s.{q(batch_column)} = :batch AND s.{q(op_column)} = 'U'{self._in_key_order(keys, 's')}"
        )
        insert = f"INSERT INTO {dest} AS d ({', '.join(q(c.name) for c in columns)}) {select} "
        conflict = f"ON CONFLICT ({', '.join(q(k) for k in keys)}) "
        if not changeable:
            return f"{insert}{conflict}DO NOTHING"
        sets = ", ".join(f"{q(c.name)} = excluded.{q(c.name)}" for c in changeable)
        differs = " OR ".join(self.differs_sql(f"d.{q(c.name)}", f"excluded.{q(c.name)}", c) for c in changeable)
        return f"{insert}{conflict}DO UPDATE SET {sets} WHERE {differs}"


class PostgresRowReplacement(RowReplacement):
    analyze_columns = True

    def differs_sql(self, left: str, right: str, column: Column) -> str:
        if column.type_sql.lower().startswith(_PG_TEXT_COMPARED):
            return f"{left}::text IS DISTINCT FROM {right}::text"
        return f"{left} IS DISTINCT FROM {right}"

    def is_foreign_key_violation(self, err: BaseException) -> bool:
        return getattr(_driver_error(err), "pgcode", None) == "23503"

    def delete_staged_sql(self, dest: str, stage: str, keys: Sequence[str], batch_column: str, op_column: str) -> str:
        """``DELETE ... USING`` the staged deletions' keys, as arrays in key order unnested: one probe
        of the destination's key index per key, in key order. Joined to the staging table itself,
        PostgreSQL costs the probes as random reads and hashes the whole destination instead (a scan
        of all its rows); ``unnest`` of an array it cannot see estimates 10 rows, so it probes. 33,333
        deletes from 2,000,000 rows: 540 ms hashed, 165 ms probed; 1,000,000: 4.6 s and 2.6 s. One
        array per key column, each sorted by the whole key, so the arrays' elements pair up."""
        q = self.quote
        staged = f"FROM {stage} WHERE {q(batch_column)} = :batch AND {q(op_column)} = 'D'"
        order = ", ".join(q(k) for k in keys)
        arrays = ", ".join(f"ARRAY(SELECT {q(k)} {staged} ORDER BY {order})" for k in keys)
        return f"DELETE FROM {dest} AS d USING unnest({arrays}) AS s({order}) WHERE {self._match('d', 's', keys)}"

    upsert_staged_sql = RowReplacement._upsert_where_differs


class MySqlRowReplacement(RowReplacement):
    """MariaDB runs ``IN (SELECT ...)`` and ``NOT EXISTS`` against another table as a dependent
    subquery (a full scan of it per row): every statement here is a join instead."""

    def analyze(self, session: SqlSession, schema: str | None, table: str, columns: Sequence[str] = ()) -> None:
        session.query(f"ANALYZE TABLE {self.qualified(schema, table)}")  # returns a status row (index statistics)

    def differs_sql(self, left: str, right: str, column: Column) -> str:
        # BINARY: a case-insensitive or PAD SPACE collation would call 'a' and 'A ' equal.
        return f"NOT (BINARY {left} <=> BINARY {right})"

    def create_staging_sql(
        self, schema: str, staging: str, dest: str, columns: Sequence[Column], key: Sequence[str], *, swap: bool
    ) -> str:
        if not swap:
            return super().create_staging_sql(schema, staging, dest, columns, key, swap=swap)
        # LIKE copies what a swap would otherwise lose: CHECK constraints, defaults, comments, table
        # options (the key too; never foreign keys or triggers, which rule a swap out anyway).
        return f"CREATE TABLE {self.qualified(schema, staging)} LIKE {self.qualified(schema, dest)}"

    def delete_missing_sql(self, target: str, source: str, key: Sequence[str]) -> str:
        return (
            f"DELETE d FROM {target} AS d LEFT JOIN {source} AS s ON {self._match('s', 'd', key)} "
            f"WHERE s.{self.quote(key[0])} IS NULL"
        )

    def update_changed_sql(self, target: str, source: str, columns: Sequence[Column], key: Sequence[str]) -> str:
        sets = ", ".join(f"d.{self.quote(c.name)} = s.{self.quote(c.name)}" for c in columns)
        return (
            f"UPDATE {target} AS d JOIN {source} AS s ON {self._match('d', 's', key)} SET {sets} "
            f"WHERE {self._differs(columns)}"
        )

    def insert_new_sql(self, target: str, source: str, columns: Sequence[str], key: Sequence[str]) -> str:
        cols = ", ".join(self.quote(c) for c in columns)
        return (
            f"INSERT INTO {target} ({cols}) SELECT {', '.join(f's.{self.quote(c)}' for c in columns)} "
            f"FROM {source} AS s LEFT JOIN {target} AS d ON {self._match('d', 's', key)} "
            f"WHERE d.{self.quote(key[0])} IS NULL"
        )

    def is_foreign_key_violation(self, err: BaseException) -> bool:
        args = getattr(_driver_error(err), "args", ())
        return bool(args) and args[0] in (1451, 1452)  # parent row still referenced / no parent row

    def delete_staged_sql(self, dest: str, stage: str, keys: Sequence[str], batch_column: str, op_column: str) -> str:
        return (
            f"DELETE d FROM {dest} AS d JOIN {stage} AS s ON {self._match('d', 's', keys)} "
            f"WHERE s.{self.quote(batch_column)} = :batch AND s.{self.quote(op_column)} = 'D'"
        )

    def _changed_staged_select(
        self, dest: str, stage: str, columns: Sequence[Column], keys: Sequence[str], batch_column: str, op_column: str
    ) -> str:
        """The batch's staged upserts that are new to ``dest`` or differ from its row (a join: MariaDB's
        ``ON DUPLICATE KEY UPDATE`` has no WHERE to leave an equal row alone)."""
        q = self.quote
        changeable = [c for c in columns if c.name not in keys]
        news = f"d.{q(keys[0])} IS NULL"
        return (
            f"SELECT {', '.join(f's.{q(c.name)}' for c in columns)} FROM {stage} AS s "
            f"LEFT JOIN {dest} AS d ON {self._match('d', 's', keys)} "
            f"WHERE s.{q(batch_column)} = :batch AND s.{q(op_column)} = 'U' "
            f"AND ({news}{' OR ' + self._differs(changeable) if changeable else ''})"
        )

    def upsert_staged_sql(
        self, dest: str, stage: str, columns: Sequence[Column], keys: Sequence[str], batch_column: str, op_column: str
    ) -> str:
        q = self.quote
        cols = ", ".join(q(c.name) for c in columns)
        # A derived table: ON DUPLICATE KEY UPDATE would find the joined destination's columns ambiguous.
        changed = self._changed_staged_select(dest, stage, columns, keys, batch_column, op_column)
        select = f"SELECT * FROM ({changed}) AS c{self._in_key_order(keys, 'c')}"
        updates = [f"{q(c.name)} = VALUES({q(c.name)})" for c in columns if c.name not in keys]
        if not updates:
            return f"INSERT IGNORE INTO {dest} ({cols}) {select}"
        return f"INSERT INTO {dest} ({cols}) {select} ON DUPLICATE KEY UPDATE {', '.join(updates)}"


class SqliteRowReplacement(RowReplacement):
    def differs_sql(self, left: str, right: str, column: Column) -> str:
        # COLLATE BINARY: a NOCASE or RTRIM column would call 'a' and 'A ' equal.
        return f"{left} IS NOT {right} COLLATE BINARY"

    def is_foreign_key_violation(self, err: BaseException) -> bool:
        return "FOREIGN KEY constraint failed" in str(_driver_error(err))

    upsert_staged_sql = RowReplacement._upsert_where_differs

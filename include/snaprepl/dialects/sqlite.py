"""SQLite, the embedded default."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import URL

from snaprepl.common.table_names import ResolvedTable
from snaprepl.dialects.alter import SqliteColumnAlteration
from snaprepl.dialects.base import (
    BIDIR,
    DELETE_MARK,
    Column,
    ConnectionFields,
    DdlStep,
    Dialect,
    LogObjects,
    SqlSession,
    TableInfo,
)
from snaprepl.dialects.bidir_sets import SqliteBidirSets
from snaprepl.dialects.functions import refuse_unknown_functions
from snaprepl.dialects.guards import SqliteGuards
from snaprepl.dialects.replace import SqliteRowReplacement
from snaprepl.dialects.schema_tables import SqliteSchemaTables
from snaprepl.dialects.watermarks import SqliteWatermarks

if TYPE_CHECKING:
    from sqlglot import exp


class SqliteDialect(
    SqliteColumnAlteration,
    SqliteRowReplacement,
    SqliteBidirSets,
    SqliteWatermarks,
    SqliteGuards,
    SqliteSchemaTables,
    Dialect,
):
    name = "sqlite"
    sqlglot_dialect = "sqlite"
    # SQLite has no limit; 128 keeps generated names readable and portable.
    max_identifier_length = 128
    transactional_ddl = True
    executable = True
    case_insensitive_names = True
    jdbc_driver = "org.sqlite.JDBC"
    jdbc_url_prefixes = ("jdbc:sqlite:",)
    # ISO-8601 text, as SQLite's date functions read and write it.
    snaptime_type = "TEXT"
    dmltype_type = "TEXT"
    rowguid_type = "TEXT"
    # Integer division already rounds down; FLOOR needs SQLite's optional math functions.
    integer_quotient = "(({a}) / {b})"
    on_conflict_puts = True
    sqlalchemy_driver = "sqlite"
    # No read-only transactions: the connection refuses writes while they run, and functions are checked.
    read_only_begin = ("PRAGMA query_only = ON",)
    read_only_end = ("PRAGMA query_only = OFF",)
    spark_text_temporals = True
    spark_single_writer = True
    sqlite_file = True
    file_database = True
    read_only_session = "PRAGMA query_only = ON"

    def session_setup_sql(self, lock_seconds: int, statement_seconds: int) -> list[str]:
        return [f"PRAGMA busy_timeout = {int(lock_seconds) * 1000}"]  # no statement timeout in SQLite

    def jdbc_timeouts(self, props: dict[str, str], lock_seconds: int, statement_seconds: int) -> dict[str, str]:
        return {**props, "busy_timeout": str(int(lock_seconds) * 1000)}

    def is_lock_timeout(self, err: BaseException) -> bool:
        return "database is locked" in str(err)

    def refuse_unsafe_functions(self, tree: exp.Expression) -> None:
        refuse_unknown_functions(tree)

    def sqlalchemy_url(self, conn: ConnectionFields) -> URL:
        return URL.create("sqlite", database=conn.database_path)

    def jdbc_url(self, conn: ConnectionFields) -> str:
        return f"jdbc:sqlite:{conn.database_path}"

    def jdbc_properties(self, conn: ConnectionFields) -> dict[str, str]:
        # Timestamps as ISO text with microseconds (sqlite-jdbc's default is epoch milliseconds).
        return {"date_class": "TEXT", "date_string_format": "yyyy-MM-dd HH:mm:ss.SSSSSS"}

    def utc_now_sql(self) -> str:
        # 'now' is fixed for the duration of one statement, so a multi-row statement is one group.
        return "strftime('%Y-%m-%d %H:%M:%f', 'now')"

    def snaptime_param(self, value: datetime) -> str:
        # Compared as text with what the triggers write: millisecond ISO format.
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]

    def uuid_sql(self) -> str:
        # Built from separate randomblob() calls, not a subquery: SQLite may compute an uncorrelated
        # subquery once per statement, which would give every row of a multi-row UPDATE the same id.
        return (
            "lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || "
            "substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || "
            "substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))"
        )

    def _upsert(self, objects: LogObjects, row_keys: list[str], dmltype_sql: str, condition: str) -> str:
        # Inside a trigger SQLite resolves unqualified names in the trigger's own schema, and forbids
        # qualified ones; the log is always beside its source.
        cols = self.log_columns
        values = ", ".join([*row_keys, self.utc_now_sql(), dmltype_sql, self.uuid_sql()])
        keys = ", ".join(self.quote(k) for k in objects.key_columns)
        updates = ", ".join(
            f"{self.quote(c)} = excluded.{self.quote(c)}" for c in (cols.snaptime, cols.dmltype, cols.rowguid)
        )
        # An upsert, not INSERT OR REPLACE: a user's INSERT OR IGNORE would turn the latter into IGNORE.
        return (
            f"INSERT INTO {self.quote(objects.rlog)} ({self._log_column_list(objects)})\n"
            f"    SELECT {values} WHERE {condition}\n"
            f"    ON CONFLICT ({keys}) DO UPDATE SET {updates};"
        )

    def create_log_ddl(self, info: TableInfo, objects: LogObjects) -> list[DdlStep]:
        table = info.table
        keys = [c.name for c in info.primary_key]
        old = [f"OLD.{self.quote(k)}" for k in keys]
        new = [f"NEW.{self.quote(k)}" for k in keys]
        same_key = " AND ".join(f"{o} IS {n}" for o, n in zip(old, new, strict=True))
        trig_i, trig_u, trig_d = (self.qualified(table.schema, t) for t in objects.triggers)
        source = self.quote(table.table)
        log_insert = self._upsert(objects, new, "'I'", "true")
        log_old_key = self._upsert(objects, old, "'D'", f"NOT ({same_key})")
        log_new_key = self._upsert(objects, new, f"CASE WHEN {same_key} THEN 'U' ELSE 'I' END", "true")
        log_delete = self._upsert(objects, old, "'D'", "true")
        return [
            DdlStep(self.create_log_table_sql(info, objects)),
            DdlStep(f"CREATE TRIGGER {trig_i} AFTER INSERT ON {source} FOR EACH ROW BEGIN\n  {log_insert}\nEND"),
            DdlStep(
                f"CREATE TRIGGER {trig_u} AFTER UPDATE ON {source} FOR EACH ROW BEGIN\n"
                f"  {log_old_key}\n  {log_new_key}\nEND"
            ),
            DdlStep(f"CREATE TRIGGER {trig_d} AFTER DELETE ON {source} FOR EACH ROW BEGIN\n  {log_delete}\nEND"),
        ]

    def drop_log_ddl(self, table: ResolvedTable, objects: LogObjects, *, source_exists: bool) -> list[str]:
        statements = [f"DROP TRIGGER IF EXISTS {self.qualified(table.schema, t)}" for t in objects.triggers]
        statements.append(f"DROP TABLE IF EXISTS {self.qualified(table.schema, objects.rlog)}")
        return statements

    # ------------------------------------------------------------------ bi-directional logs

    for_update = ""

    def python_param(self, value: Any) -> Any:
        # What SQLite's date functions read, and decimals as text (NUMERIC affinity stores the number).
        if isinstance(value, datetime):
            return value.isoformat(sep=" ", timespec="microseconds")
        if isinstance(value, date):
            return value.isoformat()
        if isinstance(value, Decimal):
            return str(value)
        if isinstance(value, bool):
            return int(value)
        return super().python_param(value)

    def bidir_text_type(self, length: int) -> str:
        return "TEXT"

    def create_bidir_log_ddl(
        self, info: TableInfo, objects: LogObjects, server: str, *, publisher: bool
    ) -> list[DdlStep]:
        # SQLite's BEFORE triggers cannot change NEW: AFTER triggers give users' rows their version with
        # an UPDATE, which the update trigger's WHEN clause recognizes as not a user's (the version moved).
        table = info.table
        q = self.quote
        keys = [c.name for c in info.primary_key]
        source = q(table.table)
        rlog = q(objects.rlog)  # unqualified inside triggers: the trigger's own schema
        rowguid = q(BIDIR.rowguid)
        version = self.new_version_sql(server)
        new_keys, old_keys = [f"NEW.{q(k)}" for k in keys], [f"OLD.{q(k)}" for k in keys]
        at_new = " AND ".join(f"{q(k)} = NEW.{q(k)}" for k in keys)
        current = f"(SELECT {rowguid} FROM {source} WHERE {at_new})"
        same_key = " AND ".join(f"OLD.{q(k)} IS NEW.{q(k)}" for k in keys)

        def put(op: str, row_keys: list[str], guid: str, old: str, when: str | None = None) -> str:
            return "\n  ".join(
                f"{st};"
                for st in self.bidir_put_sql(
                    rlog, objects, op, row_keys, guid, old, "''", when=when, publisher=publisher
                )
            )

        trig_i, trig_u, trig_d = (self.qualified(table.schema, t) for t in objects.triggers)
        give_version = f"UPDATE {source} SET {rowguid} = {version} WHERE {at_new};"
        return [
            DdlStep(self.create_bidir_log_table_sql(info, objects)),
            DdlStep(
                f"CREATE TRIGGER {trig_i} AFTER INSERT ON {source} FOR EACH ROW WHEN NEW.{rowguid} IS NULL BEGIN\n"
                f"  {give_version}\n  {put('I', new_keys, current, 'NULL')}\nEND"
            ),
            DdlStep(
                f"CREATE TRIGGER {trig_u} AFTER UPDATE ON {source} FOR EACH ROW "
                f"WHEN NEW.{rowguid} IS OLD.{rowguid} BEGIN\n"
                f"  {give_version}\n"
                f"  {put('D', old_keys, version, f'OLD.{rowguid}', when=f'NOT ({same_key})')}\n"
                f"  {put('I', new_keys, current, 'NULL', when=f'NOT ({same_key})')}\n"
                f"  {put('U', new_keys, current, f'OLD.{rowguid}', when=same_key)}\nEND"
            ),
            DdlStep(
                f"CREATE TRIGGER {trig_d} AFTER DELETE ON {source} FOR EACH ROW "
                f"WHEN OLD.{rowguid} IS NOT {self.literal(DELETE_MARK)} BEGIN\n"
                f"  {put('D', old_keys, version, f'OLD.{rowguid}')}\nEND"
            ),
        ]

    def replicated_merge_sql(
        self, table: str, stage: str, columns: Sequence[str], keys: Sequence[str], rlog: str, log_keys: Sequence[str]
    ) -> list[str]:
        q = self.quote
        rowguid = q(BIDIR.rowguid)
        target_match = " AND ".join(f"{table}.{q(k)} = s.{q(k)}" for k in keys)
        non_key = [c for c in columns if c not in keys]
        no_pending = self.no_pending_sql(rlog, log_keys, [f"s.{q(k)}" for k in keys])
        return [
            f"UPDATE {table} SET {', '.join(f'{q(c)} = s.{q(c)}' for c in non_key)} FROM {stage} AS s "
            f"WHERE s.{q('SNAPREPL_CHUNK')} = :chunk AND {target_match} AND {table}.{rowguid} IS NOT s.{rowguid} "
            f"AND {no_pending}",
            self.replicated_insert_sql(table, stage, columns, keys, rlog, log_keys),
        ]

    # ------------------------------------------------------------------ snapshots

    key_after_load = False

    def timestamp_literal(self, value: datetime) -> str:
        return self.literal(self.snaptime_param(value))

    def create_index_sql(self, schema: str | None, table: str, index: str, columns: Sequence[str]) -> str:
        # SQLite qualifies the index, not the table (which must be in the index's schema).
        cols = ", ".join(self.quote(c) for c in columns)
        return f"CREATE INDEX {self.qualified(schema, index)} ON {self.quote(table)} ({cols})"

    def add_key_sql(self, schema: str | None, table: str, key: Sequence[str]) -> str:
        return self.create_index_sql(schema, table, self.shorten(f"{table}_key"), key).replace(
            "CREATE INDEX", "CREATE UNIQUE INDEX", 1
        )

    def describe_query(self, session: SqlSession, sql: str) -> list[Column]:
        probe = f"snaprepl_probe_{uuid.uuid4().hex[:12]}"
        session.execute(f"CREATE TEMP VIEW {self.quote(probe)} AS {sql}")
        try:
            declared = [(row[1], row[2]) for row in session.query(f"PRAGMA temp.table_xinfo({self.quote(probe)})")]
            columns = []
            for name, declared_type in declared:
                columns.append(Column(name, declared_type or self._sampled_type(session, probe, name)))
        finally:
            session.execute(f"DROP VIEW IF EXISTS temp.{self.quote(probe)}")
        return columns

    def _sampled_type(self, session: SqlSession, view: str, column: str) -> str:
        """An expression has no declared type: take the type most of its values have."""
        kinds = session.query(
            f"SELECT typeof({self.quote(column)}), COUNT(*) FROM (SELECT {self.quote(column)} "
            f"FROM {self.quote(view)} LIMIT 1000) GROUP BY 1 ORDER BY 2 DESC"
        )
        seen = [kind for kind, _ in kinds if kind != "null"] or ["text"]
        return {"integer": "INTEGER", "real": "REAL", "blob": "BLOB"}.get(seen[0], "TEXT")

    def estimate_rows(self, session: SqlSession, schema: str, table: str) -> int | None:
        return int(session.query(f"SELECT COUNT(*) FROM {self.qualified(schema, table)}")[0][0])

    # ------------------------------------------------------------------ introspection

    def schema_exists(self, session: SqlSession, schema: str) -> bool:
        return any(row[1].lower() == schema.lower() for row in session.query("PRAGMA database_list"))

    def database_name(self, session: SqlSession) -> str:
        rows = session.query("PRAGMA database_list")
        path = next((r[2] for r in rows if r[1] == "main"), "") or "main"
        return Path(path).stem

    def default_schema(self, session: SqlSession) -> str:
        return "main"

    def find_table(self, session: SqlSession, schema: str, table: str) -> tuple[str, str] | None:
        schemas = {row[1].lower(): row[1] for row in session.query("PRAGMA database_list")}
        stored_schema = schemas.get(schema.lower())
        if stored_schema is None:
            return None
        # SQLite compares table names without regard to case, whether quoted or not.
        rows = session.query(
            f"SELECT name FROM {self.quote(stored_schema)}.sqlite_master "
            "WHERE type = 'table' AND name = :table COLLATE NOCASE",
            {"table": table},
        )
        return (stored_schema, rows[0][0]) if rows else None

    def columns(self, session: SqlSession, schema: str, table: str) -> list[Column]:
        rows = session.query(f"PRAGMA {self.quote(schema)}.table_xinfo({self.quote(table)})")
        create_sql = session.query(
            f"SELECT sql FROM {self.quote(schema)}.sqlite_master WHERE type = 'table' AND name = :table",
            {"table": table},
        )
        collations = _column_collations(create_sql[0][0] if create_sql else "")
        columns = []
        for _cid, name, type_sql, notnull, _default, pk, hidden in rows:
            if hidden:  # generated columns of virtual tables are not data
                continue
            declared = type_sql or ""
            collation = collations.get(name.lower())
            if collation:
                declared = f"{declared} COLLATE {collation}".strip()
            columns.append(Column(name, declared, not notnull and not pk, pk or None))
        return columns


def _column_collations(create_sql: str) -> dict[str, str]:
    """Column name (lower case) to its COLLATE clause, read from the table's CREATE statement."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ParseError

    try:
        tree = sqlglot.parse_one(create_sql, read="sqlite")
    except (ParseError, ValueError):
        return {}
    collations: dict[str, str] = {}
    for column_def in tree.find_all(exp.ColumnDef):
        for constraint in column_def.constraints:
            if isinstance(constraint.kind, exp.CollateColumnConstraint):
                collations[column_def.name.lower()] = constraint.kind.this.name
    return collations

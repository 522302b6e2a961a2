"""MariaDB and MySQL (one dialect: the SQL snaprepl generates is valid on both)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from snaprepl.common.table_names import ResolvedTable
from snaprepl.dialects.alter import MySqlColumnAlteration
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
from snaprepl.dialects.bidir_sets import MySqlBidirSets
from snaprepl.dialects.checksums import MySqlChecksums
from snaprepl.dialects.connect import DriverOptions, checked_database, checked_host, checked_port, mysql_options
from snaprepl.dialects.guards import MySqlGuards
from snaprepl.dialects.lock_waits import MySqlLockWaits
from snaprepl.dialects.mysql_cascades import MySqlCascades
from snaprepl.dialects.replace import MySqlRowReplacement
from snaprepl.dialects.schema_tables import MySqlSchemaTables
from snaprepl.dialects.watermarks import MySqlWatermarks
from snaprepl.errors import InvalidName


class MySqlDialect(
    MySqlColumnAlteration,
    MySqlRowReplacement,
    MySqlLockWaits,
    MySqlBidirSets,
    MySqlCascades,
    MySqlWatermarks,
    MySqlGuards,
    MySqlChecksums,
    MySqlSchemaTables,
    Dialect,
):
    name = "mysql"
    sqlglot_dialect = "mysql"
    identifier_quotes = ("`", "`")
    max_identifier_length = 64
    transactional_ddl = False
    executable = True
    # MariaDB Connector/J accepts jdbc:mysql: URLs, and Spark quotes columns correctly only for those.
    jdbc_driver = "org.mariadb.jdbc.Driver"
    jdbc_url_prefixes = ("jdbc:mysql:", "jdbc:mariadb:")
    snaptime_type = "datetime(6)"
    dmltype_type = "char(1)"
    rowguid_type = "varchar(255)"
    sqlalchemy_driver = "mysql+pymysql"
    read_only_begin = ("START TRANSACTION READ ONLY",)
    read_only_session = "SET SESSION TRANSACTION READ ONLY"
    schema_is_database = True
    load_data_local = True
    # PyMySQL parses a datetime in Python, at twice the time of the text (snaptime_value parses that).
    snaptime_read = "CAST({} AS CHAR)"

    def driver_options(self, conn: ConnectionFields) -> DriverOptions:
        return mysql_options(conn.conn_id, conn.extra)

    def jdbc_url(self, conn: ConnectionFields) -> str:
        # jdbc:mysql: with the MariaDB driver: Spark quotes identifiers right only for this scheme.
        host, port = checked_host(conn.conn_id, conn.host), checked_port(conn.conn_id, conn.port, 3306)
        return f"jdbc:mysql://{host}:{port}/{checked_database(conn.conn_id, conn.schema)}"

    def jdbc_properties(self, conn: ConnectionFields) -> dict[str, str]:
        # Sessions run in UTC so DATETIME values are never shifted by the JVM's zone.
        own = {"rewriteBatchedStatements": "true", "sessionVariables": "time_zone='+00:00'"}
        return {**own, **super().jdbc_properties(conn)}

    def session_setup_sql(self, lock_seconds: int, statement_seconds: int) -> list[str]:
        # Row locks (InnoDB) and metadata locks (LOCK TABLES, DDL: a day by default) alike.
        limits = [f"innodb_lock_wait_timeout = {int(lock_seconds)}", f"lock_wait_timeout = {int(lock_seconds)}"]
        if statement_seconds:
            limits.append(f"max_statement_time = {int(statement_seconds)}")  # MariaDB's
        return [f"SET SESSION {', '.join(limits)}"]

    def jdbc_timeouts(self, props: dict[str, str], lock_seconds: int, statement_seconds: int) -> dict[str, str]:
        limits = f"innodb_lock_wait_timeout={int(lock_seconds)},lock_wait_timeout={int(lock_seconds)}"
        if statement_seconds:
            limits += f",max_statement_time={int(statement_seconds)}"
        variables = props.get("sessionVariables")
        return {**props, "sessionVariables": f"{variables},{limits}" if variables else limits}

    def is_lock_timeout(self, err: BaseException) -> bool:
        return bool(getattr(err, "args", None)) and err.args[0] == 1205  # ER_LOCK_WAIT_TIMEOUT

    def table_options(self) -> str:
        return " ENGINE=InnoDB"

    def utc_now_sql(self) -> str:
        return "UTC_TIMESTAMP(6)"

    def uuid_sql(self) -> str:
        return "UUID()"

    def _upsert(self, rlog: str, objects: LogObjects, row: str, source_keys: list[str], dmltype: str) -> str:
        cols = self.log_columns
        values = ", ".join(
            [
                *(f"{row}.{self.quote(k)}" for k in source_keys),
                self.utc_now_sql(),
                f"'{dmltype}'",
                self.uuid_sql(),
            ]
        )
        updates = ", ".join(
            f"{self.quote(c)} = VALUES({self.quote(c)})" for c in (cols.snaptime, cols.dmltype, cols.rowguid)
        )
        return (
            f"INSERT INTO {rlog} ({self._log_column_list(objects)}) VALUES ({values}) ON DUPLICATE KEY UPDATE {updates}"
        )

    def render_script(self, statements: Sequence[str]) -> str:
        # The mysql/mariadb client splits on ';' unless told otherwise; trigger bodies contain ';'.
        body = "".join(f"{s} $$\n\n" for s in statements)
        return f"DELIMITER $$\n\n{body}DELIMITER ;\n"

    def create_log_ddl(self, info: TableInfo, objects: LogObjects) -> list[DdlStep]:
        table = info.table
        source = self.qualified(table.schema, table.table)
        rlog = self.qualified(table.schema, objects.rlog)
        keys = [c.name for c in info.primary_key]
        same_key = " AND ".join(f"OLD.{self.quote(k)} <=> NEW.{self.quote(k)}" for k in keys)
        trig_i, trig_u, trig_d = (self.qualified(table.schema, t) for t in objects.triggers)
        return [
            DdlStep(self.create_log_table_sql(info, objects), f"DROP TABLE IF EXISTS {rlog}"),
            DdlStep(
                f"CREATE TRIGGER {trig_i} AFTER INSERT ON {source} FOR EACH ROW\n"
                f"  {self._upsert(rlog, objects, 'NEW', keys, 'I')}",
                f"DROP TRIGGER IF EXISTS {trig_i}",
            ),
            DdlStep(
                f"CREATE TRIGGER {trig_u} AFTER UPDATE ON {source} FOR EACH ROW\n"
                f"BEGIN\n"
                f"  IF NOT ({same_key}) THEN\n"
                f"    {self._upsert(rlog, objects, 'OLD', keys, 'D')};\n"
                f"    {self._upsert(rlog, objects, 'NEW', keys, 'I')};\n"
                f"  ELSE\n"
                f"    {self._upsert(rlog, objects, 'NEW', keys, 'U')};\n"
                f"  END IF;\n"
                f"END",
                f"DROP TRIGGER IF EXISTS {trig_u}",
            ),
            DdlStep(
                f"CREATE TRIGGER {trig_d} AFTER DELETE ON {source} FOR EACH ROW\n"
                f"  {self._upsert(rlog, objects, 'OLD', keys, 'D')}",
                f"DROP TRIGGER IF EXISTS {trig_d}",
            ),
        ]

    def drop_log_ddl(self, table: ResolvedTable, objects: LogObjects, *, source_exists: bool) -> list[str]:
        statements = [f"DROP TRIGGER IF EXISTS {self.qualified(table.schema, t)}" for t in objects.triggers]
        statements.append(f"DROP TABLE IF EXISTS {self.qualified(table.schema, objects.rlog)}")
        return statements

    # ------------------------------------------------------------------ bi-directional logs

    def new_version_sql(self, server: str) -> str:
        return f"CONCAT({self.literal(server + '@')}, UUID())"

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
        cols, bidir, q = self.log_columns, BIDIR, self.quote
        parts = self._put_parts(
            rlog, objects, op, keys, (guid, old, origin, now), existing="", publisher=publisher, when=when
        )
        values, conditions = parts.values, parts.conditions
        source = f"SELECT {values} FROM DUAL WHERE {' AND '.join(conditions)}" if conditions else f"VALUES ({values})"
        # MariaDB assigns left to right: OLD_ROWGUID reads the pending entry's DMLTYPE before it changes.
        statements = [
            f"INSERT INTO {rlog} ({parts.columns}) {source} ON DUPLICATE KEY UPDATE "
            f"{q(bidir.old_rowguid)} = {parts.old}, {q(cols.dmltype)} = {parts.type}, "
            f"{q(cols.snaptime)} = VALUES({q(cols.snaptime)}), {q(cols.rowguid)} = VALUES({q(cols.rowguid)}), "
            f"{q(bidir.origin)} = VALUES({q(bidir.origin)})"
        ]
        return [*statements, *parts.after]

    def create_bidir_log_ddl(
        self, info: TableInfo, objects: LogObjects, server: str, *, publisher: bool
    ) -> list[DdlStep]:
        table = info.table
        q = self.quote
        source = self.qualified(table.schema, table.table)
        rlog = self.qualified(table.schema, objects.rlog)
        keys = [c.name for c in info.primary_key]
        new_keys, old_keys = [f"NEW.{q(k)}" for k in keys], [f"OLD.{q(k)}" for k in keys]
        rowguid = q(BIDIR.rowguid)
        version = self.new_version_sql(server)
        same_key = " AND ".join(f"OLD.{q(k)} <=> NEW.{q(k)}" for k in keys)

        def put(op: str, row_keys: list[str], guid: str, old: str) -> str:
            return "\n      ".join(
                f"{st};" for st in self.bidir_put_sql(rlog, objects, op, row_keys, guid, old, "''", publisher=publisher)
            )

        trig_i, trig_u, trig_d = (self.qualified(table.schema, t) for t in objects.triggers)
        return [
            DdlStep(self.create_bidir_log_table_sql(info, objects), f"DROP TABLE IF EXISTS {rlog}"),
            DdlStep(
                f"CREATE TRIGGER {trig_i} BEFORE INSERT ON {source} FOR EACH ROW\nBEGIN\n"
                f"  IF NEW.{rowguid} IS NULL THEN\n"
                f"    SET NEW.{rowguid} = {version};\n"
                f"    {put('I', new_keys, f'NEW.{rowguid}', 'NULL')}\n"
                f"  END IF;\nEND",
                f"DROP TRIGGER IF EXISTS {trig_i}",
            ),
            DdlStep(
                f"CREATE TRIGGER {trig_u} BEFORE UPDATE ON {source} FOR EACH ROW\nBEGIN\n"
                f"  IF NEW.{rowguid} <=> OLD.{rowguid} THEN\n"
                f"    SET NEW.{rowguid} = {version};\n"
                f"    IF NOT ({same_key}) THEN\n"
                f"      {put('D', old_keys, version, f'OLD.{rowguid}')}\n"
                f"      {put('I', new_keys, f'NEW.{rowguid}', 'NULL')}\n"
                f"    ELSE\n"
                f"      {put('U', new_keys, f'NEW.{rowguid}', f'OLD.{rowguid}')}\n"
                f"    END IF;\n"
                f"  END IF;\nEND",
                f"DROP TRIGGER IF EXISTS {trig_u}",
            ),
            DdlStep(
                f"CREATE TRIGGER {trig_d} BEFORE DELETE ON {source} FOR EACH ROW\nBEGIN\n"
                f"  IF NOT (OLD.{rowguid} <=> {self.literal(DELETE_MARK)}) THEN\n"
                f"    {put('D', old_keys, version, f'OLD.{rowguid}')}\n"
                f"  END IF;\nEND",
                f"DROP TRIGGER IF EXISTS {trig_d}",
            ),
        ]

    def replicated_merge_sql(
        self, table: str, stage: str, columns: Sequence[str], keys: Sequence[str], rlog: str, log_keys: Sequence[str]
    ) -> list[str]:
        q = self.quote
        rowguid = q(BIDIR.rowguid)
        match = " AND ".join(f"t.{q(k)} = s.{q(k)}" for k in keys)
        non_key = [c for c in columns if c not in keys]
        no_pending = self.no_pending_sql(rlog, log_keys, [f"s.{q(k)}" for k in keys])
        return [
            f"UPDATE {table} AS t JOIN {stage} AS s ON {match} "
            f"SET {', '.join(f't.{q(c)} = s.{q(c)}' for c in non_key)} "
            f"WHERE s.{q('SNAPREPL_CHUNK')} = :chunk AND NOT (t.{rowguid} <=> s.{rowguid}) AND {no_pending}",
            self.replicated_insert_sql(table, stage, columns, keys, rlog, log_keys),
        ]

    # ------------------------------------------------------------------ snapshots

    # InnoDB clusters rows by primary key: adding it after a load would rebuild the table.
    key_after_load = False

    def literal(self, value: str) -> str:
        # Backslashes are escapes in MariaDB string literals (unless NO_BACKSLASH_ESCAPES).
        return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"

    def is_plain_table(self, session: SqlSession, schema: str, table: str) -> bool:
        rows = session.query(
            """
            SELECT
              (SELECT COUNT(*) FROM information_schema.TRIGGERS
                WHERE BINARY EVENT_OBJECT_SCHEMA = :schema AND BINARY EVENT_OBJECT_TABLE = :table)
            + (SELECT COUNT(*) FROM information_schema.REFERENTIAL_CONSTRAINTS
                WHERE (BINARY CONSTRAINT_SCHEMA = :schema AND BINARY TABLE_NAME = :table)
                   OR (BINARY UNIQUE_CONSTRAINT_SCHEMA = :schema AND BINARY REFERENCED_TABLE_NAME = :table))
            + (SELECT COUNT(*) FROM information_schema.STATISTICS
                WHERE BINARY TABLE_SCHEMA = :schema AND BINARY TABLE_NAME = :table AND INDEX_NAME <> 'PRIMARY')
            """,
            {"schema": schema, "table": table},
        )
        return int(rows[0][0]) == 0

    def swap_table_steps(self, session: SqlSession, schema: str, dest: str, staging: str) -> list[str]:
        old = self.shorten(f"{staging}_old")
        target, source = self.qualified(schema, dest), self.qualified(schema, staging)
        # One RENAME TABLE moves both atomically; readers see the old table or the new one.
        return [
            f"DROP TABLE IF EXISTS {self.qualified(schema, old)}",
            f"RENAME TABLE {target} TO {self.qualified(schema, old)}, {source} TO {target}",
            f"DROP TABLE {self.qualified(schema, old)}",
        ]

    def describe_query(self, session: SqlSession, sql: str) -> list[Column]:
        probe = f"snaprepl_probe_{uuid.uuid4().hex[:12]}"
        session.execute(f"CREATE TEMPORARY TABLE {self.quote(probe)} AS SELECT * FROM ({sql}) AS q LIMIT 0")
        try:
            rows = session.query(f"SHOW FULL COLUMNS FROM {self.quote(probe)}")
        finally:
            session.execute(f"DROP TEMPORARY TABLE IF EXISTS {self.quote(probe)}")
        columns = []
        for row in rows:
            name, type_sql, collation = _text(row[0]), _text(row[1]), row[2]
            if collation:
                type_sql += f" COLLATE {_text(collation)}"
            columns.append(Column(name, type_sql))
        return columns

    def estimate_rows(self, session: SqlSession, schema: str, table: str) -> int | None:
        rows = session.query(
            "SELECT TABLE_ROWS FROM information_schema.TABLES WHERE BINARY TABLE_SCHEMA = :schema "
            "AND BINARY TABLE_NAME = :table",
            {"schema": schema, "table": table},
        )
        return int(rows[0][0]) if rows and rows[0][0] is not None else None

    # ------------------------------------------------------------------ introspection

    def schema_exists(self, session: SqlSession, schema: str) -> bool:
        return bool(
            session.query(
                "SELECT 1 FROM information_schema.SCHEMATA WHERE BINARY SCHEMA_NAME = :schema", {"schema": schema}
            )
        )

    def database_name(self, session: SqlSession) -> str:
        return self.default_schema(session)

    def default_schema(self, session: SqlSession) -> str:
        schema = session.query("SELECT DATABASE()")[0][0]
        if not schema:
            raise InvalidName(
                "the connection has no default database",
                "write the table as database.table, or set the schema (database) of the connection",
            )
        return schema

    def find_table(self, session: SqlSession, schema: str, table: str) -> tuple[str, str] | None:
        rows = session.query(
            "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "
            "WHERE BINARY TABLE_SCHEMA = :schema AND BINARY TABLE_NAME = :table AND TABLE_TYPE = 'BASE TABLE'",
            {"schema": schema, "table": table},
        )
        return (rows[0][0], rows[0][1]) if rows else None

    def find_table_any_case(self, session: SqlSession, schema: str, table: str) -> str | None:
        rows = session.query(
            "SELECT TABLE_NAME FROM information_schema.TABLES "
            "WHERE LOWER(TABLE_SCHEMA) = LOWER(:schema) AND LOWER(TABLE_NAME) = LOWER(:table) "
            "AND TABLE_TYPE = 'BASE TABLE'",
            {"schema": schema, "table": table},
        )
        return rows[0][0] if len(rows) == 1 else None

    def columns(self, session: SqlSession, schema: str, table: str) -> list[Column]:
        rows = session.query(
            """
            SELECT c.COLUMN_NAME, c.COLUMN_TYPE, c.CHARACTER_SET_NAME, c.COLLATION_NAME, c.IS_NULLABLE,
                   k.ORDINAL_POSITION
              FROM information_schema.COLUMNS c
              LEFT JOIN information_schema.KEY_COLUMN_USAGE k
                ON k.TABLE_SCHEMA = c.TABLE_SCHEMA AND k.TABLE_NAME = c.TABLE_NAME
               AND k.COLUMN_NAME = c.COLUMN_NAME AND k.CONSTRAINT_NAME = 'PRIMARY'
             WHERE BINARY c.TABLE_SCHEMA = :schema AND BINARY c.TABLE_NAME = :table
             ORDER BY c.ORDINAL_POSITION
            """,
            {"schema": schema, "table": table},
        )
        columns = []
        for name, column_type, charset, collation, nullable, pk in rows:
            type_sql = _text(column_type)
            if collation:
                # Keep the key's collation: a case-insensitive key must stay one log row per key.
                type_sql += f" CHARACTER SET {_text(charset)} COLLATE {_text(collation)}"
            columns.append(Column(_text(name), type_sql, nullable == "YES", int(pk) if pk is not None else None))
        return columns


def _text(value: object) -> str:
    # information_schema columns come back as bytes from some server/driver combinations.
    return value.decode() if isinstance(value, bytes | bytearray) else str(value)

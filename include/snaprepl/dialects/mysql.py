"""MariaDB and MySQL (one dialect: the SQL snaprepl generates is valid on both)."""

from __future__ import annotations

from collections.abc import Sequence

from snaprepl.dialects.base import (
    Column,
    ConnectionFields,
    DdlStep,
    Dialect,
    LogObjects,
    SqlSession,
    TableInfo,
)
from snaprepl.errors import InvalidName
from snaprepl.names import ResolvedTable


class MySqlDialect(Dialect):
    name = "mysql"
    sqlglot_dialect = "mysql"
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

    def sqlalchemy_query(self) -> dict[str, str]:
        return {"charset": "utf8mb4"}

    def jdbc_url(self, conn: ConnectionFields) -> str:
        # jdbc:mysql: with the MariaDB driver: Spark quotes identifiers right only for this scheme.
        # Sessions run in UTC so DATETIME values are never shifted by the JVM's zone.
        return (
            f"jdbc:mysql://{conn.host or '127.0.0.1'}:{conn.port or 3306}/{conn.schema or ''}"
            "?rewriteBatchedStatements=true&sessionVariables=time_zone='%2B00:00'"
        )

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

    # ------------------------------------------------------------------ introspection

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

"""PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from snaprepl.common.table_names import ResolvedTable, underscored, with_suffix
from snaprepl.dialects.alter import PostgresColumnAlteration
from snaprepl.dialects.base import (
    BIDIR,
    DELETE_MARK,
    BulkConnection,
    BulkPipe,
    Column,
    ConnectionFields,
    DdlStep,
    Dialect,
    LogObjects,
    SqlSession,
    TableInfo,
)
from snaprepl.dialects.bidir_sets import PostgresBidirSets
from snaprepl.dialects.checksums import PostgresChecksums
from snaprepl.dialects.connect import DriverOptions, checked_database, checked_host, checked_port, postgres_options
from snaprepl.dialects.lock_waits import PostgresLockWaits
from snaprepl.dialects.postgres_copy import PostgresCopy
from snaprepl.dialects.postgres_guards import PostgresGuards
from snaprepl.dialects.postgres_mysql_pipe import PostgresMySqlPipe
from snaprepl.dialects.postgres_pipe import PostgresCopyPipe
from snaprepl.dialects.postgres_sqlite_pipe import PostgresSqlitePipe
from snaprepl.dialects.postgres_swap import PostgresTableSwap
from snaprepl.dialects.replace import PostgresRowReplacement
from snaprepl.dialects.watermarks import XID_COLUMN, PostgresWatermarks


class PostgresDialect(
    PostgresColumnAlteration,
    PostgresTableSwap,
    PostgresRowReplacement,
    PostgresLockWaits,
    PostgresBidirSets,
    PostgresWatermarks,
    PostgresGuards,
    PostgresChecksums,
    Dialect,
):
    name = "postgres"
    sqlglot_dialect = "postgres"
    max_identifier_length = 63
    transactional_ddl = True
    executable = True
    jdbc_driver = "org.postgresql.Driver"
    jdbc_url_prefixes = ("jdbc:postgresql:",)
    snaptime_type = "timestamp(6)"
    dmltype_type = "char(1)"
    rowguid_type = "varchar(255)"
    on_conflict_puts = True
    log_alias = "l"
    sqlalchemy_driver = "postgresql+psycopg2"
    read_only_begin = ("SET TRANSACTION READ ONLY",)
    copy_text_protocol = True

    def bulk_writer(self, conn: BulkConnection) -> PostgresCopy | None:
        """``COPY`` through psycopg2, except on a JDBC-only connection."""
        return PostgresCopy(self, conn) if conn.conn_type != "jdbc" else None

    def bulk_pipe(self, conn: BulkConnection, dest: Dialect, dest_conn: BulkConnection) -> BulkPipe | None:
        """``COPY TO`` piped into ``COPY FROM`` where both ends speak it, or into MariaDB's ``LOAD DATA
        LOCAL INFILE``, or fetched into SQLite's ``executemany``; none on JDBC-only connections."""
        if "jdbc" in (conn.conn_type, dest_conn.conn_type):
            return None
        if dest.copy_text_protocol:
            return PostgresCopyPipe(self, conn, dest, dest_conn)
        if dest.load_data_local:
            return PostgresMySqlPipe(self, conn, dest, dest_conn)
        if dest.sqlite_file:
            return PostgresSqlitePipe(self, conn, dest, dest_conn)
        return None

    def session_setup_sql(self, lock_seconds: int, statement_seconds: int) -> list[str]:
        return [f"SET lock_timeout = '{int(lock_seconds)}s'", f"SET statement_timeout = '{int(statement_seconds)}s'"]

    def jdbc_timeouts(self, props: dict[str, str], lock_seconds: int, statement_seconds: int) -> dict[str, str]:
        limits = f"-c lock_timeout={int(lock_seconds)}s -c statement_timeout={int(statement_seconds)}s"
        return {**props, "options": f"{props.get('options', '')} {limits}".strip()}

    def is_lock_timeout(self, err: BaseException) -> bool:
        return getattr(err, "pgcode", None) == "55P03"  # lock_not_available

    def read_only_jdbc(self, props: dict[str, str]) -> dict[str, str]:
        # At connection start: Spark's sessionInitStatement runs after it has begun a transaction (it
        # turns autocommit off to fetch in chunks), too late for SET SESSION CHARACTERISTICS.
        return {**props, "options": f"{props.get('options', '')} -c default_transaction_read_only=on".strip()}

    def jdbc_url(self, conn: ConnectionFields) -> str:
        host, port = checked_host(conn.conn_id, conn.host), checked_port(conn.conn_id, conn.port, 5432)
        return f"jdbc:postgresql://{host}:{port}/{checked_database(conn.conn_id, conn.schema)}"

    def driver_options(self, conn: ConnectionFields) -> DriverOptions:
        return postgres_options(conn.conn_id, conn.extra)

    def jdbc_properties(self, conn: ConnectionFields) -> dict[str, str]:
        # The name tells a DBA (pg_stat_activity, connection logs) which sessions are Spark's; from
        # version 10 on pgjdbc sends it (and the options) in the startup packet instead of SETs.
        own = {"reWriteBatchedInserts": "true", "ApplicationName": "snaprepl spark", "assumeMinServerVersion": "10"}
        return {**own, **super().jdbc_properties(conn)}

    def fold_unquoted(self, text: str) -> str:
        return super().fold_unquoted(text).lower()

    def utc_now_sql(self) -> str:
        # now() is the transaction's start time: one source transaction is one SNAPTIME group.
        return "(now() AT TIME ZONE 'UTC')"

    def uuid_sql(self) -> str:
        return "gen_random_uuid()::text"

    def log_objects(self, table: ResolvedTable, key_columns: list[str] | tuple[str, ...]) -> LogObjects:
        objects = super().log_objects(table, key_columns)
        function = with_suffix(underscored(table.schema, table.table), "_rlog_fn", self.max_identifier_length)
        return LogObjects(
            rlog=objects.rlog,
            key_columns=objects.key_columns,
            triggers=objects.triggers,
            functions=(function,),
        )

    def _upsert(self, rlog: str, objects: LogObjects, row: str, source_keys: list[str], dmltype: str) -> str:
        cols = self.log_columns
        values = ", ".join(
            [
                *(f"{row}.{self.quote(k)}" for k in source_keys),
                self.utc_now_sql(),
                f"'{dmltype}'",
                self.uuid_sql(),
                self.xid_value_sql(),
            ]
        )
        keys = ", ".join(self.quote(k) for k in objects.key_columns)
        updates = ", ".join(
            f"{self.quote(c)} = EXCLUDED.{self.quote(c)}"
            for c in (cols.snaptime, cols.dmltype, cols.rowguid, XID_COLUMN)
        )
        columns = f"{self._log_column_list(objects)}, {self.quote(XID_COLUMN)}"
        return f"INSERT INTO {rlog} ({columns}) VALUES ({values})\n      ON CONFLICT ({keys}) DO UPDATE SET {updates};"

    def create_log_ddl(self, info: TableInfo, objects: LogObjects) -> list[DdlStep]:
        table = info.table
        source = self.qualified(table.schema, table.table)
        rlog = self.qualified(table.schema, objects.rlog)
        function = self.qualified(table.schema, objects.functions[0])
        keys = [c.name for c in info.primary_key]
        key_changed = " OR ".join(f"OLD.{self.quote(k)} IS DISTINCT FROM NEW.{self.quote(k)}" for k in keys)
        body = f"""BEGIN
  IF TG_OP = 'INSERT' THEN
    {self._upsert(rlog, objects, "NEW", keys, "I")}
  ELSIF TG_OP = 'DELETE' THEN
    {self._upsert(rlog, objects, "OLD", keys, "D")}
  ELSIF {key_changed} THEN
    {self._upsert(rlog, objects, "OLD", keys, "D")}
    {self._upsert(rlog, objects, "NEW", keys, "I")}
  ELSE
    {self._upsert(rlog, objects, "NEW", keys, "U")}
  END IF;
  RETURN NULL;
END"""
        steps = [
            DdlStep(self.create_log_table_sql(info, objects), f"DROP TABLE IF EXISTS {rlog}"),
            DdlStep(self.xid_log_step_sql(rlog)),
            DdlStep(
                f"CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $snaprepl$\n{body}\n$snaprepl$",
                f"DROP FUNCTION IF EXISTS {function}()",
            ),
        ]
        for trigger, event in zip(objects.triggers, ("INSERT", "UPDATE", "DELETE"), strict=True):
            steps.append(
                DdlStep(
                    f"CREATE TRIGGER {self.quote(trigger)} AFTER {event} ON {source} "
                    f"FOR EACH ROW EXECUTE FUNCTION {function}()",
                    f"DROP TRIGGER IF EXISTS {self.quote(trigger)} ON {source}",
                )
            )
        return steps

    def drop_log_ddl(self, table: ResolvedTable, objects: LogObjects, *, source_exists: bool) -> list[str]:
        source = self.qualified(table.schema, table.table)
        statements = []
        if source_exists:
            statements += [f"DROP TRIGGER IF EXISTS {self.quote(t)} ON {source}" for t in objects.triggers]
        statements += [f"DROP FUNCTION IF EXISTS {self.qualified(table.schema, f)}()" for f in objects.functions]
        statements.append(f"DROP TABLE IF EXISTS {self.qualified(table.schema, objects.rlog)}")
        return statements

    # ------------------------------------------------------------------ bi-directional logs

    def create_bidir_log_ddl(
        self, info: TableInfo, objects: LogObjects, server: str, *, publisher: bool
    ) -> list[DdlStep]:
        table = info.table
        q = self.quote
        source = self.qualified(table.schema, table.table)
        rlog = self.qualified(table.schema, objects.rlog)
        function = self.qualified(table.schema, objects.functions[0])
        body = self._bidir_trigger_body(info, objects, server, publisher=publisher)
        steps = [
            DdlStep(self.create_bidir_log_table_sql(info, objects), f"DROP TABLE IF EXISTS {rlog}"),
            DdlStep(
                f"CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $snaprepl$\n{body}\n$snaprepl$",
                f"DROP FUNCTION IF EXISTS {function}()",
            ),
        ]
        # The function's own tests of ROWGUID again as WHEN clauses: replicated writes (pulls, pushes, an
        # initial load's whole batches) then skip the PL/pgSQL call altogether.
        rowguid, mark = f"{q(BIDIR.rowguid)}", self.literal(DELETE_MARK)
        users = (
            f"NEW.{rowguid} IS NULL",
            f"NEW.{rowguid} IS NOT DISTINCT FROM OLD.{rowguid}",
            f"OLD.{rowguid} IS DISTINCT FROM {mark}",
        )
        for trigger, event, when in zip(objects.triggers, ("INSERT", "UPDATE", "DELETE"), users, strict=True):
            steps.append(
                DdlStep(
                    f"CREATE TRIGGER {q(trigger)} BEFORE {event} ON {source} "
                    f"FOR EACH ROW WHEN ({when}) EXECUTE FUNCTION {function}()",
                    f"DROP TRIGGER IF EXISTS {q(trigger)} ON {source}",
                )
            )
        return steps

    def _bidir_trigger_body(self, info: TableInfo, objects: LogObjects, server: str, *, publisher: bool) -> str:
        """The PL/pgSQL body of the row trigger function that versions users' rows and logs their changes."""
        q = self.quote
        rlog = self.qualified(info.table.schema, objects.rlog)
        keys = [c.name for c in info.primary_key]
        new_keys, old_keys = [f"NEW.{q(k)}" for k in keys], [f"OLD.{q(k)}" for k in keys]
        rowguid = q(BIDIR.rowguid)
        version = self.new_version_sql(server)
        key_changed = " OR ".join(f"OLD.{q(k)} IS DISTINCT FROM NEW.{q(k)}" for k in keys)

        def put(op: str, row_keys: list[str], guid: str, old: str) -> str:
            return "\n      ".join(
                f"{st};" for st in self.bidir_put_sql(rlog, objects, op, row_keys, guid, old, "''", publisher=publisher)
            )

        return f"""DECLARE
  snaprepl_g text;
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NEW.{rowguid} IS NOT NULL THEN RETURN NEW; END IF;  -- a replicated write keeps its version
    snaprepl_g := {version};
    NEW.{rowguid} := snaprepl_g;
    {put("I", new_keys, "snaprepl_g", "NULL")}
    RETURN NEW;
  ELSIF TG_OP = 'UPDATE' THEN
    IF NEW.{rowguid} IS DISTINCT FROM OLD.{rowguid} THEN RETURN NEW; END IF;
    snaprepl_g := {version};
    NEW.{rowguid} := snaprepl_g;
    IF {key_changed} THEN
      {put("D", old_keys, version, f"OLD.{rowguid}")}
      {put("I", new_keys, "snaprepl_g", "NULL")}
    ELSE
      {put("U", new_keys, "snaprepl_g", f"OLD.{rowguid}")}
    END IF;
    RETURN NEW;
  ELSE
    IF OLD.{rowguid} IS NOT DISTINCT FROM {self.literal(DELETE_MARK)} THEN RETURN OLD; END IF;
    {put("D", old_keys, version, f"OLD.{rowguid}")}
    RETURN OLD;
  END IF;
END"""

    def replicated_merge_sql(
        self, table: str, stage: str, columns: Sequence[str], keys: Sequence[str], rlog: str, log_keys: Sequence[str]
    ) -> list[str]:
        q = self.quote
        rowguid = q(BIDIR.rowguid)
        match = " AND ".join(f"t.{q(k)} = s.{q(k)}" for k in keys)
        non_key = [c for c in columns if c not in keys]
        no_pending = self.no_pending_sql(rlog, log_keys, [f"s.{q(k)}" for k in keys])
        return [
            f"UPDATE {table} AS t SET {', '.join(f'{q(c)} = s.{q(c)}' for c in non_key)} "
            f"FROM {stage} AS s WHERE s.{q('SNAPREPL_CHUNK')} = :chunk AND {match} "
            f"AND t.{rowguid} IS DISTINCT FROM s.{rowguid} AND {no_pending}",
            self.replicated_insert_sql(table, stage, columns, keys, rlog, log_keys),
        ]

    # ------------------------------------------------------------------ snapshots

    def add_key_sql(self, schema: str | None, table: str, key: Sequence[str]) -> str:
        constraint = self.quote(self.shorten(f"{table}_pkey"))
        columns = ", ".join(self.quote(k) for k in key)
        return f"ALTER TABLE {self.qualified(schema, table)} ADD CONSTRAINT {constraint} PRIMARY KEY ({columns})"

    def describe_query(self, session: SqlSession, sql: str) -> list[Column]:
        probe = f"snaprepl_probe_{uuid.uuid4().hex[:12]}"
        session.execute(f"CREATE TEMP VIEW {self.quote(probe)} AS {sql}")
        try:
            rows = session.query(
                "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
                "WHERE a.attrelid = to_regclass(:name) AND a.attnum > 0 ORDER BY a.attnum",
                {"name": f"pg_temp.{self.quote(probe)}"},
            )
        finally:
            session.execute(f"DROP VIEW IF EXISTS {self.quote(probe)}")
        return [Column(name, "text" if type_sql == "unknown" else type_sql) for name, type_sql in rows]

    def estimate_rows(self, session: SqlSession, schema: str, table: str) -> int | None:
        rows = session.query(
            "SELECT reltuples::bigint FROM pg_class WHERE oid = to_regclass(:name)",
            {"name": self.qualified(schema, table)},
        )
        return int(rows[0][0]) if rows and rows[0][0] is not None and rows[0][0] >= 0 else None

    # ------------------------------------------------------------------ introspection

    def schema_exists(self, session: SqlSession, schema: str) -> bool:
        return bool(session.query("SELECT 1 FROM pg_namespace WHERE nspname = :schema", {"schema": schema}))

    def database_name(self, session: SqlSession) -> str:
        return session.query("SELECT current_database()")[0][0]

    def default_schema(self, session: SqlSession) -> str:
        return session.query("SELECT current_schema()")[0][0]

    def find_table(self, session: SqlSession, schema: str, table: str) -> tuple[str, str] | None:
        rows = session.query(
            "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = :schema AND c.relname = :table AND c.relkind IN ('r', 'p')",
            {"schema": schema, "table": table},
        )
        return (rows[0][0], rows[0][1]) if rows else None

    def find_table_any_case(self, session: SqlSession, schema: str, table: str) -> str | None:
        rows = session.query(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE lower(n.nspname) = lower(:schema) AND lower(c.relname) = lower(:table) "
            "AND c.relkind IN ('r', 'p')",
            {"schema": schema, "table": table},
        )
        return rows[0][0] if len(rows) == 1 else None

    def columns(self, session: SqlSession, schema: str, table: str) -> list[Column]:
        rows = session.query(
            """
            SELECT a.attname,
                   format_type(a.atttypid, a.atttypmod)
                     || CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation
                             THEN ' COLLATE ' || quote_ident(cn.nspname) || '.' || quote_ident(co.collname)
                             ELSE '' END,
                   NOT a.attnotnull,
                   (SELECT k.ord FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
                     WHERE k.attnum = a.attnum)
              FROM pg_attribute a
              JOIN pg_class c ON c.oid = a.attrelid
              JOIN pg_namespace n ON n.oid = c.relnamespace
              JOIN pg_type t ON t.oid = a.atttypid
              LEFT JOIN pg_collation co ON co.oid = a.attcollation
              LEFT JOIN pg_namespace cn ON cn.oid = co.collnamespace
              LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary
             WHERE n.nspname = :schema AND c.relname = :table AND a.attnum > 0 AND NOT a.attisdropped
             ORDER BY a.attnum
            """,
            {"schema": schema, "table": table},
        )
        return [Column(name, type_sql, bool(nullable), pk) for name, type_sql, nullable, pk in rows]

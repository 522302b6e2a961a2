"""The dialect interface: everything that differs between databases lives behind it.

Callers never branch on a dialect's name; they ask the dialect object for SQL, names and
introspection. Each dialect says whether snaprepl runs it for real (PostgreSQL, MariaDB/MySQL,
SQLite) or only generates its DDL (SQL Server, Oracle, DB2, Informix).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, ClassVar

from sqlalchemy.engine import URL

from snaprepl.common.table_names import Ident, ResolvedTable, shorten, underscored, with_suffix
from snaprepl.dialects import types as type_mapping
from snaprepl.dialects.capabilities import Capabilities
from snaprepl.dialects.connect import DriverOptions, checked_database, checked_host
from snaprepl.dialects.model import (
    BIDIR,
    DELETE_MARK,
    LOG_COLUMNS,
    BidirColumns,
    BulkConnection,
    BulkPipe,
    Column,
    ConnectionFields,
    DdlStep,
    LogColumns,
    LogObjects,
    SqlSession,
    TableInfo,
)
from snaprepl.errors import InvalidName, UnsupportedConnection

if TYPE_CHECKING:
    from collections.abc import Callable

    from sqlglot import exp

    BulkWriter = Callable[[Any, str, str, Sequence[Column]], int]

#: The values importers have always taken from here; they live in :mod:`snaprepl.dialects.model`.
__all__ = [
    "BIDIR",
    "DELETE_MARK",
    "LOG_COLUMNS",
    "BidirColumns",
    "BulkConnection",
    "Column",
    "ConnectionFields",
    "DdlStep",
    "Dialect",
    "LogColumns",
    "LogObjects",
    "SqlSession",
    "TableInfo",
]


class Dialect(Capabilities, ABC):
    """One database dialect (how it replaces a destination's rows: :mod:`snaprepl.dialects.replace`;
    its bi-directional logs: :mod:`snaprepl.dialects.bidir_logs`; how it reads a database's catalog:
    :mod:`snaprepl.dialects.introspect`).

    Subclasses set the class variables and implement the abstract methods.
    """

    name: ClassVar[str]
    #: sqlglot's name for the dialect ("" where sqlglot has none: DB2, Informix).
    sqlglot_dialect: ClassVar[str]
    #: The characters that quote an identifier: opening, closing.
    identifier_quotes: ClassVar[tuple[str, str]] = ('"', '"')
    #: Longest identifier in bytes.
    max_identifier_length: ClassVar[int]
    #: Whether DDL takes part in transactions (so a failed multi-statement DDL rolls back).
    transactional_ddl: ClassVar[bool]
    #: Whether snaprepl connects to and runs this dialect; the others get generated DDL only.
    executable: ClassVar[bool] = False
    #: Whether table names match regardless of case (SQLite).
    case_insensitive_names: ClassVar[bool] = False
    #: Default JDBC driver class.
    jdbc_driver: ClassVar[str]
    #: Prefixes of JDBC URLs of this dialect.
    jdbc_url_prefixes: ClassVar[tuple[str, ...]]
    #: Types of the fixed log columns.
    snaptime_type: ClassVar[str]
    dmltype_type: ClassVar[str] = "CHAR(1)"
    rowguid_type: ClassVar[str] = "VARCHAR(255)"
    #: The quotient of two non-negative integers ``{a}`` and ``{b}`` rounded down, as SQL.
    integer_quotient: ClassVar[str] = "FLOOR(({a}) / {b})"
    #: A SNAPTIME column ``{}`` as read back in bulk (as text where the driver parses datetimes slowly).
    snaptime_read: ClassVar[str] = "{}"
    #: The first ``{rows}`` rows of the query ``{select}``, as SQL.
    first_rows: ClassVar[str] = "{select} LIMIT {rows}"

    log_columns: ClassVar[LogColumns] = LOG_COLUMNS

    # ------------------------------------------------------------------ names and quoting

    def fold(self, ident: Ident) -> str:
        """The stored form of an identifier: quoted kept as is, unquoted folded by the dialect's rule."""
        return ident.text if ident.quoted else self.fold_unquoted(ident.text)

    def fold_unquoted(self, text: str) -> str:
        """How the dialect stores an unquoted identifier (default: as written)."""
        if not _is_plain_identifier(text):
            raise InvalidName(
                f"{text!r} is not a plain identifier",
                'quote it ("like this") if the name really contains such characters',
            )
        return text

    def quote(self, name: str) -> str:
        """Quote one identifier for this dialect, a closing quote character inside it doubled (as
        sqlglot renders a quoted identifier: tests/unit/test_names.py compares them; quoting is on
        every statement's path, and sqlglot takes 0.09 s to load)."""
        start, end = self.identifier_quotes
        return f"{start}{name.replace(end, end * 2)}{end}"

    def qualified(self, schema: str | None, table: str) -> str:
        return f"{self.quote(schema)}.{self.quote(table)}" if schema else self.quote(table)

    def same_name(self, stored: str, wanted: str) -> bool:
        """Whether a stored name is the name the user meant (after folding)."""
        return stored.lower() == wanted.lower() if self.case_insensitive_names else stored == wanted

    def literal(self, value: str) -> str:
        """A string literal (quotes doubled, so no value can end it early)."""
        return "'" + value.replace("'", "''") + "'"

    def shorten(self, name: str) -> str:
        return shorten(name, self.max_identifier_length)

    # ------------------------------------------------------------------ drivers

    #: SQLAlchemy driver name for the Python side; ``None`` where snaprepl only generates DDL.
    sqlalchemy_driver: ClassVar[str | None] = None

    def sqlalchemy_url(self, conn: ConnectionFields) -> URL:
        """SQLAlchemy URL of a connection of this dialect."""
        if self.sqlalchemy_driver is None:
            raise UnsupportedConnection(
                f"snaprepl generates {self.name} DDL but does not connect to {self.name}",
                "print the DDL with `snaprepl ddl` and run it with your own tools",
            )
        return URL.create(
            self.sqlalchemy_driver,
            username=conn.login,
            password=conn.password,
            host=checked_host(conn.conn_id, conn.host).strip("[]"),
            port=conn.port,
            database=conn.schema if checked_database(conn.conn_id, conn.schema) else None,
            query=self.driver_options(conn).query,
        )

    #: Statements that make a just-begun transaction read-only, and that undo connection-level ones
    #: when it ends; a Spark JDBC read's ``sessionInitStatement`` (see :mod:`snaprepl.ops.readonly`).
    read_only_begin: ClassVar[tuple[str, ...]] = ()
    read_only_end: ClassVar[tuple[str, ...]] = ()
    read_only_session: ClassVar[str | None] = None

    def read_only_jdbc(self, props: dict[str, str]) -> dict[str, str]:
        """JDBC properties whose sessions are read-only from the start (Spark reads of a snapshot's source)."""
        return {**props, "sessionInitStatement": self.read_only_session} if self.read_only_session else props

    def session_setup_sql(self, lock_seconds: int, statement_seconds: int) -> list[str]:
        """Statements giving a new connection snaprepl's lock and statement timeouts (0: no statement limit)."""
        return []

    def jdbc_timeouts(self, props: dict[str, str], lock_seconds: int, statement_seconds: int) -> dict[str, str]:
        """JDBC properties with the same timeouts."""
        return props

    def is_lock_timeout(self, err: BaseException) -> bool:
        """Whether a driver error means a statement gave up waiting for a lock."""
        return False

    def refuse_unsafe_functions(self, tree: exp.Expression) -> None:
        """Refuse functions with side effects in a query or condition, where the dialect has no read-only mode."""

    def driver_options(self, conn: ConnectionFields) -> DriverOptions:
        """Driver options from the connection's allow-listed extras (:mod:`snaprepl.dialects.connect`)."""
        return DriverOptions()

    def jdbc_url(self, conn: ConnectionFields) -> str:
        """JDBC URL of a (non-``jdbc``) connection of this dialect, without credentials."""
        raise UnsupportedConnection(
            f"connections of dialect {self.name} must be of type jdbc",
            "put the JDBC URL in the connection's host field",
        )

    def jdbc_properties(self, conn: ConnectionFields) -> dict[str, str]:
        """JDBC driver properties of a connection: the dialect's own and the allow-listed extras."""
        return self.driver_options(conn).jdbc_properties(conn.conn_id)

    # ------------------------------------------------------------------ types

    def map_type(self, type_sql: str, source_dialect: Dialect) -> str:
        """Map a column type of ``source_dialect`` to this dialect (seed table + snaprepl's rows)."""
        if source_dialect.name == self.name:
            return type_sql
        return type_mapping.map_type(type_sql, source_dialect.name, self.name)

    # ------------------------------------------------------------------ clock and ids

    @abstractmethod
    def utc_now_sql(self) -> str:
        """An expression giving the database's current UTC time (what SNAPTIME is stamped with)."""

    @abstractmethod
    def uuid_sql(self) -> str:
        """An expression giving a fresh unique id as text."""

    def snaptime_param(self, value: datetime) -> Any:
        """A SNAPTIME as a query parameter, comparable with the stored values."""
        return value

    def snaptime_value(self, value: Any) -> datetime | None:
        """A SNAPTIME read from the database, as a naive UTC datetime."""
        if value is None or isinstance(value, datetime):
            return value
        return datetime.fromisoformat(str(value))

    def now_utc(self, session: SqlSession) -> datetime:
        """The database's current UTC time: the clock SNAPTIMEs come from."""
        value = self.snaptime_value(session.query(f"SELECT {self.utc_now_sql()}")[0][0])
        assert value is not None
        return value

    # ------------------------------------------------------------------ snapshot logs

    def log_objects(self, table: ResolvedTable, key_columns: Sequence[str]) -> LogObjects:
        """Names of the log table, its key columns and triggers for ``table``.

        PostgreSQL, MariaDB and SQLite follow docs/semantics.md section 1 (``<schema>_<table>_I_log``);
        the seed's other dialects override this with the names the seed lists for them.
        """
        base = underscored(table.schema, table.table)
        return LogObjects(
            rlog=self.shorten(f"RLOG_{table.table}"),
            key_columns=self._log_key_columns(key_columns),
            triggers=tuple(with_suffix(base, f"_{op}_log", self.max_identifier_length) for op in ("I", "U", "D")),
        )

    def _log_key_columns(self, key_columns: Sequence[str]) -> tuple[str, ...]:
        names = tuple(self.shorten(f"{self.log_columns.key_prefix}{col}") for col in key_columns)
        if len(set(names)) != len(names):
            raise InvalidName(f"primary key columns {list(key_columns)} give clashing log column names")
        return names

    def create_log_table_sql(self, info: TableInfo, objects: LogObjects) -> str:
        """``CREATE TABLE RLOG_<t>`` with the key columns typed as the source declares them."""
        cols = self.log_columns
        key_defs = [
            f"{self.quote(log_col)} {col.type_sql} NOT NULL"
            for log_col, col in zip(objects.key_columns, info.primary_key, strict=True)
        ]
        body = ",\n  ".join(
            [
                *key_defs,
                f"{self.quote(cols.snaptime)} {self.snaptime_type} NOT NULL",
                f"{self.quote(cols.dmltype)} {self.dmltype_type} NOT NULL",
                f"{self.quote(cols.rowguid)} {self.rowguid_type} NOT NULL",
                f"PRIMARY KEY ({', '.join(self.quote(c) for c in objects.key_columns)})",
            ]
        )
        rlog = self.qualified(info.table.schema, objects.rlog)
        return f"CREATE TABLE {rlog} (\n  {body}\n){self.table_options()}"

    def table_options(self) -> str:
        return ""

    @abstractmethod
    def create_log_ddl(self, info: TableInfo, objects: LogObjects) -> list[DdlStep]:
        """Every statement that creates the log table and its triggers, in order."""

    @abstractmethod
    def drop_log_ddl(self, table: ResolvedTable, objects: LogObjects, *, source_exists: bool) -> list[str]:
        """Statements that drop the triggers and the log table; each must succeed if the object is gone.

        :param source_exists: whether the source table is still there (triggers went with it if not).
        """

    def render_script(self, statements: Sequence[str]) -> str:
        """Statements as a script for the dialect's own command-line client."""
        return "".join(f"{s};\n\n" for s in statements).rstrip() + "\n"

    # ------------------------------------------------------------------ snapshots

    def literal_value(self, value: Any) -> str:
        """A SQL literal for a key value (used in partition predicates Spark sends as text)."""
        if value is None:
            return "NULL"
        if isinstance(value, bool):
            return "1" if value else "0"
        if isinstance(value, int | float | Decimal):
            return str(value)
        if isinstance(value, datetime):
            return self.literal(value.isoformat(sep=" ", timespec="microseconds"))
        if isinstance(value, date):
            return self.literal(value.isoformat())
        if isinstance(value, bytes | bytearray | memoryview):
            return f"X'{bytes(value).hex()}'"
        return self.literal(str(value))

    def timestamp_literal(self, value: datetime) -> str:
        """A literal comparable with SNAPTIME values."""
        return self.literal(value.isoformat(sep=" ", timespec="microseconds"))

    def create_table_sql(self, schema: str | None, table: str, columns: Sequence[Column], key: Sequence[str]) -> str:
        """``CREATE TABLE`` with ``columns`` (types in this dialect) and ``key`` as primary key (if any)."""
        defs = [
            f"{self.quote(c.name)} {c.type_sql}{'' if c.nullable and c.name not in key else ' NOT NULL'}"
            for c in columns
        ]
        if key:
            defs.append(f"PRIMARY KEY ({', '.join(self.quote(k) for k in key)})")
        body = ",\n  ".join(defs)
        return f"CREATE TABLE {self.qualified(schema, table)} (\n  {body}\n){self.table_options()}"

    def create_index_sql(self, schema: str | None, table: str, index: str, columns: Sequence[str]) -> str:
        cols = ", ".join(self.quote(c) for c in columns)
        return f"CREATE INDEX {self.quote(index)} ON {self.qualified(schema, table)} ({cols})"

    def drop_table_sql(self, schema: str | None, table: str) -> str:
        return f"DROP TABLE IF EXISTS {self.qualified(schema, table)}"

    def add_key_sql(self, schema: str | None, table: str, key: Sequence[str]) -> str:
        """Add the primary key to a table loaded without it (bulk loads are faster without an index)."""
        return f"ALTER TABLE {self.qualified(schema, table)} ADD PRIMARY KEY ({', '.join(self.quote(k) for k in key)})"

    #: Whether staging tables are loaded without a key and keyed afterwards.
    key_after_load: ClassVar[bool] = True
    #: Whether dates, times and booleans cross to and from Spark as ISO text and integers (SQLite keeps
    #: them so).
    spark_text_temporals: ClassVar[bool] = False
    #: Whether Spark writes through a single connection (SQLite serializes writers anyway).
    spark_single_writer: ClassVar[bool] = False
    #: Whether a (non-JDBC) connection names a database file rather than a server.
    file_database: ClassVar[bool] = False
    #: Whether a schema is a database of the server (MySQL): OpenLineage names its tables
    #: ``schema.table``, not ``database.schema.table``.
    schema_is_database: ClassVar[bool] = False

    def bulk_writer(self, conn: BulkConnection) -> BulkWriter | None:
        """A faster way than Spark's JDBC writer to append a large DataFrame to a table of ``conn``, if
        the dialect has one: called as ``writer(frame, schema, table, columns)``, it returns the rows
        written."""
        return None

    #: Whether the database speaks PostgreSQL's ``COPY`` text format through psycopg (a bulk pipe's end).
    copy_text_protocol: ClassVar[bool] = False
    #: Whether the database loads CSV with ``LOAD DATA LOCAL INFILE`` through PyMySQL (a bulk pipe's end).
    load_data_local: ClassVar[bool] = False
    #: Whether the database is a file Python's sqlite3 writes (a bulk pipe's end, on the file's host).
    sqlite_file: ClassVar[bool] = False

    def bulk_pipe(self, conn: BulkConnection, dest: Dialect, dest_conn: BulkConnection) -> BulkPipe | None:
        """A way to stream a query's result from ``conn`` straight into a table of ``dest_conn`` (a
        database of ``dest``) without Spark types in between, if the pair has one (see
        :mod:`snaprepl.dialects.postgres_pipe`)."""
        return None

    def upsert_staged_sql(
        self,
        dest: str,
        stage: str,
        columns: Sequence[Column],
        keys: Sequence[str],
        batch_column: str,
        op_column: str,
    ) -> str:
        """Insert or update into ``dest`` the rows staged as upserts in one batch (``:batch``); rows equal
        to the destination's are left alone, so its triggers log nothing for them."""
        raise UnsupportedConnection(f"snaprepl does not refresh snapshots on {self.name}")

    def describe_query(self, session: SqlSession, sql: str) -> list[Column]:
        """Names and types (in this dialect) of the columns ``sql`` returns."""
        raise NotImplementedError(f"{self.name}: describing queries is not implemented")

    def estimate_rows(self, session: SqlSession, schema: str, table: str) -> int | None:
        """A cheap estimate of a table's row count, or None."""
        return None

    # ------------------------------------------------------------------ helpers for subclasses

    def _log_column_list(self, objects: LogObjects) -> str:
        cols = self.log_columns
        return ", ".join(self.quote(c) for c in (*objects.key_columns, cols.snaptime, cols.dmltype, cols.rowguid))


def _is_plain_identifier(text: str) -> bool:
    return bool(text) and (text[0].isalpha() or text[0] == "_") and all(ch.isalnum() or ch in "_$" for ch in text)

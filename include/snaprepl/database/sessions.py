"""Sessions on source and destination databases, one interface for every connection type.

PostgreSQL, MariaDB and SQLite connections go through SQLAlchemy with their native Python drivers;
``jdbc`` connections through the JDBC provider's hook (JayDeBeApi). Either way a caller gets a
:class:`Session` (one transaction) with ``execute`` and ``query`` taking ``:name`` parameters, and
never needs to know which driver is underneath.
"""

from __future__ import annotations

import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.exc import DBAPIError, OperationalError

from snaprepl.common import timeouts
from snaprepl.common.airflow_config import load_airflow_configuration
from snaprepl.common.jars import jdbc_jars
from snaprepl.common.table_names import TableRef
from snaprepl.connections.lookup import ConnectionInfo, get_connection
from snaprepl.database.errors import connection_lost, is_connection_lost
from snaprepl.dialects import Dialect, TableInfo
from snaprepl.dialects.connect import tls_hint
from snaprepl.errors import DatabaseUnreachable, InvalidName

_NAMED_PARAM = re.compile(r"(?<![:\w]):(\w+)")
#: The execution option of a SQLite connection whose transactions begin deferred (no write lock).
BESIDE_WRITER = "snaprepl_beside_writer"


class Session(ABC):
    """One transaction on one database."""

    dialect: Dialect

    @abstractmethod
    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> int:
        """Run a statement; return the affected row count (-1 if unknown).

        Without ``params`` the SQL is sent as is, so it may contain ``:`` and ``%`` freely.
        """

    @abstractmethod
    def query(self, sql: str, params: Mapping[str, Any] | None = None) -> list[tuple[Any, ...]]:
        """Run a query; return all rows."""

    def fetch_rows(self, sql: str) -> list[Any]:
        """Run a query without parameters; return all rows as the driver gives them (tuples or
        sequences): a large result without a wrapper made per row."""
        return self.query(sql)

    def execute_many(self, sql: str, rows: Sequence[Mapping[str, Any]]) -> None:
        for row in rows:
            self.execute(sql, row)

    @abstractmethod
    def commit(self) -> None: ...

    @abstractmethod
    def rollback(self) -> None: ...


class _SqlAlchemySession(Session):
    def __init__(self, connection: sa.Connection, dialect: Dialect) -> None:
        self._conn = connection
        self.dialect = dialect

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> int:
        result = self._conn.execute(sa.text(sql), dict(params)) if params else self._as_is(sql)
        return result.rowcount

    def query(self, sql: str, params: Mapping[str, Any] | None = None) -> list[tuple[Any, ...]]:
        result = self._conn.execute(sa.text(sql), dict(params)) if params else self._as_is(sql)
        return [tuple(row) for row in result.fetchall()]

    def fetch_rows(self, sql: str) -> list[Any]:
        """The driver's cursor: 1,000,000 staged log entries came back in 0.75 s as psycopg2's tuples,
        several times that through SQLAlchemy's rows made into tuples again."""
        cursor = self._conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        try:
            cursor.execute(sql)
            return list(cursor.fetchall())
        finally:
            cursor.close()

    def _as_is(self, sql: str) -> sa.CursorResult[Any]:
        """``sql`` sent without parameters. SQLAlchemy still hands drivers of the ``format`` and
        ``pyformat`` styles (psycopg2, mysqlclient) an empty parameter set, so they read ``%`` as a
        placeholder: a ``LIKE 'a%'`` failed on PostgreSQL. Doubled, it reaches the server as written."""
        if self._conn.dialect.paramstyle in ("format", "pyformat"):
            sql = sql.replace("%", "%%")
        return self._conn.exec_driver_sql(sql)

    def execute_many(self, sql: str, rows: Sequence[Mapping[str, Any]]) -> None:
        if rows:
            self._conn.execute(sa.text(sql), [dict(r) for r in rows])

    def commit(self) -> None:
        self._conn.commit()

    def rollback(self) -> None:
        self._conn.rollback()


class _JdbcSession(Session):
    def __init__(self, connection: Any, dialect: Dialect) -> None:
        self._conn = connection
        self.dialect = dialect

    @staticmethod
    def _positional(sql: str, params: Mapping[str, Any] | None) -> tuple[str, list[Any]]:
        if not params:
            return sql, []
        names: list[str] = []

        def to_qmark(match: re.Match[str]) -> str:
            names.append(match.group(1))
            return "?"

        return _NAMED_PARAM.sub(to_qmark, sql), [params[n] for n in names]

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> int:
        text, args = self._positional(sql, params)
        cursor = self._conn.cursor()
        try:
            cursor.execute(text, args) if args else cursor.execute(text)
            return cursor.rowcount
        finally:
            cursor.close()

    def query(self, sql: str, params: Mapping[str, Any] | None = None) -> list[tuple[Any, ...]]:
        text, args = self._positional(sql, params)
        cursor = self._conn.cursor()
        try:
            cursor.execute(text, args) if args else cursor.execute(text)
            return [tuple(row) for row in cursor.fetchall()]
        finally:
            cursor.close()

    def commit(self) -> None:
        self._conn.commit()

    def rollback(self) -> None:
        self._conn.rollback()


class Database:
    """A database reached through one Airflow connection.

    :param conn: the connection (with its secrets).
    """

    def __init__(self, conn: ConnectionInfo, *, role: str | None = None) -> None:
        self.conn = conn
        #: What this database is to the run ("source", "destination", "subscriber x", ...), for messages.
        self.role = role
        self.dialect = conn.dialect
        self._engine: sa.Engine | None = None
        self._lock = threading.Lock()

    @classmethod
    def for_conn_id(cls, conn_id: str) -> Database:
        """The database of Airflow connection ``conn_id``, shared within this process."""
        with _REGISTRY_LOCK:
            database = _REGISTRY.get(conn_id)
            if database is None:
                database = _REGISTRY[conn_id] = cls(get_connection(conn_id))
            return database

    def describe_target(self) -> str:
        """Where this database is, for messages (never with credentials)."""
        if self.dialect.file_database and self.conn.conn_type != "jdbc":
            where = self.conn.database_path
        elif self.conn.conn_type == "jdbc":
            where = str(self.conn.host).split("?")[0]
        else:
            where = f"{self.conn.host or '127.0.0.1'}:{self.conn.port or ''}/{self.conn.schema or ''}"
        return f"connection '{self.conn.conn_id}' ({self.dialect.name} at {where})"

    def describe_role(self) -> str:
        """This database for messages about it: its role, its connection and where it is."""
        return f"the {self.role}, {self.describe_target()}" if self.role else self.describe_target()

    def answers(self) -> bool:
        """Whether a session on this database opens now (after a lost connection: is the server back?)."""
        try:
            with self.session():
                return True
        except Exception:
            return False

    def engine(self) -> sa.Engine:
        with self._lock:
            if self._engine is None:
                self._engine = self._create_engine()
            return self._engine

    def _create_engine(self) -> sa.Engine:
        limits = timeouts.current()
        setup = self.dialect.session_setup_sql(limits.lock_seconds, limits.statement_seconds)
        return create_engine(self.conn.sqlalchemy_url(), setup)

    @contextmanager
    def session(self, *, read_only: bool = False, beside_writer: bool = False) -> Iterator[Session]:
        """One transaction: committed when the block ends, rolled back if it raises.

        :param read_only: a read-only transaction (the dialect's ``read_only_begin``), for everything
            that evaluates a snapshot's query: whatever the query calls, it cannot write.
        :param beside_writer: a read that must not hold up a writer of this process meanwhile (a
            refresh's staged entries, read while its batches apply): on SQLite a deferred transaction,
            which takes no write lock (the others read beside writers anyway). Never for a read that
            must wait for open writers (a copy's high-water mark).
        """
        if self.conn.conn_type == "jdbc":
            with self._jdbc_session(read_only) as session:
                yield session
            return
        try:
            connection = self.engine().connect()
        except (OperationalError, DBAPIError) as err:
            reason = _first_line(err.orig or err)
            raise DatabaseUnreachable(f"cannot connect to {self.describe_role()}: {reason}", tls_hint(reason)) from None
        if beside_writer:  # read by the engine's "begin" listener (SQLite)
            connection.execution_options(**{BESIDE_WRITER: True})
        try:
            with connection.begin():
                session = _SqlAlchemySession(connection, self.dialect)
                with _read_only(session, self.dialect, read_only):
                    yield session
        except DBAPIError as err:
            waited = timeouts.lock_timeout(
                self.dialect, err.orig, err.statement, self.describe_target(), timeouts.current().lock_seconds
            )
            if waited is not None:
                raise waited from None
            if is_connection_lost(err):  # one line naming the database, not the SQL and its parameters
                raise connection_lost(self.describe_role(), err) from None
            raise
        finally:
            connection.close()

    @contextmanager
    def _jdbc_session(self, read_only: bool) -> Iterator[Session]:
        load_airflow_configuration()  # Airflow loads here for a command line: its logging goes to stderr
        from airflow.providers.jdbc.hooks.jdbc import JdbcHook
        from airflow.sdk import Connection as SdkConnection

        hook = JdbcHook(
            connection=SdkConnection(
                conn_id=self.conn.conn_id,
                conn_type="jdbc",
                host=self.conn.host,
                login=self.conn.login,
                password=self.conn.password,
            ),
            # JPype's JVM has a frozen classpath: hand it every driver jar at once.
            driver_path=",".join(str(j) for j in jdbc_jars()),
            driver_class=self.conn.jdbc_driver(),
        )
        try:
            raw = hook.get_conn()
        except Exception as err:
            raise DatabaseUnreachable(
                f"cannot connect to {self.describe_target()}: {_first_line(err)}",
                "check the JDBC URL, the driver class and that its jar is installed",
            ) from None
        hook.set_autocommit(raw, False)
        session = _JdbcSession(raw, self.dialect)
        limits = timeouts.current()
        for statement in self.dialect.session_setup_sql(limits.lock_seconds, limits.statement_seconds):
            session.execute(statement)
        try:
            with _read_only(session, self.dialect, read_only):
                yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            raw.close()

    def describe(self, session: Session, ref: TableRef) -> TableInfo:
        """Resolve and describe the table ``ref`` names; a three-part name's qualifier must be this
        database's name or the connection's ``qualifier`` extra.

        :raises InvalidName: the qualifier names another database.
        :raises TableNotFound: no such table.
        """
        if ref.qualifier is not None:
            wanted = self.dialect.fold(ref.qualifier)
            names = {self.dialect.database_name(session), str(self.conn.extra.get("qualifier") or "")}
            if not any(n and (n.lower() == wanted.lower()) for n in names):
                raise InvalidName(
                    f"{ref} names database {wanted!r}, but connection '{self.conn.conn_id}' is to "
                    f"{self.dialect.database_name(session)!r}",
                    'drop the qualifier, or set the connection\'s extra {"qualifier": "' + wanted + '"}',
                )
        return self.dialect.describe(session, ref.schema, ref.table, ref.conn_id)

    def dispose(self) -> None:
        with self._lock:
            if self._engine is not None:
                self._engine.dispose()
                self._engine = None


def create_engine(url: str | sa.URL, session_sql: Sequence[str] = ()) -> sa.Engine:
    """A SQLAlchemy engine with snaprepl's settings for the database kind.

    :param session_sql: statements every new connection runs first (the dialect's timeouts).
    """
    url = sa.make_url(url)
    if url.get_backend_name() != "sqlite":
        engine = sa.create_engine(url, pool_pre_ping=True, connect_args={"connect_timeout": 10})
        _on_connect(engine, session_sql)
        return engine
    engine = sa.create_engine(url, connect_args={"timeout": 60})

    # pysqlite would commit before DDL and start transactions lazily. Take control: DDL becomes
    # transactional, and a writer takes the write lock at BEGIN, so concurrent writers queue instead
    # of failing with "database is locked" when upgrading a read lock.
    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None

    @event.listens_for(engine, "begin")
    def _begin(connection: sa.Connection) -> None:
        beside = connection.get_execution_options().get(BESIDE_WRITER, False)
        connection.exec_driver_sql("BEGIN" if beside else "BEGIN IMMEDIATE")

    _on_connect(engine, session_sql)
    return engine


def _on_connect(engine: sa.Engine, statements: Sequence[str]) -> None:
    if not statements:
        return

    @event.listens_for(engine, "connect")
    def _setup(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        try:
            for statement in statements:
                cursor.execute(statement)
        finally:
            cursor.close()
        dbapi_connection.commit()  # PostgreSQL's SETs would go with the pool's first rollback otherwise


_REGISTRY: dict[str, Database] = {}
_REGISTRY_LOCK = threading.Lock()


def forget_databases() -> None:
    """Dispose every shared database (tests change connections between sessions)."""
    with _REGISTRY_LOCK:
        for database in _REGISTRY.values():
            database.dispose()
        _REGISTRY.clear()


@contextmanager
def _read_only(session: Session, dialect: Dialect, read_only: bool) -> Iterator[None]:
    """Make the session's just-begun transaction read-only, and undo connection-level settings after."""
    if not read_only:
        yield
        return
    for statement in dialect.read_only_begin:
        session.execute(statement)
    try:
        yield
    finally:
        for statement in dialect.read_only_end:
            session.execute(statement)


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__

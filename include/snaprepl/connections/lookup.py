"""Airflow connections: look them up, and turn them into what drivers need.

A conn_id is any Airflow connection: ``AIRFLOW_CONN_<ID>`` environment variables, the metadata
database, or a secrets backend. Connection types: ``postgres``, ``mysql`` (MariaDB), ``sqlite``,
and ``jdbc`` (the JDBC URL in ``host``) for the rest.

Secrets stay in :class:`ConnectionInfo` (its ``repr`` hides them). They reach Spark jobs through a
file only the job can read (:func:`write_connections_file`), never on a command line.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from sqlalchemy.engine import URL

from snaprepl.common import timeouts
from snaprepl.common.airflow_config import airflow_loaded, airflow_option, load_airflow_configuration
from snaprepl.common.table_names import validate_conn_id
from snaprepl.connections.uris import parse_connection_value
from snaprepl.dialects import Dialect, dialect_for_conn_type, dialect_for_jdbc_url
from snaprepl.errors import ConnectionNotFound, UnsupportedConnection

#: Environment variable naming the connections file of a Spark job.
CONNECTIONS_FILE_ENV = "SNAPREPL_CONNECTIONS_FILE"


@dataclass(frozen=True)
class ConnectionInfo:
    """The fields of an Airflow connection snaprepl uses. ``password`` and ``extra`` never print."""

    conn_id: str
    conn_type: str
    host: str | None = None
    port: int | None = None
    login: str | None = None
    password: str | None = field(default=None, repr=False)
    schema: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_airflow(cls, conn: Any) -> ConnectionInfo:
        try:
            extra = conn.extra_dejson or {}
        except Exception:
            extra = {}
        return cls(
            conn_id=conn.conn_id,
            conn_type=(conn.conn_type or "").lower(),
            host=conn.host or None,
            port=int(conn.port) if conn.port else None,
            login=conn.login or None,
            password=conn.password or None,
            schema=conn.schema or None,
            extra=dict(extra),
        )

    @classmethod
    def from_airflow_fields(cls, conn_id: str, fields: Mapping[str, Any]) -> ConnectionInfo:
        """From the fields of :func:`~snaprepl.connections.uris.parse_connection_value`."""
        return cls.from_airflow(SimpleNamespace(conn_id=conn_id, **fields))

    @property
    def dialect(self) -> Dialect:
        """The dialect of this connection, from its type or (for ``jdbc``) its URL."""
        if self.conn_type == "jdbc":
            if not self.host:
                raise UnsupportedConnection(
                    f"connection '{self.conn_id}' is of type jdbc but has no JDBC URL",
                    "put the JDBC URL (jdbc:...) in the connection's host field",
                )
            return dialect_for_jdbc_url(self.host)
        dialect = dialect_for_conn_type(self.conn_type)
        if dialect is None:
            raise UnsupportedConnection(
                f"connection '{self.conn_id}' has type {self.conn_type!r}, which snaprepl cannot use",
                "use a postgres, mysql, sqlite or jdbc connection",
            )
        return dialect

    @property
    def database_path(self) -> str:
        """The file of a file-based database (SQLite): Airflow keeps it in host or, from URIs, in schema."""
        path = self.host or self.schema
        if not path:
            raise UnsupportedConnection(
                f"connection '{self.conn_id}' names no database file",
                "set its host to the file's path, e.g. AIRFLOW_CONN_X='sqlite:////abs/path.db'",
            )
        return path

    def sqlalchemy_url(self) -> URL:
        """A SQLAlchemy URL for the Python side (CLI, driver-side SQL of Spark jobs)."""
        if self.conn_type == "jdbc":
            raise UnsupportedConnection(f"connection '{self.conn_id}' is a JDBC connection")
        return self.dialect.sqlalchemy_url(self)

    def jdbc_url(self) -> str:
        """A JDBC URL without credentials (those go in :meth:`jdbc_properties`)."""
        return str(self.host) if self.conn_type == "jdbc" else self.dialect.jdbc_url(self)

    def jdbc_driver(self) -> str:
        return str(self.extra.get("driver_class") or self.dialect.jdbc_driver)

    def jdbc_properties(self) -> dict[str, str]:
        props = {"driver": self.jdbc_driver(), **self.dialect.jdbc_properties(self)}
        limits = timeouts.current()
        props = self.dialect.jdbc_timeouts(props, limits.lock_seconds, limits.statement_seconds)
        if self.login:
            props["user"] = self.login
        if self.password:
            props["password"] = self.password
        return props

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["extra"] = dict(self.extra)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ConnectionInfo:
        return cls(**{**data, "extra": dict(data.get("extra") or {})})


def _in_execution_context() -> bool:
    """Whether this process runs under an Airflow supervisor (task or DAG parsing)."""
    runner = sys.modules.get("airflow.sdk.execution_time.task_runner")
    return getattr(runner, "SUPERVISOR_COMMS", None) is not None


def get_connection(conn_id: str) -> ConnectionInfo:
    """Look ``conn_id`` up wherever Airflow looks: environment, secrets backends, metadata database.

    Spark jobs get their connections from a file written by the caller instead
    (:data:`CONNECTIONS_FILE_ENV`), so they never import Airflow.

    :raises ConnectionNotFound: naming the id and how to define it.
    """
    validate_conn_id(conn_id)
    preset = _connections_from_file()
    if preset is not None:
        if conn_id in preset:
            return preset[conn_id]
        raise ConnectionNotFound(f"connection '{conn_id}' was not handed to this job")
    plain = _from_environment(conn_id)
    if plain is not None:
        return plain
    try:
        if _in_execution_context():
            from airflow.sdk import Connection as SdkConnection

            conn = SdkConnection.get(conn_id)
        else:
            load_airflow_configuration()  # first, so the hooks of a command line run
            from airflow.models.connection import Connection

            conn = Connection.get_connection_from_secrets(conn_id)
    except Exception as err:
        if type(err).__name__ not in {"AirflowNotFoundException", "AirflowRuntimeError"}:
            raise
        raise ConnectionNotFound(
            f"connection '{conn_id}' is not defined",
            f"add it with `airflow connections add {conn_id} --conn-uri ...` "
            f"or the environment variable AIRFLOW_CONN_{conn_id.upper().replace('-', '_').replace('.', '_')}",
        ) from None
    return ConnectionInfo.from_airflow(conn)


def _from_environment(conn_id: str) -> ConnectionInfo | None:
    """``AIRFLOW_CONN_<ID>`` read without importing Airflow, when Airflow would answer from it: it is
    defined, no secrets backend comes first, and Airflow is not loaded anyway (tasks, DAG parsing)."""
    value = os.environ.get(f"AIRFLOW_CONN_{conn_id.upper()}")
    if not value or airflow_loaded() or airflow_option("secrets", "backend"):
        return None
    fields = parse_connection_value(value)
    return None if fields is None else ConnectionInfo.from_airflow_fields(conn_id, fields)


#: A Spark job's connections, read once from its file, which is then deleted (snaprepl.spark.lifeline).
TAKEN_CONNECTIONS: dict[str, ConnectionInfo] | None = None


#: The connections handed to a job that runs in this process (Spark Connect mode), in memory only.
_HANDED: ContextVar[dict[str, ConnectionInfo] | None] = ContextVar("snaprepl_handed_connections", default=None)


@contextlib.contextmanager
def handed(connections: Iterable[ConnectionInfo]) -> Iterator[None]:
    """While inside, :func:`get_connection` sees ``connections`` only, as a submitted job sees its
    connections file: a job run in the caller's process resolves what its caller resolved."""
    token = _HANDED.set({c.conn_id: c for c in connections})
    try:
        yield
    finally:
        _HANDED.reset(token)


def _connections_from_file() -> dict[str, ConnectionInfo] | None:
    if (in_memory := _HANDED.get()) is not None:
        return in_memory
    if TAKEN_CONNECTIONS is not None:
        return TAKEN_CONNECTIONS
    path = os.environ.get(CONNECTIONS_FILE_ENV)
    if not path:
        return None
    data = json.loads(Path(path).read_text())
    return {conn_id: ConnectionInfo.from_dict(item) for conn_id, item in data.items()}


def write_connections_file(connections: Iterable[ConnectionInfo], directory: str | None = None) -> Path:
    """Write connections (with secrets) to a new file readable only by this user; return its path.

    The caller deletes the file when the job ends.
    """
    fd, name = tempfile.mkstemp(prefix="snaprepl-conns-", suffix=".json", dir=directory)
    try:
        os.fchmod(fd, stat.S_IRUSR | stat.S_IWUSR)
        with os.fdopen(fd, "w") as handle:
            json.dump({c.conn_id: c.to_dict() for c in connections}, handle)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return Path(name)

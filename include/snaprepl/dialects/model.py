"""The values dialects hand around: columns, tables, log object names, DDL steps, fixed column names,
and the session and connection shapes a dialect reads."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from snaprepl.common.table_names import ResolvedTable

if TYPE_CHECKING:
    from sqlalchemy.engine import URL


class ConnectionFields(Protocol):
    """The connection fields a dialect reads, read-only (see :class:`snaprepl.connections.lookup.ConnectionInfo`)."""

    @property
    def conn_id(self) -> str: ...

    @property
    def extra(self) -> Mapping[str, Any]: ...

    @property
    def host(self) -> str | None: ...

    @property
    def port(self) -> int | None: ...

    @property
    def login(self) -> str | None: ...

    @property
    def password(self) -> str | None: ...

    @property
    def schema(self) -> str | None: ...

    @property
    def database_path(self) -> str: ...


class BulkConnection(ConnectionFields, Protocol):
    """The connection a bulk load reads (see :meth:`snaprepl.dialects.base.Dialect.bulk_writer`)."""

    @property
    def conn_type(self) -> str: ...

    def sqlalchemy_url(self) -> URL: ...


@dataclass(frozen=True)
class Chunks:
    """A bulk pipe's commits every ``rows`` rows of a key range (each its own transaction, not waiting
    for the disk: the caller flushes them). ``check``, only where the ranges run in this process, is
    called with a chunk's rows right before it commits: raising leaves it uncommitted, and fails the range."""

    rows: int
    check: Callable[[int], None] | None = None


class BulkPipe(Protocol):
    """Streams a query's result from one database into a table of another, in parallel key ranges
    (see :meth:`snaprepl.dialects.base.Dialect.bulk_pipe`)."""

    #: Whether the pipe commits a range in :class:`Chunks` when asked (else it refuses).
    chunked: ClassVar[bool]
    #: Whether the pipe shows the rows it writes to a ``seen`` function when asked (else it refuses).
    shows_rows: ClassVar[bool]

    def refusal(self, source_columns: Sequence[Column], dest_columns: Sequence[Column]) -> str | None:
        """Why the pipe cannot load ``dest_columns`` from ``source_columns`` (matched by position), or None."""

    def __call__(
        self,
        spark: Any,
        query: str,
        source_columns: Sequence[Column],
        ranges: Sequence[str | None],
        target: tuple[str, str, Sequence[Column]],
        chunks: Chunks | None = None,
        seen: Callable[[list[Any]], None] | None = None,
    ) -> int:
        """Copy the rows of ``query`` in each key range into ``target`` (schema, table, columns), each
        range in one transaction or (when :attr:`chunked`) in ``chunks``; with ``spark`` None, the ranges
        run in this process, and (when :attr:`shows_rows`) each block of rows written (tuples in the
        target's column order) is given to ``seen``."""

    def failure(self, err: BaseException) -> str | None:
        """The database's own message behind a failed copy, if ``err`` carries one."""


class SqlSession(Protocol):
    """What a dialect needs from an open database session (see :mod:`snaprepl.database.sessions`)."""

    def query(self, sql: str, params: Mapping[str, Any] | None = None) -> list[tuple[Any, ...]]: ...

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> int: ...


@dataclass(frozen=True)
class Column:
    """A column as its database declares it.

    :param name: exact column name.
    :param type_sql: declared type in the table's own dialect, including a non-default collation,
        so a log's key columns compare keys exactly as the source does.
    :param nullable: whether NULLs are allowed.
    :param pk_position: 1-based position in the primary key, or ``None``.
    """

    name: str
    type_sql: str
    nullable: bool = True
    pk_position: int | None = None


@dataclass(frozen=True)
class TableInfo:
    """A table's resolved name and columns."""

    table: ResolvedTable
    columns: tuple[Column, ...]

    @property
    def primary_key(self) -> tuple[Column, ...]:
        keyed = [c for c in self.columns if c.pk_position is not None]
        return tuple(sorted(keyed, key=lambda c: c.pk_position or 0))

    def column(self, name: str) -> Column:
        for col in self.columns:
            if col.name == name:
                return col
        raise KeyError(name)


@dataclass(frozen=True)
class LogObjects:
    """Names of the database objects of one snapshot log, exactly as created.

    They are recorded in the catalog so that a log is dropped by the names it was made with, even
    where a dialect had to shorten them.
    """

    rlog: str
    key_columns: tuple[str, ...]
    triggers: tuple[str, ...]
    functions: tuple[str, ...] = ()
    sequences: tuple[str, ...] = ()
    #: Auxiliary tables dropped with the log (Oracle's DLOG_<name> buffer of bi-directional logs).
    tables: tuple[str, ...] = ()

    def to_json(self) -> str:
        return json.dumps(
            {
                "rlog": self.rlog,
                "key_columns": list(self.key_columns),
                "triggers": list(self.triggers),
                "functions": list(self.functions),
                "sequences": list(self.sequences),
                "tables": list(self.tables),
            }
        )

    @classmethod
    def from_json(cls, text: str) -> LogObjects:
        data = json.loads(text)
        return cls(
            rlog=data["rlog"],
            key_columns=tuple(data["key_columns"]),
            triggers=tuple(data["triggers"]),
            functions=tuple(data.get("functions", ())),
            sequences=tuple(data.get("sequences", ())),
            tables=tuple(data.get("tables", ())),
        )


@dataclass(frozen=True)
class DdlStep:
    """One DDL statement and the statement that takes it back (for dialects without transactional DDL)."""

    sql: str
    undo: str | None = None


@dataclass(frozen=True)
class LogColumns:
    """Fixed column names of every snapshot log."""

    snaptime: str = "SNAPTIME"
    dmltype: str = "DMLTYPE"
    rowguid: str = "RLOG_ROWGUID"
    key_prefix: str = "RLOG_"


LOG_COLUMNS = LogColumns()


@dataclass(frozen=True)
class BidirColumns:
    """Columns of bi-directional replication: the version column on replicated tables, and the log's
    extra columns."""

    rowguid: str = "ROWGUID"
    old_rowguid: str = "OLD_ROWGUID"
    origin: str = "ORIGIN"
    sync_id: str = "SYNC_ID"


BIDIR = BidirColumns()

#: ROWGUID a replicated delete writes first, so the delete trigger knows not to log it.
DELETE_MARK = "snaprepl:delete"

"""Database errors as people read them: a lost connection named by its role and place, and any
driver error as one line (without the SQL and bound parameters SQLAlchemy appends, which carry row
keys).

A connection is *lost* when its server went away or cut it during a run: PostgreSQL's "server closed
the connection unexpectedly" or "terminating connection due to administrator command", MariaDB's
2006/2013 ("Lost connection to MySQL server during query"), a JDBC driver's ``EOFException``,
``SocketException: Broken pipe`` or SQLSTATE class 08 behind a Spark job, SQLAlchemy's own
"connection invalidated". Such a failure is transient: the same run later usually succeeds.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from sqlalchemy.exc import DBAPIError, StatementError

from snaprepl.errors import ConnectionLost, SnapreplError

#: MariaDB/MySQL client errors of a connection that went away (CR_SERVER_GONE_ERROR, CR_SERVER_LOST,
#: CR_CONN_HOST_ERROR, CR_SERVER_LOST_EXTENDED, ER_CONNECTION_KILLED, ER_CLIENT_INTERACTION_TIMEOUT).
_MYSQL_LOST = {2006, 2013, 2003, 2055, 1927, 4031}
_LOST_TEXT = re.compile(
    r"server closed the connection unexpectedly|terminating connection due to administrator command"
    r"|connection already closed|could not receive data from server|could not send data to server"
    r"|SSL SYSCALL error: EOF detected|Lost connection to (?:MySQL|MariaDB) server|server has gone away"
    r"|Connection was killed|\bEOFException\b|SocketException|Broken pipe|Connection reset"
    r"|An I/O error occurred while sending to the backend|This connection has been closed"
    r"|Socket error|Connection refused|connection to server at .* failed|Can't connect to (?:MySQL|MariaDB) server",
    re.IGNORECASE,
)
_MAX_REASON = 300
#: What a Java stack trace (or a pipe's error) holds when a read failed, or a write.
_READING = ("JDBCRDD", "PgResultSet", "ResultSet.next", "copy_to", "COPY TO", "read side")
_WRITING = ("savePartition", "executeBatch", "copy_from", "COPY FROM", "write side")


def _chain(err: BaseException) -> list[BaseException]:
    """``err``, its causes and contexts, and the driver errors SQLAlchemy wraps (each once)."""
    found: list[BaseException] = []
    todo: list[BaseException | None] = [err]
    while todo:
        item = todo.pop()
        if item is None or any(item is f for f in found) or len(found) > 20:
            continue
        found.append(item)
        orig = getattr(item, "orig", None)
        todo += [item.__cause__, item.__context__, orig if isinstance(orig, BaseException) else None]
    return found


def _java_lost(err: BaseException) -> bool:
    """A Java exception behind py4j whose chain holds an I/O failure or SQLSTATE class 08."""
    java: Any = getattr(err, "java_exception", None)
    try:
        while java is not None:
            name = str(java.getClass().getName())
            state = str(java.getSQLState() or "") if hasattr(java, "getSQLState") else ""
            if name in {"java.io.EOFException", "java.net.SocketException"} or state.startswith("08"):
                return True
            cause = java.getCause()
            java = None if cause is None or cause.equals(java) else cause
    except Exception:  # the JVM may be gone already: the text decides
        return False
    return False


def is_connection_lost(err: BaseException) -> bool:
    """Whether ``err`` (or what caused it) is a database connection that was lost or refused mid-run."""
    for item in _chain(err):
        if isinstance(item, ConnectionLost):
            return True
        if isinstance(item, DBAPIError) and item.connection_invalidated:
            return True
        args = getattr(item, "args", ())
        if args and isinstance(args[0], int) and args[0] in _MYSQL_LOST and type(item).__name__ == "OperationalError":
            return True
        if _java_lost(item) or _LOST_TEXT.search(str(item).split("\n[SQL:")[0]):
            return True
    return False


def is_unnamed_loss(err: BaseException, generic: type[SnapreplError]) -> bool:
    """Whether ``err``, a run's failure, is a lost connection that does not say to which server: one in
    Spark or a pipe (a driver's or Java's error, or the run's ``generic`` error wrapping one).
    snaprepl's sessions name their database already (:class:`ConnectionLost`)."""
    if not isinstance(err, Exception) or (isinstance(err, SnapreplError) and type(err) is not generic):
        return False
    return is_connection_lost(err)


_SQLALCHEMY_TAIL = re.compile(r"\n?\[SQL: .*|\n?\(Background on this error at: [^)]*\)", re.DOTALL)


def one_line(err: BaseException | str) -> str:
    """``err`` as one line: a driver's error without the SQL, parameters and links SQLAlchemy adds
    (also where another error quotes it), its lines joined."""
    if isinstance(err, StatementError) and err.orig is not None:
        return f"{type(err.orig).__name__}: {_first(str(err.orig))}"
    text = _SQLALCHEMY_TAIL.sub("", str(err))
    joined = " ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    return joined or (err if isinstance(err, str) else type(err).__name__)


def _java_root(err: BaseException) -> str | None:
    """``Name: message`` of the deepest Java cause behind py4j, if there is one."""
    java: Any = getattr(err, "java_exception", None) or getattr(err, "_origin", None)
    if java is None:
        return None
    try:
        while java.getCause() is not None and not java.getCause().equals(java):
            java = java.getCause()
        return f"{java.getClass().getSimpleName()}: {_first(str(java.getMessage() or ''))}".rstrip(": ")
    except Exception:  # the JVM may be gone already
        return None


def reason(err: BaseException) -> str:
    """What the driver said about a lost connection, one line: the deepest driver error's message."""
    chain = _chain(err)
    for item in reversed(chain):
        if isinstance(item, ConnectionLost):
            return item.message
    for item in chain:
        java = _java_root(item)
        if java:
            return java
    for item in chain:
        orig = getattr(item, "orig", None)
        if isinstance(orig, BaseException) and str(orig).strip():
            return f"{type(orig).__name__}: {_first(str(orig))}"
    return one_line(err)


def _first(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    line = lines[0] if lines else ""
    return line if len(line) <= _MAX_REASON else line[: _MAX_REASON - 3] + "..."


def connection_lost(where: str, err: BaseException) -> ConnectionLost:
    """The error of a run whose connection to ``where`` (e.g. "the source, connection 'x' (postgres at
    127.0.0.1:5432/db)") was lost."""
    return ConnectionLost(
        f"lost the connection to {where} during the run: {reason(err)}",
        "the server stopped or cut the connection; what the run had not committed was rolled back: run it "
        "again once the server is back (Airflow retries the task)",
    )


class End(Protocol):
    """One end of a run's copy (a :class:`snaprepl.database.sessions.Database`): can it still be reached, and how
    messages name it."""

    def answers(self) -> bool: ...

    def describe_role(self) -> str: ...


def lost_between(err: BaseException, reader: End, writer: End) -> ConnectionLost:
    """The error of a run that lost a connection in Spark or a pipe, which do not say to which server:
    the end whose server no longer answers; else the end the failed operation talked to (a read:
    ``reader``; a write: ``writer``); else both."""
    for end in (reader, writer):
        if not end.answers():
            return connection_lost(end.describe_role(), err)
    text = str(err)
    if any(mark in text for mark in _READING):
        return connection_lost(reader.describe_role(), err)
    if any(mark in text for mark in _WRITING):
        return connection_lost(writer.describe_role(), err)
    return connection_lost(f"{reader.describe_role()} or {writer.describe_role()}", err)

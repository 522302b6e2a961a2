"""Driver errors as stored and shown: one line without SQL and bound parameters; lost connections told apart."""

from __future__ import annotations

import psycopg2
import sqlalchemy.exc as sa_exc

from snaprepl.db_errors import connection_lost, is_connection_lost, one_line
from snaprepl.errors import ConnectionLost, LockTimeout, SnapreplError
from snaprepl.run_history import clean_error


def _wrapped(orig: Exception) -> sa_exc.DBAPIError:
    """What SQLAlchemy raises for ``orig``, with the statement and the row keys it was bound to."""
    return sa_exc.OperationalError.instance(
        "DELETE FROM t WHERE id IN (%(k1)s, %(k2)s)", {"k1": "secret-key-1", "k2": "secret-key-2"}, orig, Exception
    )


def test_a_driver_error_is_stored_as_one_line_without_its_sql_and_parameters() -> None:
    err = _wrapped(psycopg2.OperationalError("server closed the connection unexpectedly\n\tThis probably means..."))
    assert "secret-key-1" in str(err) and "[SQL:" in str(err), "what SQLAlchemy says"
    assert one_line(err) == "OperationalError: server closed the connection unexpectedly"
    stored = clean_error(SnapreplError(f"refresh failed: {err}"))
    assert "\n" not in stored and "secret-key" not in stored and "[SQL:" not in stored, stored


def test_lost_connections_are_told_apart_from_other_errors() -> None:
    assert is_connection_lost(_wrapped(psycopg2.OperationalError("server closed the connection unexpectedly")))
    mysql_lost = type("OperationalError", (Exception,), {})(2013, "Lost connection to server during query")
    assert is_connection_lost(mysql_lost)
    assert is_connection_lost(RuntimeError("Job aborted: java.io.EOFException\n\tat org.postgresql.core.PGStream"))
    assert is_connection_lost(RuntimeError("java.net.SocketException: Broken pipe (Write failed)"))
    assert not is_connection_lost(_wrapped(psycopg2.OperationalError("division by zero")))
    assert not is_connection_lost(ValueError('invalid input syntax for type integer: "x"'))


def test_a_lost_connection_is_one_transient_line_naming_where() -> None:
    lost = connection_lost("the source, connection 'src' (postgres at db1:5432/shop)", RuntimeError("EOFException: "))
    assert isinstance(lost, ConnectionLost) and lost.retryable and LockTimeout.retryable
    assert not SnapreplError.retryable
    assert str(lost).startswith("lost the connection to the source, connection 'src' (postgres at db1:5432/shop)")
    assert "\n" not in str(lost) and "again" in (lost.hint or "")

"""Driver errors as stored and shown: one line without SQL and bound parameters; lost connections told apart."""

from __future__ import annotations

import psycopg2
import sqlalchemy.exc as sa_exc

from snaprepl.catalog.run_history import clean_error
from snaprepl.database.errors import connection_lost, is_connection_lost, is_unnamed_loss, lost_between, one_line
from snaprepl.errors import ConnectionLost, LockTimeout, ReplicationError, SnapreplError


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


class _End:
    """One end of a copy as :func:`lost_between` sees it: whether its server answers, and its name."""

    def __init__(self, role: str, up: bool) -> None:
        self.role, self.up = role, up

    def answers(self) -> bool:
        return self.up

    def describe_role(self) -> str:
        return f"the {self.role}"


def test_a_loss_in_spark_names_the_end_that_stopped_answering_else_the_operation_s_end() -> None:
    spark = RuntimeError(
        "Job aborted: at org.apache.spark.sql.execution.datasources.jdbc.JDBCRDD.compute\nEOFException"
    )
    pub, sub = _End("publisher p", True), _End("subscriber s", True)
    assert str(lost_between(spark, pub, _End("subscriber s", False))).startswith(
        "lost the connection to the subscriber s"
    )
    assert str(lost_between(spark, sub, pub)).startswith("lost the connection to the subscriber s during")
    write = RuntimeError("at org.apache.spark.sql.execution.datasources.jdbc.JdbcUtils.savePartition: Broken pipe")
    assert str(lost_between(write, pub, sub)).startswith("lost the connection to the subscriber s during")
    assert "the publisher p or the subscriber s" in str(lost_between(RuntimeError("Broken pipe"), pub, sub))
    assert lost_between(spark, pub, sub).retryable and "\n" not in str(lost_between(spark, pub, sub))


def test_only_losses_that_name_no_database_are_named_again() -> None:
    assert is_unnamed_loss(RuntimeError("java.io.EOFException"), ReplicationError)
    assert is_unnamed_loss(ReplicationError("the initial load failed while copying: Broken pipe"), ReplicationError)
    assert not is_unnamed_loss(connection_lost("the subscriber s", RuntimeError("EOF")), ReplicationError)
    assert not is_unnamed_loss(RuntimeError("division by zero"), ReplicationError)
    assert not is_unnamed_loss(KeyboardInterrupt(), ReplicationError)

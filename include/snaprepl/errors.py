"""snaprepl's own exception types.

Every error says what is wrong and what to do about it; the CLI prints ``str(error)`` as one line.
Its class says whether doing the same again later can succeed (``retryable``): Airflow tasks retry
those and fail the others at once (see :mod:`snaprepl.airflow.operators`).
"""

from __future__ import annotations


class SnapreplError(Exception):
    """Base class of every error snaprepl raises on purpose.

    :param message: what is wrong.
    :param hint: what the user can do about it (appended after a colon-free separator).

    ``retryable``: whether the same work can succeed later unchanged (a transient failure: a lock,
    a lease, a database or server out of reach). Subclasses say so; an instance may override it
    (a job's unexpected failure is reported as retryable, whatever its class).
    """

    retryable: bool = False

    def __init__(self, message: str, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(message if not hint else f"{message}; {hint}")


class StatementSyntaxError(SnapreplError):
    """A statement does not parse; the message carries line and column."""


class InvalidName(SnapreplError):
    """A table, column or connection name is malformed or carries SQL."""


class InvalidCondition(SnapreplError):
    """A WHERE condition or query is not a single well-formed expression of the source dialect."""


class ConnectionNotFound(SnapreplError):
    """An Airflow connection id is not defined anywhere Airflow looks."""


class UnsupportedConnection(SnapreplError):
    """A connection's type (or JDBC URL) is not one snaprepl can talk to."""


class DatabaseUnreachable(SnapreplError):
    """A database refused or dropped the connection.

    Retryable: the same work later usually succeeds, so Airflow tasks retry it."""

    retryable = True


class ConnectionLost(DatabaseUnreachable):
    """A connection (to a source, destination, subscriber, publisher or the catalog) was lost in the
    middle of a run: the server died or cut it. Retryable, as :class:`DatabaseUnreachable`."""


class TableNotFound(SnapreplError):
    """A source or destination table does not exist."""


class NoPrimaryKey(SnapreplError):
    """A table has no primary key, so changes to it cannot be logged by key."""


class UnloggableCascade(SnapreplError):
    """A foreign-key cascade into a table that its log could not see (a cycle, another database)."""


class SnapshotLogExists(SnapreplError):
    """A snapshot log is already registered (or its RLOG table is already there)."""


class SnapshotLogNotFound(SnapreplError):
    """No snapshot log is registered for a table."""


class SnapshotLogInUse(SnapreplError):
    """A snapshot log cannot be dropped while snapshots or publications depend on it."""


class SnapshotExists(SnapreplError):
    """A snapshot with that destination is already registered."""


class SnapshotGroupExists(SnapreplError):
    """A snapshot group of that name exists already (or a snapshot is in another group)."""


class SnapshotGroupNotFound(SnapreplError):
    """No snapshot group of that name is registered."""


class SnapshotNotFound(SnapreplError):
    """No snapshot with that name is registered."""


class AmbiguousName(SnapreplError):
    """A short name matches several catalog entries; qualify it."""


class CompleteRefreshRequired(SnapreplError):
    """The log entries an incremental refresh needs are gone (Oracle's ORA-12034)."""


class CatalogUnavailable(SnapreplError):
    """The SYS_* catalog cannot be reached or is not migrated."""

    retryable = True


class CatalogConnectionLost(CatalogUnavailable, ConnectionLost):
    """The catalog's database went away in the middle of a run (retryable)."""


class UnknownFunction(SnapreplError):
    """A function called in a statement is not one snaprepl knows."""


class InvalidArgument(SnapreplError):
    """A statement or function got an argument of the wrong kind or value."""


class DdlFailed(SnapreplError):
    """Creating database objects failed; what had been created was removed again."""


class SnapshotBusy(SnapreplError):
    """Another refresh of the snapshot is running."""

    retryable = True


class LeaseLost(SnapreplError):
    """A run's lease was taken over by another run (this one was thought dead): it must commit nothing more."""

    retryable = True


class LockTimeout(SnapreplError):
    """A statement gave up waiting for a lock another session holds (``lock_timeout_seconds``).

    Retryable: the same work later usually succeeds, so Airflow tasks retry it."""

    retryable = True


class RefreshFailed(SnapreplError):
    """A snapshot refresh failed; the destination keeps its previous consistent content."""


class SourceColumnsChanged(RefreshFailed):
    """A source's columns changed in a way the snapshot does not follow (a listed column dropped, a
    type its destination cannot hold); nothing was refreshed."""


class ReplicationError(SnapreplError):
    """A bi-directional replication step failed."""


class CollectionError(ReplicationError):
    """A collection could not be reached, read or written."""

    retryable = True


class ResourceLockedError(CollectionError):
    """A resource is locked (WebDAV LOCK) on the side to be written: it waits for the next sync.

    ``server`` is the replication name of that side."""

    retryable = True
    server: str | None = None


class ConnectServerDown(SnapreplError):
    """The Spark Connect server of the Spark connection does not answer."""

    retryable = True


class LogBypassed(SnapreplError):
    """A log's row trigger is missing or disabled, or was bypassed (TRUNCATE): changes may be unlogged."""


class VerifyFailed(SnapreplError):
    """A verify or repair failed; a repair's committed batches stay, the source is never written."""


def error_class(name: str, fallback: type[SnapreplError]) -> type[SnapreplError]:
    """The snaprepl error class called ``name`` (how a Spark job reports its error to the submitter),
    else ``fallback``. Every error class lives in this module, so the submitter finds each one without
    importing the job's code (tests/unit/test_errors.py keeps it so)."""
    cls = globals().get(name)
    return cls if isinstance(cls, type) and issubclass(cls, SnapreplError) else fallback

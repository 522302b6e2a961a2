"""Snapshot queries cannot write: they run in read-only transactions.

Everything that evaluates a snapshot's query or condition does so read-only: the probe at creation
(:func:`probe_query`), the planning queries of a complete refresh (``Database.session(read_only=True)``)
and Spark's JDBC reads of the source (``sessionInitStatement``). PostgreSQL and MariaDB refuse any
write in such a transaction, including ``setval``/``nextval`` and writes inside functions. SQLite has
no read-only transactions: there ``PRAGMA query_only`` refuses writes to tables, and the query's
functions are checked against an allow-list when it is parsed (:mod:`snaprepl.dialects.functions`).
"""

from __future__ import annotations

from snaprepl.database.sessions import Database
from snaprepl.errors import InvalidCondition, SnapreplError

READ_ONLY_HINT = (
    "snapshot queries run in read-only transactions and may not write: remove calls such as setval, "
    "nextval or functions that modify data"
)


def probe_query(database: Database, sql: str, what: str, *, only_writes: bool = False) -> None:
    """Evaluate ``sql``'s first row in a read-only transaction, before anything is created.

    :param what: the message's start (e.g. "the query fails on connection 'x'").
    :param only_writes: raise only when the query tried to write (other failures are left to the first copy).
    :raises InvalidCondition: the query fails; when it tried to write, the hint says why that is refused.
    """
    try:
        with database.session(read_only=True) as session:
            session.query(f"SELECT * FROM ({sql}) snaprepl_probe LIMIT 1")
    except SnapreplError:
        raise
    except Exception as err:
        reason = first_line(err)
        writes = "read-only" in reason.lower() or "read only" in reason.lower() or "readonly" in reason.lower()
        if only_writes and not writes:
            return
        raise InvalidCondition(f"{what}: {reason}", READ_ONLY_HINT if writes else "check the query") from None


def first_line(err: BaseException) -> str:
    """The first line of the database's message (a driver error's ``orig``), for a user's message."""
    cause = getattr(err, "orig", None) or err
    text = str(cause).strip()
    return text.splitlines()[0] if text else type(cause).__name__

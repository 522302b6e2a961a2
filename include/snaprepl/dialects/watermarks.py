"""Exact watermarks, per dialect: how far a refresh, a pull or a push may move its watermark without
passing a change that can still commit (docs/semantics.md section 4, step 7).

SNAPTIME is no commit order: PostgreSQL stamps a change with its transaction's start, MariaDB with its
statement's time, so an entry can commit long after entries stamped later were applied. Each dialect
says what it knows at one moment (:class:`HighWater`):

* PostgreSQL: the transaction-id snapshot (``pg_current_snapshot()``); a log that records the
  writer's transaction id (column ``SNAPXID``) is then read by xid visibility, clock-free, like PgQ.
  The start of the oldest open transaction caps the SNAPTIME watermark as well (for logs without the
  column, and for the log purge).
* MariaDB/MySQL: the start of the oldest open InnoDB transaction or running statement, which needs
  the ``PROCESS`` privilege; without it the watermark is not exact and the tolerance window stays.
* SQLite: one writer at a time; the mark is taken inside ``BEGIN IMMEDIATE`` (snaprepl's sessions
  begin so), while no write transaction is open, so every later entry is stamped after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar

from snaprepl.dialects.innodb_status import oldest_writer_age
from snaprepl.dialects.model import SqlSession

#: The log column holding the writing transaction's id, where the dialect records one.
XID_COLUMN = "SNAPXID"


@dataclass(frozen=True)
class HighWater:
    """What a source says about its log at one moment.

    :param clock: the source's UTC clock (the clock SNAPTIMEs come from).
    :param cap: no entry that can still commit has a SNAPTIME before this (None: no such bound needed,
        or none known: see ``exact``).
    :param exact: whether ``cap`` (or the dialect's commit order) makes the watermark exact; False when
        the source's open transactions cannot be seen (then the tolerance window covers late commits).
    :param xids: PostgreSQL's transaction-id snapshot as text, where the dialect has one.
    :param note: why the watermark is not exact, said once in the refresh's output and in status.
    """

    clock: datetime
    cap: datetime | None = None
    exact: bool = True
    xids: str | None = None
    note: str | None = None

    @property
    def mark(self) -> datetime:
        """A high-water mark for a copy taken now: the clock, capped."""
        return min(self.clock, self.cap) if self.cap is not None else self.clock

    def limit(self, applied: datetime | None) -> datetime | None:
        """The watermark after applying entries up to SNAPTIME ``applied``: capped."""
        if applied is None or self.cap is None:
            return applied
        return min(applied, self.cap)


@dataclass(frozen=True)
class OpenTransaction:
    """A source transaction that holds watermarks back (``snaprepl status`` names it)."""

    session: str
    user: str
    started: datetime
    age_seconds: float
    query: str

    def describe(self) -> str:
        minutes = self.age_seconds / 60
        query = " ".join((self.query or "").split())[:80]
        return (
            f"session {self.session} of {self.user or '?'} open since {self.started:%Y-%m-%d %H:%M:%S} UTC "
            f"({minutes:.0f} min): {query or '(idle in transaction)'}"
        )


class Watermarks:
    """Default: only the clock is known (dialects snaprepl does not run)."""

    if TYPE_CHECKING:

        def now_utc(self, session: SqlSession) -> datetime: ...

        def quote(self, name: str) -> str: ...

        def qualified(self, schema: str | None, table: str) -> str: ...

        def timestamp_literal(self, value: datetime) -> str: ...

        def literal(self, value: str) -> str: ...

    #: Whether log triggers record the writing transaction's id (column :data:`XID_COLUMN`).
    logs_xids: ClassVar[bool] = False

    def high_water(self, session: SqlSession) -> HighWater:
        """The source's high water now (see :class:`HighWater`), before the log is read."""
        return HighWater(clock=self.now_utc(session), exact=False, note=None)

    def log_has_xids(self, session: SqlSession, schema: str | None, rlog: str) -> bool:
        """Whether the log table ``rlog`` has the transaction-id column."""
        return False

    def consistent_high_water(self, session: SqlSession) -> HighWater:
        """Make ``session`` (a transaction just begun, nothing read yet) read one state of the database
        from now on, and return the high water that goes with that state: every log entry the session
        cannot see is past the watermark (not visible in ``xids``, or stamped at or after ``cap``), so
        a group refresh reads every member at that one point (issue 25). Default: the transaction's
        reads are consistent already (SQLite's ``BEGIN IMMEDIATE`` holds the write lock)."""
        return self.high_water(session)

    def xid_log_step_sql(self, rlog: str) -> str:
        """Add the column of the writing transaction's id (:data:`XID_COLUMN`) to the log table ``rlog``
        (qualified); the triggers write it."""
        raise NotImplementedError(f"{type(self).__name__} records no transaction ids")

    def xid_window_sql(self, column: str, snaptime_rule: str, prev: str | None, cur: str) -> str:
        """A condition on a log's xid ``column``: the entry's transaction is visible in snapshot ``cur``
        and was not in ``prev``; without ``prev``, every entry visible in ``cur`` and those without
        an xid that pass ``snaptime_rule``."""
        raise NotImplementedError(f"{type(self).__name__} records no transaction ids")

    def open_transactions(self, session: SqlSession, older_than_minutes: float) -> list[OpenTransaction] | None:
        """Transactions open longer than ``older_than_minutes``, oldest first; None: cannot tell."""
        return None

    def claim_pending_sql(self, rlog: str, sync: str) -> list[str]:
        """Statements that mark the pending entries of a subscriber's log ``rlog`` (qualified; ``sync``
        its quoted SYNC_ID column) with ``:run``, passing over those a transaction still open holds:
        a pull takes them once that transaction commits, instead of waiting for it."""
        return [f"UPDATE {rlog} SET {sync} = :run WHERE {sync} = ''"]


class PostgresWatermarks(Watermarks):
    logs_xids = True

    #: Any open transaction (not only one holding an xid): PostgreSQL stamps SNAPTIME with the
    #: transaction's start, so one that has only read so far may still write an old stamp. Only this
    #: database's: a session cannot write another database's log.
    _OPEN = (
        "FROM pg_stat_activity WHERE xact_start IS NOT NULL AND pid <> pg_backend_pid() "
        "AND backend_type = 'client backend' AND datname = current_database()"
    )

    def xid_log_step_sql(self, rlog: str) -> str:
        return f"ALTER TABLE {rlog} ADD COLUMN {self.quote(XID_COLUMN)} xid8"

    def xid_value_sql(self) -> str:
        """The writing transaction's id (the top-level one, also inside a savepoint)."""
        return "pg_current_xact_id()"

    def high_water(self, session: SqlSession) -> HighWater:
        # Sessions of other users without pg_read_all_stats show no xact_start, only whether they hold
        # a transaction id or a snapshot (backend_xid, backend_xmin).
        clock, xids, oldest, hidden = session.query(
            "SELECT (now() AT TIME ZONE 'UTC'), pg_current_snapshot()::text, "
            f"(SELECT min(xact_start AT TIME ZONE 'UTC') {self._OPEN}), "
            "(SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND xact_start IS NULL "
            "AND datname = current_database() "
            "AND query = '<insufficient privilege>' AND (backend_xid IS NOT NULL OR backend_xmin IS NOT NULL))"
        )[0]
        note = None
        if hidden:
            note = (
                f"{hidden} open transaction(s) of other users are hidden from the source connection "
                "(pg_stat_activity), so their start cannot cap the SNAPTIME watermark; grant it pg_read_all_stats"
            )
        return HighWater(clock=clock, cap=oldest, exact=not hidden, xids=str(xids), note=note)

    def consistent_high_water(self, session: SqlSession) -> HighWater:
        # REPEATABLE READ: the transaction's first query (high_water's) takes the snapshot every later
        # read sees, and pg_current_snapshot() in it is that snapshot.
        session.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        return self.high_water(session)

    def log_has_xids(self, session: SqlSession, schema: str | None, rlog: str) -> bool:
        rows = session.query(
            "SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(:name) AND attname = :column AND NOT attisdropped",
            {"name": self.qualified(schema, rlog), "column": XID_COLUMN},
        )
        return bool(rows)

    def claim_pending_sql(self, rlog: str, sync: str) -> list[str]:
        return [
            f"UPDATE {rlog} SET {sync} = :run WHERE ctid = ANY(ARRAY("
            f"SELECT ctid FROM {rlog} WHERE {sync} = '' FOR UPDATE SKIP LOCKED))"
        ]

    def xid_window_sql(self, column: str, snaptime_rule: str, prev: str | None, cur: str) -> str:
        current = f"pg_visible_in_snapshot({column}, {self.literal(cur)}::pg_snapshot)"
        if prev is None:
            return f"(({column} IS NULL AND {snaptime_rule}) OR {current})"
        return f"({current} AND NOT pg_visible_in_snapshot({column}, {self.literal(prev)}::pg_snapshot))"

    def open_transactions(self, session: SqlSession, older_than_minutes: float) -> list[OpenTransaction] | None:
        rows = session.query(
            "SELECT pid, usename, xact_start AT TIME ZONE 'UTC', "
            "EXTRACT(EPOCH FROM (now() - xact_start)), left(coalesce(query, ''), 200) "
            f"{self._OPEN} AND now() - xact_start > make_interval(secs => :seconds) ORDER BY xact_start",
            {"seconds": older_than_minutes * 60},
        )
        return [OpenTransaction(str(p), u or "", s, float(a), q) for p, u, s, a, q in rows]


#: MariaDB's error when a statement needs the PROCESS privilege.
_NEEDS_PROCESS = "1227"


#: How far back the cap goes when ``SHOW ENGINE INNODB STATUS`` cannot tell which transactions are
#: open (its list truncated, its text not understood): INNODB_TRX alone can miss a transaction begun
#: in its cache's last 0.1 s (:mod:`snaprepl.dialects.innodb_status`).
INNODB_TRX_STALENESS = timedelta(seconds=1)


class MySqlWatermarks(Watermarks):
    #: INNODB_TRX.trx_started is in the server's system time zone, whatever the session's.
    _LOCAL_NOW = "CONVERT_TZ(UTC_TIMESTAMP(6), '+00:00', 'SYSTEM')"

    def claim_pending_sql(self, rlog: str, sync: str) -> list[str]:
        # READ COMMITTED: InnoDB's semi-consistent read passes over a row another transaction has
        # inserted and not committed, where REPEATABLE READ would wait for its lock.
        return ["SET TRANSACTION ISOLATION LEVEL READ COMMITTED", *super().claim_pending_sql(rlog, sync)]

    def high_water(self, session: SqlSession) -> HighWater:
        # Transactions that wrote, or run a statement now (whose trigger stamps are its start); then
        # statements not yet in InnoDB (waiting for a table's metadata lock, say): their stamps too.
        try:
            clock, trx_age, own = session.query(
                f"SELECT UTC_TIMESTAMP(6), MAX(TIMESTAMPDIFF(MICROSECOND, t.trx_started, {self._LOCAL_NOW})), "
                "CONNECTION_ID() FROM information_schema.INNODB_TRX t WHERE t.trx_mysql_thread_id <> CONNECTION_ID() "
                "AND (t.trx_rows_modified > 0 OR t.trx_query IS NOT NULL)"
            )[0]
            # INNODB_TRX is cached (up to 0.1 s old); the status text is made now, after the clock read.
            fresh = oldest_writer_age(str(session.query("SHOW ENGINE INNODB STATUS")[0][2]), int(own))
        except Exception as err:
            if _NEEDS_PROCESS not in str(err) and "PROCESS" not in str(err):
                raise
            return HighWater(
                clock=self.now_utc(session),
                exact=False,
                note="the source connection lacks the PROCESS privilege: open transactions cannot be seen, "
                "so the watermark is not capped by them (the tolerance window covers late commits); "
                "GRANT PROCESS ON *.* to its user",
            )
        running = session.query(
            "SELECT MAX(TIME_MS) FROM information_schema.PROCESSLIST "
            "WHERE ID <> CONNECTION_ID() AND COMMAND IN ('Query', 'Execute')"
        )[0][0]
        ages = [INNODB_TRX_STALENESS if fresh is None else fresh]
        ages += [timedelta(microseconds=int(trx_age))] if trx_age is not None else []
        ages += [timedelta(milliseconds=float(running))] if running is not None else []
        clock = _naive(clock)
        return HighWater(clock=clock, cap=clock - max(ages))

    def consistent_high_water(self, session: SqlSession) -> HighWater:
        # The mark first, then the snapshot: a transaction committing in between is seen; one open at
        # the mark started (and stamps its entries) at or after its cap.
        high = self.high_water(session)
        session.execute("COMMIT")
        session.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        session.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
        return high

    def open_transactions(self, session: SqlSession, older_than_minutes: float) -> list[OpenTransaction] | None:
        try:
            age = f"TIMESTAMPDIFF(MICROSECOND, t.trx_started, {self._LOCAL_NOW})"
            rows = session.query(
                f"SELECT t.trx_mysql_thread_id, p.USER, UTC_TIMESTAMP(6) - INTERVAL {age} MICROSECOND, "
                f"{age} / 1000000, LEFT(COALESCE(t.trx_query, p.INFO, ''), 200) "
                "FROM information_schema.INNODB_TRX t "
                "LEFT JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id "
                "WHERE t.trx_mysql_thread_id <> CONNECTION_ID() "
                f"AND {age} > :seconds * 1000000 ORDER BY t.trx_started",
                {"seconds": older_than_minutes * 60},
            )
        except Exception as err:
            if _NEEDS_PROCESS not in str(err) and "PROCESS" not in str(err):
                raise
            return None
        return [OpenTransaction(str(i), u or "", _naive(s), float(a), q or "") for i, u, s, a, q in rows]


class SqliteWatermarks(Watermarks):
    def high_water(self, session: SqlSession) -> HighWater:
        # snaprepl's SQLite sessions begin with BEGIN IMMEDIATE (see snaprepl.database.sessions): this one holds the
        # write lock, so no write transaction is open and every later entry is stamped after now.
        clock = self.now_utc(session)
        return HighWater(clock=clock, cap=clock)


def _naive(value: Any) -> datetime:
    """A driver's datetime (or its text) as a naive datetime."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=None)
    return datetime.fromisoformat(str(value))

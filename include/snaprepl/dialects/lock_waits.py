"""Who is waiting for a lock on a table, per dialect: ``snaprepl status`` says so while a run waits.

A refresh or sync blocked by another session (a long transaction, ``LOCK TABLE``) shows as
``running`` in the catalog until ``[snaprepl] lock_timeout_seconds`` ends it; status asks the
database whether sessions are waiting for a lock that a holder of the table keeps, and names them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from snaprepl.dialects.model import SqlSession


class LockWaits:
    """Default: the database cannot be asked (SQLite has one writer and no lock views)."""

    if TYPE_CHECKING:

        def qualified(self, schema: str | None, table: str) -> str: ...

    def lock_waits(self, session: SqlSession, schema: str, table: str) -> list[str] | None:
        """Sessions waiting for a lock held on ``schema.table``, described; ``None``: cannot tell."""
        return None


class PostgresLockWaits(LockWaits):
    def lock_waits(self, session: SqlSession, schema: str, table: str) -> list[str] | None:
        # A waiter blocked by a session that holds any lock on the table: LOCK TABLE, DDL, and row
        # locks alike (a row's writer holds ROW EXCLUSIVE on its table).
        rows = session.query(
            "SELECT w.pid, pg_blocking_pids(w.pid), now() - w.state_change FROM pg_stat_activity w "
            "WHERE w.wait_event_type = 'Lock' AND EXISTS (SELECT 1 FROM pg_locks h "
            "WHERE h.granted AND h.pid = ANY(pg_blocking_pids(w.pid)) AND h.relation = to_regclass(:name))",
            {"name": self.qualified(schema, table)},
        )
        return [
            f"session {pid} waiting {_seconds(waited)} for a lock on {schema}.{table} held by session "
            f"{', '.join(str(b) for b in blockers)}"
            for pid, blockers, waited in rows
        ]


class MySqlLockWaits(LockWaits):
    def lock_waits(self, session: SqlSession, schema: str, table: str) -> list[str] | None:
        metadata = session.query(
            "SELECT ID, TIME FROM information_schema.PROCESSLIST WHERE STATE LIKE 'Waiting for table%lock' "
            "AND INFO LIKE :pattern",
            {"pattern": f"%{table}%"},
        )
        rows = session.query(
            "SELECT r.trx_mysql_thread_id, b.trx_mysql_thread_id, "
            "TIMESTAMPDIFF(SECOND, r.trx_wait_started, NOW()) FROM information_schema.INNODB_LOCK_WAITS w "
            "JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id "
            "JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id "
            "JOIN information_schema.INNODB_LOCKS l ON l.lock_id = w.requested_lock_id "
            "WHERE l.lock_table = :name",
            {"name": self.qualified(schema, table)},
        )
        return [f"session {pid} waiting {waited} s for a lock on {schema}.{table}" for pid, waited in metadata] + [
            f"session {pid} waiting {waited} s for a row lock on {schema}.{table} held by session {blocker}"
            for pid, blocker, waited in rows
        ]


def _seconds(value: object) -> str:
    total = getattr(value, "total_seconds", None)
    return f"{int(total())} s" if callable(total) else str(value)

"""Guards of a log's row triggers: what catches the changes that bypass them (issue 20, item 2).

A row trigger logs nothing for a ``TRUNCATE``, while it is disabled or dropped, or (PostgreSQL) in a
session with ``session_replication_role = replica`` unless it is enabled ``ALWAYS``. Each dialect says
here what it adds to a log when it is created (:meth:`LogGuards.guard_steps`), what it records then
(:meth:`LogGuards.guard_state`), and what one query at each refresh and sync step finds
(:meth:`LogGuards.guard_check`): problems that last until someone fixes them (a trigger missing or
disabled) and events that happened since the last check (a ``TRUNCATE``, a trigger recreated). The
catalog side (who needs a complete refresh or a new initial load) is :mod:`snaprepl.catalog.log_guard`.

Each dialect's guard lives in its own module: :mod:`snaprepl.dialects.postgres_guards`, and below for
MariaDB/MySQL and SQLite.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from snaprepl.common.table_names import ResolvedTable
from snaprepl.dialects.model import DdlStep, LogObjects, SqlSession, TableInfo


@dataclass(frozen=True)
class GuardFindings:
    """What one check of a log's triggers found.

    :param broken: problems that last until fixed, one line each naming the table and the trigger.
    :param events: bypasses that happened since the last check (reported once), one line each.
    :param state: what to record as the log's guard state from now on.
    """

    broken: tuple[str, ...] = ()
    events: tuple[str, ...] = ()
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        return not self.broken and not self.events


class LogGuards:
    """Default: nothing added, nothing checked (the dialects snaprepl only generates DDL for)."""

    if TYPE_CHECKING:

        def qualified(self, schema: str | None, table: str) -> str: ...

        def quote(self, name: str) -> str: ...

        def literal(self, value: str) -> str: ...

    #: Whether a ``TRUNCATE`` is caught (by a trigger, or by the table's identity); shown in status.
    catches_truncate: bool = False

    def ddl_guard_possible(self, session: SqlSession) -> bool:
        """Whether this session may install a database-wide recorder of trigger changes (PostgreSQL's
        event trigger needs a superuser)."""
        return False

    def guard_steps(self, info: TableInfo, objects: LogObjects, *, ddl_guard: bool) -> list[DdlStep]:
        """Statements run right after the log's own ones (``create_log_ddl``, ``create_bidir_log_ddl``)."""
        return []

    def guard_drop_sql(self, table: ResolvedTable, objects: LogObjects, *, source_exists: bool) -> list[str]:
        """Statements run after the log's ``drop_log_ddl``; each succeeds when its object is gone."""
        return []

    def guard_state(
        self, session: SqlSession, table: ResolvedTable, objects: LogObjects, *, ddl_guard: bool
    ) -> dict[str, Any]:
        """What the log's guard records once its objects exist (compared by :meth:`guard_check`)."""
        return {"v": 1}

    def guard_notes(self, state: dict[str, Any]) -> list[str]:
        """What the recorded state cannot catch, one line each (said when the log is created, and in status)."""
        return []

    def guard_check(
        self, session: SqlSession, table: ResolvedTable, objects: LogObjects, state: dict[str, Any] | None
    ) -> GuardFindings:
        """One query: whether the log's triggers are there and enabled, and what bypassed them since
        ``state`` (None: a log created before guards existed, checked for its triggers only)."""
        return GuardFindings(state=dict(state or {}))


def digest(text: str | None) -> str:
    """A short fingerprint of a trigger's body (recreated with the same body, or another one)."""
    return hashlib.sha1((text or "").strip().encode()).hexdigest()[:16]


def missing_triggers(table: ResolvedTable, expected: Sequence[str], found: Sequence[str]) -> list[str]:
    return [
        f"trigger {t} of table {table.schema}.{table.table} is missing (dropped)" for t in expected if t not in found
    ]


class MySqlGuards(LogGuards):
    """MariaDB/MySQL: triggers cannot be disabled, and nothing fires on ``TRUNCATE TABLE``, which
    recreates the table: InnoDB gives it a new table id (``information_schema.INNODB_SYS_TABLES``;
    ``CREATE_TIME`` in ``information_schema.TABLES`` stays on MariaDB 10.11). A trigger dropped and
    created again has a new ``CREATED`` in ``information_schema.TRIGGERS``."""

    catches_truncate = True

    def _table_id(self, session: SqlSession, table: ResolvedTable) -> str | None:
        try:
            rows = session.query(
                "SELECT CAST(TABLE_ID AS CHAR) FROM information_schema.INNODB_SYS_TABLES WHERE NAME = :name",
                {"name": f"{table.schema}/{table.table}"},
            )
        except Exception:  # no PROCESS privilege: the table's identity cannot be read
            return None
        return str(rows[0][0]) if rows else None

    def _triggers_sql(self, objects: LogObjects) -> str:
        names = ", ".join(self.literal(t) for t in objects.triggers)
        return (
            "SELECT 'trigger', TRIGGER_NAME, CAST(CREATED AS CHAR), ACTION_STATEMENT FROM information_schema.TRIGGERS "
            f"WHERE EVENT_OBJECT_SCHEMA = :schema AND EVENT_OBJECT_TABLE = :table AND TRIGGER_NAME IN ({names})"
        )

    def guard_state(
        self, session: SqlSession, table: ResolvedTable, objects: LogObjects, *, ddl_guard: bool
    ) -> dict[str, Any]:
        rows = session.query(self._triggers_sql(objects), {"schema": table.schema, "table": table.table})
        triggers = {name: [created, digest(body)] for _, name, created, body in rows}
        return {"v": 1, "table_id": self._table_id(session, table), "triggers": triggers}

    def guard_notes(self, state: dict[str, Any]) -> list[str]:
        if state.get("table_id") is None:
            return [
                "without the PROCESS privilege the table's InnoDB id cannot be read: a TRUNCATE TABLE is not caught"
            ]
        return []

    def guard_check(
        self, session: SqlSession, table: ResolvedTable, objects: LogObjects, state: dict[str, Any] | None
    ) -> GuardFindings:
        recorded = dict(state or {})
        sql = self._triggers_sql(objects)
        if recorded.get("table_id") is not None:
            sql += (
                " UNION ALL SELECT 'table', CAST(TABLE_ID AS CHAR), NULL, NULL"
                " FROM information_schema.INNODB_SYS_TABLES "
                "WHERE NAME = :name"
            )
        rows = session.query(
            sql, {"schema": table.schema, "table": table.table, "name": f"{table.schema}/{table.table}"}
        )
        found = {name: (created, digest(body)) for kind, name, created, body in rows if kind == "trigger"}
        broken = missing_triggers(table, objects.triggers, list(found))
        events: list[str] = []
        before = recorded.get("triggers") or {}
        triggers = dict(before)
        for name, (created, body) in found.items():
            old = before.get(name)
            if old is None or (old[0] == created and old[1] == body):
                continue
            if old[1] != body:
                broken.append(f"trigger {name} of table {table.schema}.{table.table} was replaced by another one")
                continue
            events.append(
                f"trigger {name} of table {table.schema}.{table.table} was dropped and created again ({created})"
            )
            triggers[name] = [created, body]
        ids = [name for kind, name, _, _ in rows if kind == "table"]
        new_id = ids[0] if ids else recorded.get("table_id")
        if recorded.get("table_id") is not None and new_id != recorded["table_id"]:
            events.append(
                f"table {table.schema}.{table.table} was truncated or rebuilt (TRUNCATE TABLE: "
                f"its InnoDB table id changed from {recorded['table_id']} to {new_id})"
            )
        return GuardFindings(tuple(broken), tuple(events), {**recorded, "triggers": triggers, "table_id": new_id})


class SqliteGuards(LogGuards):
    """SQLite: no ``TRUNCATE`` (``DELETE`` without ``WHERE`` fires the row triggers) and no disabled
    triggers; a trigger can only be dropped, or replaced by another one."""

    catches_truncate = True

    def _rows(self, session: SqlSession, objects: LogObjects) -> dict[str, str]:
        names = ", ".join(self.literal(t) for t in objects.triggers)
        rows = session.query(f"SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN ({names})")
        return {name: digest(sql) for name, sql in rows}

    def guard_state(
        self, session: SqlSession, table: ResolvedTable, objects: LogObjects, *, ddl_guard: bool
    ) -> dict[str, Any]:
        return {"v": 1, "triggers": self._rows(session, objects)}

    def guard_check(
        self, session: SqlSession, table: ResolvedTable, objects: LogObjects, state: dict[str, Any] | None
    ) -> GuardFindings:
        recorded = dict(state or {})
        found = self._rows(session, objects)
        broken = missing_triggers(table, objects.triggers, list(found))
        before = recorded.get("triggers") or {}
        broken += [
            f"trigger {name} of table {table.table} was replaced by another one"
            for name, body in found.items()
            if name in before and before[name] != body
        ]
        return GuardFindings(tuple(broken), (), recorded)

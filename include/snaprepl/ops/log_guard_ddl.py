"""The guards of a log's triggers when the log is created (see :mod:`snaprepl.dialects.guards`): the
dialect's extra statements, run with the log's own, and the state recorded in the catalog."""

from __future__ import annotations

import json
from collections.abc import Sequence

from snaprepl.database.sessions import Database
from snaprepl.dialects import DdlStep, LogObjects, TableInfo


def with_guards(
    database: Database, info: TableInfo, objects: LogObjects, steps: Sequence[DdlStep]
) -> tuple[list[DdlStep], bool]:
    """The log's statements followed by its guards'; and whether they include the database-wide
    recorder of trigger changes (PostgreSQL's event triggers, only with a superuser)."""
    dialect = database.dialect
    with database.session() as session:
        ddl_guard = dialect.ddl_guard_possible(session)
    return [*steps, *dialect.guard_steps(info, objects, ddl_guard=ddl_guard)], ddl_guard


def guard_record(database: Database, info: TableInfo, objects: LogObjects, ddl_guard: bool) -> tuple[str, list[str]]:
    """What the catalog records of the just created log's guards (JSON), and what they cannot catch."""
    dialect = database.dialect
    with database.session() as session:
        state = dialect.guard_state(session, info.table, objects, ddl_guard=ddl_guard)
    return json.dumps(state, sort_keys=True), dialect.guard_notes(state)

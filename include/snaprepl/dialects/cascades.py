"""Foreign-key cascades a snapshot log must see (mixed into every dialect as :class:`CascadeLogging`).

Where a database's cascades (``ON DELETE CASCADE``, ``ON UPDATE CASCADE``, ``SET NULL``) fire the
child's row triggers (PostgreSQL, SQLite) the log's own triggers see them and nothing more is needed:
the default here. Where they fire none (InnoDB: :mod:`snaprepl.dialects.mysql_cascades`), a log gets
extra triggers on the tables its changes cascade from, which log the keys the cascade will change; the
plan names them and the cascade paths they follow, recorded in the catalog (SNL_CASCADES) so that
``DROP SNAPSHOT LOG`` drops them and each refresh can check the paths still are those.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from snaprepl.dialects.model import DdlStep, LogObjects, SqlSession, TableInfo


class CascadeUnsupported(Exception):
    """Raised by a dialect for a cascade a log cannot follow (the caller words the error)."""

    def __init__(self, constraint: str, reason: str) -> None:
        self.constraint, self.reason = constraint, reason
        super().__init__(f"foreign key {constraint}: {reason}")


@dataclass(frozen=True)
class CascadeTrigger:
    schema: str
    table: str
    name: str


@dataclass(frozen=True)
class CascadePlan:
    """The extra triggers of one log, and the cascade paths into its table they cover.

    :param paths: one text per cascade path (constraints and rules, root first), sorted: compared with
        the database's current paths at each refresh.
    """

    steps: tuple[DdlStep, ...] = ()
    triggers: tuple[CascadeTrigger, ...] = ()
    paths: tuple[str, ...] = ()

    def to_json(self) -> str | None:
        if not self.triggers and not self.paths:
            return None
        return json.dumps({"triggers": [[t.schema, t.table, t.name] for t in self.triggers], "paths": list(self.paths)})

    @classmethod
    def from_json(cls, text: str | None) -> CascadePlan:
        if not text:
            return cls()
        data = json.loads(text)
        return cls(
            triggers=tuple(CascadeTrigger(*t) for t in data.get("triggers", ())),
            paths=tuple(data.get("paths", ())),
        )


class CascadeLogging:
    """How a dialect's snapshot logs see foreign-key cascades (default: cascades fire row triggers)."""

    def cascade_plan(self, session: SqlSession, info: TableInfo, objects: LogObjects) -> CascadePlan:
        """The extra triggers the log ``objects`` of ``info`` needs to see cascades into the table.

        :raises CascadeUnsupported: a cascade into the table that no trigger can follow.
        """
        return CascadePlan()

    def cascade_paths(self, session: SqlSession, schema: str, table: str) -> tuple[str, ...]:
        """The cascade paths into ``schema.table`` that fire no trigger on it, as :class:`CascadePlan`
        records them (cheap: compared at each refresh)."""
        return ()

    def drop_cascade_sql(self, plan: CascadePlan) -> list[str]:
        """Statements that drop the plan's triggers (each may already be gone)."""
        return []

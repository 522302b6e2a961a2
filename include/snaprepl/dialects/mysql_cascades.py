"""InnoDB's foreign-key cascades, seen by snapshot logs (mixed into the MariaDB/MySQL dialect).

InnoDB carries out ``ON DELETE CASCADE``, ``ON UPDATE CASCADE`` and ``SET NULL`` inside the storage
engine and fires no trigger on the rows it changes, so a log's own triggers miss them. A log on ``T``
therefore gets, on every table ``A`` whose changes cascade into ``T`` (its parents, their parents
through cascading children, and so on: the paths in ``information_schema.REFERENTIAL_CONSTRAINTS``
and ``KEY_COLUMN_USAGE``), a ``BEFORE DELETE`` and/or ``BEFORE UPDATE`` trigger that logs the keys of
``T``'s rows the cascade is about to change, found by joining down the path while they still hold
their old values: 'D' for a cascaded delete, 'U' for a cascaded update or SET NULL, 'D' of the old
key and 'I' of the new one where the cascade changes ``T``'s primary key. A statement that fails
rolls back these entries with its cascade; an entry for a row that still exists only makes the next
refresh read that row again (the change query looks at the row, not at DMLTYPE).

The triggers are BEFORE triggers (the children must still be there): a one-way log on the parent
itself has AFTER triggers, and a bi-directional log's BEFORE triggers only set the parent's version and
write its own log, so the order among them changes nothing. Their names, ``<t>_from_<parent>_D_cascade``
and ``_U_cascade``, belong to the log of ``t`` and are recorded with it; no other log touches them.

Refused, with the constraint named: a cascade cycle (a path that reaches a table twice, e.g. a tree
referencing itself), a cascade from another database, ``SET DEFAULT``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from snaprepl.common.table_names import with_suffix
from snaprepl.dialects.cascades import CascadeLogging, CascadePlan, CascadeTrigger, CascadeUnsupported
from snaprepl.dialects.model import DdlStep, LogColumns, LogObjects, SqlSession, TableInfo

_ACTING = ("CASCADE", "SET NULL", "SET DEFAULT")
DELETE, UPDATE = "D", "U"

_FOREIGN_KEYS_SQL = """
SELECT rc.CONSTRAINT_NAME, rc.TABLE_NAME, rc.UNIQUE_CONSTRAINT_SCHEMA, rc.REFERENCED_TABLE_NAME,
       rc.UPDATE_RULE, rc.DELETE_RULE, k.COLUMN_NAME, k.REFERENCED_COLUMN_NAME
  FROM information_schema.REFERENTIAL_CONSTRAINTS rc
  JOIN information_schema.KEY_COLUMN_USAGE k
    ON k.CONSTRAINT_SCHEMA = rc.CONSTRAINT_SCHEMA AND k.CONSTRAINT_NAME = rc.CONSTRAINT_NAME
   AND k.TABLE_NAME = rc.TABLE_NAME AND k.REFERENCED_TABLE_NAME IS NOT NULL
 WHERE rc.CONSTRAINT_SCHEMA = :schema AND BINARY rc.CONSTRAINT_SCHEMA = :schema
 ORDER BY rc.TABLE_NAME, rc.CONSTRAINT_NAME, k.ORDINAL_POSITION
"""


@dataclass(frozen=True)
class ForeignKey:
    name: str
    child: str
    parent_schema: str
    parent: str
    child_cols: tuple[str, ...]
    parent_cols: tuple[str, ...]
    on_update: str
    on_delete: str

    @property
    def acts(self) -> bool:
        return self.on_update in _ACTING or self.on_delete in _ACTING

    def describe(self) -> str:
        return f"{self.child}.{self.name}->{self.parent}:{self.on_delete}/{self.on_update}"


@dataclass(frozen=True)
class Effect:
    """What a cascade does to the rows of one table: deletes them, or sets ``columns`` (to the
    expressions in ``new``; a column missing there keeps its value)."""

    deleted: bool
    columns: frozenset[str] = frozenset()
    new: tuple[tuple[str, str], ...] = ()


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes | bytearray) else str(value)


def read_foreign_keys(session: SqlSession, schema: str) -> dict[str, list[ForeignKey]]:
    """The foreign keys declared by the tables of ``schema``, by referencing (child) table."""
    grouped: dict[tuple[str, str], list[tuple[str, ...]]] = defaultdict(list)
    for row in session.query(_FOREIGN_KEYS_SQL, {"schema": schema}):
        name, child, *rest = (_text(v) for v in row)
        grouped[(child, name)].append(tuple(rest))
    by_child: dict[str, list[ForeignKey]] = defaultdict(list)
    for (child, name), rows in grouped.items():
        parent_schema, parent, on_update, on_delete = rows[0][:4]
        by_child[child].append(
            ForeignKey(
                name,
                child,
                parent_schema,
                parent,
                tuple(r[4] for r in rows),
                tuple(r[5] for r in rows),
                on_update,
                on_delete,
            )
        )
    return by_child


def cascade_paths_into(
    foreign_keys: dict[str, list[ForeignKey]], schema: str, table: str
) -> list[tuple[ForeignKey, ...]]:
    """Every path of acting foreign keys into ``table``, each listed from ``table``'s own key upwards.

    :raises CascadeUnsupported: a cycle, a parent in another database, or SET DEFAULT.
    """
    found: list[tuple[ForeignKey, ...]] = []

    def walk(node: str, path: tuple[ForeignKey, ...], seen: frozenset[str]) -> None:
        for fk in foreign_keys.get(node, ()):
            if not fk.acts:
                continue
            if "SET DEFAULT" in (fk.on_delete, fk.on_update):
                raise CascadeUnsupported(fk.name, "SET DEFAULT is not supported by InnoDB")
            if fk.parent_schema != schema:
                raise CascadeUnsupported(
                    fk.name, f"its changes cascade from {fk.parent_schema}.{fk.parent}, in another database"
                )
            if fk.parent in seen:
                raise CascadeUnsupported(
                    fk.name, f"a cascade cycle through {fk.parent} (no trigger can follow it to every depth)"
                )
            found.append((*path, fk))
            walk(fk.parent, (*path, fk), seen | {fk.parent})

    walk(table, (), frozenset({table}))
    return found


def fingerprint(paths: Sequence[tuple[ForeignKey, ...]]) -> tuple[str, ...]:
    return tuple(sorted(" <- ".join(fk.describe() for fk in reversed(path)) for path in paths))


def _through(fk: ForeignKey, effect: Effect) -> Effect | None:
    """The effect on ``fk``'s child rows of ``effect`` on its parent rows."""
    if effect.deleted:
        rule = fk.on_delete
    elif effect.columns & set(fk.parent_cols):
        rule = fk.on_update
    else:
        return None
    if rule == "CASCADE" and effect.deleted:
        return Effect(True)
    if rule == "CASCADE":
        new = dict(effect.new)
        moved = tuple((c, new[p]) for c, p in zip(fk.child_cols, fk.parent_cols, strict=True) if p in new)
        return Effect(False, frozenset(fk.child_cols), moved)
    if rule == "SET NULL":
        return Effect(False, frozenset(fk.child_cols), tuple((c, "NULL") for c in fk.child_cols))
    return None


def simulate(path: tuple[ForeignKey, ...], event: str, q: Callable[[str], str]) -> Effect | None:
    """What a delete (``D``) or an update of the referenced columns (``U``) of a row of the path's
    root does to the rows of its first table."""
    top = path[-1]
    if event == DELETE:
        effect: Effect | None = Effect(True)
    else:
        effect = Effect(False, frozenset(top.parent_cols), tuple((p, f"NEW.{q(p)}") for p in top.parent_cols))
    for fk in reversed(path):
        assert effect is not None
        effect = _through(fk, effect)
        if effect is None:
            return None
    return effect


class MySqlCascades(CascadeLogging):
    """Triggers on the tables a log's table gets cascades from (see the module's text)."""

    if TYPE_CHECKING:
        max_identifier_length: ClassVar[int]
        log_columns: ClassVar[LogColumns]

        def quote(self, name: str) -> str: ...

        def qualified(self, schema: str | None, table: str) -> str: ...

        def _log_column_list(self, objects: LogObjects) -> str: ...

    def cascade_plan(self, session: SqlSession, info: TableInfo, objects: LogObjects) -> CascadePlan:
        schema, table = info.table.schema, info.table.table
        paths = cascade_paths_into(read_foreign_keys(session, schema), schema, table)
        bodies: dict[tuple[str, str], list[str]] = defaultdict(list)
        for path in paths:
            for event in (DELETE, UPDATE):
                effect = simulate(path, event, self.quote)
                if effect is not None:
                    bodies[(path[-1].parent, event)].append(
                        self._path_block(schema, path, event, effect, info, objects)
                    )
        steps, triggers = [], []
        for (root, event), blocks in sorted(bodies.items()):
            name = with_suffix(f"{table}_from_{root}", f"_{event}_cascade", self.max_identifier_length)
            qualified = self.qualified(schema, name)
            timing = "BEFORE DELETE" if event == DELETE else "BEFORE UPDATE"
            sql = (
                f"CREATE TRIGGER {qualified} {timing} ON {self.qualified(schema, root)} FOR EACH ROW\nBEGIN\n"
                + "".join(blocks)
                + "END"
            )
            steps.append(DdlStep(sql, f"DROP TRIGGER IF EXISTS {qualified}"))
            triggers.append(CascadeTrigger(schema, root, name))
        return CascadePlan(tuple(steps), tuple(triggers), fingerprint(paths))

    def cascade_paths(self, session: SqlSession, schema: str, table: str) -> tuple[str, ...]:
        try:
            return fingerprint(cascade_paths_into(read_foreign_keys(session, schema), schema, table))
        except CascadeUnsupported as err:
            return (f"unsupported: {err}",)

    def drop_cascade_sql(self, plan: CascadePlan) -> list[str]:
        return [f"DROP TRIGGER IF EXISTS {self.qualified(t.schema, t.name)}" for t in plan.triggers]

    def _path_block(
        self,
        schema: str,
        path: tuple[ForeignKey, ...],
        event: str,
        effect: Effect,
        info: TableInfo,
        objects: LogObjects,
    ) -> str:
        """The log inserts of one path for one event on its root, guarded for updates by a change of
        the referenced columns."""
        q = self.quote
        keys = [c.name for c in info.primary_key]
        old_keys = [f"c0.{q(k)}" for k in keys]
        if effect.deleted:
            inserts = [(old_keys, "D")]
        elif not effect.columns & set(keys):
            inserts = [(old_keys, "U")]
        else:
            new = dict(effect.new)
            inserts = [(old_keys, "D"), ([new.get(k, f"c0.{q(k)}") for k in keys], "I")]
        statements = "".join(
            f"  {self._insert_sql(schema, path, selected, dmltype, objects)};\n" for selected, dmltype in inserts
        )
        if event == DELETE:
            return statements
        top = path[-1]
        changed = " AND ".join(f"OLD.{q(p)} <=> NEW.{q(p)}" for p in top.parent_cols)
        return f"  IF NOT ({changed}) THEN\n{statements}  END IF;\n"

    def _insert_sql(
        self, schema: str, path: tuple[ForeignKey, ...], selected: list[str], dmltype: str, objects: LogObjects
    ) -> str:
        q, cols = self.quote, self.log_columns
        joins = [f"{self.qualified(schema, path[0].child)} AS c0"]
        for i, fk in enumerate(path[:-1]):
            on = " AND ".join(
                f"c{i}.{q(c)} = c{i + 1}.{q(p)}" for c, p in zip(fk.child_cols, fk.parent_cols, strict=True)
            )
            joins.append(f"JOIN {self.qualified(schema, fk.parent)} AS c{i + 1} ON {on}")
        top, last = path[-1], len(path) - 1
        where = " AND ".join(
            f"c{last}.{q(c)} = OLD.{q(p)}" for c, p in zip(top.child_cols, top.parent_cols, strict=True)
        )
        values = [
            *(f"{e} AS k{i}" for i, e in enumerate(selected)),
            "UTC_TIMESTAMP(6) AS t",
            f"'{dmltype}' AS o",
            "UUID() AS g",
        ]
        updates = ", ".join(f"{q(c)} = VALUES({q(c)})" for c in (cols.snaptime, cols.dmltype, cols.rowguid))
        # A derived table: ON DUPLICATE KEY UPDATE would find the joined tables' columns ambiguous.
        return (
            f"INSERT INTO {self.qualified(schema, objects.rlog)} ({self._log_column_list(objects)}) "
            f"SELECT * FROM (SELECT {', '.join(values)} FROM {' '.join(joins)} WHERE {where}) AS snaprepl_c "
            f"ON DUPLICATE KEY UPDATE {updates}"
        )

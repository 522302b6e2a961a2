"""An incremental snapshot's columns when its source's change (issue 25, item 3), decided at the start
of every refresh by comparing the source table's columns (the dialect's introspection) with the
destination's and with the columns the snapshot's query recorded (SN_QUERY).

- **Without a column list** the snapshot follows its source:

  - a column added at the source is added to the destination (nullable, the portable type of
    :mod:`snaprepl.dialects.types`), and this refresh is a **complete** refresh, so the column is
    filled in every row, not only in the changed ones;
  - a column dropped at the source stays in the destination with its values: no refresh writes it
    any more (the incremental apply and the complete refresh's difference leave it alone; a new row
    has NULL there); it is reported once in the refresh's output, and in ``status`` for good;
  - a type widened at the source (``int`` to ``bigint``, ``varchar(40)`` to ``varchar(200)``,
    ``numeric(8,2)`` to ``numeric(12,2)``) is widened in the destination in place where its dialect
    can (PostgreSQL ``ALTER COLUMN ... TYPE``, MariaDB ``MODIFY COLUMN``; SQLite holds any value),
    else the refresh fails in one line naming the column and what to do.

- **With a column list** added columns are ignored, and a listed column dropped at the source, or
  changed to a type the destination cannot hold, fails the refresh in one line.

- **A nonincremental snapshot** (every refresh complete) follows its query's result the same way
  (:func:`_plan_query`, the source dialect's ``describe_query``): a column the result gained is added
  and filled by that refresh, one it lost is kept with its values (the complete refresh applies the
  difference and leaves it alone), a widened type is widened; a lost key column fails in one line.

Nothing is recorded until the refresh succeeds (:func:`record_plan`): a failed run finds the same
changes again (the destination's new columns are then simply there).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from snaprepl.catalog.records import LogRecord, SnapshotRecord
from snaprepl.catalog.store import Catalog
from snaprepl.common.table_names import Ident
from snaprepl.database.errors import one_line
from snaprepl.dialects import Column, TableInfo
from snaprepl.dialects.alter import HOLDS, NARROWER, holds
from snaprepl.dialects.base import Dialect
from snaprepl.dialects.types import to_generic
from snaprepl.errors import InvalidArgument, SourceColumnsChanged
from snaprepl.refresh.endpoints import Endpoints
from snaprepl.sql.change_queries import incremental_query_columns, incremental_snapshot_query


@dataclass(frozen=True)
class ColumnPlan:
    """What one refresh reads and writes after the source's columns were compared.

    :param columns: the destination's columns this refresh writes (never one dropped at the source).
    :param query: the snapshot's query for this refresh (recorded when it succeeds).
    :param complete: columns were added: this refresh is complete, to fill them in every row.
    :param notes: what changed, for the refresh's output (each change is reported once).
    :param changes: SN_COLUMN_CHANGES after this refresh.
    :param followed: how many columns this refresh follows for the first time (its outcome's
        ``columns_followed``, the ``snaprepl.refresh.column_changes`` metric).
    """

    columns: tuple[Column, ...]
    query: str
    complete: bool = False
    notes: tuple[str, ...] = ()
    changes: dict[str, list[str]] = field(default_factory=dict)
    followed: int = 0


def recorded_columns(snapshot: SnapshotRecord, dialect: Dialect) -> list[str]:
    """The columns the snapshot's query selects, as it names them: read back as snaprepl wrote it,
    else parsed."""
    written = incremental_query_columns(dialect, snapshot.sn_query)
    if written is not None:
        return written
    import sqlglot
    from sqlglot import exp

    tree = sqlglot.parse_one(snapshot.sn_query, read=dialect.sqlglot_dialect or None)
    assert isinstance(tree, exp.Select), snapshot.sn_query  # what ops/snapshots.py writes
    return [e.alias_or_name for e in tree.selects]


def _follows(snapshot: SnapshotRecord) -> bool:
    return snapshot.columns is None


def _source_table(ends: Endpoints, log: LogRecord) -> TableInfo:
    source = ends.source_db.dialect
    with ends.source_db.session() as session:
        return source.describe(session, Ident(log.snl_schema, True), Ident(log.snl_table, True), log.snl_conn)


def source_changed(catalog: Catalog, ends: Endpoints) -> bool:
    """Whether the source's column names differ from what the snapshot recorded in a way a refresh
    acts on (asked before an idle refresh is answered without a job)."""
    snapshot = ends.snapshot
    log = catalog.log(snapshot.sn_source_table) if snapshot.incremental and snapshot.sn_source_table else None
    if log is None:
        return False
    names = {c.name for c in _source_table(ends, log).columns}
    recorded = set(recorded_columns(snapshot, ends.source_db.dialect))
    return recorded != names if _follows(snapshot) else not recorded <= names


def plan_columns(catalog: Catalog, ends: Endpoints) -> ColumnPlan | None:
    """Compare an incremental snapshot's source with its destination and its query, a nonincremental
    one's query result with its destination (:func:`_plan_query`); add and widen the destination's
    columns as the source's changed. None for an incremental snapshot without a log.

    :raises SourceColumnsChanged: a listed or key column dropped, a type that cannot be held.
    """
    snapshot = ends.snapshot
    if not snapshot.incremental:
        return _plan_query(ends)
    log = catalog.log(snapshot.sn_source_table) if snapshot.sn_source_table else None
    if log is None:
        return None
    source_info = _source_table(ends, log)
    recorded = recorded_columns(snapshot, ends.source_db.dialect)
    at_source = {c.name: c for c in source_info.columns}
    gone = [n for n in recorded if n not in at_source]
    _refuse_drops(snapshot, source_info, gone, log.key_columns)
    added = [c for c in source_info.columns if c.name not in recorded] if _follows(snapshot) else []
    live = [n for n in recorded if n in at_source] + [c.name for c in added]
    changes = {k: list(v) for k, v in snapshot.column_changes.items()}
    notes: list[str] = []
    dest_info = ends.dest_table()
    altered = _add_columns(ends, dest_info, added)
    widened = _widen_columns(ends, dest_info, [at_source[n] for n in live if n not in {c.name for c in added}])
    if altered or widened:
        dest_info = ends.dest_table()
    if added:
        names = [c.name for c in added]
        notes.append(f"{_columns(names)} added at the source: added to the destination, filled by a complete refresh")
        _note(changes, "added", names)
        changes["kept"] = [n for n in changes.get("kept", []) if n not in names]
    if gone:
        notes.append(f"{_columns(gone)} dropped at the source: kept in the destination with their values")
        _note(changes, "kept", gone)
    if widened:
        notes.append(f"{_columns(widened)} widened at the source: widened in the destination")
        _note(changes, "widened", widened)
    dest = ends.dest_db.dialect
    columns = tuple(c for c in dest_info.columns if any(dest.same_name(c.name, n) for n in live))
    table = source_info.table
    query = incremental_snapshot_query(ends.source_db.dialect, live, table.schema, table.table, snapshot.sn_condition)
    return ColumnPlan(columns, query, bool(added), tuple(notes), changes, len(added) + len(gone) + len(widened))


def _plan_query(ends: Endpoints) -> ColumnPlan:
    """A nonincremental snapshot follows its query's result: a column the result has and the destination
    lacks is added (this complete refresh fills it), one the result no longer has is kept with its
    values and reported once, a type the result widened is widened. Its query is kept as it is.

    :raises SourceColumnsChanged: a key column no longer returned, a type that cannot be held.
    """
    snapshot, dest = ends.snapshot, ends.dest_db.dialect
    with ends.source_db.session() as session:
        result = ends.source_db.dialect.describe_query(session, snapshot.sn_query)
    dest_info = ends.dest_table()

    def held(name: str, columns: tuple[Column, ...] | list[Column]) -> bool:
        return any(dest.same_name(c.name, name) for c in columns)

    added = [c for c in result if not held(c.name, dest_info.columns)]
    gone = [c.name for c in dest_info.columns if not held(c.name, result)]
    lost_keys = [c.name for c in dest_info.primary_key if c.name in gone]
    if lost_keys:
        raise SourceColumnsChanged(
            f"the query of snapshot {snapshot.sn_name} no longer returns its key {_columns(lost_keys)}",
            "restore them in the source, or drop the snapshot and create it again",
        )
    changes = {k: list(v) for k, v in snapshot.column_changes.items()}
    notes: list[str] = []
    altered = _add_columns(ends, dest_info, added)
    widened = _widen_columns(ends, dest_info, [c for c in result if held(c.name, dest_info.columns)])
    if altered or widened:
        dest_info = ends.dest_table()
    if added:
        names = [c.name for c in added]
        notes.append(f"{_columns(names)} added at the source: added to the destination, filled by this refresh")
        _note(changes, "added", names)
        changes["kept"] = [n for n in changes.get("kept", []) if n not in names]
    new_gone = [n for n in gone if n not in changes.get("kept", [])]
    if new_gone:
        notes.append(f"{_columns(new_gone)} dropped at the source: kept in the destination with their values")
        _note(changes, "kept", new_gone)
    if widened:
        notes.append(f"{_columns(widened)} widened at the source: widened in the destination")
        _note(changes, "widened", widened)
    columns = tuple(c for c in dest_info.columns if held(c.name, result))
    followed = len(added) + len(new_gone) + len(widened)
    return ColumnPlan(columns, snapshot.sn_query, bool(added), tuple(notes), changes, followed)


def record_plan(catalog: Catalog, snapshot: SnapshotRecord, plan: ColumnPlan) -> None:
    """Record, after a refresh of ``snapshot`` (as it was before) succeeded, the query and the changes
    it followed (nothing when nothing changed)."""
    changes = {k: v for k, v in plan.changes.items() if v}
    if plan.query == snapshot.sn_query and changes == snapshot.column_changes:
        return
    text = json.dumps(changes) if changes else None
    catalog.update_snapshot(snapshot.sn_name, sn_query=plan.query, sn_column_changes=text)


def _columns(names: list[str]) -> str:
    return ("column " if len(names) == 1 else "columns ") + ", ".join(names)


def _note(changes: dict[str, list[str]], kind: str, names: list[str]) -> None:
    changes[kind] = [*changes.get(kind, []), *(n for n in names if n not in changes.get(kind, []))]


def _refuse_drops(snapshot: SnapshotRecord, source: TableInfo, gone: list[str], key: list[str]) -> None:
    """A listed column, or a key column, dropped at the source: the snapshot cannot follow."""
    refused = gone if not _follows(snapshot) else [n for n in gone if n in key]
    if refused:
        raise SourceColumnsChanged(
            f"{_columns(refused)} of snapshot {snapshot.sn_name} no longer "
            f"{'exists' if len(refused) == 1 else 'exist'} in its source {source.table}",
            "restore them in the source, or drop the snapshot and create it again with the columns it has now",
        )


def _add_columns(ends: Endpoints, dest_info: TableInfo, added: list[Column]) -> bool:
    """Add the columns the destination lacks (nullable, the portable type); whether any was."""
    source, dest = ends.source_db.dialect, ends.dest_db.dialect
    missing = [c for c in added if not any(dest.same_name(d.name, c.name) for d in dest_info.columns)]
    statements = []
    for column in missing:
        try:
            type_sql = dest.map_type(column.type_sql, source)
        except InvalidArgument as err:
            raise SourceColumnsChanged(
                f"column {column.name} added to {ends.snapshot.sn_source_table or 'the query'}: {err.message}",
                f"add it to the destination {dest_info.table} yourself, with a type that holds it; "
                "the next refresh fills it",
            ) from None
        table = dest_info.table
        statements.append(dest.add_column_sql(table.schema, table.table, Column(column.name, type_sql, True)))
    if statements:
        with ends.dest_db.session() as session:
            for statement in statements:
                session.execute(statement)
    return bool(statements)


def _widen_columns(ends: Endpoints, dest_info: TableInfo, columns: list[Column]) -> list[str]:
    """Widen in place the destination's columns narrower than their source's type now; their names.

    :raises SourceColumnsChanged: a listed column's, or one the dialect cannot widen.
    """
    dest = ends.dest_db.dialect
    if dest.types_flexible:
        return []
    widened = []
    for column in columns:
        held = next((d for d in dest_info.columns if dest.same_name(d.name, column.name)), None)
        target = _narrower(ends, held, column) if held is not None else None
        if held is None or target is None:
            continue
        _widen(ends, dest_info, held, target)
        widened.append(column.name)
    return widened


def _narrower(ends: Endpoints, held: Column, column: Column) -> str | None:
    """The destination's type ``held`` needs to take ``column``'s values, if it does not now.

    :raises SourceColumnsChanged: when the destination's column is of another kind (a number column
        asked to hold text), or the snapshot has a column list (it does not widen).
    """
    source, dest = ends.source_db.dialect, ends.dest_db.dialect
    try:
        target = dest.map_type(column.type_sql, source)
        if target == held.type_sql:  # the same type (what follows would find so, parsing both)
            return None
        needed, have = to_generic(target, dest.name), to_generic(held.type_sql, dest.name)
    except InvalidArgument:
        return None  # no portable type: not compared (as when the snapshot was created)
    verdict = HOLDS if needed == have else holds(have, needed)
    if verdict == HOLDS:
        return None
    if verdict == NARROWER and _follows(ends.snapshot):
        return target
    where = ends.snapshot.sn_source_table or "the query"
    raise SourceColumnsChanged(
        f"column {column.name} of {where} is now {column.type_sql}, which column "
        f"{held.name} {held.type_sql} of snapshot {ends.snapshot.sn_name} cannot hold",
        f"change the destination's column to {target} and refresh again, or drop the snapshot and create it again",
    )


def _widen(ends: Endpoints, dest_info: TableInfo, held: Column, target: str) -> None:
    dest, table = ends.dest_db.dialect, dest_info.table
    statement = dest.widen_column_sql(table.schema, table.table, Column(held.name, target, held.nullable))
    hint = f"change column {held.name} of {table} to {target} yourself and refresh again"
    if statement is None:
        raise SourceColumnsChanged(
            f"column {held.name} was widened at the source to {target}; {dest.name} cannot widen it in place", hint
        )
    try:
        with ends.dest_db.session() as session:
            session.execute(statement)
    except Exception as err:
        raise SourceColumnsChanged(
            f"column {held.name} was widened at the source; widening it to {target} in {table} failed: {one_line(err)}",
            hint,
        ) from err

"""The tables a snapshot group replicates: its source schema's tables, which of them can be members,
making one a member (its snapshot log and incremental snapshot), and the order members are applied in
(parents before children along the foreign keys between them)."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

from snaprepl.catalog.lookup import executable_database
from snaprepl.catalog.records import GroupRecord
from snaprepl.catalog.store import Catalog
from snaprepl.common.table_names import Ident, TableRef
from snaprepl.errors import SnapreplError
from snaprepl.ops.snapshot_guards import OWN_TABLE_PREFIXES
from snaprepl.ops.snapshot_logs import create_snapshot_log
from snaprepl.ops.snapshots import Refresher, create_incremental_snapshot
from snaprepl.settings import Settings

#: Why a source table is not a member (SG_SKIPPED values start with these).
EXCLUDED = "excluded by the group's EXCLUDE patterns"
NO_KEY = (
    "no primary key: skipped (add one, then ALTER SNAPSHOT GROUP ... ADD, or refresh a group that includes new tables)"
)


def excluded(table: str, patterns: Iterable[str]) -> bool:
    """Whether ``table`` matches one of the EXCLUDE ``patterns`` (shell patterns, any case)."""
    return any(fnmatch.fnmatchcase(table.lower(), p.strip().lower()) for p in patterns if p.strip())


def parse_patterns(text: str | None) -> list[str]:
    """``EXCLUDE 'audit_*, tmp_%'``: comma-separated patterns (``%`` is read as ``*``, as in SQL)."""
    return [p.strip().replace("%", "*") for p in (text or "").split(",") if p.strip()]


def source_layout(group: GroupRecord, catalog: Catalog) -> tuple[list[str], list[tuple[str, str]]]:
    """The group's candidate source tables (snaprepl's own and other snapshots' destinations left out)
    and the foreign keys between the source schema's tables, as (child, parent)."""
    database = executable_database(group.sg_source_conn)
    dialect = database.dialect
    with database.session() as session:
        tables = dialect.schema_tables(session, group.sg_source_schema)
        edges = dialect.foreign_key_edges(session, group.sg_source_schema)
    logs = {r.snl_rlog for r in catalog.logs() if r.snl_conn == group.sg_source_conn}
    copies = {
        s.sn_dest_table
        for s in catalog.snapshots()
        if s.sn_dest_conn == group.sg_source_conn and s.sn_dest_schema == group.sg_source_schema
    }
    own = [t for t in tables if t.lower().startswith(OWN_TABLE_PREFIXES) or t in logs or t in copies]
    return [t for t in tables if t not in own], edges


def dependency_order(tables: Iterable[str], edges: Iterable[tuple[str, str]]) -> list[str]:
    """``tables`` with every parent before its children (foreign keys as (child, parent) ``edges``);
    ties, and the tables of a cycle, by name."""
    pending = sorted(set(tables))
    parents: dict[str, set[str]] = {t: set() for t in pending}
    for child, parent in edges:
        if child in parents and parent in parents and child != parent:
            parents[child].add(parent)
    ordered: list[str] = []
    while pending:
        ready = [t for t in pending if not parents[t] - set(ordered)] or pending[:1]  # a cycle: by name
        ordered.append(ready[0])
        pending.remove(ready[0])
    return ordered


def add_member(
    group: GroupRecord, table: str, *, catalog: Catalog, settings: Settings, refresher: Refresher
) -> str | None:
    """Make source ``table`` a member of ``group``: its snapshot log when missing, an incremental
    snapshot into the group's destination schema (filled by a complete refresh), and the membership.

    :return: None when it is a member, else why it is not (one line; the group goes on without it).
    """
    source = TableRef(Ident(table, True), Ident(group.sg_source_schema, True), group.sg_source_conn, True)
    dest = TableRef(Ident(table, True), Ident(group.sg_dest_schema, True), group.sg_dest_conn, True)
    try:
        database = executable_database(group.sg_source_conn)
        with database.session() as session:
            info = database.describe(session, source)
        if not info.primary_key:
            return NO_KEY
        if catalog.log(info.table.key) is None:
            create_snapshot_log(source, catalog=catalog)
        name = f"{group.sg_dest_schema}.{table}@{group.sg_dest_conn}"
        existing = catalog.snapshot(name)
        if existing is None:
            name = create_incremental_snapshot(
                dest, source, catalog=catalog, settings=settings, refresher=refresher, group=group.sg_name
            ).record.sn_name
        elif existing.sn_source_table != info.table.key or not existing.incremental:
            return f"destination {name} is already a snapshot of something else"
        other = catalog.group_of(name)
        if other is not None and other != group.sg_name:
            return f"snapshot {name} is already in group {other}"
        if other is None:
            catalog.add_member(group.sg_name, name, SnapreplError(f"snapshot {name} joined a group concurrently"))
    except SnapreplError as err:
        return err.message
    return None

"""Which tables feed which: a snapshot may not write into one of its own sources, directly or
through a chain of snapshots (``a -> b``, ``b -> c``, then ``c -> a`` would overwrite ``a``).

Tables are compared by where they really are: the connection's database server (two connection ids
pointing at the same host, port and database, or the same SQLite file, are one place), then schema
and table as the database stores them, compared by the dialect's rule for names.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from snaprepl.catalog.lookup import executable_database
from snaprepl.catalog.records import SnapshotRecord
from snaprepl.catalog.store import Catalog
from snaprepl.common.table_names import ResolvedTable
from snaprepl.connections.lookup import get_connection
from snaprepl.dialects import Dialect
from snaprepl.errors import InvalidArgument, SnapreplError

if TYPE_CHECKING:
    from sqlglot import exp

_LOCAL = {"localhost", "127.0.0.1", "::1", ""}


@dataclass(frozen=True)
class Place:
    """A table where it really is; ``schema`` None means the connection's default schema."""

    conn_id: str
    schema: str | None
    table: str

    def __str__(self) -> str:
        return f"{self.schema + '.' if self.schema else ''}{self.table}@{self.conn_id}"


def endpoint(conn_id: str) -> tuple[str, str, int | None, str]:
    """Where ``conn_id`` points: dialect, host (or the real path of a database file), port, database."""
    info = get_connection(conn_id)
    host = (info.host or "").lower()
    host = "localhost" if host in _LOCAL else host
    database = info.schema or ""
    if "/" in host or "/" in database:  # a database file
        return (info.dialect.name, os.path.realpath(info.host or info.schema or ""), None, "")
    return (info.dialect.name, host, info.port, database)


class _Places:
    """Compares places, looking each connection up once per check."""

    def __init__(self) -> None:
        self.endpoint = functools.cache(endpoint)
        self.dialect = functools.cache(lambda conn_id: get_connection(conn_id).dialect)
        self.default_schema = functools.cache(_default_schema)

    def same(self, a: Place, b: Place) -> bool:
        if self.endpoint(a.conn_id) != self.endpoint(b.conn_id):
            return False
        dialect: Dialect = self.dialect(a.conn_id)
        schema_a = a.schema if a.schema is not None else self.default_schema(a.conn_id)
        schema_b = b.schema if b.schema is not None else self.default_schema(b.conn_id)
        if schema_a is None or schema_b is None:
            return False  # a database that cannot be asked: its tables are not this one
        return dialect.same_name(schema_a, schema_b) and dialect.same_name(a.table, b.table)


def _default_schema(conn_id: str) -> str | None:
    try:
        database = executable_database(conn_id)
        with database.session() as session:
            return database.dialect.default_schema(session)
    except SnapreplError:
        return None


def query_places(conn_id: str, tree: exp.Expr) -> list[Place]:
    """The tables a query on ``conn_id`` reads (common table expressions left out)."""
    from sqlglot import exp

    dialect = get_connection(conn_id).dialect
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    places = []
    for table in tree.find_all(exp.Table):
        if not table.db and table.name in ctes:
            continue
        quoted_db = bool(table.args.get("db") and table.args["db"].args.get("quoted"))
        quoted_name = bool(table.this and table.this.args.get("quoted"))
        schema = (table.db if quoted_db else dialect.fold_unquoted(table.db)) if table.db else None
        places.append(Place(conn_id, schema, table.name if quoted_name else dialect.fold_unquoted(table.name)))
    return places


def sources_of(record: SnapshotRecord) -> list[Place]:
    """The tables the query of snapshot ``record`` reads."""
    import sqlglot

    dialect = get_connection(record.sn_source_conn).dialect
    tree = sqlglot.parse_one(record.sn_query, read=dialect.sqlglot_dialect or None)
    return query_places(record.sn_source_conn, tree)


def _dest_of(record: SnapshotRecord) -> Place:
    return Place(record.sn_dest_conn, record.sn_dest_schema, record.sn_dest_table)


def _edges(catalog: Catalog, places: _Places) -> list[tuple[SnapshotRecord, list[Place]]]:
    from sqlglot.errors import SqlglotError

    edges = []
    for record in catalog.snapshots():
        try:
            places.endpoint(record.sn_source_conn), places.endpoint(record.sn_dest_conn)
            edges.append((record, sources_of(record)))
        except (SnapreplError, SqlglotError):
            continue  # a snapshot whose connection or query cannot be read here feeds nothing we can see
    return edges


def _downstream_path(
    places: _Places, start: Place, target: Place, edges: Iterable[tuple[SnapshotRecord, list[Place]]]
) -> list[str]:
    """Names of the snapshots leading from ``start`` to ``target`` ([] if none do)."""
    edges = list(edges)
    _same = places.same
    queue: list[tuple[Place, list[str]]] = [(start, [])]
    seen: list[Place] = [start]
    while queue:
        place, path = queue.pop(0)
        for record, sources in edges:
            if any(_same(place, s) for s in sources):
                dest = _dest_of(record)
                if _same(dest, target):
                    return [*path, record.sn_name]
                if not any(_same(dest, s) for s in seen):
                    seen.append(dest)
                    queue.append((dest, [*path, record.sn_name]))
    return []


def refuse_own_source(catalog: Catalog, dest: ResolvedTable, sources: list[Place]) -> None:
    """Refuse a snapshot into ``dest`` that reads ``sources`` if ``dest`` is one of them, or feeds one
    of them through registered snapshots.

    :raises InvalidArgument: naming the source and the chain.
    """
    target = Place(dest.conn_id, dest.schema, dest.table)
    places = _Places()
    for source in sources:
        if places.same(target, source):
            raise InvalidArgument(
                f"snapshot {dest} would write into its own source {source}: a refresh would overwrite it",
                "choose another destination",
            )
    edges = None
    for source in sources:
        edges = edges if edges is not None else _edges(catalog, places)
        path = _downstream_path(places, target, source, edges)
        if path:
            raise InvalidArgument(
                f"snapshot {dest} would overwrite its own source {source}, which it feeds through "
                f"snapshot{'s' if len(path) > 1 else ''} {' -> '.join(path)}",
                "choose another destination; snapshots may not form a cycle",
            )


def openlineage_dataset(place: Place) -> tuple[str, str]:
    """(namespace, name) of the table at ``place`` as OpenLineage names datasets: ``postgres://host:port``
    and ``database.schema.table``; ``mysql://host:port`` and ``database.table`` (its schemas are its
    databases); ``sqlite://<path of the file>`` and ``schema.table``."""
    info = get_connection(place.conn_id)
    dialect = info.dialect
    schema = place.schema if place.schema is not None else _default_schema(place.conn_id)
    if dialect.file_database:
        path = os.path.realpath(info.host or info.schema or "")
        return f"{dialect.name}://{path}", ".".join(p for p in (schema, place.table) if p)
    authority = (info.host or "") if info.port is None else f"{info.host}:{info.port}"
    database = None if dialect.schema_is_database else info.schema
    return f"{dialect.name}://{authority}", ".".join(p for p in (database, schema, place.table) if p)


def readers_of(catalog: Catalog, place: Place, *, besides: str | None = None) -> list[str]:
    """Names of the snapshots (other than ``besides``) whose query reads the table at ``place``."""
    places = _Places()
    return [
        record.sn_name
        for record, sources in _edges(catalog, places)
        if record.sn_name != besides and any(places.same(place, s) for s in sources)
    ]


def chain_levels(records: Sequence[SnapshotRecord]) -> list[list[str]]:
    """The snapshots ``records`` in levels along their chains: one that reads another's destination is
    in a later level than that one (a group applies a level, then reads the next). Within a level the
    order of ``records`` is kept; a snapshot whose query cannot be read is in the first level."""
    from sqlglot.errors import SqlglotError

    places = _Places()
    reads: dict[str, list[Place]] = {}
    for record in records:
        try:
            reads[record.sn_name] = sources_of(record)
        except (SnapreplError, SqlglotError):
            reads[record.sn_name] = []
    feeds = {
        record.sn_name: [
            other.sn_name
            for other in records
            if other.sn_name != record.sn_name and any(places.same(_dest_of(other), s) for s in reads[record.sn_name])
        ]
        for record in records
    }
    depth: dict[str, int] = {}

    def level(name: str, seen: frozenset[str]) -> int:
        if name not in depth:  # a cycle cannot be registered (refuse_own_source); ``seen`` stops one anyway
            upstream = [level(u, seen | {name}) + 1 for u in feeds[name] if u not in seen]
            depth[name] = max(upstream, default=0)
        return depth[name]

    for record in records:
        level(record.sn_name, frozenset())
    levels: list[list[str]] = [[] for _ in range(max(depth.values(), default=-1) + 1)]
    for record in records:
        levels[depth[record.sn_name]].append(record.sn_name)
    return levels

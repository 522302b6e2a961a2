"""A snapshot's destination: the table it fills, found (or planned) on its connection and checked
against the columns the snapshot will write."""

from __future__ import annotations

from dataclasses import dataclass

from snaprepl.catalog.lookup import executable_database
from snaprepl.catalog.store import Catalog
from snaprepl.catalog.table_lineage import Place, refuse_own_source
from snaprepl.common.table_names import Ident, ResolvedTable, TableRef
from snaprepl.database.sessions import Database
from snaprepl.dialects import Column, Dialect, TableInfo
from snaprepl.errors import InvalidArgument
from snaprepl.ops.snapshot_guards import check_existing_destination

RESERVED_PREFIX = "SNAPREPL_"


@dataclass(frozen=True)
class Destination:
    """Where a new snapshot writes: ``existing`` describes the table if it is there already."""

    database: Database
    table: ResolvedTable
    existing: TableInfo | None

    @property
    def dialect(self) -> Dialect:
        return self.database.dialect

    def create_sql(self, columns: list[Column], key: list[str]) -> str | None:
        """The CREATE TABLE of a missing destination; None if it exists."""
        if self.existing is not None:
            return None
        return self.dialect.create_table_sql(self.table.schema, self.table.table, columns, key)

    def check_columns(self, columns: list[Column], key: list[str]) -> None:
        """Refuse an existing destination without ``columns`` or, if ``key`` is given, with another key."""
        if self.existing is None:
            return
        info, dialect = self.existing, self.dialect
        missing = [c.name for c in columns if not any(dialect.same_name(d.name, c.name) for d in info.columns)]
        if missing:
            raise InvalidArgument(
                f"destination {info.table} exists but has no columns {', '.join(missing)}",
                "add them, choose another destination, or drop the table",
            )
        dest_key = [c.name for c in info.primary_key]
        if key and [k.lower() for k in dest_key] != [k.lower() for k in key]:
            raise InvalidArgument(
                f"destination {info.table} exists with primary key ({', '.join(dest_key) or 'none'}), "
                f"not ({', '.join(key)})",
                "an incremental snapshot upserts by the source's key; give the table that primary key",
            )


def destination(catalog: Catalog, ref: TableRef, sources: list[Place], *, use_existing: bool) -> Destination:
    """Find the destination ``ref`` names and refuse it if it is one of ``sources`` (or feeds one),
    or holds rows without ``use_existing``."""
    database = executable_database(ref.conn_id)
    table, existing = _resolve(database, ref)
    refuse_own_source(catalog, table, sources)
    check_existing_destination(database, table, existing, use_existing)
    return Destination(database, table, existing)


def _resolve(database: Database, ref: TableRef) -> tuple[ResolvedTable, TableInfo | None]:
    dialect = database.dialect
    with database.session() as session:
        schema = dialect.fold(ref.schema) if ref.schema else dialect.default_schema(session)
        table = dialect.fold(ref.table)
        found = dialect.find_table(session, schema, table)
        if found is None:
            return ResolvedTable(ref.conn_id, schema, table), None
        info = dialect.describe(session, Ident(found[0], True), Ident(found[1], True), ref.conn_id)
    return info.table, info


def mapped_columns(columns: list[Column], source: Dialect, dest: Dialect, key: list[str]) -> list[Column]:
    """``columns`` of a ``source`` query or table with their types in ``dest``'s terms."""
    mapped = []
    for column in columns:
        if column.name.upper().startswith(RESERVED_PREFIX):
            raise InvalidArgument(f"column name {column.name!r} is reserved by snaprepl", "rename it in the query")
        try:
            type_sql = dest.map_type(column.type_sql, source)
        except InvalidArgument as err:
            raise InvalidArgument(f"column {column.name}: {err.message}", err.hint) from None
        mapped.append(Column(column.name, type_sql, column.name not in key and column.nullable, None))
    return mapped


def drop_table(database: Database, table: ResolvedTable) -> None:
    with database.session() as session:
        session.execute(database.dialect.drop_table_sql(table.schema, table.table))

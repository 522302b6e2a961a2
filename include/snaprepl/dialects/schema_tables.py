"""The tables of a schema and the foreign keys between them, per dialect (snapshot groups, issue 25:
a group replicates a schema's tables and applies its members parents first)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from snaprepl.dialects.model import SqlSession


class SchemaTables:
    """Default: the SQL standard's information_schema (PostgreSQL follows it)."""

    if TYPE_CHECKING:
        name: ClassVar[str]

        def quote(self, name: str) -> str: ...

    def schema_tables(self, session: SqlSession, schema: str) -> list[str]:
        """The base tables of ``schema``, by name (views and snaprepl's own tables included: callers
        leave out what they know)."""
        rows = session.query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = :schema "
            "AND table_type = 'BASE TABLE' ORDER BY table_name",
            {"schema": schema},
        )
        return [str(r[0]) for r in rows]

    def foreign_key_edges(self, session: SqlSession, schema: str) -> list[tuple[str, str]]:
        """(child, parent) of every foreign key between two tables of ``schema``."""
        rows = session.query(
            "SELECT DISTINCT tc.table_name, pk.table_name FROM information_schema.referential_constraints rc "
            "JOIN information_schema.table_constraints tc ON tc.constraint_schema = rc.constraint_schema "
            "AND tc.constraint_name = rc.constraint_name "
            "JOIN information_schema.table_constraints pk ON pk.constraint_schema = rc.unique_constraint_schema "
            "AND pk.constraint_name = rc.unique_constraint_name "
            "WHERE tc.table_schema = :schema AND pk.table_schema = :schema",
            {"schema": schema},
        )
        return [(str(c), str(p)) for c, p in rows]


class MySqlSchemaTables(SchemaTables):
    """MariaDB/MySQL: a constraint's name is unique per table only, so its parent comes from
    ``REFERENCED_TABLE_NAME``; names compare in binary."""

    def schema_tables(self, session: SqlSession, schema: str) -> list[str]:
        rows = session.query(
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE BINARY TABLE_SCHEMA = :schema "
            "AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME",
            {"schema": schema},
        )
        return [str(r[0]) for r in rows]

    def foreign_key_edges(self, session: SqlSession, schema: str) -> list[tuple[str, str]]:
        rows = session.query(
            "SELECT DISTINCT TABLE_NAME, REFERENCED_TABLE_NAME FROM information_schema.REFERENTIAL_CONSTRAINTS "
            "WHERE BINARY CONSTRAINT_SCHEMA = :schema AND BINARY UNIQUE_CONSTRAINT_SCHEMA = :schema",
            {"schema": schema},
        )
        return [(str(c), str(p)) for c, p in rows]


class SqliteSchemaTables(SchemaTables):
    """SQLite: ``sqlite_master`` and ``pragma_foreign_key_list`` of each table."""

    def schema_tables(self, session: SqlSession, schema: str) -> list[str]:
        rows = session.query(
            f"SELECT name FROM {self.quote(schema)}.sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
        )
        return [str(r[0]) for r in rows]

    def foreign_key_edges(self, session: SqlSession, schema: str) -> list[tuple[str, str]]:
        edges = set()
        for table in self.schema_tables(session, schema):
            rows = session.query(
                'SELECT DISTINCT "table" FROM pragma_foreign_key_list(:t, :s)', {"t": table, "s": schema}
            )
            edges.update((table, str(r[0])) for r in rows)
        return sorted(edges)

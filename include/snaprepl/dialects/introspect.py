"""Introspection, per dialect: resolve a table's name on a database and describe its columns (mixed
into every dialect as :class:`Introspection`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from snaprepl.common.table_names import Ident, ResolvedTable
from snaprepl.dialects.model import Column, SqlSession, TableInfo
from snaprepl.errors import TableNotFound


class Introspection:
    """What a dialect reads of a database's catalog."""

    if TYPE_CHECKING:
        name: ClassVar[str]

        def fold(self, ident: Ident) -> str: ...

    def default_schema(self, session: SqlSession) -> str:
        raise NotImplementedError(f"{self.name}: introspection is not implemented")

    def schema_exists(self, session: SqlSession, schema: str) -> bool:
        raise NotImplementedError(f"{self.name}: introspection is not implemented")

    def database_name(self, session: SqlSession) -> str:
        """The name of the database the session is connected to (what a three-part name's qualifier names)."""
        raise NotImplementedError(f"{self.name}: introspection is not implemented")

    def describe(self, session: SqlSession, schema: Ident | None, table: Ident, conn_id: str) -> TableInfo:
        """Resolve ``schema.table`` on this database and describe its columns.

        :raises TableNotFound: with a hint when only a differently-cased table exists.
        """
        schema_name = self.fold(schema) if schema else self.default_schema(session)
        table_name = self.fold(table)
        found = self.find_table(session, schema_name, table_name)
        if found is None:
            near = self.find_table_any_case(session, schema_name, table_name)
            hint = (
                f'did you mean "{near}"? quote the name to keep its case'
                if near
                else "check the name and the connection"
            )
            raise TableNotFound(
                f"table {schema_name}.{table_name} does not exist on connection '{conn_id}' ({self.name})",
                hint,
            )
        resolved = ResolvedTable(conn_id=conn_id, schema=found[0], table=found[1])
        return TableInfo(resolved, tuple(self.columns(session, found[0], found[1])))

    def find_table(self, session: SqlSession, schema: str, table: str) -> tuple[str, str] | None:
        raise NotImplementedError(f"{self.name}: introspection is not implemented")

    def find_table_any_case(self, session: SqlSession, schema: str, table: str) -> str | None:
        return None

    def columns(self, session: SqlSession, schema: str, table: str) -> list[Column]:
        raise NotImplementedError(f"{self.name}: introspection is not implemented")

    def table_exists(self, session: SqlSession, schema: str, table: str) -> bool:
        return self.find_table(session, schema, table) is not None

"""Changing a destination's columns when its source's change (issue 25, item 3), per dialect: adding
a column the source gained, widening one the source widened (mixed into every dialect as
:class:`ColumnAlteration`), and whether a destination column holds the source's type
(:func:`holds`, pure)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from snaprepl.dialects.model import Column
from snaprepl.dialects.types import GenericType

#: What :func:`holds` answers.
HOLDS, NARROWER, OTHER_KIND = "holds", "narrower", "other kind"

_UNBOUNDED = 1 << 62
#: Families whose members differ only by size, as (family, size) per generic name.
_SIZES: dict[str, tuple[str, int]] = {
    "smallint": ("integer", 16),
    "integer": ("integer", 32),
    "bigint": ("integer", 64),
    "real": ("float", 24),
    "double precision": ("float", 53),
    "varchar": ("text", _UNBOUNDED),
    "long varchar": ("text", _UNBOUNDED),
    "nvarchar": ("text", _UNBOUNDED),
    "long nvarchar": ("text", _UNBOUNDED),
    "varbinary": ("binary", _UNBOUNDED),
    "long varbinary": ("binary", _UNBOUNDED),
}
_SIZED = {"varchar(n)": "text", "nvarchar(n)": "text", "char(n)": "text", "nchar(n)": "text", "varbinary(n)": "binary"}
#: Digits left of the point an integer type needs.
_INTEGER_DIGITS = {16: 5, 32: 10, 64: 19}


def _size(generic: GenericType) -> tuple[str, int] | None:
    if generic.name in _SIZES:
        return _SIZES[generic.name]
    if generic.name in _SIZED:
        return _SIZED[generic.name], generic.length or _UNBOUNDED
    return None


def _numeric_holds(held: GenericType, needed: GenericType) -> str:
    if held.name == "numeric":
        return HOLDS
    held_int, held_scale = (held.precision or 0) - (held.scale or 0), held.scale or 0
    if needed.name == "numeric":
        return NARROWER
    if needed.name == "numeric(p, s)":
        need_int, need_scale = (needed.precision or 0) - (needed.scale or 0), needed.scale or 0
        return HOLDS if held_int >= need_int and held_scale >= need_scale else NARROWER
    size = _size(needed)
    if size and size[0] == "integer":
        return HOLDS if held_int >= _INTEGER_DIGITS[size[1]] else NARROWER
    return HOLDS


def holds(held: GenericType, needed: GenericType) -> str:
    """Whether a column of type ``held`` takes every value of type ``needed``: :data:`HOLDS` (also
    when the two cannot be compared, e.g. dates and texts as the dialects' mappings give them);
    :data:`NARROWER`, a type of the same kind but smaller (``int`` for ``bigint``, ``varchar(40)``
    for ``varchar(200)``, ``numeric(8, 2)`` for ``numeric(12, 2)``), which the destination can widen;
    :data:`OTHER_KIND`, a number column asked to hold text or bytes."""
    if held.name.startswith("numeric"):
        return _numeric_holds(held, needed)
    held_size, needed_size = _size(held), _size(needed)
    if held_size is None or needed_size is None:
        return HOLDS
    if held_size[0] == needed_size[0]:
        return HOLDS if held_size[1] >= needed_size[1] else NARROWER
    if held_size[0] in ("integer", "float") and needed_size[0] in ("text", "binary"):
        return OTHER_KIND
    if held_size[0] == "integer" and needed_size[0] == "float":
        return OTHER_KIND
    return HOLDS


class ColumnAlteration:
    """How a dialect adds and widens a destination's columns."""

    #: Any value fits any column (SQLite's type affinity): nothing to widen.
    types_flexible: ClassVar[bool] = False

    if TYPE_CHECKING:

        def quote(self, name: str) -> str: ...

        def qualified(self, schema: str | None, table: str) -> str: ...

    def held_type(self, declared: GenericType) -> GenericType:
        """The type of the values a column declared ``declared`` holds (what a writer must not narrow)."""
        return declared

    def add_column_sql(self, schema: str, table: str, column: Column) -> str:
        """Add ``column`` (nullable) to ``schema.table``."""
        return f"ALTER TABLE {self.qualified(schema, table)} ADD COLUMN {self.quote(column.name)} {column.type_sql}"

    def widen_column_sql(self, schema: str, table: str, column: Column) -> str | None:
        """Change ``column`` of ``schema.table`` to ``column.type_sql`` in place, keeping its values;
        None where the dialect cannot."""
        return None


class PostgresColumnAlteration(ColumnAlteration):
    def widen_column_sql(self, schema: str, table: str, column: Column) -> str | None:
        return (
            f"ALTER TABLE {self.qualified(schema, table)} ALTER COLUMN {self.quote(column.name)} TYPE {column.type_sql}"
        )


class MySqlColumnAlteration(ColumnAlteration):
    def add_column_sql(self, schema: str, table: str, column: Column) -> str:
        return f"{super().add_column_sql(schema, table, column)} NULL"

    def widen_column_sql(self, schema: str, table: str, column: Column) -> str | None:
        # MODIFY restates the whole column: its nullability is kept (a default or comment is not).
        null = "NULL" if column.nullable else "NOT NULL"
        return (
            f"ALTER TABLE {self.qualified(schema, table)} MODIFY COLUMN {self.quote(column.name)} "
            f"{column.type_sql} {null}"
        )


#: SQLite stores every integer in up to 8 bytes and every float in 8, whatever the declared type.
_SQLITE_HELD = {"smallint": "bigint", "integer": "bigint", "real": "double precision"}


class SqliteColumnAlteration(ColumnAlteration):
    types_flexible = True

    def held_type(self, declared: GenericType) -> GenericType:
        held = _SQLITE_HELD.get(declared.name)
        return GenericType(held) if held else declared

"""Column type mapping between dialects.

The seed (Virtuoso's heterogeneous replication manual) gives a table from Virtuoso types to SQL
Server, Oracle, DB2 and Informix. That table is :data:`SEED_TYPE_TABLE`, kept verbatim as data.
snaprepl adds the same kind of row for its three real dialects (PostgreSQL, MariaDB/MySQL, SQLite)
and a few generic types the seed does not list (bigint, boolean, char, time zones); those
additions are in :data:`EXTENDED_TYPE_TABLE`.

A source column type (in the source's own dialect) is parsed with sqlglot into a
:class:`GenericType` (a seed type name plus its parameters), which is then rendered for the target.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from snaprepl.errors import InvalidArgument

if TYPE_CHECKING:
    from sqlglot import exp

#: Dialect column order of the seed table.
SEED_DIALECTS = ("mssql", "oracle", "db2", "informix")

#: The seed's table, row by row: Virtuoso type, then SQL Server, Oracle, DB2, Informix.
#: ``n``, ``p`` and ``s`` stand for the length, precision and scale of the source type.
SEED_TYPE_TABLE: tuple[tuple[str, str, str, str, str], ...] = (
    ("varchar", "varchar(8000)", "VARCHAR2(4000)", "VARCHAR(32000)", "VARCHAR(254)"),
    ("varchar(n)", "varchar(n)", "VARCHAR2(n)", "VARCHAR(n)", "VARCHAR(n)"),
    ("integer", "int", "INTEGER", "INTEGER", "INTEGER"),
    ("smallint", "smallint", "SMALLINT", "SMALLINT", "SMALLINT"),
    ("real", "real", "FLOAT", "REAL", "SMALLFLOAT"),
    ("double precision", "float", "DOUBLE PRECISION", "DOUBLE", "FLOAT"),
    ("numeric", "numeric(38, 15)", "NUMERIC(38, 15)", "NUMERIC(32, 15)", "DECIMAL(31, 15)"),
    ("numeric(p, s)", "numeric(p, s)", "NUMERIC(p, s)", "NUMERIC(p, s)", "DECIMAL(p, s)"),
    ("date", "datetime", "DATE", "DATE", "DATE"),
    ("time", "datetime", "DATE", "TIME", "DATETIME HOUR TO SECOND"),
    ("datetime", "datetime", "DATE", "TIMESTAMP", "DATETIME YEAR TO FRACTION(5)"),
    ("timestamp", "datetime", "DATE", "TIMESTAMP", "DATETIME YEAR TO FRACTION(5)"),
    ("varbinary", "varbinary(8000)", "RAW(2000)", "VARCHAR(32000) FOR BIT DATA", "BYTE"),
    ("varbinary(n)", "varbinary(n)", "RAW(n)", "VARCHAR(n) FOR BIT DATA", "BYTE"),
    ("long varbinary", "image", "BLOB", "BLOB", "BYTE"),
    ("long varchar", "text", "CLOB", "CLOB", "TEXT"),
    ("nvarchar", "nvarchar(4000)", "NVARCHAR2(4000)", "VARCHAR(32000) FOR MIXED DATA", "NVARCHAR(254)"),
    ("nvarchar(n)", "nvarchar(n)", "NVARCHAR2(n)", "VARCHAR(n) FOR MIXED DATA", "NVARCHAR(n)"),
    ("long nvarchar", "ntext", "NCLOB", "DBCLOB", "TEXT"),
)

#: snaprepl's rows: the three real dialects for every seed type, plus generic types the seed lacks.
#: Columns: generic type, then postgres, mysql, sqlite, mssql, oracle, db2, informix.
EXTENDED_TYPE_TABLE: tuple[tuple[str, ...], ...] = (
    # generic            postgres             mysql               sqlite            mssql           oracle              db2                  informix
    ("varchar",          "text",              "longtext",         "TEXT",           "", "", "", ""),
    ("varchar(n)",       "varchar(n)",        "varchar(n)",       "VARCHAR(n)",     "", "", "", ""),
    ("integer",          "integer",           "int",              "INTEGER",        "", "", "", ""),
    ("smallint",         "smallint",          "smallint",         "SMALLINT",       "", "", "", ""),
    ("real",             "real",              "float",            "REAL",           "", "", "", ""),
    ("double precision", "double precision",  "double",           "DOUBLE",         "", "", "", ""),
    ("numeric",          "numeric",           "decimal(65, 30)",  "NUMERIC",        "", "", "", ""),
    ("numeric(p, s)",    "numeric(p, s)",     "decimal(p, s)",    "DECIMAL(p, s)",  "", "", "", ""),
    ("date",             "date",              "date",             "DATE",           "", "", "", ""),
    ("time",             "time(f)",           "time(f)",          "TIME",           "", "", "", ""),
    ("datetime",         "timestamp(f)",      "datetime(f)",      "TIMESTAMP",      "", "", "", ""),
    ("timestamp",        "timestamp(f)",      "datetime(f)",      "TIMESTAMP",      "", "", "", ""),
    ("varbinary",        "bytea",             "longblob",         "BLOB",           "", "", "", ""),
    ("varbinary(n)",     "bytea",             "varbinary(n)",     "BLOB",           "", "", "", ""),
    ("long varbinary",   "bytea",             "longblob",         "BLOB",           "", "", "", ""),
    ("long varchar",     "text",              "longtext",         "TEXT",           "", "", "", ""),
    ("nvarchar",         "text",              "longtext",         "TEXT",           "", "", "", ""),
    ("nvarchar(n)",      "varchar(n)",        "varchar(n)",       "NVARCHAR(n)",    "", "", "", ""),
    ("long nvarchar",    "text",              "longtext",         "TEXT",           "", "", "", ""),
    # Types the seed does not list: all seven dialects are snaprepl's choice.
    ("bigint",           "bigint",            "bigint",           "BIGINT",         "bigint",    "NUMBER(19)",   "BIGINT",     "INT8"),
    ("boolean",          "boolean",           "boolean",          "BOOLEAN",        "bit",       "NUMBER(1)",    "SMALLINT",   "BOOLEAN"),
    ("char(n)",          "char(n)",           "char(n)",          "CHAR(n)",        "char(n)",   "CHAR(n)",      "CHAR(n)",    "CHAR(n)"),
    ("nchar(n)",         "char(n)",           "char(n)",          "NCHAR(n)",       "nchar(n)",  "NCHAR(n)",     "GRAPHIC(n)", "NCHAR(n)"),
    ("timestamptz",      "timestamptz(f)",    "datetime(f)",      "TIMESTAMP",      "datetimeoffset", "TIMESTAMP WITH TIME ZONE", "TIMESTAMP", "DATETIME YEAR TO FRACTION(5)"),
)  # fmt: skip

ALL_DIALECTS = ("postgres", "mysql", "sqlite", *SEED_DIALECTS)

# Parameters a rendered type may carry.
_PARAM_RE = re.compile(r"\b([npsf])\b")


@dataclass(frozen=True)
class GenericType:
    """A dialect-neutral column type: a seed type name and its parameters.

    :param name: a generic type name (first column of the tables above).
    :param length: ``n`` for varchar/varbinary/char types.
    :param precision: ``p`` for numeric.
    :param scale: ``s`` for numeric.
    :param fraction: fractional-second digits ``f`` for time and timestamp types (default 6).
    """

    name: str
    length: int | None = None
    precision: int | None = None
    scale: int | None = None
    fraction: int = 6


def _build_table() -> dict[str, dict[str, str]]:
    table: dict[str, dict[str, str]] = {}
    for row in EXTENDED_TYPE_TABLE:
        table[row[0]] = {d: t for d, t in zip(ALL_DIALECTS, row[1:], strict=True) if t}
    for row in SEED_TYPE_TABLE:
        table.setdefault(row[0], {}).update(dict(zip(SEED_DIALECTS, row[1:], strict=True)))
    return table


TYPE_TABLE: dict[str, dict[str, str]] = _build_table()

_TEXT_TYPES = {
    "VARCHAR",
    "TEXT",
    "MEDIUMTEXT",
    "LONGTEXT",
    "TINYTEXT",
    "UUID",
    "JSON",
    "JSONB",
    "ENUM",
    "SET",
    "XML",
}
_LONG_TEXT_TYPES = {
    "TEXT",
    "MEDIUMTEXT",
    "LONGTEXT",
    "JSON",
    "JSONB",
    "XML",
}
_BINARY_TYPES = {"VARBINARY", "BINARY"}
_LONG_BINARY_TYPES = {
    "BLOB",
    "LONGBLOB",
    "MEDIUMBLOB",
    "TINYBLOB",
    "IMAGE",
}
_INT_TYPES = {
    "INT",
    "MEDIUMINT",
    "UMEDIUMINT",
    "USMALLINT",
}
_SMALL_INT_TYPES = {"SMALLINT", "TINYINT", "UTINYINT"}
_BIG_INT_TYPES = {"BIGINT", "UINT", "UBIGINT"}
_TIMESTAMP_TYPES = {
    "TIMESTAMP",
    "DATETIME",
    "DATETIME2",
    "DATETIME64",
    "SMALLDATETIME",
    "TIMESTAMPNTZ",
}
_TIMESTAMPTZ_TYPES = {
    "TIMESTAMPTZ",
    "TIMESTAMPLTZ",
}


def _int_param(dt: exp.DataType, index: int) -> int | None:
    try:
        return int(dt.expressions[index].sql())
    except (IndexError, ValueError):
        return None


#: How each sqlglot type kind (by its name in ``exp.DataType.Type``) becomes a generic type, as (kinds, shape, generic name); a kind listed
#: twice takes its first rule. Shapes: ``plain``; ``sized``, with ``(n)`` when a length is given;
#: ``fixed``, length 1 by default; ``fraction``, seconds' digits (at most 6); ``numeric``, with
#: ``(p, s)`` when a precision is given.
_KIND_RULES: tuple[tuple[frozenset[str], str, str], ...] = (
    (frozenset(_LONG_TEXT_TYPES), "plain", "long varchar"),
    (frozenset(_TEXT_TYPES), "sized", "varchar"),
    (frozenset({"NVARCHAR"}), "sized", "nvarchar"),
    (frozenset({"CHAR"}), "fixed", "char(n)"),
    (frozenset({"NCHAR"}), "fixed", "nchar(n)"),
    (frozenset(_BINARY_TYPES), "sized", "varbinary"),
    (frozenset(_LONG_BINARY_TYPES), "plain", "long varbinary"),
    (frozenset(_INT_TYPES), "plain", "integer"),
    (frozenset(_SMALL_INT_TYPES), "plain", "smallint"),
    (frozenset(_BIG_INT_TYPES), "plain", "bigint"),
    (frozenset({"FLOAT"}), "plain", "real"),
    (frozenset({"DOUBLE"}), "plain", "double precision"),
    (
        frozenset(
            {
                "DECIMAL",
                "BIGDECIMAL",
                "MONEY",
                "SMALLMONEY",
            }
        ),
        "numeric",
        "numeric",
    ),
    (frozenset({"DATE"}), "plain", "date"),
    (frozenset({"TIME", "TIMETZ"}), "fraction", "time"),
    (frozenset(_TIMESTAMP_TYPES), "fraction", "timestamp"),
    (frozenset(_TIMESTAMPTZ_TYPES), "fraction", "timestamptz"),
)


def _rule_of(kind: str) -> tuple[str, str] | None:
    """The (shape, generic name) of a type kind, or None when it has no portable equivalent."""
    return next(((shape, name) for kinds, shape, name in _KIND_RULES if kind in kinds), None)


def _shaped(dt: exp.DataType, shape: str, name: str) -> GenericType:
    length = _int_param(dt, 0)
    if shape == "sized":
        return GenericType(f"{name}(n)", length=length) if length else GenericType(name)
    if shape == "fixed":
        return GenericType(name, length=length or 1)
    if shape == "fraction":
        return GenericType(name, fraction=_fraction(length))
    if shape == "numeric" and length is not None:
        return GenericType("numeric(p, s)", precision=length, scale=_int_param(dt, 1) or 0)
    return GenericType(name)


def _parsed(text: str, type_sql: str, dialect: str) -> exp.DataType:
    from sqlglot import exp
    from sqlglot.errors import ParseError

    read = {"mssql": "tsql", "db2": None, "informix": None}.get(dialect, dialect)
    try:
        return exp.DataType.build(text, dialect=read or None, udt=False)
    except (ParseError, ValueError) as err:
        raise InvalidArgument(
            f"column type {type_sql!r} of dialect {dialect} is not understood",
            "use a standard SQL type for replicated columns",
        ) from err


def to_generic(type_sql: str, dialect: str) -> GenericType:
    """Classify a column type written in ``dialect`` as a :class:`GenericType`.

    :param type_sql: the declared type, e.g. ``numeric(10,2)`` or ``varchar(20) COLLATE utf8mb4_bin``.
    :param dialect: one of :data:`ALL_DIALECTS`.
    :raises InvalidArgument: when the type has no portable equivalent (arrays, intervals, ...).
    """
    text = re.sub(r"\s+(COLLATE|CHARACTER\s+SET|CHARSET)\s+.*$", "", type_sql.strip(), flags=re.I)
    if not text:
        # SQLite columns may be declared without a type; their values are stored as given.
        return GenericType("varchar")
    if text.upper() in {"TINYINT(1)", "BOOL"}:
        return GenericType("boolean")
    dt = _parsed(text, type_sql, dialect)
    kind = dt.this.name
    if kind == "BOOLEAN" or (kind == "BIT" and _int_param(dt, 0) in (None, 1)):
        return GenericType("boolean")
    rule = _rule_of(kind)
    if rule is None:
        raise InvalidArgument(
            f"column type {type_sql!r} of dialect {dialect} has no portable equivalent",
            "leave that column out of the snapshot's column list or cast it in the query",
        )
    return _shaped(dt, *rule)


def _fraction(value: int | None) -> int:
    return 6 if value is None else max(0, min(value, 6))


def render(generic: GenericType, dialect: str) -> str:
    """Render ``generic`` as a column type of ``dialect`` following :data:`TYPE_TABLE`."""
    try:
        template = TYPE_TABLE[generic.name][dialect]
    except KeyError as err:
        raise InvalidArgument(f"no mapping of type {generic.name!r} for dialect {dialect!r}") from err
    values = {
        "n": generic.length,
        "p": generic.precision,
        "s": generic.scale if generic.scale is not None else 0,
        "f": generic.fraction,
    }

    def substitute(match: re.Match[str]) -> str:
        value = values[match.group(1)]
        return str(value) if value is not None else match.group(0)

    rendered = _PARAM_RE.sub(substitute, template)
    if dialect == "mysql" and generic.name in {"varchar(n)", "nvarchar(n)"} and (generic.length or 0) > 16383:
        # Longer varchars do not fit MariaDB's row size limit with utf8mb4; text keeps the values.
        return "longtext"
    return rendered


def map_type(type_sql: str, source_dialect: str, target_dialect: str) -> str:
    """Map a column type from one dialect to another (:func:`to_generic` then :func:`render`)."""
    return render(to_generic(type_sql, source_dialect), target_dialect)

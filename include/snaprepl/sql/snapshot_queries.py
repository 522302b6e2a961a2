"""Snapshot queries, WHERE conditions and column lists: parsed, validated and re-written with sqlglot.

What runs against a database is never the user's text but sqlglot's rendering of the validated tree,
without comments: a condition cannot close a parenthesis early, comment out the rest of a query or
append a statement, and a query cannot write.

Tables in a nonincremental snapshot's query name their connection like the Oracle seed's database
links: ``SELECT * FROM orders@src WHERE ...``. A query reads from one connection.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from snaprepl.common.table_names import DEFAULT_CONN_ID, Ident, validate_conn_id
from snaprepl.dialects import Dialect
from snaprepl.errors import InvalidArgument, InvalidCondition

# Node types that write or change schema; none may appear in a snapshot query or condition.
_FORBIDDEN = (
    exp.Insert,
    exp.Update,
    exp.Delete,
    exp.Merge,
    exp.Create,
    exp.Drop,
    exp.Alter,
    exp.Command,
    exp.Into,
    exp.Set,
    exp.TruncateTable,
    exp.Grant,
    exp.Use,
    exp.Transaction,
    exp.Commit,
    exp.Rollback,
)

_CONN_SUFFIX = re.compile(r"@([A-Za-z0-9_][A-Za-z0-9_.\-]*)")


@dataclass(frozen=True)
class SourceQuery:
    """A validated snapshot query: the connection it runs on and its SQL in that connection's dialect."""

    conn_id: str
    sql: str
    tree: exp.Query


def split_connection_refs(text: str) -> tuple[str, set[str]]:
    """Remove ``@conn_id`` suffixes written right after table names; return the text and the ids.

    String literals and quoted identifiers are left alone.
    """
    out: list[str] = []
    conns: set[str] = set()
    i, n = 0, len(text)
    previous_is_name = False
    while i < n:
        ch = text[i]
        if ch in "'\"`":
            end = i + 1
            while end < n:
                if text[end] == ch:
                    if end + 1 < n and text[end + 1] == ch:  # doubled quote inside
                        end += 2
                        continue
                    break
                end += 1
            out.append(text[i : end + 1])
            previous_is_name = ch != "'"
            i = end + 1
            continue
        if ch == "@" and previous_is_name:
            match = _CONN_SUFFIX.match(text, i)
            if match:
                conns.add(validate_conn_id(match.group(1)))
                i = match.end()
                previous_is_name = False
                continue
        out.append(ch)
        previous_is_name = ch.isalnum() or ch in "_$"
        i += 1
    return "".join(out), conns


def _parse_one(text: str, dialect: Dialect, what: str) -> exp.Expression:
    try:
        statements = [s for s in sqlglot.parse(text, read=dialect.sqlglot_dialect or None) if s is not None]
    except (ParseError, TokenError) as err:
        first = str(err).splitlines()[0]
        raise InvalidCondition(f"{what} is not valid {dialect.name} SQL: {first}", f"check the {what}") from None
    if len(statements) != 1:
        raise InvalidCondition(f"{what} holds {len(statements)} statements", f"write a single {what} without ';'")
    # sqlglot types parse() as its base class Expr; what it parses here are Expressions (callers check the kind).
    return cast("exp.Expression", statements[0])


def _refuse_writes(tree: exp.Expression, what: str) -> None:
    bad = next((node for node in tree.walk() if isinstance(node, _FORBIDDEN)), None)
    if bad is not None:
        raise InvalidCondition(
            f"{what} contains {type(bad).__name__.upper()}, but snapshots only read",
            f"write the {what} as a plain SELECT",
        )


def render(tree: exp.Expression, dialect: Dialect) -> str:
    """The SQL of ``tree`` for ``dialect``, without comments."""
    return tree.sql(dialect=dialect.sqlglot_dialect or None, comments=False)


def parse_snapshot_query(text: str, dialect_of: Callable[[str], Dialect]) -> SourceQuery:
    """Validate a nonincremental snapshot's query.

    :param text: the query as written, tables possibly as ``table@conn_id``.
    :param dialect_of: function giving the dialect of a connection id.
    :raises InvalidArgument: the query reads from several connections.
    :raises InvalidCondition: the query is not one read-only SELECT.
    """
    if not text or not text.strip():
        raise InvalidCondition("the snapshot query is empty", "write the SELECT whose result the snapshot holds")
    stripped, conns = split_connection_refs(text)
    if len(conns) > 1:
        raise InvalidArgument(
            f"the query reads from several connections ({', '.join(sorted(conns))})",
            "a snapshot query runs on one database; make one snapshot per source",
        )
    conn_id = conns.pop() if conns else DEFAULT_CONN_ID
    dialect: Dialect = dialect_of(conn_id)
    tree = _parse_one(stripped, dialect, "query")
    if not isinstance(tree, exp.Query):
        raise InvalidCondition(
            f"the snapshot query is not a SELECT but {type(tree).__name__.upper()}",
            "write the SELECT whose result the snapshot holds",
        )
    _refuse_writes(tree, "query")
    dialect.refuse_unsafe_functions(tree)
    if not tree.selects:
        raise InvalidCondition("the snapshot query selects no columns")
    return SourceQuery(conn_id=conn_id, sql=render(tree, dialect), tree=tree)


def validate_condition(text: str, dialect: Dialect) -> str:
    """Validate a WHERE condition of ``dialect``; return it re-rendered (wrap it in parentheses to use it).

    :raises InvalidCondition: not one expression, a query, or anything that writes.
    """
    if not text or not text.strip():
        raise InvalidCondition("the condition is empty", "omit WHERE, or write a condition")
    tree = _parse_one(text, dialect, "condition")
    if isinstance(tree, exp.Query) or not isinstance(tree, exp.Expression) or isinstance(tree, _FORBIDDEN):
        raise InvalidCondition(
            f"the condition {text!r} is not a condition but {type(tree).__name__.upper()}",
            "write only what follows WHERE, e.g. 'OrderID < 5'",
        )
    _refuse_writes(tree, "condition")
    dialect.refuse_unsafe_functions(tree)
    return render(tree, dialect)


def parse_column_list(text: str, dialect: Dialect) -> list[Ident]:
    """Parse ``'col, "Other Col", ...'``: plain column names only.

    :raises InvalidCondition: anything but a list of names.
    """
    if not text or not text.strip():
        raise InvalidArgument("the column list is empty", "omit it to take every column")
    tree = _parse_one(f"SELECT {text} FROM t", dialect, "column list")
    if not isinstance(tree, exp.Select):
        raise InvalidCondition(f"column list {text!r} is not a list of column names")
    columns: list[Ident] = []
    for projection in tree.selects:
        if not isinstance(projection, exp.Column) or projection.table or isinstance(projection.this, exp.Star):
            raise InvalidCondition(
                f"{projection.sql()!r} in the column list is not a plain column name",
                "list column names separated by commas; compute values in a nonincremental snapshot",
            )
        identifier = projection.this
        columns.append(Ident(identifier.name, quoted=bool(identifier.args.get("quoted"))))
    if len({c.text for c in columns}) != len(columns):
        raise InvalidArgument(f"column list {text!r} names a column twice")
    return columns


def single_table(tree: exp.Query) -> tuple[Ident | None, Ident] | None:
    """The schema (None if not written) and name of the one table ``tree`` reads; None if it reads several."""
    tables = list(tree.find_all(exp.Table))
    if len(tables) != 1:
        return None
    table = tables[0]
    schema = Ident(table.db, quoted=bool(table.args["db"].args.get("quoted"))) if table.db else None
    return schema, Ident(table.name, quoted=bool(table.this.args.get("quoted")))


def plain_projection_key(tree: exp.Query, table: str, key: Sequence[str], dialect: Dialect) -> list[str] | None:
    """If ``tree`` is ``SELECT cols FROM table [WHERE ...]`` selecting every key column of ``table``
    unchanged, return the output names of the key columns (the result has the same key); else None."""
    if not isinstance(tree, exp.Select) or not _selects_rows_of(tree, table, dialect):
        return None
    out = _output_names(tree, key)
    found = []
    for name in key:
        match = next((v for k, v in out.items() if dialect.same_name(k, name)), None)
        if match is None:
            return None
        found.append(match)
    return found


def _selects_rows_of(tree: exp.Select, table: str, dialect: Dialect) -> bool:
    """Whether ``tree`` returns rows of ``table`` one for one: no joins, grouping, aggregates or limits."""
    if any(tree.args.get(part) for part in ("joins", "group", "having", "distinct", "limit", "offset")):
        return False
    tables = list(tree.find_all(exp.Table))
    if len(tables) != 1 or not dialect.same_name(tables[0].name, table):
        return False
    return not any(isinstance(node, exp.AggFunc) for node in tree.walk())


def _output_names(tree: exp.Select, key: Sequence[str]) -> dict[str, str]:
    """Output name of each column selected unchanged, by source column name (``*`` selects the key)."""
    out: dict[str, str] = {}
    for projection in tree.selects:
        inner = projection.this if isinstance(projection, exp.Alias) else projection
        if isinstance(inner, exp.Column) and not isinstance(inner.this, exp.Star):
            out.setdefault(inner.name, projection.alias_or_name)
        elif isinstance(inner, exp.Star) or (isinstance(inner, exp.Column) and isinstance(inner.this, exp.Star)):
            for name in key:
                out.setdefault(name, name)
    return out

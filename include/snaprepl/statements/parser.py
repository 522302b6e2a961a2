"""Parsing statements into :mod:`snaprepl.statements.ast` objects (lark, LALR)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from lark import (
    Lark,
    Token,
    Transformer,
    Tree,
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
)

from snaprepl.common.arguments import describe
from snaprepl.common.cache_dir import private_cache_file
from snaprepl.common.table_names import DEFAULT_CONN_ID, Ident, TableRef
from snaprepl.errors import InvalidArgument, SnapreplError, StatementSyntaxError
from snaprepl.statements import ast

_GRAMMAR = Path(__file__).with_name("grammar.lark")

# Terminal names as a user would read them in "expected ..." lists.
_READABLE = {
    "_SEMI": "';'",
    "LPAR": "'('",
    "RPAR": "')'",
    "COMMA": "','",
    "DOT": "'.'",
    "AT": "'@'",
    "STRING": "a quoted string",
    "NAME": "a name",
    "FUNCTION_NAME": "a function name",
    "DQUOTED": 'a "quoted name"',
    "BQUOTED": "a `quoted name`",
    "CONN_ID": "a connection id",
    "SIGNED_NUMBER": "a number",
    "AS_NONINCREMENTAL": "AS NONINCREMENTAL",
    "WITH_DELETE": "WITH DELETE",
    "USING_EXISTING_TABLE": "USING EXISTING TABLE",
    "ON_PREBUILT_TABLE": "ON PREBUILT TABLE",
    "INCLUDE_NEW_TABLES": "INCLUDE NEW TABLES",
    "$END": "the end",
}


@functools.cache
def _parser() -> Lark:
    """The statements' parser. Building its LALR tables takes 0.04-0.09 s, at every command: lark
    keeps them in the private cache directory (rebuilt when the grammar, the options, lark or
    Python changes: its first line is a hash of them all)."""
    return Lark(
        _GRAMMAR.read_text(),
        cache=private_cache_file("statements-grammar.lark-cache") or False,
        parser="lalr",
        lexer="contextual",
        start=["script", "table_ref_only"],
        propagate_positions=True,
        maybe_placeholders=True,
    )


def _unquote(text: str, quote: str) -> str:
    return text[1:-1].replace(quote * 2, quote)


class _ToAst(Transformer[Token, Any]):
    # names
    def plain_ident(self, items: list[Token]) -> Ident:
        return Ident(str(items[0]), quoted=False)

    def quoted_ident(self, items: list[Token]) -> Ident:
        return Ident(_unquote(str(items[0]), '"'), quoted=True)

    def backquoted_ident(self, items: list[Token]) -> Ident:
        return Ident(_unquote(str(items[0]), "`"), quoted=True)

    def table_ref(self, items: list[Any]) -> TableRef:
        conn = str(items[-1]) if isinstance(items[-1], Token) and items[-1].type == "CONN_ID" else None
        idents = [i for i in items if isinstance(i, Ident)]
        qualifier = idents[0] if len(idents) == 3 else None
        schema = idents[-2] if len(idents) >= 2 else None
        return TableRef(
            table=idents[-1],
            schema=schema,
            conn_id=conn or DEFAULT_CONN_ID,
            explicit_conn=conn is not None,
            qualifier=qualifier,
        )

    def table_ref_only(self, items: list[Any]) -> TableRef:
        return items[0]

    # values
    def string(self, items: list[Token]) -> str:
        return _unquote(str(items[0]), "'")

    def number(self, items: list[Token]) -> int | float:
        text = str(items[0])
        return float(text) if any(c in text for c in ".eE") else int(text)

    def null(self, _items: list[Token]) -> None:
        return None

    def true(self, _items: list[Token]) -> bool:
        return True

    def false(self, _items: list[Token]) -> bool:
        return False

    def schedule(self, items: list[Any]) -> ast.Schedule:
        value = items[0]
        return ast.Schedule(None if isinstance(value, Token) and value.type == "NONE" else value)

    # statements
    def create_log(self, items: list[Any]) -> ast.CreateSnapshotLog:
        return ast.CreateSnapshotLog(source=items[0])

    def drop_log(self, items: list[Any]) -> ast.DropSnapshotLog:
        return ast.DropSnapshotLog(source=items[0])

    def purge_log(self, items: list[Any]) -> ast.PurgeSnapshotLog:
        return ast.PurgeSnapshotLog(source=items[0], force=items[1] is not None)

    def existing(self, _items: list[Token]) -> bool:
        return True

    def create_noninc(self, items: list[Any]) -> ast.CreateNonincrementalSnapshot:
        dest, query, existing, schedule = items
        return ast.CreateNonincrementalSnapshot(dest=dest, query=query, schedule=schedule, use_existing=bool(existing))

    def create_inc(self, items: list[Any]) -> ast.CreateIncrementalSnapshot:
        dest, source, columns, condition, existing, schedule = items
        return ast.CreateIncrementalSnapshot(
            dest=dest,
            source=source,
            columns=columns,
            condition=condition,
            schedule=schedule,
            use_existing=bool(existing),
        )

    def update_snapshot(self, items: list[Any]) -> ast.UpdateSnapshot:
        return ast.UpdateSnapshot(name=items[0], nonincremental=items[1] is not None)

    def drop_snapshot(self, items: list[Any]) -> ast.DropSnapshot:
        return ast.DropSnapshot(name=items[0], with_delete=items[1] is not None)

    def alter_snapshot(self, items: list[Any]) -> ast.AlterSnapshot:
        return ast.AlterSnapshot(name=items[0], schedule=items[1])

    def verify_snapshot(self, items: list[Any]) -> ast.VerifySnapshot:
        return ast.VerifySnapshot(name=items[0], condition=items[1])

    def repair_snapshot(self, items: list[Any]) -> ast.VerifySnapshot:
        return ast.VerifySnapshot(name=items[0], condition=items[1], repair=True)

    def create_group(self, items: list[Any]) -> ast.CreateSnapshotGroup:
        name, source, into, exclude, include_new, schedule = items
        return ast.CreateSnapshotGroup(name, source, into, exclude, include_new is not None, schedule)

    def update_group(self, items: list[Any]) -> ast.UpdateSnapshotGroup:
        return ast.UpdateSnapshotGroup(name=items[0], nonincremental=items[1] is not None)

    def alter_group(self, items: list[Any]) -> ast.AlterSnapshotGroup:
        if isinstance(items[1], ast.Schedule):
            return ast.AlterSnapshotGroup(name=items[0], member=None, schedule=items[1])
        return ast.AlterSnapshotGroup(name=items[0], member=items[2], add=items[1].type == "ADD")

    def drop_group(self, items: list[Any]) -> ast.DropSnapshotGroup:
        return ast.DropSnapshotGroup(name=items[0])

    def call(self, items: list[Any]) -> ast.Call:
        return ast.Call(function=str(items[0]), args=tuple(items[1:]))

    def script(self, items: list[Any]) -> list[ast.Statement]:
        return [i for i in items if isinstance(i, ast.Statement)]


def _syntax_error(source: str, err: UnexpectedInput) -> StatementSyntaxError:
    line, column = err.line, err.column
    if isinstance(err, UnexpectedToken):
        got = "the end" if err.token.type == "$END" else repr(str(err.token))
        expected = sorted({_READABLE.get(t, t.lstrip("_").replace("_", " ")) for t in err.accepts or err.expected})
    elif isinstance(err, UnexpectedCharacters):
        got = repr(source[err.pos_in_stream]) if err.pos_in_stream < len(source) else "the end"
        expected = sorted({_READABLE.get(t, t.lstrip("_").replace("_", " ")) for t in err.allowed or ()})
    elif isinstance(err, UnexpectedEOF):
        got, expected = "the end", sorted({_READABLE.get(t, t) for t in err.expected})
    else:  # pragma: no cover - lark has no other kinds
        got, expected = "?", []
    wanted = f"; expected {', '.join(expected[:8])}" if expected else ""
    return StatementSyntaxError(
        f"syntax error at line {line}, column {column}: unexpected {got}{wanted}",
        "see `snaprepl sql --help` for the statements",
    )


#: Deepest nesting of function calls a statement may have (the AST is built recursively).
MAX_CALL_DEPTH = 32


def _check_nesting(tree: Tree[Token]) -> None:
    """Refuse calls nested deeper than :data:`MAX_CALL_DEPTH` (walked without recursion)."""
    stack: list[tuple[Tree[Token], int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        depth += node.data == "call"
        if depth > MAX_CALL_DEPTH:
            raise StatementSyntaxError(
                f"function calls are nested more than {MAX_CALL_DEPTH} deep", "call them one after another instead"
            )
        stack.extend((child, depth) for child in node.children if isinstance(child, Tree))


def parse_script(source: str) -> list[ast.Statement]:
    """Parse one or more ``;``-separated statements.

    :raises StatementSyntaxError: with the line and column of the first error.
    """
    try:
        tree = _parser().parse(source, start="script")
    except UnexpectedInput as err:
        raise _syntax_error(source, err) from None
    _check_nesting(tree)
    try:
        statements = _ToAst().transform(tree)
    except Exception as err:  # a visitor raised (e.g. an invalid name)
        cause = err.__context__ if isinstance(err.__context__, SnapreplError) else err
        if isinstance(cause, SnapreplError):
            raise cause from None
        raise
    return statements


def parse_table_ref(text: str) -> TableRef:
    """Parse ``[schema.]table[@conn_id]`` as the statements do (for the ``repl_*`` functions' strings).

    :raises StatementSyntaxError: if ``text`` is not exactly one table reference.
    """
    if not isinstance(text, str):
        raise InvalidArgument(f"a table name must be a string, got {describe(text)}", "write [schema.]table[@conn_id]")
    if not text.strip():
        raise StatementSyntaxError("a table name is empty", "write [schema.]table[@conn_id]")
    try:
        tree = _parser().parse(text, start="table_ref_only")
    except UnexpectedInput as err:
        error = _syntax_error(text, err)
        raise StatementSyntaxError(
            f"{text!r} is not a table reference ({error.message})", "write [schema.]table[@conn_id]"
        ) from None
    try:
        return _ToAst().transform(tree)
    except Exception as err:
        cause = err.__context__ if isinstance(err.__context__, SnapreplError) else err
        if isinstance(cause, SnapreplError):
            raise cause from None
        raise

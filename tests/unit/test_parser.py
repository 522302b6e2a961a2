"""The statement grammar: every statement form, names, calls, and errors with positions."""

from __future__ import annotations

import pytest

from snaprepl.common.table_names import DEFAULT_CONN_ID, Ident, TableRef
from snaprepl.errors import InvalidName, StatementSyntaxError
from snaprepl.statements import ast
from snaprepl.statements.parser import parse_script, parse_table_ref


def ref(table: str, schema: str | None = None, conn: str | None = None, quoted: bool = False) -> TableRef:
    return TableRef(
        table=Ident(table, quoted),
        schema=Ident(schema) if schema else None,
        conn_id=conn or DEFAULT_CONN_ID,
        explicit_conn=conn is not None,
    )


def test_snapshot_log_statements_are_case_insensitive_and_several_per_call() -> None:
    statements = parse_script("create snapshot log for orders@src; DROP Snapshot LOG for public.orders@src;")
    assert statements == [
        ast.CreateSnapshotLog(ref("orders", conn="src")),
        ast.DropSnapshotLog(ref("orders", "public", "src")),
    ]


def test_purge_with_and_without_force() -> None:
    assert parse_script("PURGE SNAPSHOT LOG FOR t") == [ast.PurgeSnapshotLog(ref("t"))]
    assert parse_script("purge snapshot log for t force") == [ast.PurgeSnapshotLog(ref("t"), force=True)]


def test_keywords_are_names_where_a_name_is_expected() -> None:
    assert parse_script("PURGE SNAPSHOT LOG FOR force") == [ast.PurgeSnapshotLog(ref("force"))]


def test_quoted_names_keep_case_and_embedded_quotes() -> None:
    parsed = parse_table_ref('"My ""Big"" Table"@x')
    assert parsed.table == Ident('My "Big" Table', quoted=True)
    assert parse_table_ref("`we``ird`").table == Ident("we`ird", quoted=True)


def test_snapshot_statements() -> None:
    assert parse_script("CREATE NONINCREMENTAL SNAPSHOT sub_orders AS 'select * from Orders where OrderID < 5'") == [
        ast.CreateNonincrementalSnapshot(ref("sub_orders"), "select * from Orders where OrderID < 5")
    ]
    assert parse_script("CREATE SNAPSHOT d@dst FROM s@src 'a, b' WHERE 'x = ''it''''s''' SCHEDULE '@hourly'") == [
        ast.CreateIncrementalSnapshot(
            ref("d", conn="dst"), ref("s", conn="src"), "a, b", "x = 'it''s'", ast.Schedule("@hourly")
        )
    ]
    assert parse_script("UPDATE SNAPSHOT x AS NONINCREMENTAL; update snapshot y; DROP SNAPSHOT z WITH DELETE") == [
        ast.UpdateSnapshot(ref("x"), nonincremental=True),
        ast.UpdateSnapshot(ref("y")),
        ast.DropSnapshot(ref("z"), with_delete=True),
    ]
    assert parse_script("ALTER SNAPSHOT x SCHEDULE NONE") == [ast.AlterSnapshot(ref("x"), ast.Schedule(None))]


def test_function_calls_nest_as_in_the_seed() -> None:
    statements = parse_script(
        "SQL_COMMENT_FREE_ZONE('x');"
        "REPL_CREATE_SNAPSHOT_SUB (REPL_SERVER_NAME ('localhost:1121'), 'Demo.demo.Shippers', 2) -- seed example\n"
    )
    assert statements[1] == ast.Call(
        "REPL_CREATE_SNAPSHOT_SUB", (ast.Call("REPL_SERVER_NAME", ("localhost:1121",)), "Demo.demo.Shippers", 2)
    )
    assert parse_script("CALL f(); select g(NULL, -1.5)") == [ast.Call("f"), ast.Call("g", (None, -1.5))]


def test_empty_scripts_and_stray_semicolons() -> None:
    assert parse_script("") == []
    assert parse_script(" ;; /* nothing */ ;") == []


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("create snapshot logs for orders", "line 1, column 22"),
        ("create snapshot log for orders@", "line 1, column 31"),
        ("create snapshot log for orders;\n drop table x", "line 2, column 7"),
        ('create snapshot log for ""', "line 1, column 25"),
    ],
)
def test_syntax_errors_name_the_position(text: str, position: str) -> None:
    with pytest.raises(StatementSyntaxError, match=position):
        parse_script(text)


def test_three_part_names_carry_the_database_qualifier() -> None:
    parsed = parse_table_ref("Demo.demo.Shippers@pub")
    assert parsed.qualifier == Ident("Demo") and parsed.schema == Ident("demo") and parsed.table == Ident("Shippers")
    assert parsed.conn_id == "pub" and str(parsed) == "Demo.demo.Shippers@pub"


@pytest.mark.parametrize("text", ["a.b.c.d", "orders; drop table x", "orders@src x", "x@bad conn", "", "t -- "])
def test_table_references_reject_anything_more(text: str) -> None:
    if text == "t -- ":
        assert parse_table_ref(text) == ref("t")  # a trailing comment is harmless
        return
    with pytest.raises(StatementSyntaxError):
        parse_table_ref(text)


def test_identifiers_with_control_characters_are_refused() -> None:
    with pytest.raises(InvalidName, match="control characters"):
        parse_table_ref('"bad\x01name"')
